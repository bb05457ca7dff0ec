//! Repeat groups: the runs one `run --repeat N` (or `[trials] runs = N`)
//! makes are one group, so `--resume` of any of them continues the group:
//! its unfinished runs, then the repeats it never started. Each run of a
//! group stores the group's first run (`runs.repeat_of`) and its size
//! (`runs.repeats`); a run made alone has neither.

use super::{RunStatus, Store, StoreError};
use rusqlite::OptionalExtension;

/// The runs of one repeat group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepeatGroup {
    /// The group's first run: its id names the group.
    pub first: i64,
    /// How many runs the group is to have.
    pub repeats: u32,
    /// Its runs made so far, oldest first, with their status.
    pub members: Vec<(i64, RunStatus)>,
}

impl RepeatGroup {
    /// The runs not finished (interrupted, or left `running` by a killed
    /// process), oldest first.
    pub fn unfinished(&self) -> Vec<i64> {
        (self.members.iter())
            .filter(|(_, status)| !matches!(status, RunStatus::Finished | RunStatus::Failed))
            .map(|(id, _)| *id)
            .collect()
    }

    /// The repeats never started.
    pub fn missing(&self) -> u32 {
        self.repeats.saturating_sub(self.members.len() as u32)
    }
}

impl Store {
    /// The repeat group run `run_id` belongs to; `None` for a run made
    /// alone (or before groups were stored).
    pub fn repeat_group(&self, run_id: i64) -> Result<Option<RepeatGroup>, StoreError> {
        let found: Option<(Option<i64>, Option<u32>)> = self
            .conn
            .query_row(
                "SELECT repeat_of, repeats FROM runs WHERE id = ?1",
                [run_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((Some(first), Some(repeats))) = found else {
            return Ok(None);
        };
        let mut stmt = self
            .conn
            .prepare("SELECT id, status FROM runs WHERE repeat_of = ?1 ORDER BY id")?;
        let members = stmt
            .query_map([first], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(RepeatGroup {
            first,
            repeats,
            members,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_knows_its_unfinished_and_missing_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("s.sqlite"), scalelab_lab::catalog()).unwrap();
        let a = crate::store::tests::run_in_group(&mut s, Some((None, 3)));
        let b = crate::store::tests::run_in_group(&mut s, Some((Some(a), 3)));
        let alone = crate::store::tests::run(&mut s);
        s.set_run_status(a, RunStatus::Finished).unwrap();
        s.set_run_status(b, RunStatus::Interrupted).unwrap();
        let g = s.repeat_group(b).unwrap().unwrap();
        assert_eq!(g.first, a);
        assert_eq!(g.members.len(), 2);
        assert_eq!(g.unfinished(), vec![b]);
        assert_eq!(g.missing(), 1);
        assert_eq!(s.repeat_group(a).unwrap(), Some(g));
        assert_eq!(s.repeat_group(alone).unwrap(), None);
    }
}
