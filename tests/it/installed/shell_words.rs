//! The programs a bash or POSIX sh script starts, read from its text: a
//! small lexer that finds each simple command's command word (the first
//! word that is not an assignment or a keyword), through `$(…)`, backticks,
//! `<(…)` and double quotes, and through the wrappers that start another
//! program (`ip netns exec NS`, `timeout`, `taskset`, `runuser`, `setsid`, …).
//!
//! What it does not see, by design: a command word held in a variable
//! (`"$bin" run`), code inside single quotes (`sh -c '…'`, `python3 -c '…'`,
//! awk programs), and here-document bodies. A word it takes for a command
//! that is none (a misread) names no program on the machine, and the guard
//! then says so: it fails loudly rather than miss one.

/// One command word: the program (as written) and its 1-based line.
#[derive(Clone, Debug, PartialEq)]
pub struct Started {
    pub program: String,
    pub line: usize,
}

/// A word of a simple command: its literal text (quotes removed, each
/// `$…` expansion dropped) and whether it was written plainly (no quote,
/// no expansion), as a program name is.
#[derive(Clone, Debug)]
struct Word {
    text: String,
    plain: bool,
    line: usize,
}

/// What a script starts, and the shell functions it defines.
#[derive(Debug, Default)]
pub struct Script {
    pub started: Vec<Started>,
    pub functions: Vec<String>,
}

/// Reads a script's text.
pub fn read(text: &str) -> Script {
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        at: 0,
        line: 1,
        commands: Vec::new(),
        functions: Vec::new(),
        heredocs: Vec::new(),
    };
    lexer.commands_until(End::Eof);
    let mut started = Vec::new();
    for words in &lexer.commands {
        command_words(words, &mut started);
    }
    started.retain(|s| !BUILTINS.contains(&s.program.as_str()));
    Script {
        started,
        functions: lexer.functions,
    }
}

/// Where a nested lexing stops.
#[derive(Clone, Copy, PartialEq)]
enum End {
    Eof,
    /// The `)` of `$(`, `<(` or a subshell.
    Paren,
    Backtick,
}

struct Lexer {
    chars: Vec<char>,
    at: usize,
    line: usize,
    commands: Vec<Vec<Word>>,
    functions: Vec<String>,
    /// Here-document delimiters whose bodies start at the next newline.
    heredocs: Vec<String>,
}

/// The state of the simple command being read.
#[derive(Default)]
struct Current {
    words: Vec<Word>,
    word: Option<Word>,
    /// Inside `case … in`: the next word starts a pattern, up to its `)`.
    expect_pattern: bool,
    /// `case WORD` was read; its `in` opens the patterns.
    case_header: bool,
    /// A redirection was read: the next word is its file, not a command.
    redirect_target: bool,
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek(0)?;
        self.at += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    /// Reads commands until `end`; case state is per nesting level.
    fn commands_until(&mut self, end: End) {
        let mut cur = Current::default();
        let mut depth = 0usize;
        while let Some(c) = self.peek(0) {
            if cur.expect_pattern && cur.word.is_none() && !c.is_whitespace() && c != '#' {
                self.case_pattern(&mut cur);
                continue;
            }
            match c {
                '\n' => {
                    self.bump();
                    self.end_command(&mut cur);
                    self.skip_heredocs();
                }
                ' ' | '\t' => {
                    self.bump();
                    self.end_word(&mut cur);
                }
                '#' if cur.word.is_none() => self.skip_to_newline(),
                '\\' => {
                    self.bump();
                    if self.bump() != Some('\n') {
                        self.word(&mut cur).plain = false;
                    }
                }
                '\'' => {
                    self.bump();
                    let text = self.until_char('\'');
                    let w = self.word(&mut cur);
                    w.text += &text;
                    w.plain = false;
                }
                '"' => {
                    self.bump();
                    self.double_quoted(&mut cur);
                }
                '$' => self.dollar(&mut cur),
                '`' if end == End::Backtick => {
                    self.bump();
                    break;
                }
                '`' => {
                    self.bump();
                    self.word(&mut cur).plain = false;
                    self.commands_until(End::Backtick);
                }
                ';' | '&' | '|' => {
                    self.bump();
                    let double_semi = c == ';' && self.peek(0) == Some(';');
                    self.end_command(&mut cur);
                    if double_semi {
                        self.bump();
                        cur.expect_pattern = true;
                    }
                }
                '<' | '>' => self.redirection(&mut cur),
                '(' => {
                    self.bump();
                    self.open_paren(&mut cur, &mut depth);
                }
                ')' => {
                    self.bump();
                    self.end_command(&mut cur);
                    if depth == 0 && end == End::Paren {
                        break;
                    }
                    depth = depth.saturating_sub(1);
                }
                _ => {
                    self.bump();
                    self.word(&mut cur).text.push(c);
                }
            }
        }
        self.end_command(&mut cur);
    }

    fn word<'a>(&self, cur: &'a mut Current) -> &'a mut Word {
        cur.word.get_or_insert_with(|| Word {
            text: String::new(),
            plain: true,
            line: self.line,
        })
    }

    fn end_word(&mut self, cur: &mut Current) {
        let Some(w) = cur.word.take() else { return };
        if std::mem::take(&mut cur.redirect_target) {
            return;
        }
        let first = cur.words.iter().all(is_prefix);
        if first && w.plain && w.text == "[[" {
            self.skip_past("]]");
            return;
        }
        if first && w.plain && w.text == "case" {
            cur.case_header = true;
        }
        if cur.case_header && w.plain && w.text == "in" {
            cur.case_header = false;
            cur.words.clear();
            cur.expect_pattern = true;
            return;
        }
        cur.words.push(w);
    }

    fn end_command(&mut self, cur: &mut Current) {
        self.end_word(cur);
        cur.redirect_target = false;
        if !cur.words.is_empty() && !cur.case_header {
            self.commands.push(std::mem::take(&mut cur.words));
        }
    }

    /// A case pattern (`nginx|postgres)`, `*)`), or the `esac` that ends the
    /// patterns.
    fn case_pattern(&mut self, cur: &mut Current) {
        if self.rest_starts_with("esac") {
            cur.expect_pattern = false;
            self.at += 4;
            return;
        }
        while let Some(c) = self.bump() {
            match c {
                ')' => break,
                '\'' => drop(self.until_char('\'')),
                '"' => drop(self.until_char('"')),
                _ => {}
            }
        }
        cur.expect_pattern = false;
    }

    fn rest_starts_with(&self, s: &str) -> bool {
        let n = s.chars().count();
        let rest: String = self.chars[self.at..].iter().take(n).collect();
        rest == s
            && self
                .peek(n)
                .map_or(true, |c| c.is_whitespace() || c == ';' || c == ')')
    }

    /// `(`: `name()` (a function), `arr=(…)` (an array), `((…))`
    /// (arithmetic), else a subshell.
    fn open_paren(&mut self, cur: &mut Current, depth: &mut usize) {
        let name = cur
            .word
            .as_ref()
            .filter(|w| w.plain)
            .map(|w| w.text.clone());
        if let Some(name) = name.filter(|_| self.peek(0) == Some(')')) {
            self.bump();
            cur.word = None;
            self.functions.push(name);
            return;
        }
        if cur.word.as_ref().is_some_and(|w| w.text.ends_with('=')) {
            self.skip_balanced(1);
            return;
        }
        let arithmetic_at = cur.words.iter().all(|w| is_prefix(w) || w.text == "for");
        if cur.word.is_none() && arithmetic_at && self.peek(0) == Some('(') {
            self.skip_balanced(1);
            return;
        }
        self.end_command(cur);
        *depth += 1;
    }

    /// `$(…)`, `$((…))`, `${…}`, `$NAME`: the word is no longer plain.
    fn dollar(&mut self, cur: &mut Current) {
        self.bump();
        self.word(cur).plain = false;
        match (self.peek(0), self.peek(1)) {
            (Some('('), Some('(')) => {
                self.at += 2;
                self.skip_balanced(2);
            }
            (Some('('), _) => {
                self.bump();
                self.commands_until(End::Paren);
            }
            (Some('{'), _) => drop(self.until_char('}')),
            _ => {
                while self
                    .peek(0)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.bump();
                }
            }
        }
    }

    /// Inside `"…"`: literal text, with command substitutions read as
    /// commands.
    fn double_quoted(&mut self, cur: &mut Current) {
        self.word(cur).plain = false;
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.bump();
                    return;
                }
                '\\' => {
                    self.bump();
                    self.bump();
                }
                '$' => self.dollar(cur),
                '`' => {
                    self.bump();
                    self.commands_until(End::Backtick);
                }
                _ => {
                    self.bump();
                    self.word(cur).text.push(c);
                }
            }
        }
    }

    /// `<`, `>`, `<<DELIM` (a here-document), `<<<` (a here-string),
    /// `<(…)` (a process substitution).
    fn redirection(&mut self, cur: &mut Current) {
        let c = self.bump();
        if self.peek(0) == Some('(') {
            self.bump();
            cur.redirect_target = false;
            self.commands_until(End::Paren);
            return;
        }
        // `2>&1`: the `2` is no word of the command.
        let word_before = cur.word.take();
        if let Some(w) = word_before.filter(|w| !w.text.chars().all(|c| c.is_ascii_digit())) {
            cur.words.push(w);
        }
        if c == Some('<') && self.peek(0) == Some('<') {
            self.bump();
            if self.peek(0) != Some('<') {
                self.heredoc_delimiter();
                return;
            }
            self.bump();
        }
        while matches!(self.peek(0), Some('>' | '&' | '|')) {
            self.bump();
        }
        cur.redirect_target = true;
    }

    fn heredoc_delimiter(&mut self) {
        if self.peek(0) == Some('-') {
            self.bump();
        }
        while self.peek(0) == Some(' ') {
            self.bump();
        }
        let mut delim = String::new();
        while let Some(c) = self.peek(0) {
            if c.is_whitespace() || matches!(c, ';' | '|' | '&' | ')' | '<' | '>') {
                break;
            }
            self.bump();
            if c != '\'' && c != '"' {
                delim.push(c);
            }
        }
        self.heredocs.push(delim);
    }

    /// After a newline: each pending here-document's body, up to its
    /// delimiter line.
    fn skip_heredocs(&mut self) {
        for delim in std::mem::take(&mut self.heredocs) {
            loop {
                let start = self.at;
                self.skip_to_newline();
                let line: String = self.chars[start..self.at].iter().collect();
                let eof = self.bump().is_none();
                if line.trim() == delim || eof {
                    break;
                }
            }
        }
    }

    fn skip_to_newline(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.bump();
        }
    }

    /// The text up to `end` (which is consumed), with `\` escapes kept
    /// out of single quotes only.
    fn until_char(&mut self, end: char) -> String {
        let mut text = String::new();
        while let Some(c) = self.bump() {
            if c == end {
                break;
            }
            if c == '\\' && end != '\'' {
                self.bump();
                continue;
            }
            text.push(c);
        }
        text
    }

    /// Past `open` more `)` than `(` (quotes respected).
    fn skip_balanced(&mut self, mut open: usize) {
        while let Some(c) = self.bump() {
            match c {
                '(' => open += 1,
                ')' => {
                    open -= 1;
                    if open == 0 {
                        return;
                    }
                }
                '\'' => drop(self.until_char('\'')),
                '"' => drop(self.until_char('"')),
                _ => {}
            }
        }
    }

    /// Past the next occurrence of `s`.
    fn skip_past(&mut self, s: &str) {
        while self.peek(0).is_some() {
            if self.chars[self.at..].starts_with(&s.chars().collect::<Vec<_>>()) {
                for _ in 0..s.len() {
                    self.bump();
                }
                return;
            }
            self.bump();
        }
    }
}

/// Keywords after which the next word is a command word.
const PREFIX_KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time",
    "esac", "exec", "command", "builtin",
];

/// Bash's builtins and the keywords that start no program (`for x in …`):
/// they run inside the shell.
const BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
    "case",
    "for",
    "select",
    "in",
    "coproc",
    "]]",
];

/// A keyword or an assignment before the command word.
fn is_prefix(w: &Word) -> bool {
    is_assignment(w) || (w.plain && PREFIX_KEYWORDS.contains(&w.text.as_str()))
}

/// The command word of `words`, and of any command it wraps.
fn command_words(words: &[Word], out: &mut Vec<Started>) {
    let mut rest = words;
    while let Some((w, tail)) = rest.split_first() {
        // `command -v X` asks, and starts nothing.
        if w.text == "command" && tail.first().is_some_and(|a| a.text.starts_with("-v")) {
            return;
        }
        if w.text == "command" && tail.first().is_some_and(|a| a.text.starts_with("-V")) {
            return;
        }
        if is_prefix(w) {
            rest = tail;
            continue;
        }
        if w.text == "function" {
            return;
        }
        if !w.plain {
            return;
        }
        out.push(Started {
            program: w.text.clone(),
            line: w.line,
        });
        match wrapped(&w.text, tail) {
            Some(inner) => rest = inner,
            None => return,
        }
    }
}

/// `NAME=value` or `NAME[i]=value` or `NAME+=value`, before a command.
fn is_assignment(w: &Word) -> bool {
    let Some((name, _)) = w.text.split_once('=') else {
        return false;
    };
    let name = name.trim_end_matches('+');
    let name = name.split_once('[').map_or(name, |(n, _)| n);
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// The command a wrapper program starts, from its arguments.
fn wrapped<'a>(program: &str, args: &'a [Word]) -> Option<&'a [Word]> {
    let is = |i: usize, s: &str| args.get(i).is_some_and(|w| w.text == s);
    // Options, then `positionals` arguments, then the command.
    let after_options = |takes_value: &[&str], positionals: usize| {
        let mut i = 0;
        while let Some(w) = args.get(i) {
            if w.text == "--" {
                i += 1;
                break;
            }
            if !w.text.starts_with('-') {
                break;
            }
            i += if takes_value.contains(&w.text.as_str()) {
                2
            } else {
                1
            };
        }
        args.get(i + positionals..).filter(|r| !r.is_empty())
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    match name {
        "time" => after_options(&["-f", "-o", "--format", "--output"], 0),
        "ip" if is(0, "netns") && is(1, "exec") => args.get(3..),
        "ip" if is(0, "-n") || is(0, "-netns") => None,
        "timeout" => after_options(&["-s", "-k", "--signal", "--kill-after"], 1),
        "taskset" if args.iter().any(|w| w.text == "-p") => None,
        "taskset" => after_options(&[], 1),
        "runuser" if args.iter().any(|w| w.text == "-c") => None,
        "runuser" => after_options(&["-u", "-g", "-G"], 0),
        "flock" => after_options(&["-w", "-E", "-c"], 1),
        "nice" => after_options(&["-n"], 0),
        "xargs" => after_options(&["-n", "-I", "-P", "-L", "-d", "-s", "-E"], 0),
        "chrt" => after_options(&[], 1),
        "env" => {
            let skip = args
                .iter()
                .take_while(|w| w.text.starts_with('-') || is_assignment(w))
                .count();
            args.get(skip..).filter(|r| !r.is_empty())
        }
        "unshare" => after_options(&["--propagation", "--setgroups", "-S", "-G", "-R", "-w"], 0),
        "setsid" | "nohup" | "sudo" | "stdbuf" => after_options(&[], 0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn programs(text: &str) -> Vec<String> {
        read(text).started.into_iter().map(|s| s.program).collect()
    }

    #[test]
    fn command_words_through_pipes_substitutions_and_wrappers() {
        let text = "set -e\nx=$(uname -r) y=2 ls -l | grep a && sort || true\n\
                    echo \"at $(date +%s) or `hostname`\"\n\
                    ip netns exec ns1 timeout -s KILL 5 taskset -c 0 nginx -t\n\
                    runuser -u postgres -- initdb -D d\n\
                    /usr/bin/time -f '%U' -o t unshare -m --propagation private nice -n 5 ps\n\
                    diff <(cat a) <(cat b) 2>&1 >/dev/null\n";
        assert_eq!(
            programs(text),
            [
                "uname",
                "ls",
                "grep",
                "sort",
                "date",
                "hostname",
                "ip",
                "timeout",
                "taskset",
                "nginx",
                "runuser",
                "initdb",
                "/usr/bin/time",
                "unshare",
                "nice",
                "ps",
                "cat",
                "cat",
                "diff"
            ]
        );
    }

    #[test]
    fn not_commands_quotes_heredocs_arithmetic_cases_and_arrays() {
        let text = "# comment: rm everything\npy 'import os; os.system(1)'\n\
                    cat <<'EOF' >f\nnot a command\nEOF\n\
                    ((i++)); if [[ $a == b || -f c ]]; then n=$((1 + 2)); fi\n\
                    for ((i = 0; i < 2; i++)); do command -v z; done\n\
                    arr=(one two) f() { stat x; }\n\
                    case $1 in\n  -q|--quick) q=1 ;;\n  # (a comment) here\n  *) usage; exit 2 ;;\nesac\n\
                    for w in a b; do wc -l \"$w\"; done\n";
        let s = read(text);
        let got: Vec<&str> = s.started.iter().map(|s| s.program.as_str()).collect();
        assert_eq!(got, ["py", "cat", "stat", "usage", "wc"]);
        assert_eq!(s.functions, ["f"]);
        // Lines are counted through the here-document.
        assert_eq!((s.started[3].line, s.started[4].line), (12, 14));
    }
}
