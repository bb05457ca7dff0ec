//! The POSIX `sh` script that runs one managed server on a host without an
//! agent: pure text, built from the kind's [`BareServer`].
//!
//! It makes the private directory, writes the kind's files into it (here
//! documents), finds the binary (the recipe's path, else `PATH`,
//! `/usr/local/sbin`, `/usr/local/bin`, `/usr/sbin`), starts it in the
//! foreground as its own child (pinned with the OS's command), prints
//! `#started PID` and then answers one command per line on stdin:
//! `status` (`#running` or `#gone`), `log` (the logs' last lines between
//! `#log` and `#end`) and `stop` (`#stopped`). When stdin closes (the
//! coordinator died, or its ssh session did) or a signal arrives, it stops
//! the server and every process of its tree by PID and removes the
//! directory: its watchdog is its own `read`.
//!
//! Every line passes `shellcheck -s sh` and runs under `dash` and `posh`
//! (`tests` below run all three).

use super::probe_script::TREE_FUNCTION;
use crate::remote::ssh::shell_quote;
use crate::server::bare::{BareFile, BareServer};

/// The here-document delimiter; no file may hold it as a line.
const EOF_MARK: &str = "SCALELAB_BARE_EOF";

/// The lifecycle: functions and the command loop, after the variables
/// (`d`, `prog`, `bin_path`, `sig`, `logs`) and before nothing.
const LIFECYCLE: &str = r##"
pid=
# Whether PID $1 runs (a zombie does not).
alive() {
    s=$(ps -o stat= -p "$1" 2>/dev/null)
    case $s in
        '' | Z*) return 1 ;;
    esac
    return 0
}
stop_server() {
    [ -n "$pid" ] || return 0
    all=$(tree "$pid")
    kill -s "$sig" "$pid" 2>/dev/null
    i=0
    while [ "$i" -lt 100 ] && alive "$pid"; do
        sleep 0.1
        i=$((i + 1))
    done
    for p in $all; do
        if alive "$p"; then kill -s KILL "$p" 2>/dev/null; fi
    done
    wait "$pid" 2>/dev/null
    pid=
}
cleanup() {
    stop_server
    rm -rf "$d"
}
trap 'cleanup; exit 1' HUP INT TERM PIPE
find_bin() {
    if [ -n "$bin_path" ]; then
        echo "$bin_path"
        return 0
    fi
    for b in "$(command -v "$prog" 2>/dev/null)" "/usr/local/sbin/$prog" "/usr/local/bin/$prog" "/usr/sbin/$prog"; do
        if [ -n "$b" ] && [ -x "$b" ]; then
            echo "$b"
            return 0
        fi
    done
    return 1
}
show_logs() {
    echo "#log"
    for f in $logs; do
        if [ -f "$d/$f" ]; then
            echo "== $f"
            tail -n 20 "$d/$f"
        fi
    done
    echo "#end"
}
"##;

/// The commands after the files: find, start, serve the command loop.
const RUN: &str = r##"
bin=$(find_bin) || {
    echo "#error no $prog on PATH, in /usr/local/sbin, /usr/local/bin or /usr/sbin; install it or give its path"
    cleanup
    exit 1
}
echo "#binary $bin"
echo "#version $("$bin" "$version_arg" 2>&1 | head -n 1)"
"##;

/// The command loop, after the start line.
const LOOP: &str = r##"
pid=$!
echo "#started $pid"
while IFS= read -r cmd; do
    case $cmd in
        status)
            if alive "$pid"; then echo "#running"; else echo "#gone"; fi
            ;;
        log) show_logs ;;
        stop)
            stop_server
            echo "#stopped"
            break
            ;;
    esac
done
cleanup
"##;

/// The script that runs `server` in the private directory `dir` (which it
/// makes; its parent must exist), pinned by `pin` (the OS's command and
/// its CPU list, e.g. `cpuset -l 0,1`) when given. `None` when a file
/// holds the here-document delimiter as a line.
pub fn server_script(server: &BareServer, dir: &str, pin: Option<&str>) -> Option<String> {
    let mut s =
        String::from("#!/bin/sh\n# scalelab: a managed server on a host without an agent\n");
    s.push_str("rm -f \"$0\"\numask 077\n");
    // Always quoted: `prog=sleep` reads to shellcheck like a command.
    let var = |name: &str, value: &str| format!("{name}='{}'\n", value.replace('\'', r"'\''"));
    s.push_str(&var("d", dir));
    s.push_str(&var("prog", server.program));
    let bin_path = server
        .program_path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    s.push_str(&var("bin_path", &bin_path));
    s.push_str(&var("sig", server.stop_signal));
    s.push_str(&var("logs", &server.logs.join(" ")));
    s.push_str(&var("version_arg", server.version_arg));
    s.push_str(TREE_FUNCTION);
    s.push_str(LIFECYCLE);
    s.push_str("mkdir \"$d\" || { echo \"#error cannot make $d\"; exit 1; }\n");
    for sub in &server.dirs {
        s.push_str(&format!("mkdir -p \"$d\"/{}\n", shell_quote(sub)));
    }
    for f in &server.files {
        s.push_str(&file_command(f)?);
    }
    s.push_str(RUN);
    let args: Vec<String> = server.args.iter().map(|a| shell_quote(a)).collect();
    s.push_str(&format!("set -- {}\n", args.join(" ")));
    let pin = pin.map(|p| format!("{p} ")).unwrap_or_default();
    s.push_str(&format!(
        "{pin}\"$bin\" \"$@\" </dev/null >\"$d/stderr.log\" 2>&1 &\n"
    ));
    s.push_str(LOOP);
    Some(s)
}

/// The commands that write one file into `$d`.
fn file_command(f: &BareFile) -> Option<String> {
    match f {
        BareFile::Text { path, text } => {
            if text.lines().any(|l| l == EOF_MARK) {
                return None;
            }
            let nl = if text.ends_with('\n') { "" } else { "\n" };
            Some(format!(
                "cat >\"$d\"/{} <<'{EOF_MARK}'\n{text}{nl}{EOF_MARK}\n",
                shell_quote(path)
            ))
        }
        BareFile::Filler { path, bytes } => {
            let (kib, rest) = (bytes / 1024, bytes % 1024);
            let q = shell_quote(path);
            Some(format!(
                "{{ dd if=/dev/zero bs=1024 count={kib} 2>/dev/null; dd if=/dev/zero bs={b} count={c} 2>/dev/null; }} | tr '\\000' x >\"$d\"/{q}\n",
                b = rest.max(1),
                c = u64::from(rest > 0),
            ))
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::server::bare::BareReady;

    pub(crate) fn example() -> BareServer {
        BareServer {
            kind: "test",
            program: "sleep",
            program_path: None,
            dirs: vec!["html".into()],
            files: vec![
                BareFile::Text {
                    path: "conf".into(),
                    text: "it's $HOME `x`\n".into(),
                },
                BareFile::Filler {
                    path: "html/1k.bin".into(),
                    bytes: 1500,
                },
            ],
            args: vec!["30".into()],
            stop_signal: "TERM",
            version_arg: "--version",
            logs: vec!["stderr.log".into()],
            ready: BareReady::Http("127.0.0.1".parse().unwrap(), 1),
            endpoint: String::new(),
            config: String::new(),
        }
    }

    #[test]
    fn a_file_with_the_delimiter_is_refused() {
        let mut s = example();
        s.files = vec![BareFile::Text {
            path: "x".into(),
            text: format!("a\n{EOF_MARK}\nb"),
        }];
        assert!(server_script(&s, "/tmp/x", None).is_none());
    }
}

/// The script's checks with the real shells: `shellcheck -s sh`, and a
/// whole lifecycle under `dash` and `posh` (start, status, log, stop; and
/// stdin closed: nothing left, the directory gone).
#[cfg(test)]
pub(crate) mod shells {
    use std::io::{BufRead, BufReader, Write};
    use std::path::Path;
    use std::process::{Command, Stdio};

    /// `shellcheck -s sh` on `script`: its complaints, or empty.
    pub(crate) fn shellcheck(script: &str, dir: &Path) -> String {
        let file = dir.join("check.sh");
        std::fs::write(&file, script).unwrap();
        let out = Command::new("shellcheck")
            .args(["-s", "sh"])
            .arg(&file)
            .output()
            .expect("shellcheck is installed (apt-get install shellcheck)");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs `script` with `shell`, sends `commands` one per line, and
    /// returns every line it printed until it exited.
    pub(crate) fn run(shell: &str, script: &str, dir: &Path, commands: &[&str]) -> Vec<String> {
        let file = dir.join(format!("run-{shell}.sh"));
        std::fs::write(&file, script).unwrap();
        let mut child = Command::new(shell)
            .arg(&file)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut lines = Vec::new();
        let mut line = String::new();
        // Up to the start line, then one command at a time.
        let mut wait_for = |lines: &mut Vec<String>, mark: &str| loop {
            line.clear();
            if out.read_line(&mut line).unwrap() == 0 {
                return;
            }
            lines.push(line.trim_end().to_string());
            if line.starts_with(mark) || mark.is_empty() {
                return;
            }
        };
        wait_for(&mut lines, "#started");
        for c in commands {
            writeln!(stdin, "{c}").unwrap();
            let mark = match *c {
                "status" => "#",
                "log" => "#end",
                _ => "#stopped",
            };
            wait_for(&mut lines, mark);
        }
        drop(stdin);
        wait_for(&mut lines, "never");
        child.wait().unwrap();
        lines
    }
}

#[cfg(test)]
mod shell_tests {
    use super::shells::{run, shellcheck};
    use super::*;

    fn pid_of(lines: &[String]) -> u32 {
        let l = lines.iter().find(|l| l.starts_with("#started ")).unwrap();
        l["#started ".len()..].parse().unwrap()
    }

    #[test]
    fn the_server_script_passes_shellcheck() {
        let tmp = tempfile::tempdir().unwrap();
        let s = server_script(&tests::example(), "/tmp/x", Some("taskset -c 0")).unwrap();
        let said = shellcheck(&s, tmp.path());
        assert!(said.is_empty(), "{said}\n{s}");
    }

    #[test]
    fn the_server_script_runs_a_server_under_dash_and_posh_and_leaves_nothing() {
        for shell in ["dash", "posh"] {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("srv");
            let d = dir.display().to_string();
            let s = server_script(&tests::example(), &d, None).unwrap();
            let lines = run(shell, &s, tmp.path(), &["status", "log", "stop"]);
            let pid = pid_of(&lines);
            assert!(
                lines.contains(&"#running".to_string()),
                "{shell}: {lines:?}"
            );
            assert!(
                lines.contains(&"#stopped".to_string()),
                "{shell}: {lines:?}"
            );
            assert!(!crate::sys::process::is_alive(pid), "{shell}: {pid} left");
            assert!(!dir.exists(), "{shell}: {d} left");
            // Its files were written while it ran: the version line came
            // from the binary it found on PATH.
            assert!(
                lines.iter().any(|l| l.starts_with("#version sleep")),
                "{shell}: {lines:?}"
            );
            // Stdin closed without a stop: the same.
            let lines = run(shell, &s, tmp.path(), &[]);
            let pid = pid_of(&lines);
            assert!(!crate::sys::process::is_alive(pid), "{shell}: {pid} left");
            assert!(!dir.exists(), "{shell}: {d} left");
        }
    }

    #[test]
    fn the_files_are_written_as_given() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("srv");
        let d = dir.display().to_string();
        let mut s = tests::example();
        // The "server" copies its directory out before it is removed.
        let keep = tmp.path().join("kept");
        s.program = "cp";
        s.args = vec!["-r".into(), d.clone(), keep.display().to_string()];
        let script = server_script(&s, &d, None).unwrap();
        run("dash", &script, tmp.path(), &["stop"]);
        let conf = std::fs::read_to_string(keep.join("conf")).unwrap();
        assert_eq!(conf, "it's $HOME `x`\n");
        let bin = std::fs::read(keep.join("html/1k.bin")).unwrap();
        assert_eq!(bin.len(), 1500);
        assert!(bin.iter().all(|b| *b == b'x'));
    }
}
