//! The test that keeps a kind's facts inside `load/` and `server/`: no
//! other source file names them (CONTRIBUTING's "Add a load kind").

/// Every `.rs` file under `dir`, for the tests that read the source.
pub(crate) fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The code of a Rust file without its comments and string literals
    /// (plain and raw).
    fn code_of(text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            let in_word = out.ends_with(|p: char| p.is_alphanumeric() || p == '_');
            if let Some(quote) = ["'\"'", "'\\\"'"].iter().find(|q| rest.starts_with(*q)) {
                rest = &rest[quote.len()..];
            } else if rest.starts_with("//") {
                rest = rest.find('\n').map_or("", |i| &rest[i..]);
            } else if let Some(hashes) = raw_string_start(rest).filter(|_| !in_word) {
                let body = &rest[hashes.len() + 2..];
                let end = format!("\"{hashes}");
                rest = body.find(&end).map_or("", |i| &body[i + end.len()..]);
                out.push_str("\"\"");
            } else if c == '"' {
                let mut escaped = false;
                let end = rest[1..].char_indices().find(|(_, ch)| {
                    let closes = *ch == '"' && !escaped;
                    escaped = *ch == '\\' && !escaped;
                    closes
                });
                rest = end.map_or("", |(i, _)| &rest[i + 2..]);
                out.push_str("\"\"");
            } else {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
        out
    }

    /// The `#`s of a raw string starting `rest` (`r"`, `r#"`).
    fn raw_string_start(rest: &str) -> Option<&str> {
        let after = rest.strip_prefix('r')?;
        let hashes = &after[..after.len() - after.trim_start_matches('#').len()];
        after[hashes.len()..].starts_with('"').then_some(hashes)
    }

    fn words(code: &str) -> impl Iterator<Item = &str> {
        code.split(|c: char| !(c.is_alphanumeric() || c == '_'))
    }

    #[test]
    fn no_file_outside_the_kinds_names_a_load_kinds_facts() {
        let repo = std::path::Path::new(crate::REPO);
        let facts = [
            "datagrams",
            "Datagrams",
            "ForwardReport",
            "FrameSize",
            "fell_behind",
            "Ramp",
            "RampSecond",
            "bidirectional",
            "ramp",
            // The router's link speed, which reaches the forwarding chart
            // as a named server figure (`ServerFigure`).
            "link_gbit",
        ];
        let mut naming = Vec::new();
        // The top crate's modules, and the workspace's other crates'.
        let roots = [repo.join("src"), repo.join("crates")];
        let files = roots
            .iter()
            .flat_map(|r| rust_files(r).into_iter().map(move |f| (r, f)));
        for (src, path) in files {
            let rel = path
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            // The kinds themselves (the lab crate's `load` and `server`),
            // and a kind's own ad-hoc command
            // (`cli/load_<kind>.rs`, CONTRIBUTING's "Add a load kind" step 7)
            // with the peers' flags it takes as typed (`cli/habits.rs`:
            // resperf's `-r` is `load dns --ramp`).
            let kinds = rel.starts_with("lab/src/load/") || rel.starts_with("lab/src/server/");
            if kinds || rel.starts_with("cli/load_") || rel == "cli/habits.rs" {
                continue;
            }
            let code = code_of(&std::fs::read_to_string(&path).unwrap());
            let found = words(&code).find(|w| facts.contains(w)).map(str::to_string);
            naming.extend(found.map(|word| format!("{rel}: {word}")));
        }
        assert!(
            naming.is_empty(),
            "a load kind's facts named outside it: {naming:?}"
        );
        let code = code_of("a.datagrams // fell_behind\n\"Frame\\\"Size\" r#\"x\"y\"#;");
        assert_eq!(code, "a.datagrams \n\"\" \"\";");
        assert!(words(&code).any(|w| facts.contains(&w)));
    }
}
