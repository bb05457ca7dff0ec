//! What a pg connection (`conn`) reads in the shared event loop
//! ([`crate::load::event_loop`]): the run's settings ([`Run`]) and the
//! per-worker messages it sends whole ([`Local`]). The connection is
//! the loop's [`event_loop::Session`]; this module does not know it.

use super::script::{QueryMode, Script, Statement, STATEMENT_NAMES};
use crate::load::event_loop;
use crate::load::histogram::new_histogram;
use crate::wire::pg::conninfo::ConnConfig;
use bytes::BytesMut;

/// What every pg worker of one run reads.
pub(super) type Shared = event_loop::Shared<Run>;

/// The pg driver's run-wide settings.
pub(super) struct Run {
    pub cfg: ConnConfig,
    /// The scripts a transaction is drawn from (pgbench `-b NAME@WEIGHT`
    /// given several times), with their weights; one script mostly.
    pub scripts: Vec<(Script, u32)>,
    pub mode: QueryMode,
    pub scale: i64,
    pub max_tries: u32,
    /// Time each statement (pgbench `-r`).
    pub per_statement: bool,
    /// TLS, as `sslmode` asks.
    pub tls: Option<super::tls::PgTls>,
}

impl Run {
    /// The script of the next transaction: drawn by weight, as pgbench
    /// chooses among several scripts.
    pub fn pick(&self, rng: &mut rand::rngs::SmallRng) -> usize {
        use rand::Rng;
        let total: u32 = self.scripts.iter().map(|(_, w)| *w).sum();
        if self.scripts.len() < 2 || total == 0 {
            return 0;
        }
        let mut at = rng.gen_range(0..total);
        for (i, (_, w)) in self.scripts.iter().enumerate() {
            if at < *w {
                return i;
            }
            at -= w;
        }
        self.scripts.len() - 1
    }

    /// Where script `script`'s statements start among all the scripts'
    /// (their prepared names and `-r` latencies are numbered across all).
    pub fn first_statement(&self, script: usize) -> usize {
        self.scripts[..script]
            .iter()
            .map(|(s, _)| s.statements().len())
            .sum()
    }

    /// Every script's statements, in order.
    pub fn all_statements(&self) -> impl Iterator<Item = &Statement> {
        self.scripts.iter().flat_map(|(s, _)| s.statements())
    }
}

/// Messages built once per worker and sent whole.
pub(super) struct Local {
    /// Parse messages for the script's statements, then Sync.
    pub prepare: BytesMut,
    pub rollback: BytesMut,
    /// With `-r`: each statement's latency, by position in the scripts.
    pub statements: Option<Vec<hdrhistogram::Histogram<u64>>>,
    /// Completed transactions per script.
    pub done_by_script: Vec<u64>,
}

impl Local {
    pub fn new(shared: &Shared) -> Self {
        Local {
            prepare: prepare_message(shared, shared.mode),
            rollback: rollback_message(),
            statements: shared.per_statement.then(|| {
                let n = shared.all_statements().count();
                (0..n).map(|_| new_histogram()).collect()
            }),
            done_by_script: vec![0; shared.scripts.len()],
        }
    }

    /// With `-r`: records that statement `step` took `took`.
    pub fn statement_took(&mut self, step: usize, took: std::time::Duration) {
        if let Some(h) = self.statements.as_mut().and_then(|v| v.get_mut(step)) {
            let _ = h.record(crate::units::Micros::from_duration(took).0.max(1));
        }
    }
}

/// The statements to parse once per connection: every script's, named in
/// order across them, in prepared mode; none otherwise.
fn prepare_message(run: &Run, mode: QueryMode) -> BytesMut {
    let mut out = BytesMut::new();
    if mode != QueryMode::Prepared {
        return out;
    }
    crate::wire::pg::codec::prepare_all(
        STATEMENT_NAMES
            .iter()
            .copied()
            .zip(run.all_statements().map(|s| &*s.sql)),
        &mut out,
    );
    out
}

fn rollback_message() -> BytesMut {
    let mut out = BytesMut::new();
    // A fixed ASCII query cannot fail to encode.
    let _ = crate::wire::pg::codec::simple_query("ROLLBACK", &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn run(weights: &[u32]) -> Run {
        let kinds = [
            super::super::ScriptKind::SelectOnly,
            super::super::ScriptKind::SimpleUpdate,
            super::super::ScriptKind::TpcbLike,
        ];
        Run {
            cfg: ConnConfig::parse_with_env("host=127.0.0.1 port=9", |_| None).unwrap(),
            scripts: kinds
                .iter()
                .zip(weights)
                .map(|(k, w)| ((*k).into(), *w))
                .collect(),
            mode: QueryMode::Prepared,
            scale: 1,
            max_tries: 1,
            per_statement: false,
            tls: None,
        }
    }

    /// pgbench's `-b select-only@1 -b simple-update@3`: a quarter and
    /// three quarters of the transactions; statements numbered across the
    /// scripts.
    #[test]
    fn a_mix_draws_scripts_by_weight_and_numbers_statements_across_them() {
        let r = run(&[1, 3]);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut n = [0u32; 2];
        for _ in 0..40_000 {
            n[r.pick(&mut rng)] += 1;
        }
        let share = f64::from(n[0]) / 40_000.0;
        assert!((share - 0.25).abs() < 0.01, "{n:?}");
        assert_eq!(r.first_statement(0), 0);
        assert_eq!(r.first_statement(1), 1, "select-only has one statement");
        assert_eq!(
            r.all_statements().count(),
            1 + r.scripts[1].0.statements().len()
        );
        assert_eq!(run(&[5]).pick(&mut rng), 0, "one script");
    }
}
