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
    # The server itself, under su's process when it switched user.
    spid=$(cat "$d/server.sh.pid" 2>/dev/null)
    kill -s "$sig" "${spid:-$pid}" 2>/dev/null
    i=0
    while [ "$i" -lt 100 ] && { alive "$pid" || alive "${spid:-$pid}"; }; do
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
# The first executable $1 on PATH or in the usual directories (FreeBSD's
# packages put mariadbd in /usr/local/libexec), else the
# newest-sorting Debian versioned one (/usr/lib/postgresql/*/bin).
find_prog() {
    for b in "$(command -v "$1" 2>/dev/null)" "/usr/local/sbin/$1" "/usr/local/bin/$1" "/usr/sbin/$1" "/usr/local/libexec/$1"; do
        if [ -n "$b" ] && [ -x "$b" ]; then
            echo "$b"
            return 0
        fi
    done
    last=
    for b in /usr/lib/postgresql/*/bin/"$1"; do
        if [ -x "$b" ]; then last=$b; fi
    done
    [ -n "$last" ] || return 1
    echo "$last"
}
find_bin() {
    if [ -n "$bin_path" ]; then
        echo "$bin_path"
        return 0
    fi
    find_prog "$prog"
}
# A step's binary: beside the server's first (initdb beside postgres).
find_step() {
    if [ -x "${bin%/*}/$1" ]; then
        echo "${bin%/*}/$1"
    else
        find_prog "$1"
    fi
}
# $d/NAME.sh: records its PID in $d/NAME.sh.pid, then execs BIN ARGS in $d.
# No argument may hold a single quote.
write_wrapper() {
    w="$d/$1.sh"
    shift
    { {
        echo "cd '$d' || exit 1"
        echo "echo \$\$ >\"\$0.pid\""
        printf 'exec'
        for a in "$@"; do
            case $a in
                *"'"*) return 1 ;;
            esac
            printf " '%s'" "$a"
        done
        echo
    } >"$w"; } 2>&1 || return 1
    if [ -n "$switch" ]; then chown "$user" "$w"; fi
}
# Runs $d/$1.sh as the server's user.
as_user() {
    if [ -n "$switch" ]; then
        su -m "$user" -c "/bin/sh '$d/$1.sh'"
    else
        /bin/sh "$d/$1.sh"
    fi
}
# A write of $1 bytes into $d failed: when its file system has not that
# room (and 64 KiB) left, the disk is full: `#full` and the bytes free
# say so before the error $2.
write_failed() {
    free=$(df -P -k "${d%/*}" 2>/dev/null | awk 'NR == 2 { print $4 * 1024 }')
    if [ -n "$free" ] && [ "$free" -lt $(($1 + 65536)) ]; then echo "#full $free"; fi
    fail "$2"
}
fail() {
    show_logs
    echo "#error $1"
    cleanup
    exit 1
}
# Runs step NAME ARGS... to completion, its output in $d/NAME.log.
run_step() {
    name=$1
    shift
    sbin=$(find_step "$name") || fail "no $name beside $bin, on PATH, in /usr/local/sbin, /usr/local/bin or /usr/sbin"
    write_wrapper "$name" "$sbin" "$@" || wrapper_failed "$name"
    logs="$logs $name.log"
    as_user "$name" </dev/null >"$d/$name.log" 2>&1 || fail "$name failed (exit status $?)"
}
# write_wrapper $1 failed: a full disk, or an argument with a quote.
wrapper_failed() {
    write_failed 4096 "cannot write $d/$1.sh (an argument holds a quote?)"
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
# As root, a server that refuses root runs as its user, which must reach
# the private directory: it owns it, and its parent lets it pass (o+x).
switch=
if [ -n "$user" ] && [ "$(id -u)" = 0 ]; then
    switch=1
    # su -m runs $SHELL (util-linux; FreeBSD's runs root's): /bin/sh.
    SHELL=/bin/sh
    export SHELL
    chown -R "$user" "$d" || fail "cannot give $d to the user $user (does it exist?)"
    chmod o+x "${d%/*}" || fail "cannot let $user pass through ${d%/*}"
fi
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
    s.push_str(&var("user", server.user.unwrap_or("")));
    s.push_str(TREE_FUNCTION);
    s.push_str(LIFECYCLE);
    s.push_str("mkdir \"$d\" || write_failed 4096 \"cannot make $d\"\n");
    for sub in &server.dirs {
        s.push_str(&format!("mkdir -p \"$d\"/{}\n", shell_quote(sub)));
    }
    for f in &server.files {
        s.push_str(&file_command(f)?);
    }
    s.push_str(RUN);
    for step in &server.steps {
        s.push_str(&format!("run_step {}\n", quoted(step.program, &step.args)));
    }
    s.push_str(&format!(
        "write_wrapper {} || wrapper_failed server\n",
        quoted("server", &server.args).replacen("server", "server \"$bin\"", 1)
    ));
    let pin = pin.map(|p| format!("{p} ")).unwrap_or_default();
    s.push_str(&format!(
        "if [ -n \"$switch\" ]; then\n    {pin}su -m \"$user\" -c \"/bin/sh '$d/server.sh'\" </dev/null >\"$d/stderr.log\" 2>&1 &\nelse\n    {pin}/bin/sh \"$d/server.sh\" </dev/null >\"$d/stderr.log\" 2>&1 &\nfi\n"
    ));
    s.push_str(LOOP);
    Some(s)
}

/// `first` and `args`, each quoted for the shell.
fn quoted(first: &str, args: &[String]) -> String {
    let mut words = vec![shell_quote(first)];
    words.extend(args.iter().map(|a| shell_quote(a)));
    words.join(" ")
}

/// The commands that write one file into `$d`.
fn file_command(f: &BareFile) -> Option<String> {
    match f {
        BareFile::Text { path, text } => {
            if text.lines().any(|l| l == EOF_MARK) {
                return None;
            }
            let nl = if text.ends_with('\n') { "" } else { "\n" };
            let q = shell_quote(path);
            Some(format!(
                "{{ cat >\"$d\"/{q} <<'{EOF_MARK}'\n{text}{nl}{EOF_MARK}\n}} 2>&1 || write_failed {} \"cannot write $d/\"{q}\n",
                text.len()
            ))
        }
        BareFile::Filler { path, bytes } => {
            let (kib, rest) = (bytes / 1024, bytes % 1024);
            let q = shell_quote(path);
            Some(format!(
                "{{ {{ dd if=/dev/zero bs=1024 count={kib} 2>/dev/null; dd if=/dev/zero bs={b} count={c} 2>/dev/null; }} | tr '\\000' x >\"$d\"/{q}; }} 2>&1 || write_failed {bytes} \"cannot write $d/\"{q}\n",
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
            steps: Vec::new(),
            user: None,
            dataset: |d| crate::server::refuse_dataset("test", d),
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

    /// This process's effective user id (0: root, which the tests that
    /// switch users need).
    pub(crate) fn euid() -> u32 {
        // SAFETY: geteuid has no preconditions.
        unsafe { libc::geteuid() }
    }

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

    /// `script` written into `dir` and started with `shell`, its stdin and
    /// stdout piped.
    pub(crate) fn spawn(shell: &str, script: &str, dir: &Path) -> std::process::Child {
        let file = dir.join(format!("run-{shell}.sh"));
        std::fs::write(&file, script).unwrap();
        Command::new(shell)
            .arg(&file)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Runs `script` with `shell`, sends `commands` one per line, and
    /// returns every line it printed until it exited.
    pub(crate) fn run(shell: &str, script: &str, dir: &Path, commands: &[&str]) -> Vec<String> {
        run_when(shell, script, dir, commands, &|| true)
    }

    /// [`run`], sending the first command only once `ready` says so after
    /// the start line (it is asked every 10 ms, for up to 10 s).
    pub(crate) fn run_when(
        shell: &str,
        script: &str,
        dir: &Path,
        commands: &[&str],
        ready: &dyn Fn() -> bool,
    ) -> Vec<String> {
        let mut child = spawn(shell, script, dir);
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
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !ready() && std::time::Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
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
    use super::shells::{run, run_when, shellcheck};
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
        for shell in crate::kinds::TEST_SHELLS.iter().copied() {
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

    /// The PID in the line `#started PID` and the user running `pid`'s
    /// child (the server under `su`).
    fn user_of_child(pid: u32) -> String {
        let out = std::process::Command::new("ps")
            .args(["-o", "user=", "--ppid", &pid.to_string()])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[test]
    fn as_root_the_steps_and_the_server_run_as_its_user_under_dash_and_posh() {
        if super::shells::euid() != 0 {
            panic!("this test switches users: run it as root (the lab's tests are)");
        }
        for shell in crate::kinds::TEST_SHELLS.iter().copied() {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("srv");
            let d = dir.display().to_string();
            let mut s = tests::example();
            s.user = Some("nobody");
            // A step that writes where only the user may: its own directory.
            s.steps = vec![crate::server::bare::BareStep {
                program: "touch",
                args: vec![format!("{d}/made-by-step")],
            }];
            let script = server_script(&s, &d, None).unwrap();
            let said = shellcheck(&script, tmp.path());
            assert!(said.is_empty(), "{said}");
            let mut child = super::shells::spawn(shell, &script, tmp.path());
            let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
            let mut lines = Vec::new();
            let pid = loop {
                let mut l = String::new();
                assert!(
                    std::io::BufRead::read_line(&mut out, &mut l).unwrap() > 0,
                    "{shell}: {lines:?}"
                );
                if let Some(p) = l.trim().strip_prefix("#started ") {
                    break p.parse::<u32>().unwrap();
                }
                lines.push(l);
            };
            // The step ran as nobody in the directory nobody owns.
            assert!(dir.join("made-by-step").exists(), "{shell}: {lines:?}");
            let owner = std::os::unix::fs::MetadataExt::uid(
                &std::fs::metadata(dir.join("made-by-step")).unwrap(),
            );
            assert_eq!(owner, 65534, "{shell}");
            let read_pid = || {
                std::fs::read_to_string(dir.join("server.sh.pid"))
                    .ok()
                    .and_then(|t| t.trim().parse::<u32>().ok())
            };
            let mut server = None;
            for _ in 0..100 {
                server = read_pid();
                if server.is_some() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let server = server.unwrap_or_else(|| panic!("{shell}: no server.sh.pid"));
            assert_eq!(user_of_child(pid), "nobody", "{shell}");
            // Stdin closed: the server, su and the directory are gone.
            drop(child.stdin.take());
            child.wait().unwrap();
            assert!(
                !crate::sys::process::is_alive(server),
                "{shell}: {server} left"
            );
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
        // The "server" copies its directory out before it is removed, and
        // is stopped only once its copy is whole (on a loaded machine it
        // may not have run at all by the start line).
        let keep = tmp.path().join("kept");
        s.program = "sh";
        let copy = format!(
            "cp -r {d} {}.part && mv {0}.part {0}; exec sleep 30",
            keep.display()
        );
        s.args = vec!["-c".into(), copy];
        let script = server_script(&s, &d, None).unwrap();
        let copied = || keep.exists();
        let shell = crate::kinds::TEST_SHELLS[0];
        run_when(shell, &script, tmp.path(), &["stop"], &copied);
        let conf = std::fs::read_to_string(keep.join("conf")).unwrap();
        assert_eq!(conf, "it's $HOME `x`\n");
        let bin = std::fs::read(keep.join("html/1k.bin")).unwrap();
        assert_eq!(bin.len(), 1500);
        assert!(bin.iter().all(|b| *b == b'x'));
    }
}
