//! The test that keeps `procfs` the one reader of `/proc`: no `.rs` file
//! under `src/` or `crates/` outside `crates/core/src/procfs/` holds a
//! string literal starting `/proc` (CONTRIBUTING's "Layers"), but the few
//! in [`ALLOWED`], each with its reason. A message that names a file
//! (`"steal is 5% (/proc/stat)"`) is no literal of a path and passes.

/// procfs itself, where every `/proc` path is written.
const PROCFS: &str = "crates/core/src/procfs/";

/// The files and directories (by their path from the repository, a
/// directory ending `/`) that may hold a `"/proc` literal, and why.
const ALLOWED: &[(&str, &str)] = &[
    (
        "crates/lab/src/probe/proc_guard.rs",
        "this guard: the pattern it looks for and the examples it is tested on",
    ),
    (
        "src/remote/bare/",
        "the agentless remote path: its shell scripts run in another host's own \
         sh (Linux or a BSD), reading that host's /proc, which no reader here can",
    ),
    (
        "src/runner/tune/tests.rs",
        "test code: the knobs `run --tune` may write and its plan are asserted as \
         the literal paths its undo file holds, malformed ones among them",
    ),
    (
        "crates/lab/src/probe/machine/tests.rs",
        "test code: the machine check's warnings are asserted as the text the user \
         reads, which names the files",
    ),
];

/// The text of a Rust file with its comments (`//`, nested `/* */`) left
/// out and everything else, string literals' contents included, kept; a
/// comment's newlines stay, so line numbers hold.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let in_word = out.ends_with(|p: char| p.is_alphanumeric() || p == '_');
        let taken = if rest.starts_with("//") {
            rest.find('\n').unwrap_or(rest.len())
        } else if rest.starts_with("/*") {
            let end = block_comment_len(rest);
            out.extend(rest[..end].chars().filter(|&ch| ch == '\n'));
            end
        } else if let Some(len) = raw_string_len(rest).filter(|_| !in_word) {
            out.push_str(&rest[..len]);
            len
        } else if c == '"' {
            let len = string_len(rest);
            out.push_str(&rest[..len]);
            len
        } else if let Some(len) = char_literal_len(rest) {
            out.push_str(&rest[..len]);
            len
        } else {
            out.push(c);
            c.len_utf8()
        };
        rest = &rest[taken..];
    }
    out
}

/// The length of the (nested) block comment `rest` starts with; all of
/// `rest` when it is not closed.
fn block_comment_len(rest: &str) -> usize {
    let mut depth = 0usize;
    let mut at = 0;
    while at < rest.len() {
        if rest[at..].starts_with("/*") {
            depth += 1;
            at += 2;
        } else if rest[at..].starts_with("*/") {
            depth -= 1;
            at += 2;
            if depth == 0 {
                return at;
            }
        } else {
            at += rest[at..].chars().next().map_or(1, char::len_utf8);
        }
    }
    rest.len()
}

/// The length of the raw string (`r"..."`, `r#"..."#`) `rest` starts with.
fn raw_string_len(rest: &str) -> Option<usize> {
    let after = rest.strip_prefix('r')?;
    let hashes = after.len() - after.trim_start_matches('#').len();
    let body = after[hashes..].strip_prefix('"')?;
    let end = format!("\"{}", "#".repeat(hashes));
    Some(
        body.find(&end)
            .map_or(rest.len(), |i| 2 + hashes + i + end.len()),
    )
}

/// The length of the plain string `rest` starts with (at its `"`).
fn string_len(rest: &str) -> usize {
    let mut escaped = false;
    for (i, ch) in rest.char_indices().skip(1) {
        if ch == '"' && !escaped {
            return i + 1;
        }
        escaped = ch == '\\' && !escaped;
    }
    rest.len()
}

/// The length of the char literal `rest` starts with (`'"'`, `'\''`,
/// `'\u{22}'`); `None` for a lifetime or anything else.
fn char_literal_len(rest: &str) -> Option<usize> {
    let body = rest.strip_prefix('\'')?;
    let len = if body.starts_with('\\') {
        body.find('\'').filter(|&i| i > 1)? + 1
    } else {
        let ch = body.chars().next()?;
        body[ch.len_utf8()..]
            .starts_with('\'')
            .then_some(ch.len_utf8() + 1)?
    };
    Some(1 + len)
}

/// The lines (from 1) of `code` holding a string literal that starts
/// `/proc` (plain, raw, byte or C: each spells `"/proc`).
fn proc_literal_lines(code: &str) -> Vec<usize> {
    (code.lines().enumerate())
        .filter(|(_, line)| line.contains("\"/proc"))
        .map(|(i, _)| i + 1)
        .collect()
}

/// The reason a file (by its path from the repository) may hold `/proc`
/// literals; `None` when it may not.
fn allowed(rel: &str) -> Option<&'static str> {
    (ALLOWED.iter())
        .find(|(path, _)| rel == *path || (path.ends_with('/') && rel.starts_with(path)))
        .map(|(_, why)| *why)
}

#[test]
fn no_file_outside_procfs_names_a_proc_path() {
    let repo = std::path::Path::new(crate::REPO);
    let files = ["src", "crates"]
        .iter()
        .flat_map(|r| crate::load::facts::rust_files(&repo.join(r)));
    let mut found = Vec::new();
    for path in files {
        let rel = path.strip_prefix(repo).unwrap().to_string_lossy();
        if rel.starts_with(PROCFS) || allowed(&rel).is_some() {
            continue;
        }
        let code = without_comments(&std::fs::read_to_string(&path).unwrap());
        found.extend(
            proc_literal_lines(&code)
                .iter()
                .map(|n| format!("{rel}:{n}")),
        );
    }
    assert!(
        found.is_empty(),
        "a /proc path outside crates/core/src/procfs (read it through procfs, \
         or allow the file in proc_guard::ALLOWED with its reason): {found:?}"
    );
    for (path, _) in ALLOWED {
        assert!(repo.join(path).exists(), "{path} is allowed but gone");
    }
}

#[test]
fn the_checker_finds_a_proc_literal_and_only_in_code() {
    let text = "//! Reads \"/proc/stat\" (a doc comment).\n\
                fn f() -> String {\n\
                    let quote = '\"'; // \"/proc/loadavg\" in a comment\n\
                    /* \"/proc/x\" /* nested */ \"/proc/y\" */ let url = \"http://x\";\n\
                    std::fs::read_to_string(\"/proc/stat\").unwrap()\n\
                }\n\
                const RAW: &str = r#\"cat \"/proc/meminfo\"\"#;\n\
                fn g<'a>(s: &'a str) -> &'a str { s }\n";
    let code = without_comments(text);
    assert_eq!(proc_literal_lines(&code), vec![5, 7], "{code}");
    assert!(code.contains("\"http://x\""), "{code}");
    assert_eq!(code.lines().count(), text.lines().count());
    assert_eq!(
        proc_literal_lines(&without_comments("let p = c\"/proc\";\n")),
        vec![1]
    );
    assert!(allowed("src/remote/bare/probe_script.rs").is_some());
    assert!(allowed("src/remote/bare.rs").is_none());
    assert!(allowed("src/probe/window.rs").is_none());
}
