//! Comparing two runs' fingerprints (or any two JSON values) key by key,
//! and the one JSON flattener every environment table and diff uses.

use serde_json::Value;
use std::collections::BTreeMap;

/// How [`flatten_leaves`] treats an array whose items are all scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarLists {
    /// One key per item: `flags[0]`, `flags[1]` (what diffs need, so one
    /// changed item shows as one changed key).
    Indexed,
    /// The whole array is one leaf under `flags` (what a table shows).
    Whole,
}

/// The one flattener: the leaves of `value` with their keys, depth first in
/// the value's key order. Object keys join with `.` and array indices are
/// written `[i]`: `{"a":{"b":1},"c":[{"d":2}]}` gives `a.b` and `c[0].d`.
/// Leaves are scalars (and, with [`ScalarLists::Whole`], arrays of
/// scalars, even empty ones); empty objects and indexed empty arrays give
/// nothing, and so does a scalar `value` itself (it has no key).
pub fn flatten_leaves(value: &Value, lists: ScalarLists) -> Vec<(String, &Value)> {
    fn walk<'a>(key: String, v: &'a Value, lists: ScalarLists, out: &mut Vec<(String, &'a Value)>) {
        let child = |k: &str| {
            if key.is_empty() {
                k.to_string()
            } else {
                format!("{key}.{k}")
            }
        };
        match v {
            Value::Object(m) => m.iter().for_each(|(k, c)| walk(child(k), c, lists, out)),
            Value::Array(a)
                if lists == ScalarLists::Whole && a.iter().all(is_scalar) && !key.is_empty() =>
            {
                out.push((key, v))
            }
            Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, c)| walk(format!("{key}[{i}]"), c, lists, out)),
            scalar if !key.is_empty() => out.push((key, scalar)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(String::new(), value, lists, &mut out);
    out
}

fn is_scalar(v: &Value) -> bool {
    !v.is_object() && !v.is_array()
}

/// [`flatten_leaves`] with every array indexed and each leaf shown as text
/// (strings without quotes): the form diffs compare.
pub fn flatten(value: &Value) -> BTreeMap<String, String> {
    flatten_leaves(value, ScalarLists::Indexed)
        .into_iter()
        .map(|(k, v)| (k, crate::model::display_value(v)))
        .collect()
}

/// The keys whose values differ between two fingerprints (or any two JSON
/// values), as `(dotted key, value in a, value in b)`, sorted by key. A key
/// missing on one side shows as `(absent)`.
pub fn diff(a: &Value, b: &Value) -> Vec<(String, String, String)> {
    let (fa, fb) = (flatten(a), flatten(b));
    let absent = || "(absent)".to_string();
    let mut keys: Vec<&String> = fa.keys().chain(fb.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let (va, vb) = (fa.get(k), fb.get(k));
            (va != vb).then(|| {
                (
                    k.clone(),
                    va.cloned().unwrap_or_else(absent),
                    vb.cloned().unwrap_or_else(absent),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diff_names_changed_added_and_removed_keys() {
        let a = json!({"kernel": "6.1", "haltpoll": {"guest_halt_poll_ns": "0"}, "cpus": 2, "x": [1, 2]});
        let b = json!({"kernel": "6.1", "haltpoll": {"guest_halt_poll_ns": "200000"}, "cpus": 4, "x": [1], "new": true});
        let d = diff(&a, &b);
        assert_eq!(
            d,
            vec![
                ("cpus".into(), "2".into(), "4".into()),
                (
                    "haltpoll.guest_halt_poll_ns".into(),
                    "0".into(),
                    "200000".into()
                ),
                ("new".into(), "(absent)".into(), "true".into()),
                ("x[1]".into(), "2".into(), "(absent)".into()),
            ]
        );
        assert!(diff(&a, &a).is_empty());
    }

    #[test]
    fn one_key_syntax_for_objects_and_arrays() {
        let v = json!({"a": {"b": 1}, "c": [{"d": "x"}, 2], "e": [], "f": {}, "g": null});
        let keys = |lists| -> Vec<String> {
            flatten_leaves(&v, lists)
                .into_iter()
                .map(|(k, _)| k)
                .collect()
        };
        assert_eq!(keys(ScalarLists::Indexed), ["a.b", "c[0].d", "c[1]", "g"]);
        assert_eq!(
            keys(ScalarLists::Whole),
            ["a.b", "c[0].d", "c[1]", "e", "g"]
        );
        let list = json!({"s": ["a", "b"], "n": [[1]]});
        assert_eq!(
            flatten_leaves(&list, ScalarLists::Whole),
            [
                ("n[0]".to_string(), &json!([1])),
                ("s".to_string(), &json!(["a", "b"]))
            ]
        );
        assert_eq!(
            flatten(&list),
            BTreeMap::from([
                ("n[0][0]".to_string(), "1".to_string()),
                ("s[0]".to_string(), "a".to_string()),
                ("s[1]".to_string(), "b".to_string()),
            ])
        );
        assert!(flatten(&json!(3)).is_empty());
        assert!(flatten(&Value::Null).is_empty());
    }
}
