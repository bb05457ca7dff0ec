//! pgbench's dataset at scale S, as `pgbench -i -s S` builds it (client-side
//! generation, default steps `dtgvp`): the four tables with pgbench's columns
//! and `fillfactor=100`, S branches, 10*S tellers and 100000*S accounts with
//! zero balances (tellers and branches keep a NULL filler, accounts a
//! blank-padded one), an empty history, then VACUUM ANALYZE and the primary
//! keys. Rows go in with `COPY ... FROM STDIN (FREEZE)` in the transaction
//! that creates the tables.

use super::client::Client;
use super::codec::{put_int, PgError};
use bytes::{BufMut, BytesMut};
use std::time::{Duration, Instant};

/// Rows per scale unit, as in pgbench.
pub const BRANCHES: i64 = 1;
/// Tellers per scale unit.
pub const TELLERS: i64 = 10;
/// Accounts per scale unit.
pub const ACCOUNTS: i64 = 100_000;

/// At this scale pgbench switches account ids to bigint.
const BIGINT_SCALE: u32 = 20_000;
/// Rows generated per COPY chunk.
const CHUNK_ROWS: i64 = 4096;

/// What [`create`] built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetSize {
    /// pgbench's scale: `scale` branches, 10 tellers and 100 000 accounts
    /// per branch.
    pub scale: u32,
    /// `pg_database_size` of the database afterwards, in bytes.
    pub bytes: u64,
    /// Wall time of the whole build: drop, create, COPY, vacuum, keys.
    pub elapsed: Duration,
}

fn ddl(scale: u32) -> [String; 4] {
    let aid = if scale >= BIGINT_SCALE {
        "bigint"
    } else {
        "int"
    };
    [
        "create table pgbench_history(tid int,bid int,aid int,delta int,mtime timestamp,filler char(22))".into(),
        "create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)".into(),
        format!("create table pgbench_accounts(aid {aid} not null,bid int,abalance int,filler char(84)) with (fillfactor=100)"),
        "create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100)".into(),
    ]
}

/// Drops any pgbench tables and builds the dataset at `scale` (>= 1).
/// Long statements run without a read timeout.
pub fn create(client: &mut Client, scale: u32) -> Result<DatasetSize, PgError> {
    if scale == 0 {
        return Err(PgError::Protocol(
            "the pgbench scale must be at least 1".into(),
        ));
    }
    let started = Instant::now();
    client.set_timeout(None)?;
    client.execute(
        "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
    )?;
    client.execute("begin")?;
    for stmt in ddl(scale) {
        client.execute(&stmt)?;
    }
    let s = i64::from(scale);
    copy_rows(
        client,
        "copy pgbench_branches(bid,bbalance) from stdin with (freeze on)",
        BRANCHES * s,
        |i, out| {
            put_int(i, out);
            out.put_slice(b"\t0\n");
        },
    )?;
    copy_rows(
        client,
        "copy pgbench_tellers(tid,bid,tbalance) from stdin with (freeze on)",
        TELLERS * s,
        |i, out| {
            put_int(i, out);
            out.put_u8(b'\t');
            put_int((i - 1) / TELLERS + 1, out);
            out.put_slice(b"\t0\n");
        },
    )?;
    copy_rows(
        client,
        "copy pgbench_accounts from stdin with (freeze on)",
        ACCOUNTS * s,
        |i, out| {
            put_int(i, out);
            out.put_u8(b'\t');
            put_int((i - 1) / ACCOUNTS + 1, out);
            // abalance 0, filler '' (char(84) pads it with blanks).
            out.put_slice(b"\t0\t\n");
        },
    )?;
    client.execute("commit")?;
    for table in ["branches", "tellers", "accounts", "history"] {
        client.execute(&format!("vacuum analyze pgbench_{table}"))?;
    }
    client.execute(
        "alter table pgbench_branches add primary key (bid); \
         alter table pgbench_tellers add primary key (tid); \
         alter table pgbench_accounts add primary key (aid)",
    )?;
    let bytes = database_size(client)?;
    Ok(DatasetSize {
        scale,
        bytes,
        elapsed: started.elapsed(),
    })
}

fn copy_rows(
    client: &mut Client,
    sql: &str,
    rows: i64,
    mut row: impl FnMut(i64, &mut BytesMut),
) -> Result<(), PgError> {
    let mut next = 1;
    client.copy_in(sql, |out| {
        let end = (next + CHUNK_ROWS).min(rows + 1);
        while next < end {
            row(next, out);
            next += 1;
        }
        next <= rows
    })
}

/// `pg_database_size` of the current database.
pub fn database_size(client: &mut Client) -> Result<u64, PgError> {
    let n = client.query_i64("select pg_database_size(current_database())")?;
    Ok(n.max(0) as u64)
}

/// The scale of an existing dataset, as pgbench detects it: the number of
/// rows in `pgbench_branches`.
pub fn detect_scale(client: &mut Client) -> Result<u32, PgError> {
    let n = client.query_i64("select count(*) from pgbench_branches")?;
    u32::try_from(n).map_err(|_| PgError::Protocol(format!("pgbench_branches has {n} rows")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_follows_pgbench_and_widens_aid_at_large_scales() {
        let small = ddl(10);
        assert!(small[2].contains("aid int not null"));
        assert!(
            small
                .iter()
                .filter(|s| s.contains("fillfactor=100"))
                .count()
                == 3
        );
        assert!(ddl(20_000)[2].contains("aid bigint not null"));
    }
}
