//! A small JSON Schema checker for `docs/export-schema.json`: the keywords
//! that file uses (`type`, `const`, `enum`, `required`, `properties`,
//! `additionalProperties: false`, `items`, `minItems`, `maxItems`,
//! `minimum`, `oneOf`, `prefixItems`, local `$ref`; `format` only
//! annotates), with the meaning draft 2020-12 gives them. Any other keyword
//! is an error, so the schema cannot use one this checker would silently
//! skip.

use serde_json::Value;

/// Keywords that only annotate.
const ANNOTATIONS: &[&str] = &["$schema", "$id", "$defs", "title", "description", "format"];

/// Every place where `doc` breaks `schema`, as `path: what`.
pub fn violations(schema: &Value, doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, schema, doc, "$", &mut out);
    out
}

fn check(root: &Value, schema: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
    let Some(rules) = schema.as_object() else {
        out.push(format!("{at}: the schema here is not an object"));
        return;
    };
    for (key, rule) in rules {
        match key.as_str() {
            "$ref" => check(root, resolve(root, rule), v, at, out),
            "type" => {
                let allowed: Vec<&str> = match rule {
                    Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                    other => other.as_str().into_iter().collect(),
                };
                if !allowed.iter().any(|t| is_type(v, t)) {
                    out.push(format!("{at}: {v} is not {}", allowed.join(" or ")));
                }
            }
            "const" if v != rule => out.push(format!("{at}: {v} is not {rule}")),
            "enum" if !rule.as_array().is_some_and(|a| a.contains(v)) => {
                out.push(format!("{at}: {v} is not one of {rule}"))
            }
            "required" => {
                for name in rule
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    if v.is_object() && v.get(name).is_none() {
                        out.push(format!("{at}: no `{name}`"));
                    }
                }
            }
            "properties" => {
                let (Some(props), Some(obj)) = (rule.as_object(), v.as_object()) else {
                    continue;
                };
                for (name, sub) in props {
                    if let Some(x) = obj.get(name) {
                        check(root, sub, x, &format!("{at}.{name}"), out);
                    }
                }
            }
            "additionalProperties" if rule != &Value::Bool(false) => out.push(format!(
                "{at}: only `additionalProperties: false` is supported"
            )),
            "additionalProperties" => {
                let known = schema["properties"].as_object();
                for name in v.as_object().into_iter().flat_map(|o| o.keys()) {
                    if !known.is_some_and(|k| k.contains_key(name)) {
                        out.push(format!("{at}: unexpected `{name}`"));
                    }
                }
            }
            "items" => {
                for (i, x) in v.as_array().into_iter().flatten().enumerate() {
                    check(root, rule, x, &format!("{at}[{i}]"), out);
                }
            }
            "prefixItems" => {
                let firsts = rule.as_array().into_iter().flatten();
                for (i, (sub, x)) in firsts.zip(v.as_array().into_iter().flatten()).enumerate() {
                    check(root, sub, x, &format!("{at}[{i}]"), out);
                }
            }
            "minItems" | "maxItems" => {
                let (n, bound) = (v.as_array().map_or(0, Vec::len), rule.as_u64().unwrap_or(0));
                let bad = if key == "minItems" {
                    v.is_array() && (n as u64) < bound
                } else {
                    v.is_array() && (n as u64) > bound
                };
                if bad {
                    out.push(format!("{at}: {n} items breaks {key} {bound}"));
                }
            }
            "minimum" => {
                if let (Some(x), Some(min)) = (v.as_f64(), rule.as_f64()) {
                    if x < min {
                        out.push(format!("{at}: {x} is below {min}"));
                    }
                }
            }
            "oneOf" => {
                let branches = rule.as_array().map(Vec::as_slice).unwrap_or_default();
                let matching = branches
                    .iter()
                    .filter(|b| violations_under(root, b, v, at).is_empty())
                    .count();
                if matching != 1 {
                    let why: Vec<String> = branches
                        .iter()
                        .flat_map(|b| violations_under(root, b, v, at))
                        .collect();
                    out.push(format!(
                        "{at}: matches {matching} of the oneOf branches, not 1 ({})",
                        why.join("; ")
                    ));
                }
            }
            "const" | "enum" => {}
            k if ANNOTATIONS.contains(&k) => {}
            other => out.push(format!(
                "{at}: keyword `{other}` is not supported by the checker"
            )),
        }
    }
}

fn violations_under(root: &Value, schema: &Value, v: &Value, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    check(root, schema, v, at, &mut out);
    out
}

/// `#/$defs/name` within the same document.
fn resolve<'a>(root: &'a Value, reference: &Value) -> &'a Value {
    let path = reference.as_str().unwrap_or("");
    let pointer = path.strip_prefix('#').unwrap_or(path);
    root.pointer(pointer)
        .unwrap_or_else(|| panic!("unresolvable $ref {path}"))
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        other => panic!("unknown JSON Schema type {other}"),
    }
}
