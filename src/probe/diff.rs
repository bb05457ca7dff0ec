//! Comparing two runs' fingerprints (or any two JSON values) key by key.

use serde_json::Value;
use std::collections::BTreeMap;

/// Flattens JSON to dotted keys: `{"a":{"b":1},"c":[x,y]}` gives `a.b`,
/// `c.0`, `c.1`. Strings appear without quotes.
pub fn flatten(value: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk_leaves(value, &|v| !v.is_object() && !v.is_array(), &mut |k, v| {
        out.insert(k, crate::model::display_value(v));
    });
    out
}

/// Visits JSON depth first, calling `visit` with the dotted key (object
/// keys and array indices joined by `.`) of every value `is_leaf` accepts;
/// objects and arrays it does not accept are walked into.
pub fn walk_leaves(
    value: &Value,
    is_leaf: &dyn Fn(&Value) -> bool,
    visit: &mut dyn FnMut(String, &Value),
) {
    fn walk(
        prefix: &str,
        v: &Value,
        is_leaf: &dyn Fn(&Value) -> bool,
        visit: &mut dyn FnMut(String, &Value),
    ) {
        let key = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match v {
            _ if is_leaf(v) => visit(prefix.to_string(), v),
            Value::Object(m) => m.iter().for_each(|(k, v)| walk(&key(k), v, is_leaf, visit)),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, v)| walk(&key(&i.to_string()), v, is_leaf, visit)),
            _ => {}
        }
    }
    walk("", value, is_leaf, visit)
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
                ("x.1".into(), "2".into(), "(absent)".into()),
            ]
        );
        assert!(diff(&a, &a).is_empty());
    }
}
