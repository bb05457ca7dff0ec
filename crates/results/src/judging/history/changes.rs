//! What differs between two runs of a history: the environment fingerprint
//! (kernel release, sysctls, CPU, server and scalelab versions), the recipe
//! file's fields (by the rule `--resume` uses, [`crate::record::recipe_diff`]), the
//! label and the recorded revision.

use crate::judging::runs::environment_differences;
use crate::record::recipe_diff::{changes as recipe_changes, Recipe};
use crate::store::RunData;
use serde::Serialize;

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

/// The recipe `data`'s run was run with.
fn recipe(data: &RunData) -> Recipe<'_> {
    Recipe {
        text: &data.run.experiment,
        quick: data.run.quick,
    }
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
    out.extend(
        recipe_changes(recipe(before), recipe(after))
            .into_iter()
            .map(|c| Changed {
                source: Source::Recipe,
                key: c.field,
                before: c.before,
                after: c.after,
            }),
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipe_fields_that_differ_are_named_and_the_name_is_not() {
        let a = "name = \"a\"\n[server]\nkind = \"nginx\"\nworker_processes = 1\n[sweep]\nconnections = [1, 4]\n";
        let b = "name = \"b\"\n[server]\nkind = \"nginx\"\nworker_processes = 2\n[sweep]\nconnections = [1, 8]\n";
        let full = |text| Recipe { text, quick: false };
        let d = recipe_changes(full(a), full(b));
        let keys: Vec<&str> = d.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(keys, ["server.worker_processes", "sweep.connections[1]"]);
        assert_eq!(d[0].before.as_deref(), Some("1"));
        assert_eq!(d[0].after.as_deref(), Some("2"));
    }
}
