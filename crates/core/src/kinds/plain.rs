//! serde's type errors in plain words. serde speaks of the Rust types a
//! value was read into (`invalid type: string "three", expected i64`); a
//! user wrote TOML, so they read what to write instead
//! (`expected a whole number such as 3, got "three"`), and which field
//! (the path comes from `serde_path_to_error`).

/// Deserializes `value` into `T`; an error names the field's dotted path
/// (`worker_processes`, `settings.work_mem`) and says what to write, with
/// no Rust type names.
pub fn from_value<T: serde::de::DeserializeOwned>(value: toml::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = path_segments(e.path());
        let message = plain(e.inner().message());
        // "unknown field `x`" already names it.
        let named = path
            .last()
            .is_some_and(|k| message.contains(&format!("`{k}`")));
        if path.is_empty() || named {
            message
        } else {
            format!("`{}`: {message}", path.join("."))
        }
    })
}

/// A serde path as segments: keys, and 0-based indexes for lists.
pub fn path_segments(path: &serde_path_to_error::Path) -> Vec<String> {
    use serde_path_to_error::Segment;
    path.iter()
        .filter_map(|s| match s {
            Segment::Map { key } => Some(key.clone()),
            Segment::Seq { index } => Some(index.to_string()),
            Segment::Enum { variant } => Some(variant.clone()),
            Segment::Unknown => None,
        })
        .collect()
}

/// Rewrites one serde/toml message in plain words.
pub fn plain(message: &str) -> String {
    let m = message.trim();
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some((got, expected)) = m
            .strip_prefix(prefix)
            .and_then(|r| r.split_once(", expected "))
        {
            return format!(
                "expected {}, got {}",
                expected_words(expected),
                got_words(got)
            );
        }
    }
    if let Some((n, expected)) = m
        .strip_prefix("invalid length ")
        .and_then(|r| r.split_once(", expected "))
    {
        return format!("expected {}, got {n} item(s)", expected_words(expected));
    }
    if m.starts_with("data did not match any variant") {
        return "this value has the wrong type".into();
    }
    if let Some(rest) = m.strip_prefix("unknown variant ") {
        return format!("unknown word {}", rest.replace(", expected ", "; use "));
    }
    m.to_string()
}

/// What serde's "expected" part asks for, in words a TOML writer knows.
fn expected_words(expected: &str) -> String {
    let e = expected.trim();
    let range = |lo: &str, hi: &str| format!("a whole number from {lo} to {hi}");
    match e {
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number such as 3".into(),
        "u8" => range("0", "255"),
        "u16" => range("0", "65535"),
        "u32" => range("0", "4294967295"),
        "u64" | "u128" | "usize" => "a whole number of 0 or more, such as 3".into(),
        "f32" | "f64" => "a number such as 0.5".into(),
        "a string" | "a borrowed string" | "string" | "a character" | "char" => {
            "text in quotes, such as \"10s\"".into()
        }
        "a boolean" | "bool" => "true or false".into(),
        "a sequence" | "a list" | "an array" => "a list, such as [1, 2]".into(),
        "path string" => "a path in quotes, such as \"/usr/lib\"".into(),
        _ if e.starts_with("struct ") || e.starts_with("a map") || e == "map" => {
            "a table, such as { key = 1 }".into()
        }
        _ if e.starts_with("enum ") || e.starts_with("variant ") => {
            "one of the words this field accepts".into()
        }
        _ => e.to_string(),
    }
}

/// serde's description of the value found, as the user wrote it.
fn got_words(got: &str) -> String {
    let g = got.trim();
    let ticked = |prefix: &str| {
        g.strip_prefix(prefix)
            .map(|r| r.trim_matches('`').to_string())
    };
    if let Some(s) = g.strip_prefix("string ") {
        return s.to_string();
    }
    for prefix in ["integer ", "floating point ", "boolean ", "character "] {
        if let Some(v) = ticked(prefix) {
            return v;
        }
    }
    match g {
        "sequence" => "a list".into(),
        "map" => "a table".into(),
        "unit value" | "unit" => "nothing".into(),
        _ => g.to_string(),
    }
}

/// Words that give a Rust type away; no message a user sees contains one.
/// ("sequence" and "map" are serde's too, but also plain English: `plain`
/// rewrites them where serde means a type.)
pub const RUST_WORDS: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32",
    "f64", "enum", "struct", "untagged", "variant", "Option", "Vec", "String",
];

/// The Rust words in `message`, outside what it quotes from the user's
/// file (`"..."` and `` `...` ``).
pub fn rust_words_in(message: &str) -> Vec<&'static str> {
    let mut outside = String::new();
    let mut quote = None;
    for c in message.chars() {
        match (quote, c) {
            (None, '"' | '`') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, c) => outside.push(c),
            _ => {}
        }
    }
    let words: Vec<&str> = outside
        .split(|c: char| !c.is_ascii_alphanumeric())
        .collect();
    RUST_WORDS
        .iter()
        .copied()
        .filter(|w| words.contains(w))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_errors_read_as_what_to_write() {
        assert_eq!(
            plain("invalid type: string \"three\", expected i64"),
            "expected a whole number such as 3, got \"three\""
        );
        assert_eq!(
            plain("invalid value: integer `70000`, expected u16"),
            "expected a whole number from 0 to 65535, got 70000"
        );
        assert_eq!(
            plain("invalid type: sequence, expected a string"),
            "expected text in quotes, such as \"10s\", got a list"
        );
        assert_eq!(
            plain("invalid type: integer `3`, expected struct RawTrials"),
            "expected a table, such as { key = 1 }, got 3"
        );
        assert_eq!(
            plain("unknown variant `x`, expected `a` or `b`"),
            "unknown word `x`; use `a` or `b`"
        );
        for m in [
            "data did not match any variant of untagged enum Workers",
            "invalid type: floating point `1.5`, expected u32",
            "invalid type: boolean `true`, expected f64",
            "invalid type: map, expected a sequence",
        ] {
            assert!(rust_words_in(&plain(m)).is_empty(), "{m} -> {}", plain(m));
        }
    }

    #[test]
    fn quoted_user_text_is_not_a_rust_word() {
        let m = "f.toml:2: invalid escape sequence\nexpected `b`, `f`, `n`, `r`, `t`, `u`, `U`, `\\`, `\"`\n  fix: see docs";
        assert!(rust_words_in(m).is_empty(), "{m}: {:?}", rust_words_in(m));
        assert!(rust_words_in("expected a number, got \"i64\"").is_empty());
        assert_eq!(rust_words_in("expected i64"), ["i64"]);
        assert_eq!(rust_words_in("untagged enum Workers"), ["enum", "untagged"]);
    }

    #[test]
    fn from_value_names_the_nested_field() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Inner {
            n: u32,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Outer {
            inner: Inner,
        }
        let v: toml::Value = toml::from_str("inner = { n = \"x\" }").unwrap();
        let e = from_value::<Outer>(v).unwrap_err();
        assert_eq!(
            e,
            "`inner.n`: expected a whole number from 0 to 4294967295, got \"x\""
        );
    }
}
