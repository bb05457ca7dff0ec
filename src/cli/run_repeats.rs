//! Which runs one `scalelab run` makes or continues: a new sweep's
//! repeats (`--repeat N`, `[trials] runs = N`), or, with `--resume ID`, the
//! rest of ID's repeat group: its unfinished runs, then the repeats it
//! never started (`--repeat 1 --resume ID` continues ID alone).

use scalelab::store::{RepeatGroup, Store};

/// One run of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Continue this stored run.
    Resume(i64),
    /// Start a new run.
    New,
}

/// The runs to make, and the group they belong to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepeatPlan {
    /// In order.
    pub steps: Vec<Step>,
    /// The group's size: 1 for a run made alone.
    pub repeats: u32,
    /// The resumed group's first run and its runs already finished, which
    /// the summary after the last repeat counts with the new ones.
    pub group: Option<(i64, Vec<i64>)>,
    /// What to say about the plan before it runs, if anything.
    pub note: Option<String>,
}

impl RepeatPlan {
    /// `repeats` new runs.
    pub fn new_runs(repeats: u32) -> RepeatPlan {
        RepeatPlan {
            steps: vec![Step::New; repeats as usize],
            repeats,
            group: None,
            note: None,
        }
    }

    /// What `--resume id` continues: `group` (`None`: the run was made
    /// alone, or before groups were stored) unless `alone` (`--repeat 1`);
    /// `asked` is the recipe's or `--repeat`'s count, said when it differs.
    pub fn resume(id: i64, group: Option<RepeatGroup>, alone: bool, asked: u32) -> RepeatPlan {
        let single = |note: Option<String>| RepeatPlan {
            steps: vec![Step::Resume(id)],
            repeats: 1,
            group: None,
            note,
        };
        match group {
            _ if alone => single(None),
            None if asked > 1 => single(Some(format!(
                "run {id} is not one of a stored repeat group (it was made alone, or before \
                 groups were stored): resuming it alone; make more repeats with \
                 `scalelab run --repeat N`"
            ))),
            None => single(None),
            Some(g) => {
                let unfinished = g.unfinished();
                let finished = (g.members.iter())
                    .map(|(id, _)| *id)
                    .filter(|id| !unfinished.contains(id))
                    .collect();
                let mut steps: Vec<Step> = unfinished.iter().map(|&id| Step::Resume(id)).collect();
                steps.extend(std::iter::repeat(Step::New).take(g.missing() as usize));
                let note = format!(
                    "run {id} is one of the {} repeats of run {}'s group ({} made): continuing {} \
                     unfinished and starting {} more{}",
                    g.repeats,
                    g.first,
                    g.members.len(),
                    unfinished.len(),
                    g.missing(),
                    if asked != g.repeats && asked > 1 {
                        format!(" (the group keeps its {} repeats, not {asked})", g.repeats)
                    } else {
                        String::new()
                    }
                );
                RepeatPlan {
                    steps,
                    repeats: g.repeats,
                    group: Some((g.first, finished)),
                    note: Some(note),
                }
            }
        }
    }
}

/// The plan for `resume` (`--resume`) or a new sweep of `asked` repeats;
/// `alone` is `--repeat 1`.
pub fn plan(
    store: &Store,
    resume: Option<i64>,
    asked: u32,
    alone: bool,
) -> anyhow::Result<RepeatPlan> {
    Ok(match resume {
        None => RepeatPlan::new_runs(asked),
        Some(id) => RepeatPlan::resume(id, store.repeat_group(id)?, alone, asked),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalelab::store::RunStatus;

    fn group(statuses: &[&str], repeats: u32) -> RepeatGroup {
        RepeatGroup {
            first: 10,
            repeats,
            members: (statuses.iter().enumerate())
                .map(|(i, s)| (10 + i as i64, RunStatus::parse(s).unwrap()))
                .collect(),
        }
    }

    #[test]
    fn resume_continues_the_group_its_run_belongs_to() {
        // Interrupted in repeat 2 of 3: 2 resumes, 3 starts.
        let p = RepeatPlan::resume(11, Some(group(&["finished", "interrupted"], 3)), false, 3);
        assert_eq!(p.steps, vec![Step::Resume(11), Step::New]);
        assert_eq!(p.group, Some((10, vec![10])));
        assert_eq!(p.repeats, 3);
        let note = p.note.unwrap();
        assert!(
            note.contains("continuing 1 unfinished and starting 1 more"),
            "{note}"
        );
        // Interrupted in the pause after repeat 2: only repeat 3 is left.
        let p = RepeatPlan::resume(11, Some(group(&["finished", "finished"], 3)), false, 1);
        assert_eq!(p.steps, vec![Step::New]);
        // --repeat 1: that run alone.
        let p = RepeatPlan::resume(11, Some(group(&["finished", "interrupted"], 3)), true, 1);
        assert_eq!((p.steps, p.group), (vec![Step::Resume(11)], None));
        // A run of no group, with runs = 3: alone, and said.
        let p = RepeatPlan::resume(5, None, false, 3);
        assert_eq!(p.steps, vec![Step::Resume(5)]);
        assert!(p.note.unwrap().contains("resuming it alone"));
        assert_eq!(RepeatPlan::resume(5, None, false, 1).note, None);
    }
}
