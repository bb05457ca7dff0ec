//! Schema versions: a new store gets `schema.sql` (version 1) and then every
//! migration in order, so new and upgraded stores have the same shape. Each
//! migration is additive (new tables or columns, filled for the runs already
//! stored), so an old store opens and reports what it reported before.

use crate::record::catalog::Catalog;
use rusqlite::{params, Connection};

/// The newest schema version.
pub const LATEST: i64 = 1 + MIGRATIONS.len() as i64;

/// `MIGRATIONS[i]` upgrades a store from version `i + 1` to `i + 2`.
const MIGRATIONS: &[fn(&Connection) -> rusqlite::Result<()>] = &[
    v2_run_kind_and_noise,
    v3_run_events_and_leases,
    v4_profiles,
    v5_run_server_kind,
    v6_trial_failure_cause,
    v7_run_label_and_revision,
    v8_profile_offcpu,
    v9_latency_p75,
    v10_repeat_groups,
    v11_steady_windows,
    v12_run_seed_and_trial_order,
    v13_run_rate_unit_and_parallelism,
];

/// Brings the store up to [`LATEST`] and returns the version it had (0: an
/// empty file). All steps run in one `BEGIN IMMEDIATE` transaction that
/// re-reads the version under the write lock, so two processes opening the
/// same new or old store (a runner and a reader) upgrade it exactly once.
pub fn upgrade(conn: &Connection, catalog: &Catalog) -> rusqlite::Result<i64> {
    let read = |c: &Connection| c.pragma_query_value(None, "user_version", |r| r.get::<_, i64>(0));
    let seen = read(conn)?;
    if seen >= LATEST {
        return Ok(seen);
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let done = read(conn).and_then(|version| steps(conn, version, catalog).map(|()| version));
    conn.execute_batch(if done.is_ok() { "COMMIT" } else { "ROLLBACK" })?;
    done
}

fn steps(conn: &Connection, version: i64, catalog: &Catalog) -> rusqlite::Result<()> {
    if version == 0 {
        conn.execute_batch(include_str!("schema.sql"))?;
    }
    for (step, migration) in MIGRATIONS.iter().enumerate() {
        if version.max(1) < step as i64 + 2 {
            migration(conn)?;
        }
    }
    if version < 13 {
        v13_fill_run_kinds(conn, catalog)?;
    }
    if version < LATEST {
        conn.pragma_update(None, "user_version", LATEST)?;
    }
    Ok(())
}

/// Version-1 reports judged every run by a fixed 2% noise floor.
const V1_REPORT_NOISE: f64 = 0.02;

/// Version 2: each run records its load kind (the report's unit) and its
/// `[trials] noise`, so readers need not re-parse the experiment file.
/// Existing runs get them from their stored experiment text.
fn v2_run_kind_and_noise(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "ALTER TABLE runs ADD COLUMN load_kind TEXT NOT NULL DEFAULT '';
         ALTER TABLE runs ADD COLUMN noise REAL NOT NULL DEFAULT 0.02;",
    )?;
    for (id, doc) in experiments(conn)? {
        let kind = component_kind(&doc, "load");
        let noise = doc
            .get("trials")
            .and_then(|t| t.get("noise"))
            .and_then(|n| n.as_float())
            .unwrap_or(V1_REPORT_NOISE);
        conn.execute(
            "UPDATE runs SET load_kind = ?1, noise = ?2 WHERE id = ?3",
            params![kind, noise, id],
        )?;
    }
    Ok(())
}

/// Every run's id and its experiment file, parsed (empty when the text no
/// longer parses).
fn experiments(conn: &Connection) -> rusqlite::Result<Vec<(i64, toml::Table)>> {
    let runs: Vec<(i64, String)> = conn
        .prepare("SELECT id, experiment FROM runs")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    Ok(runs
        .into_iter()
        .map(|(id, text)| (id, text.parse().unwrap_or_default()))
        .collect())
}

/// The `kind` of an experiment's `[server]` or `[load]` table, or `""`.
fn component_kind<'a>(doc: &'a toml::Table, section: &str) -> &'a str {
    doc.get(section)
        .and_then(|l| l.get("kind"))
        .and_then(|k| k.as_str())
        .unwrap_or("")
}

/// Version 3: `run_events` (a trial interrupted by SIGINT/SIGTERM is an
/// event, not a trial; resumes) and `run_leases` (which live scalelab
/// process runs a run). New tables only; old runs have no events or leases.
fn v3_run_events_and_leases(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(include_str!("migrate_v3.sql"))
}

/// Version 4: flame-graph profiles (`run --profile`); older runs have none.
fn v4_profiles(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(include_str!("profiles.sql"))
}

/// Version 5: each run records its server kind, so the report can tell from
/// the kind's registry entry which `server.<setting>` axes count parallel
/// workers. Existing runs get it from their stored experiment text.
fn v5_run_server_kind(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("ALTER TABLE runs ADD COLUMN server_kind TEXT NOT NULL DEFAULT '';")?;
    for (id, doc) in experiments(conn)? {
        conn.execute(
            "UPDATE runs SET server_kind = ?1 WHERE id = ?2",
            params![component_kind(&doc, "server"), id],
        )?;
    }
    Ok(())
}

/// Version 6: `trials.failure_cause`, the environmental cause of a failed
/// trial (`lost_host`, `server_start`, `disk_full`; see
/// [`super::retry::FailureCause`]), which `--resume` retries. NULL for
/// older trials: their causes were not recorded, so they are not retried.
fn v6_trial_failure_cause(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("ALTER TABLE trials ADD COLUMN failure_cause TEXT;")
}

/// Version 7: `runs.label` (`run --label`, else the server host's OS and
/// kernel release, what legends and verdicts call the run) and
/// `runs.revision` (`run --commit`, the revision of the software under
/// test). NULL for older runs: readers fall back to the label of their
/// stored fingerprint ([`crate::record::environment::Environment::os_label`]).
fn v7_run_label_and_revision(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "ALTER TABLE runs ADD COLUMN label TEXT;
         ALTER TABLE runs ADD COLUMN revision TEXT;",
    )
}

/// Version 8: off-CPU profiles (issue 28): `profiles.offcpu` holds the
/// blocked time by stack from a third extra trial, `offcpu_error` why there
/// is none. NULL for older profiles.
fn v8_profile_offcpu(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "ALTER TABLE profiles ADD COLUMN offcpu TEXT;
         ALTER TABLE profiles ADD COLUMN offcpu_error TEXT;",
    )
}

/// Version 9: `measurements.latency_p75_us`, so a stored trial keeps the
/// same latency fields a load command reports (`load::result::LatencySummary`,
/// the one field set). NULL for older trials, whose summaries read as
/// before (without `p75`).
fn v9_latency_p75(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("ALTER TABLE measurements ADD COLUMN latency_p75_us INTEGER;")
}

/// Version 10: repeat groups (issue 46): `runs.repeat_of` is the first run
/// of the `run --repeat N` (or `[trials] runs = N`) group a run belongs
/// to, `runs.repeats` the group's size, so `--resume` continues the whole
/// group. NULL for a run made alone, and for older runs (resumed alone).
fn v10_repeat_groups(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "ALTER TABLE runs ADD COLUMN repeat_of INTEGER;
         ALTER TABLE runs ADD COLUMN repeats INTEGER;",
    )
}

/// Version 11: steady windows (issue 47). `timelines.bucket_ms` is the
/// width of the timeline's buckets (1000 for the trials already stored,
/// which kept whole seconds; 100 by default from now on),
/// `last_partial` whether the run ended inside the last one (NULL: not
/// known), `steadiness` the window's class (`analysis::steady`) with its
/// `steadiness_detail`, and `warmup_s` the warm-up the trial ran (an
/// automatic one's chosen length), NULL for older trials;
/// `unsteady_left_out` is 1 for an unsteady trial of a run with
/// `[trials] unsteady = "exclude"`, which verdicts leave out.
fn v11_steady_windows(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "ALTER TABLE timelines ADD COLUMN bucket_ms INTEGER NOT NULL DEFAULT 1000;
         ALTER TABLE timelines ADD COLUMN last_partial INTEGER;
         ALTER TABLE timelines ADD COLUMN steadiness TEXT;
         ALTER TABLE timelines ADD COLUMN steadiness_detail TEXT;
         ALTER TABLE timelines ADD COLUMN warmup_s REAL;
         ALTER TABLE timelines ADD COLUMN unsteady_left_out INTEGER NOT NULL DEFAULT 0;",
    )
}

/// Version 12: the seeded random order (issue 47). `runs.seed` is the seed
/// the run's order was drawn from and `runs.trial_order` its `[trials]
/// order` (`random` or `sweep`); `trials.round_position` is the trial's
/// place in its round (0: it ran first) and `trials.start_seq` its place in
/// the run's start order (0, 1, 2, ...). NULL for older runs and trials,
/// which ran in sweep order.
fn v12_run_seed_and_trial_order(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "ALTER TABLE runs ADD COLUMN seed INTEGER;
         ALTER TABLE runs ADD COLUMN trial_order TEXT;
         ALTER TABLE trials ADD COLUMN round_position INTEGER;
         ALTER TABLE trials ADD COLUMN start_seq INTEGER;",
    )
}

/// Version 13: each run records what its kinds told the report, so the
/// report never looks a kind up by name: `runs.rate_unit` is the load
/// kind's unit (`requests/s`, ...) and `runs.parallelism` the server
/// kind's settings that count parallel workers (a JSON list), filled for
/// the runs already stored from the kinds this version knows
/// ([`v13_fill_run_kinds`]; NULL for a kind it does not: the report then
/// says so and shows requests/s).
fn v13_run_rate_unit_and_parallelism(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "ALTER TABLE runs ADD COLUMN rate_unit TEXT;
         ALTER TABLE runs ADD COLUMN parallelism TEXT;",
    )
}

/// Version 13's second half: the stored runs' rate units and parallelism
/// settings, from the kinds the `catalog` the store was opened with knows.
fn v13_fill_run_kinds(conn: &Connection, catalog: &Catalog) -> rusqlite::Result<()> {
    for (name, unit) in &catalog.units {
        conn.execute(
            "UPDATE runs SET rate_unit = ?1 WHERE load_kind = ?2",
            params![unit.as_str(), name],
        )?;
    }
    for (name, settings) in &catalog.parallelism {
        conn.execute(
            "UPDATE runs SET parallelism = ?1 WHERE server_kind = ?2",
            params![super::run_kinds::parallelism_text(settings), name],
        )?;
    }
    Ok(())
}
