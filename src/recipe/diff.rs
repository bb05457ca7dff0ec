//! The recipe diff of [`crate::record::recipe_diff`], between two
//! experiments read now: what `--resume` refuses to mix. The rule and its
//! pieces are the record's (a stored run's recipe is compared by it, in
//! `history` too); its tests read real recipes, so they are here.

pub use crate::record::recipe_diff::{changes, changes_measurement, FieldChange, Recipe};

use super::Experiment;

/// The recipe an experiment was read from.
pub fn recipe_of(e: &Experiment) -> Recipe<'_> {
    Recipe {
        text: &e.text,
        quick: e.quick,
    }
}

/// [`changes`] between a stored run's experiment and the one given now.
pub fn measurement_changes(stored: &Experiment, given: &Experiment) -> Vec<FieldChange> {
    changes(recipe_of(stored), recipe_of(given))
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
            (
                ("connections = [1, 2]", "connections = [1, 3]"),
                "sweep.connections[1]",
            ),
            (
                ("kind = \"nginx\"", "kind = \"nginx\"\nworker_processes = 2"),
                "server.worker_processes",
            ),
        ] {
            let text = BASE.replace(edit.0, edit.1);
            assert_eq!(fields(&base, &exp(&text, false)), [field], "{}", edit.1);
        }
    }

    #[test]
    fn what_changes_only_the_analysis_is_no_change() {
        let base = "name = \"a\"\n[server]\nkind = \"nginx\"\n[trials]\nnoise = 0.02\n\
            [[system]]\nlabel = \"x\"\nbaseline = true\n[quick]\ntrials = { duration = \"1s\" }\n";
        let edited = "name = \"b\"\ndescription = \"d\"\n[server]\nkind = \"nginx\"\n\
            [trials]\nnoise = 0.05\nheadline = \"best\"\n[profile]\nfrequency = 49\n\
            [[system]]\nlabel = \"x\"\nbaseline = false\n[quick]\ntrials = { duration = \"2s\" }\n";
        let full = |text| Recipe { text, quick: false };
        assert_eq!(changes(full(base), full(edited)), vec![]);
        // Run with --quick, the [quick] table's overrides are the recipe.
        let quick = |text| Recipe { text, quick: true };
        assert_eq!(
            changes(quick(base), quick(edited)),
            vec![FieldChange {
                field: "trials.duration".into(),
                before: Some("1s".into()),
                after: Some("2s".into()),
            }]
        );
    }

    #[test]
    fn a_key_one_recipe_lacks_is_named_with_nothing() {
        let a = Recipe {
            text: "[server]\nkind = \"nginx\"\n",
            quick: false,
        };
        let b = Recipe {
            text: "[server]\nkind = \"nginx\"\nworker_processes = 2\n[hosts]\nserver = \"h\"\n",
            quick: false,
        };
        let c = changes(a, b);
        let keys: Vec<&str> = c.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(keys, ["hosts.server", "server.worker_processes"]);
        assert_eq!(c[1].before, None);
        assert_eq!(
            c[1].to_string(),
            "server.worker_processes: the run has nothing, this file gives 2"
        );
        assert!(
            changes_measurement("system[1].label") && !changes_measurement("system[1].baseline")
        );
    }
}
