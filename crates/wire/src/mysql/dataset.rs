//! sysbench's OLTP dataset, as `sysbench oltp_* prepare` builds it:
//! tables `sbtest1..N`, each with `table_size` rows of an auto-increment
//! `id`, `k` drawn from the default distribution over [1, table_size], and
//! `c`/`pad` from the digit templates, inserted in multi-row INSERTs; then
//! the secondary index `k_N` on `k`.

use super::client::{Client, ClientError};
use super::values::{c_value, pad_value, special};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::time::{Duration, Instant};

/// Rows per INSERT statement (sysbench's bulk insert sends ~1 MB batches).
const ROWS_PER_INSERT: u32 = 1000;

/// What was built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DatasetSize {
    /// Tables built: `sbtest1` to `sbtest{tables}`.
    pub tables: u32,
    /// Rows in each table.
    pub table_size: u32,
    /// Data and index bytes of the database afterwards, from
    /// `information_schema.tables`; 0 when that could not be read.
    pub bytes: u64,
    /// Wall time of the whole build: drop, create, insert, index.
    pub elapsed: Duration,
}

/// Drops and rebuilds `sbtest1..tables` with `table_size` rows each.
pub fn create(c: &mut Client, tables: u32, table_size: u32) -> Result<DatasetSize, ClientError> {
    let started = Instant::now();
    let mut rng = SmallRng::seed_from_u64(0x5b7e57);
    for t in 1..=tables {
        c.execute(&format!("DROP TABLE IF EXISTS sbtest{t}"))?;
        c.execute(&format!(
            "CREATE TABLE sbtest{t} (\
             id INTEGER NOT NULL AUTO_INCREMENT, \
             k INTEGER DEFAULT '0' NOT NULL, \
             c CHAR(120) DEFAULT '' NOT NULL, \
             pad CHAR(60) DEFAULT '' NOT NULL, \
             PRIMARY KEY (id)) ENGINE = InnoDB"
        ))?;
        let mut left = table_size;
        while left > 0 {
            let n = left.min(ROWS_PER_INSERT);
            c.execute(&insert_batch(t, n, table_size, &mut rng))?;
            left -= n;
        }
        c.execute(&format!("CREATE INDEX k_{t} ON sbtest{t}(k)"))?;
    }
    Ok(DatasetSize {
        tables,
        table_size,
        bytes: size(c).unwrap_or(0),
        elapsed: started.elapsed(),
    })
}

fn insert_batch(table: u32, rows: u32, table_size: u32, rng: &mut SmallRng) -> String {
    let mut sql = format!("INSERT INTO sbtest{table}(k, c, pad) VALUES ");
    for i in 0..rows {
        if i > 0 {
            sql.push(',');
        }
        let k = special(rng, 1, table_size);
        let c = String::from_utf8(c_value(rng)).unwrap_or_default();
        let pad = String::from_utf8(pad_value(rng)).unwrap_or_default();
        sql.push_str(&format!("({k}, '{c}', '{pad}')"));
    }
    sql
}

/// Bytes of data and indexes in the current database.
pub fn size(c: &mut Client) -> Result<u64, ClientError> {
    c.query_i64(
        "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables \
         WHERE table_schema = DATABASE()",
    )
    .map(|v| v.max(0) as u64)
}

/// The sbtest tables found in the current database: how many are numbered
/// 1..N without a gap, and the rows of `sbtest1` (its largest id).
pub fn detect(c: &mut Client) -> Result<(u32, u32), ClientError> {
    let rows = c.query(
        "SELECT table_name FROM information_schema.tables \
         WHERE table_schema = DATABASE() AND table_name LIKE 'sbtest%'",
    )?;
    let mut numbers: Vec<u32> = rows
        .iter()
        .filter_map(|r| r.first().cloned().flatten())
        .filter_map(|name| name.strip_prefix("sbtest").and_then(|n| n.parse().ok()))
        .collect();
    numbers.sort_unstable();
    let tables = numbers
        .iter()
        .enumerate()
        .take_while(|(i, &n)| n == *i as u32 + 1)
        .count() as u32;
    if tables == 0 {
        return Ok((0, 0));
    }
    let size = c.query_i64("SELECT COALESCE(MAX(id), 0) FROM sbtest1")?;
    Ok((tables, size.max(0) as u32))
}
