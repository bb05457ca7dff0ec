//! What differs between two recipes, by one rule for which fields matter.
//! `--resume` refuses to mix trials made under recipes that differ by it
//! ([`measurement_changes`]), and `history` lists the same differences
//! between two runs ([`changes`]).
//!
//! The rule: a recipe is compared as it was run, that is, the file's
//! leaves (`trials.duration`, `server.worker_processes`,
//! `sweep.connections[1]`) with its `[quick]` overrides applied when it ran
//! with `--quick`, and `--quick` itself. Every leaf matters except those
//! that change only the analysis, the words or what is recorded beside the
//! trials ([`changes_measurement`]): `name`, `description`,
//! `trials.headline`, `trials.noise`, `trials.runs` (how many runs, not
//! what one measures: `--resume` continues the stored repeat group), which system is the baseline
//! (`system[i].baseline`) and `[profile]` (profiles are extra trials, kept
//! apart). The `[quick]` table matters only through what it overrides.
//! Values are compared as written: a key added with its default value, or a
//! duration spelt another way, is a difference.

use super::Experiment;
use crate::probe::{flatten_leaves, ScalarLists};
use std::collections::{BTreeMap, BTreeSet};

/// One field that differs: its dotted key and both values (`None` where a
/// recipe lacks it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldChange {
    /// The dotted key, as the experiment file names it
    /// (`server.worker_processes`), or `--quick`.
    pub field: String,
    /// Its value in the earlier (stored) recipe.
    pub before: Option<String>,
    /// Its value in the later (given) recipe.
    pub after: Option<String>,
}

impl std::fmt::Display for FieldChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "nothing".into());
        write!(
            f,
            "{}: the run has {}, this file gives {}",
            self.field,
            shown(&self.before),
            shown(&self.after)
        )
    }
}

/// A recipe as it was run: the file's text and whether `--quick` applied
/// its `[quick]` table.
#[derive(Clone, Copy, Debug)]
pub struct Recipe<'a> {
    /// The experiment file's text.
    pub text: &'a str,
    /// Run with `--quick`.
    pub quick: bool,
}

impl<'a> Recipe<'a> {
    /// The recipe an experiment was read from.
    pub fn of(e: &'a Experiment) -> Recipe<'a> {
        Recipe {
            text: &e.text,
            quick: e.quick,
        }
    }
}

/// Whether a difference in the recipe leaf `key` (dotted, as [`changes`]
/// names it) changes what a trial measures: the module's one rule.
pub fn changes_measurement(key: &str) -> bool {
    const WORDS: [&str; 5] = [
        "name",
        "description",
        "trials.headline",
        "trials.noise",
        "trials.runs",
    ];
    let baseline = key.starts_with("system[") && key.ends_with("].baseline");
    !(WORDS.contains(&key) || baseline || key == "profile" || key.starts_with("profile."))
}

/// Every difference between two recipes that changes the measurement, by
/// key; empty when they agree. A text that does not parse has no leaves.
pub fn changes(before: Recipe, after: Recipe) -> Vec<FieldChange> {
    let (a, b) = (leaves(before), leaves(after));
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| changes_measurement(k) && a.get(*k) != b.get(*k))
        .map(|k| FieldChange {
            field: k.clone(),
            before: a.get(k).cloned(),
            after: b.get(k).cloned(),
        })
        .collect()
}

/// [`changes`] between a stored run's experiment and the one given now.
pub fn measurement_changes(stored: &Experiment, given: &Experiment) -> Vec<FieldChange> {
    changes(Recipe::of(stored), Recipe::of(given))
}

/// The recipe's leaves as run, by dotted key, each shown as text.
fn leaves(recipe: Recipe) -> BTreeMap<String, String> {
    let mut doc: toml::Table = recipe.text.parse().unwrap_or_default();
    let quick = doc.remove("quick");
    if let (true, Some(toml::Value::Table(overrides))) = (recipe.quick, quick) {
        apply_quick(&mut doc, overrides);
    }
    let json = serde_json::to_value(doc).unwrap_or_default();
    let mut out: BTreeMap<String, String> = flatten_leaves(&json, ScalarLists::Indexed)
        .into_iter()
        .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_string)))
        .collect();
    let quick = if recipe.quick {
        "--quick"
    } else {
        "no --quick"
    };
    out.insert("--quick".into(), quick.into());
    out
}

/// `[quick]`'s tables override the same tables' keys, as `--quick` does
/// when the file is validated.
fn apply_quick(doc: &mut toml::Table, overrides: toml::Table) {
    for (section, table) in overrides {
        let toml::Value::Table(table) = table else {
            continue;
        };
        let entry = doc
            .entry(section)
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if let toml::Value::Table(target) = entry {
            target.extend(table);
        }
    }
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
