//! What differs between two experiments in ways that change the
//! measurement: `--resume` refuses to mix trials made under different
//! recipes in one run.
//!
//! Fields that only change the analysis (name, description, headline,
//! noise, which system is the baseline) may differ; everything that shapes
//! a trial (servers, load, sweep, durations, restart policy, stopping rule,
//! `--quick`) may not.

use super::{Experiment, System};

/// One field that differs: its name in the experiment file, and both values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldChange {
    /// The field, as the experiment file names it.
    pub field: String,
    /// Its value in the stored run.
    pub stored: String,
    /// Its value in the file given now.
    pub given: String,
}

impl std::fmt::Display for FieldChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: the run has {}, this file gives {}",
            self.field, self.stored, self.given
        )
    }
}

/// Every measurement-changing difference between the `stored` run's
/// experiment and the `given` one, in file order; empty when they agree.
pub fn measurement_changes(stored: &Experiment, given: &Experiment) -> Vec<FieldChange> {
    let mut c = Changes(Vec::new());
    let quick = |q: bool| if q { "--quick" } else { "no --quick" };
    c.check("--quick", quick(stored.quick), quick(given.quick));
    let (s, g) = (&stored.trials, &given.trials);
    c.check("trials.duration", dur(s.duration), dur(g.duration));
    c.check("trials.warmup", dur(s.warmup), dur(g.warmup));
    c.check("trials.cooldown", dur(s.cooldown), dur(g.cooldown));
    c.check("trials.restart", dbg(&s.restart), dbg(&g.restart));
    c.check("trials.min", s.min_trials, g.min_trials);
    c.check("trials.max", s.max_trials, g.max_trials);
    c.check("trials.target_ci", s.target_ci, g.target_ci);
    let budget = |b: Option<std::time::Duration>| b.map_or("none".into(), dur);
    c.check("trials.budget", budget(s.budget), budget(g.budget));
    c.check(
        "trials.sample_interval",
        dur(s.sample_interval),
        dur(g.sample_interval),
    );
    c.check("server", dbg(&stored.server), dbg(&given.server));
    c.check("load", dbg(&stored.load), dbg(&given.load));
    c.check(
        "load (common settings)",
        dbg(&stored.load_common),
        dbg(&given.load_common),
    );
    c.check("sweep", dbg(&stored.axes), dbg(&given.axes));
    c.check(
        "system labels",
        labels(&stored.systems),
        labels(&given.systems),
    );
    for (a, b) in stored.systems.iter().zip(&given.systems) {
        let name = format!("system `{}`", a.label);
        c.check(&format!("{name} server"), dbg(&a.server), dbg(&b.server));
        c.check(&format!("{name} load"), dbg(&a.load), dbg(&b.load));
    }
    c.0
}

/// The changes found so far.
struct Changes(Vec<FieldChange>);

impl Changes {
    fn check(&mut self, field: &str, stored: impl ToString, given: impl ToString) {
        let (stored, given) = (stored.to_string(), given.to_string());
        if stored != given {
            self.0.push(FieldChange {
                field: field.into(),
                stored,
                given,
            });
        }
    }
}

fn dur(d: std::time::Duration) -> String {
    crate::units::format_duration(d)
}

fn dbg<T: std::fmt::Debug>(v: &T) -> String {
    format!("{v:?}")
}

fn labels(systems: &[System]) -> String {
    let l: Vec<&str> = systems.iter().map(|s| s.label.as_str()).collect();
    l.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const BASE: &str = "name = \"t\"\n[server]\nkind = \"nginx\"\n[load]\nkind = \"http\"\n\
        [sweep]\nconnections = [1, 2]\n[trials]\nduration = \"500ms\"\nwarmup = \"0s\"\n\
        [quick]\ntrials = { duration = \"150ms\" }\n";

    fn exp(text: &str, quick: bool) -> Experiment {
        Experiment::parse(Path::new("t.toml"), text, quick).unwrap()
    }

    fn fields(a: &Experiment, b: &Experiment) -> Vec<String> {
        measurement_changes(a, b)
            .into_iter()
            .map(|c| c.field)
            .collect()
    }

    #[test]
    fn an_unchanged_recipe_has_no_changes() {
        assert!(fields(&exp(BASE, false), &exp(BASE, false)).is_empty());
        let described = BASE.replace(
            "name = \"t\"",
            "name = \"t\"\ndescription = \"now explained\"",
        );
        assert!(fields(&exp(BASE, false), &exp(&described, false)).is_empty());
    }

    #[test]
    fn quick_against_full_names_both() {
        let f = fields(&exp(BASE, false), &exp(BASE, true));
        assert_eq!(f, ["--quick", "trials.duration"]);
    }

    #[test]
    fn each_measurement_field_is_named() {
        let base = exp(BASE, false);
        for (edit, field) in [
            (
                ("duration = \"500ms\"", "duration = \"400ms\""),
                "trials.duration",
            ),
            (("warmup = \"0s\"", "warmup = \"1s\""), "trials.warmup"),
            (
                (
                    "warmup = \"0s\"",
                    "warmup = \"0s\"\nrestart = \"per_trial\"",
                ),
                "trials.restart",
            ),
            (("connections = [1, 2]", "connections = [1, 3]"), "sweep"),
            (
                ("kind = \"nginx\"", "kind = \"nginx\"\nworker_processes = 2"),
                "server",
            ),
        ] {
            let text = BASE.replace(edit.0, edit.1);
            assert_eq!(fields(&base, &exp(&text, false)), [field], "{}", edit.1);
        }
    }
}
