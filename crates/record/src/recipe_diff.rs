//! What differs between two recipes, by one rule for which fields matter.
//! `--resume` refuses to mix trials made under recipes that differ by it
//! (the recipe's `diff::measurement_changes`), and `history` lists the same differences
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

use crate::environment::{flatten_leaves, ScalarLists};
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
