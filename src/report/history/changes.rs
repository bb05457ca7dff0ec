//! What differs between two runs of a history: the environment fingerprint
//! (kernel release, sysctls, CPU, server and scalelab versions), the recipe
//! file's fields, the label and the recorded revision.

use crate::probe::{flatten_leaves, ScalarLists};
use crate::report::runs::environment_differences;
use crate::store::RunData;
use serde::Serialize;
use std::collections::BTreeMap;

/// Where a difference was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The environment fingerprint or the server's version.
    Environment,
    /// The recipe file (`server.worker_processes`, ...).
    Recipe,
    /// The run's `--label`.
    Label,
    /// The run's `--commit` (or `SCALELAB_COMMIT`).
    Revision,
}

/// One field that differs; `None` where a run lacks it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Changed {
    /// Where it was found.
    pub source: Source,
    /// The dotted key (`kernel_release`, `server.worker_processes`).
    pub key: String,
    /// The value in the run before the change.
    pub before: Option<String>,
    /// The value in the run after it.
    pub after: Option<String>,
}

/// Everything that differs between `before` and `after`: revision and label
/// first, then the recipe, then the environment.
pub fn between(before: &RunData, after: &RunData) -> Vec<Changed> {
    let mut out = Vec::new();
    let tag = |source, key: &str, a: &Option<String>, b: &Option<String>| {
        (a != b).then(|| Changed {
            source,
            key: key.into(),
            before: a.clone(),
            after: b.clone(),
        })
    };
    out.extend(tag(
        Source::Revision,
        "revision",
        &before.run.revision,
        &after.run.revision,
    ));
    out.extend(tag(
        Source::Label,
        "label",
        &Some(before.run.label.clone()),
        &Some(after.run.label.clone()),
    ));
    out.extend(recipe_differences(
        &before.run.experiment,
        &after.run.experiment,
    ));
    out.extend(
        environment_differences(before, after)
            .into_iter()
            .map(|d| Changed {
                source: Source::Environment,
                key: d.key,
                before: d.a,
                after: d.b,
            }),
    );
    out
}

/// The recipe keys whose values differ (`name` and `description` left out:
/// they do not change what is measured).
fn recipe_differences(before: &str, after: &str) -> Vec<Changed> {
    let (a, b) = (recipe_leaves(before), recipe_leaves(after));
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| !matches!(k.as_str(), "name" | "description") && a.get(*k) != b.get(*k))
        .map(|k| Changed {
            source: Source::Recipe,
            key: k.clone(),
            before: a.get(k).cloned(),
            after: b.get(k).cloned(),
        })
        .collect()
}

/// The recipe file's leaves by dotted key (none when it does not parse).
fn recipe_leaves(text: &str) -> BTreeMap<String, String> {
    let doc: toml::Table = text.parse().unwrap_or_default();
    let json = serde_json::to_value(doc).unwrap_or_default();
    flatten_leaves(&json, ScalarLists::Indexed)
        .into_iter()
        .map(|(k, v)| {
            let shown = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            (k, shown)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipe_fields_that_differ_are_named_and_the_name_is_not() {
        let a = "name = \"a\"\n[server]\nkind = \"nginx\"\nworker_processes = 1\n[sweep]\nconnections = [1, 4]\n";
        let b = "name = \"b\"\n[server]\nkind = \"nginx\"\nworker_processes = 2\n[sweep]\nconnections = [1, 8]\n";
        let d = recipe_differences(a, b);
        let keys: Vec<&str> = d.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(keys, ["server.worker_processes", "sweep.connections[1]"]);
        assert_eq!(d[0].before.as_deref(), Some("1"));
        assert_eq!(d[0].after.as_deref(), Some("2"));
    }
}
