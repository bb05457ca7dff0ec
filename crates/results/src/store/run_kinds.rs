//! What a run's kinds told the report, stored with the run (schema 13):
//! the load kind's rate unit and the server kind's parallelism settings,
//! so that `report` reads them from the run and never looks a kind up by
//! its name. The run's writer takes them from the catalog
//! ([`Catalog::rate_unit_of`](crate::record::catalog::Catalog::rate_unit_of)).

use crate::units::RateUnit;

/// `runs.rate_unit`'s text for `unit` is [`RateUnit::as_str`]; this reads
/// it back (`None`: NULL, or a unit this version does not know).
pub fn rate_unit_from_text(text: Option<&str>) -> Option<RateUnit> {
    let text = text?;
    RateUnit::ALL.into_iter().find(|u| u.as_str() == text)
}

/// `runs.parallelism`'s text: the settings as a JSON list.
pub fn parallelism_text(settings: &[&str]) -> String {
    serde_json::to_string(settings).unwrap_or_else(|_| "[]".into())
}

/// Reads `runs.parallelism` back (`None`: NULL, or not a list of names).
pub fn parallelism_from_text(text: Option<&str>) -> Option<Vec<String>> {
    serde_json::from_str(text?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store of schema 12 (no kinds stored with its runs) is upgraded:
    /// its runs' kinds are read from the registries once, by name, and the
    /// report then reads them from the run.
    #[test]
    fn an_older_stores_runs_get_their_kinds_unit_and_parallelism() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sqlite");
        let mut store = crate::store::Store::open(&path, scalelab_lab::catalog()).unwrap();
        let id = crate::store::tests::run(&mut store);
        store
            .conn
            .execute_batch(&format!(
                "UPDATE runs SET load_kind = 'pg', server_kind = 'mariadb' WHERE id = {id};
                 ALTER TABLE runs DROP COLUMN rate_unit;
                 ALTER TABLE runs DROP COLUMN parallelism;
                 PRAGMA user_version = 12;"
            ))
            .unwrap();
        drop(store);
        let store = crate::store::Store::open(&path, scalelab_lab::catalog()).unwrap();
        let run = store.load_run("latest").unwrap().run;
        assert_eq!(run.rate_unit, Some(RateUnit::Transactions));
        assert_eq!(run.parallelism, Some(vec!["thread_pool_size".to_string()]));
        // A run made now stores what its kinds declare.
        let mut store = store;
        let id = crate::store::tests::run(&mut store);
        let run = store.load_run(&id.to_string()).unwrap().run;
        assert_eq!(run.rate_unit, Some(RateUnit::Requests));
        assert_eq!(run.parallelism, Some(vec!["worker_processes".to_string()]));
    }

    #[test]
    fn units_and_settings_read_back_as_written() {
        for u in RateUnit::ALL {
            assert_eq!(rate_unit_from_text(Some(u.as_str())), Some(u));
        }
        assert_eq!(rate_unit_from_text(Some("furlongs/s")), None);
        assert_eq!(rate_unit_from_text(None), None);
        let text = parallelism_text(&["worker_processes", "threads"]);
        assert_eq!(
            parallelism_from_text(Some(&text)),
            Some(vec!["worker_processes".into(), "threads".into()])
        );
        assert_eq!(parallelism_from_text(Some("{")), None);
    }
}
