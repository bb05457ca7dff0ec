//! pgbench's built-in scripts: the same statements, in the same order, with
//! the same uniform random ranges (PostgreSQL's `pgbench` documentation,
//! "Built-in Scripts"). One statement per round trip, as pgbench sends them.

use crate::wire::pg::dataset::{ACCOUNTS, BRANCHES, TELLERS};
use rand::rngs::SmallRng;
use rand::Rng;
use std::borrow::Cow;

/// Which built-in script to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScriptKind {
    /// `pgbench -S`: one primary-key lookup.
    SelectOnly,
    /// `pgbench -N`: tpcb-like without the tellers and branches updates.
    SimpleUpdate,
    /// pgbench's default, "TPC-B (sort of)".
    TpcbLike,
}

/// How statements are sent (pgbench `-M`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum QueryMode {
    /// Each statement parsed once per connection (named), then Bind,
    /// Execute, Sync per run.
    #[default]
    Prepared,
    /// The extended protocol with the unnamed statement: Parse, Bind,
    /// Execute, Sync every time (pgbench's default).
    Extended,
    /// The simple Query protocol, the values written into the SQL text.
    Simple,
}

impl QueryMode {
    /// Every mode, in pgbench's `-M` order.
    pub const ALL: [QueryMode; 3] = [QueryMode::Prepared, QueryMode::Extended, QueryMode::Simple];

    /// The name in settings and on the command line (pgbench's `-M` value).
    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Prepared => "prepared",
            QueryMode::Extended => "extended",
            QueryMode::Simple => "simple",
        }
    }
}

impl std::str::FromStr for QueryMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        QueryMode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!("unknown query mode `{s}`; expected prepared, extended or simple")
            })
    }
}

/// A script variable, drawn once per transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Var {
    Aid,
    Bid,
    Tid,
    Delta,
    /// A custom script's `\set` variable, by its place in
    /// [`Script::randoms`].
    Set(u8),
}

/// The most `\set` variables one custom script may define.
pub const MAX_SET_VARS: usize = 8;

/// The most parameters one statement may take.
pub const MAX_PARAMS: usize = 8;

/// One bound of a custom script's `random(lo, hi)`: `value`, times the
/// scale when `per_scale` (`100000 * :scale`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    /// The integer.
    pub value: i64,
    /// Multiplied by the dataset's scale.
    pub per_scale: bool,
}

impl Bound {
    fn at(self, scale: i64) -> i64 {
        if self.per_scale {
            self.value.saturating_mul(scale)
        } else {
            self.value
        }
    }
}

/// A custom script's `\set NAME random(LO, HI)`: drawn uniformly in
/// [LO, HI] once per transaction, as pgbench does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RandomVar {
    /// The variable's name (without the colon).
    pub name: String,
    /// The lowest value.
    pub lo: Bound,
    /// The highest value.
    pub hi: Bound,
}

/// One SQL statement with its parameters in `$n` order.
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    /// The SQL text (a built-in script's, or a line of a `-f` file).
    pub sql: Cow<'static, str>,
    /// The variables bound to `$1`, `$2`, ... in order.
    pub params: Cow<'static, [Var]>,
}

const BEGIN: Statement = Statement {
    sql: Cow::Borrowed("BEGIN"),
    params: Cow::Borrowed(&[]),
};
const END: Statement = Statement {
    sql: Cow::Borrowed("END"),
    params: Cow::Borrowed(&[]),
};
const UPDATE_ACCOUNT: Statement = Statement {
    sql: Cow::Borrowed("UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"),
    params: Cow::Borrowed(&[Var::Delta, Var::Aid]),
};
const SELECT_ACCOUNT: Statement = Statement {
    sql: Cow::Borrowed("SELECT abalance FROM pgbench_accounts WHERE aid = $1"),
    params: Cow::Borrowed(&[Var::Aid]),
};
const UPDATE_TELLER: Statement = Statement {
    sql: Cow::Borrowed("UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2"),
    params: Cow::Borrowed(&[Var::Delta, Var::Tid]),
};
const UPDATE_BRANCH: Statement = Statement {
    sql: Cow::Borrowed("UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2"),
    params: Cow::Borrowed(&[Var::Delta, Var::Bid]),
};
const INSERT_HISTORY: Statement = Statement {
    sql: Cow::Borrowed(
        "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) \
          VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)",
    ),
    params: Cow::Borrowed(&[Var::Tid, Var::Bid, Var::Aid, Var::Delta]),
};

const TPCB_LIKE: &[Statement] = &[
    BEGIN,
    UPDATE_ACCOUNT,
    SELECT_ACCOUNT,
    UPDATE_TELLER,
    UPDATE_BRANCH,
    INSERT_HISTORY,
    END,
];
const SIMPLE_UPDATE: &[Statement] = &[BEGIN, UPDATE_ACCOUNT, SELECT_ACCOUNT, INSERT_HISTORY, END];
const SELECT_ONLY: &[Statement] = &[SELECT_ACCOUNT];

/// Prepared-statement names, by position in the script: a script holds at
/// most this many statements.
pub const STATEMENT_NAMES: &[&str] = &[
    "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13", "s14",
    "s15", "s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27",
    "s28", "s29", "s30", "s31",
];

impl ScriptKind {
    /// Every built-in script, lightest first.
    pub const ALL: [ScriptKind; 3] = [
        ScriptKind::SelectOnly,
        ScriptKind::SimpleUpdate,
        ScriptKind::TpcbLike,
    ];

    /// The script's statements, in order.
    pub fn statements(self) -> &'static [Statement] {
        match self {
            ScriptKind::SelectOnly => SELECT_ONLY,
            ScriptKind::SimpleUpdate => SIMPLE_UPDATE,
            ScriptKind::TpcbLike => TPCB_LIKE,
        }
    }

    /// The name used in settings and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ScriptKind::SelectOnly => "select-only",
            ScriptKind::SimpleUpdate => "simple-update",
            ScriptKind::TpcbLike => "tpcb-like",
        }
    }

    /// pgbench's "transaction type" line.
    pub fn pgbench_title(self) -> &'static str {
        match self {
            ScriptKind::SelectOnly => "<builtin: select only>",
            ScriptKind::SimpleUpdate => "<builtin: simple update>",
            ScriptKind::TpcbLike => "<builtin: TPC-B (sort of)>",
        }
    }

    /// Whether the script writes (and so wants pgbench's pre-run vacuum).
    pub fn writes(self) -> bool {
        self != ScriptKind::SelectOnly
    }
}

impl std::str::FromStr for ScriptKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ScriptKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!("unknown script `{s}`; expected select-only, simple-update or tpcb-like")
            })
    }
}

/// What a run executes: a built-in script, or the statements of a custom
/// script file (pgbench `-f`, read by [`super::custom::read`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    /// pgbench's "transaction type": `<builtin: TPC-B (sort of)>`, or the
    /// file's path.
    pub title: String,
    /// The name in JSON: the built-in's (`tpcb-like`) or the file's path.
    pub name: String,
    /// The built-in script this is; `None` for a custom file, which need
    /// not use pgbench's tables (no scale detection, no pre-run vacuum).
    pub builtin: Option<ScriptKind>,
    statements: Cow<'static, [Statement]>,
    /// A custom script's `\set` variables, at most [`MAX_SET_VARS`].
    randoms: Vec<RandomVar>,
}

impl Script {
    /// A custom script of `statements` (without parameters), at most
    /// [`STATEMENT_NAMES`] long.
    pub(crate) fn custom(
        title: String,
        statements: Vec<Statement>,
        randoms: Vec<RandomVar>,
    ) -> Script {
        Script {
            name: title.clone(),
            title,
            builtin: None,
            statements: Cow::Owned(statements),
            randoms,
        }
    }

    /// The statements of one transaction, in order.
    pub fn statements(&self) -> &[Statement] {
        &self.statements
    }

    /// A custom script's `\set` variables, in order.
    pub fn randoms(&self) -> &[RandomVar] {
        &self.randoms
    }

    /// One transaction's values: the built-in variables, and each `\set`
    /// variable drawn in its range at `scale`.
    pub fn draw(&self, rng: &mut SmallRng, scale: i64) -> TxnValues {
        let mut values = TxnValues::draw(rng, scale);
        let scale = scale.max(1);
        for (slot, r) in values.set.iter_mut().zip(&self.randoms) {
            let (lo, hi) = (r.lo.at(scale), r.hi.at(scale));
            *slot = rng.gen_range(lo.min(hi)..=hi.max(lo));
        }
        values
    }
}

impl From<ScriptKind> for Script {
    fn from(kind: ScriptKind) -> Script {
        Script {
            title: kind.pgbench_title().into(),
            name: kind.name().into(),
            builtin: Some(kind),
            statements: Cow::Borrowed(kind.statements()),
            randoms: Vec::new(),
        }
    }
}

/// One transaction's random values. Kept across retries, as pgbench
/// replays a failed transaction with the same random state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxnValues {
    pub aid: i64,
    pub bid: i64,
    pub tid: i64,
    pub delta: i64,
    /// A custom script's `\set` variables ([`Var::Set`]).
    pub set: [i64; MAX_SET_VARS],
}

impl TxnValues {
    /// Draws `aid` in [1, 100000*scale], `bid` in [1, scale], `tid` in
    /// [1, 10*scale] and `delta` in [-5000, 5000], uniformly.
    pub fn draw(rng: &mut SmallRng, scale: i64) -> Self {
        let scale = scale.max(1);
        TxnValues {
            aid: rng.gen_range(1..=ACCOUNTS * scale),
            bid: rng.gen_range(1..=BRANCHES * scale),
            tid: rng.gen_range(1..=TELLERS * scale),
            delta: rng.gen_range(-5000..=5000),
            set: [0; MAX_SET_VARS],
        }
    }

    pub fn get(&self, v: Var) -> i64 {
        match v {
            Var::Aid => self.aid,
            Var::Bid => self.bid,
            Var::Tid => self.tid,
            Var::Delta => self.delta,
            Var::Set(i) => self.set[usize::from(i)],
        }
    }

    /// The parameters of `stmt`, in a fixed-size array (no allocation).
    pub fn params(&self, stmt: &Statement) -> ([i64; MAX_PARAMS], usize) {
        let mut out = [0; MAX_PARAMS];
        for (slot, v) in out.iter_mut().zip(stmt.params.iter()) {
            *slot = self.get(*v);
        }
        (out, stmt.params.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn scripts_match_pgbench() {
        assert_eq!(ScriptKind::TpcbLike.statements().len(), 7);
        assert_eq!(ScriptKind::SimpleUpdate.statements().len(), 5);
        assert_eq!(ScriptKind::SelectOnly.statements().len(), 1);
        for kind in ScriptKind::ALL {
            assert!(kind.statements().len() <= STATEMENT_NAMES.len());
            for s in kind.statements() {
                let placeholders = (1..=4).filter(|i| s.sql.contains(&format!("${i}"))).count();
                assert_eq!(placeholders, s.params.len(), "{}", s.sql);
            }
            assert_eq!(kind.name().parse::<ScriptKind>().unwrap(), kind);
        }
        assert!("tpcb"
            .parse::<ScriptKind>()
            .unwrap_err()
            .contains("tpcb-like"));
    }

    #[test]
    fn draws_cover_pgbench_ranges_and_stay_inside() {
        let mut rng = SmallRng::seed_from_u64(1);
        let scale = 2;
        let (mut lo, mut hi) = (
            TxnValues {
                aid: i64::MAX,
                bid: i64::MAX,
                tid: i64::MAX,
                delta: i64::MAX,
                ..TxnValues::default()
            },
            TxnValues {
                aid: i64::MIN,
                bid: i64::MIN,
                tid: i64::MIN,
                delta: i64::MIN,
                ..TxnValues::default()
            },
        );
        for _ in 0..200_000 {
            let v = TxnValues::draw(&mut rng, scale);
            lo = TxnValues {
                aid: lo.aid.min(v.aid),
                bid: lo.bid.min(v.bid),
                tid: lo.tid.min(v.tid),
                delta: lo.delta.min(v.delta),
                ..lo
            };
            hi = TxnValues {
                aid: hi.aid.max(v.aid),
                bid: hi.bid.max(v.bid),
                tid: hi.tid.max(v.tid),
                delta: hi.delta.max(v.delta),
                ..hi
            };
        }
        assert_eq!((lo.bid, hi.bid), (1, 2));
        assert_eq!((lo.tid, hi.tid), (1, 20));
        assert_eq!((lo.delta, hi.delta), (-5000, 5000));
        assert!(lo.aid >= 1 && lo.aid < 100, "{}", lo.aid);
        assert!(hi.aid <= 200_000 && hi.aid > 199_900, "{}", hi.aid);
    }

    #[test]
    fn params_follow_placeholder_order() {
        let v = TxnValues {
            aid: 11,
            bid: 2,
            tid: 13,
            delta: -4,
            ..TxnValues::default()
        };
        let (p, n) = v.params(&INSERT_HISTORY);
        assert_eq!(&p[..n], &[13, 2, 11, -4]);
        let (p, n) = v.params(&UPDATE_ACCOUNT);
        assert_eq!(&p[..n], &[-4, 11]);
    }
}
