//! The seeded trial order (schema 12): the run's seed and `[trials] order`,
//! and each trial's place in its round and in the run's start order.

use super::{Store, StoreError};
use rusqlite::{params, OptionalExtension};

impl Store {
    /// Records the seed and the order (`random` or `sweep`) of run `run_id`.
    pub fn set_run_order(&mut self, run_id: i64, seed: u64, order: &str) -> Result<(), StoreError> {
        // The seed is a u64 kept in SQLite's i64, bit for bit.
        self.conn.execute(
            "UPDATE runs SET seed = ?1, trial_order = ?2 WHERE id = ?3",
            params![seed as i64, order, run_id],
        )?;
        Ok(())
    }

    /// Records where trial `trial` of `system` at point `point_index` ran:
    /// its place in its round and in the run's start order.
    pub fn set_trial_place(
        &mut self,
        run_id: i64,
        (system, point_index, trial): (&str, u32, u32),
        place: super::TrialPlace,
    ) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE trials SET round_position = ?1, start_seq = ?2
             WHERE run_id = ?3 AND system = ?4 AND point_index = ?5 AND trial = ?6",
            params![
                place.round_position,
                place.start_seq,
                run_id,
                system,
                point_index,
                trial
            ],
        )?;
        Ok(())
    }

    /// The next place in run `run_id`'s start order: one past the highest
    /// stored (0 for a run without placed trials), so a resumed run goes on
    /// counting.
    pub fn next_start_seq(&self, run_id: i64) -> Result<u32, StoreError> {
        let highest: Option<u32> = self
            .conn
            .query_row(
                "SELECT max(start_seq) FROM trials WHERE run_id = ?1",
                [run_id],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        Ok(highest.map_or(0, |h| h + 1))
    }
}
