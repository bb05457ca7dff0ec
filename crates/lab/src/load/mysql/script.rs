//! sysbench's OLTP scripts as data: the statements of `oltp_common.lua`,
//! the groups each script runs per transaction. sysbench's random values
//! (the default `special` distribution for ids and `k`, `#`-digit templates
//! for `c` and `pad`) are [`crate::wire::mysql::values`], shared with the
//! dataset fill.
//!
//! Each group picks one table uniformly and runs its statements `count`
//! times, drawing fresh ids each time, as `execute_point_selects`,
//! `execute_range`, `execute_index_updates` and friends do in sysbench 1.0.

use crate::wire::mysql::values::{c_value, pad_value, special};
use mysql_common::Value;
use rand::rngs::SmallRng;
use rand::Rng;

/// One statement of `oltp_common.lua`; `{t}` is the table number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
}

impl Query {
    pub const ALL: [Query; 9] = [
        Query::PointSelect,
        Query::SimpleRange,
        Query::SumRange,
        Query::OrderRange,
        Query::DistinctRange,
        Query::IndexUpdate,
        Query::NonIndexUpdate,
        Query::Delete,
        Query::Insert,
    ];

    pub fn sql(self, table: u32) -> String {
        let t = table;
        match self {
            Query::PointSelect => format!("SELECT c FROM sbtest{t} WHERE id=?"),
            Query::SimpleRange => format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Query::SumRange => format!("SELECT SUM(k) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
            Query::OrderRange => {
                format!("SELECT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Query::DistinctRange => {
                format!("SELECT DISTINCT c FROM sbtest{t} WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Query::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"),
            Query::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
            Query::Delete => format!("DELETE FROM sbtest{t} WHERE id=?"),
            Query::Insert => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    pub fn writes(self) -> bool {
        matches!(
            self,
            Query::IndexUpdate | Query::NonIndexUpdate | Query::Delete | Query::Insert
        )
    }
}

/// How many times a group runs per transaction: one of sysbench's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    PointSelects,
    /// Once (the range, update and delete/insert options all default to 1).
    One,
}

/// Statements run against one randomly chosen table, `count` times.
#[derive(Clone, Copy, Debug)]
pub struct Group {
    pub queries: &'static [Query],
    pub count: Count,
}

const POINT_SELECTS: Group = Group {
    queries: &[Query::PointSelect],
    count: Count::PointSelects,
};
const fn once(queries: &'static [Query]) -> Group {
    Group {
        queries,
        count: Count::One,
    }
}
const RANGES: [Group; 4] = [
    once(&[Query::SimpleRange]),
    once(&[Query::SumRange]),
    once(&[Query::OrderRange]),
    once(&[Query::DistinctRange]),
];
const WRITES: [Group; 3] = [
    once(&[Query::IndexUpdate]),
    once(&[Query::NonIndexUpdate]),
    once(&[Query::Delete, Query::Insert]),
];

/// A sysbench OLTP script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptKind {
    /// `oltp_read_only`: 10 point selects and the four range selects, in
    /// BEGIN ... COMMIT.
    OltpReadOnly,
    /// `oltp_read_write` (the default): the read-only statements, then an
    /// index update, a non-index update, and a delete plus insert.
    OltpReadWrite,
    /// `oltp_point_select`: one point select, no explicit transaction.
    OltpPointSelect,
    /// `oltp_write_only`: the three write groups, in BEGIN ... COMMIT.
    OltpWriteOnly,
    /// `oltp_update_index`: one index update, no explicit transaction.
    OltpUpdateIndex,
}

const READ_ONLY: &[Group] = &[POINT_SELECTS, RANGES[0], RANGES[1], RANGES[2], RANGES[3]];
const READ_WRITE: &[Group] = &[
    POINT_SELECTS,
    RANGES[0],
    RANGES[1],
    RANGES[2],
    RANGES[3],
    WRITES[0],
    WRITES[1],
    WRITES[2],
];
const WRITE_ONLY: &[Group] = &[WRITES[0], WRITES[1], WRITES[2]];
const ONE_POINT_SELECT: &[Group] = &[once(&[Query::PointSelect])];
const INDEX_UPDATE: &[Group] = &[WRITES[0]];

impl ScriptKind {
    /// Every script, in the order [`ScriptKind::name`]s are listed in errors.
    pub const ALL: [ScriptKind; 5] = [
        ScriptKind::OltpReadOnly,
        ScriptKind::OltpReadWrite,
        ScriptKind::OltpPointSelect,
        ScriptKind::OltpWriteOnly,
        ScriptKind::OltpUpdateIndex,
    ];

    /// sysbench's script name (`oltp_read_write`, ...): what settings and
    /// the command line take (a trailing `.lua` is accepted too).
    pub fn name(self) -> &'static str {
        match self {
            ScriptKind::OltpReadOnly => "oltp_read_only",
            ScriptKind::OltpReadWrite => "oltp_read_write",
            ScriptKind::OltpPointSelect => "oltp_point_select",
            ScriptKind::OltpWriteOnly => "oltp_write_only",
            ScriptKind::OltpUpdateIndex => "oltp_update_index",
        }
    }

    /// The groups of one transaction (event), in order.
    pub fn groups(self) -> &'static [Group] {
        match self {
            ScriptKind::OltpReadOnly => READ_ONLY,
            ScriptKind::OltpReadWrite => READ_WRITE,
            ScriptKind::OltpPointSelect => ONE_POINT_SELECT,
            ScriptKind::OltpWriteOnly => WRITE_ONLY,
            ScriptKind::OltpUpdateIndex => INDEX_UPDATE,
        }
    }

    /// Whether the event is wrapped in BEGIN ... COMMIT.
    pub fn explicit_transaction(self) -> bool {
        !matches!(
            self,
            ScriptKind::OltpPointSelect | ScriptKind::OltpUpdateIndex
        )
    }

    /// The statements this script prepares (for every table).
    pub fn queries(self) -> Vec<Query> {
        Query::ALL
            .into_iter()
            .filter(|q| self.groups().iter().any(|g| g.queries.contains(q)))
            .collect()
    }

    /// Statements per transaction as sysbench counts them: reads, writes
    /// and other (BEGIN and COMMIT).
    pub fn mix(self, opts: &Options) -> QueryMix {
        let mut mix = QueryMix::default();
        for g in self.groups() {
            let n = u64::from(opts.count(g.count));
            for q in g.queries {
                if q.writes() {
                    mix.writes += n;
                } else {
                    mix.reads += n;
                }
            }
        }
        if self.explicit_transaction() {
            mix.other = 2;
        }
        mix
    }

    /// Statements per transaction, BEGIN and COMMIT included.
    pub fn statements_per_transaction(self, opts: &Options) -> u64 {
        let m = self.mix(opts);
        m.reads + m.writes + m.other
    }
}

/// Statements of one transaction by sysbench's classes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryMix {
    /// SELECTs.
    pub reads: u64,
    /// UPDATEs, DELETEs and INSERTs.
    pub writes: u64,
    /// BEGIN and COMMIT (0 for scripts without an explicit transaction).
    pub other: u64,
}

impl std::str::FromStr for ScriptKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ScriptKind::ALL
            .into_iter()
            .find(|k| k.name() == s || k.name() == s.trim_end_matches(".lua"))
            .ok_or_else(|| {
                let names: Vec<_> = ScriptKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown script `{s}`; expected one of: {}",
                    names.join(", ")
                )
            })
    }
}

/// sysbench's OLTP options that shape a transaction (defaults of
/// `oltp_common.lua`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Tables a transaction picks from (`--tables`): `sbtest1..tables`.
    pub tables: u32,
    /// Rows per table (`--table-size`): ids are drawn from 1 to this.
    pub table_size: u32,
    /// Rows a range select spans (`--range_size`, default 100).
    pub range_size: u32,
    /// Point selects per transaction (`--point_selects`, default 10; 1
    /// for `oltp_point_select`).
    pub point_selects: u32,
}

impl Options {
    pub(crate) fn new(tables: u32, table_size: u32) -> Self {
        Options {
            tables,
            table_size,
            range_size: 100,
            point_selects: 10,
        }
    }

    fn count(&self, c: Count) -> u32 {
        match c {
            Count::PointSelects => self.point_selects,
            Count::One => 1,
        }
    }
}

/// Where a prepared statement lives among a connection's statements:
/// table-major, then [`Query::ALL`] order.
pub fn statement_slot(table: u32, q: Query) -> usize {
    (table as usize - 1) * Query::ALL.len() + q.index()
}

/// One statement of a transaction, with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub slot: usize,
    pub params: Vec<Value>,
}

/// Draws one transaction: every statement with fresh random values, in
/// sysbench's order (without BEGIN and COMMIT).
pub fn draw(kind: ScriptKind, opts: &Options, rng: &mut SmallRng, out: &mut Vec<Call>) {
    out.clear();
    for g in kind.groups() {
        let table = rng.gen_range(1..=opts.tables.max(1));
        for _ in 0..opts.count(g.count) {
            let id = special(rng, 1, opts.table_size);
            let k = special(rng, 1, opts.table_size);
            for &q in g.queries {
                out.push(Call {
                    slot: statement_slot(table, q),
                    params: params(q, id, k, opts, rng),
                });
            }
        }
    }
}

fn params(q: Query, id: u32, k: u32, opts: &Options, rng: &mut SmallRng) -> Vec<Value> {
    let int = |v: u32| Value::Int(i64::from(v));
    match q {
        Query::PointSelect | Query::IndexUpdate | Query::Delete => vec![int(id)],
        Query::SimpleRange | Query::SumRange | Query::OrderRange | Query::DistinctRange => {
            vec![int(id), int(id + opts.range_size - 1)]
        }
        Query::NonIndexUpdate => vec![Value::Bytes(c_value(rng)), int(id)],
        Query::Insert => vec![
            int(id),
            int(k),
            Value::Bytes(c_value(rng)),
            Value::Bytes(pad_value(rng)),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn mixes_match_sysbench() {
        let o = Options::new(4, 10_000);
        let per = |k: ScriptKind| k.statements_per_transaction(&o);
        assert_eq!(per(ScriptKind::OltpReadOnly), 16); // BEGIN, 10 points, 4 ranges, COMMIT
        assert_eq!(per(ScriptKind::OltpReadWrite), 20);
        assert_eq!(per(ScriptKind::OltpWriteOnly), 6);
        assert_eq!(per(ScriptKind::OltpPointSelect), 1);
        assert_eq!(per(ScriptKind::OltpUpdateIndex), 1);
        let mut rng = SmallRng::seed_from_u64(3);
        let mut calls = Vec::new();
        draw(ScriptKind::OltpReadWrite, &o, &mut rng, &mut calls);
        assert_eq!(calls.len(), 18);
        let del = &calls[16];
        let ins = &calls[17];
        assert_eq!(
            del.params[0], ins.params[0],
            "delete and insert share the id"
        );
        for k in ScriptKind::ALL {
            assert_eq!(k.name().parse::<ScriptKind>().unwrap(), k);
            for q in k.queries() {
                let marks = q.sql(1).matches('?').count();
                let p = params(q, 5, 6, &o, &mut rng);
                assert_eq!(marks, p.len(), "{}", q.sql(1));
            }
        }
        assert!("oltp_insert"
            .parse::<ScriptKind>()
            .unwrap_err()
            .contains("oltp_read_only"));
    }
}
