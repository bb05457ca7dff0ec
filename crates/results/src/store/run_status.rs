//! Where a stored run stands: the `runs.status` column as a type, so a
//! misspelt status is a compile error and not a run that `history` or
//! `check` silently skips.

use serde::{Deserialize, Serialize};

/// A run's status, as the store's `runs.status` column holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Its trials are being run (or its process was killed: see
    /// [`super::RunListing::shown_status`]).
    Running,
    /// Every trial it planned ran.
    Finished,
    /// Stopped early (Ctrl-C, or trials discarded); `run --resume` goes on.
    Interrupted,
    /// Ended by an error (written by earlier versions; still read).
    Failed,
}

impl RunStatus {
    /// The column's text.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }

    /// The status the column's `text` names; `None` for any other text.
    pub fn parse(text: &str) -> Option<RunStatus> {
        [
            RunStatus::Running,
            RunStatus::Finished,
            RunStatus::Interrupted,
            RunStatus::Failed,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl rusqlite::types::FromSql for RunStatus {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let text = value.as_str()?;
        RunStatus::parse(text).ok_or_else(|| {
            let why =
                format!("runs.status is `{text}`, not running, finished, interrupted or failed");
            rusqlite::types::FromSqlError::Other(why.into())
        })
    }
}

impl rusqlite::types::ToSql for RunStatus {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(self.as_str().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_status_reads_back_as_written_and_others_are_refused() {
        for s in [
            RunStatus::Running,
            RunStatus::Finished,
            RunStatus::Interrupted,
            RunStatus::Failed,
        ] {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(RunStatus::parse("Finished"), None);
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let read = |text: &str| conn.query_row("SELECT ?1", [text], |r| r.get::<_, RunStatus>(0));
        assert_eq!(read("interrupted").unwrap(), RunStatus::Interrupted);
        let err = read("done").unwrap_err().to_string();
        assert!(err.contains("runs.status is `done`"), "{err}");
    }
}
