//! Helpers for tests that drive `scalelab run` against a real nginx.

use super::scalelab;
use scalelab::store::Store;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Writes `dir/exp.toml`: an nginx + HTTP experiment with `body` appended.
pub fn experiment(dir: &Path, body: &str) -> PathBuf {
    experiment_named(dir, "exp.toml", body)
}

/// Like [`experiment`], in `dir/file`.
pub fn experiment_named(dir: &Path, file: &str, body: &str) -> PathBuf {
    let text = format!(
        "name = \"it\"\n[server]\nkind = \"nginx\"\n[load]\nkind = \"http\"\npath = \"/\"\n{body}"
    );
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path
}

/// `scalelab --store STORE run EXP` with its servers and report inside `dir`.
pub fn run_cmd(dir: &Path, store: &Path, exp: &Path) -> std::process::Command {
    let mut cmd = scalelab();
    cmd.args([
        "--store",
        store.to_str().unwrap(),
        "run",
        exp.to_str().unwrap(),
    ])
    .env("SCALELAB_WORKDIR", dir.join("work"))
    .current_dir(dir);
    cmd
}

/// Runs `body`, written verbatim as `dir/exp.toml`, into `dir/s.sqlite`
/// with its report at `dir/r.html`, `args` after the experiment and
/// `extra_path` first on PATH; asserts it succeeded and returns the stored
/// run and stderr.
pub fn run_recipe(
    dir: &Path,
    body: &str,
    args: &[&str],
    extra_path: Option<&Path>,
) -> (scalelab::store::RunData, String) {
    let exp = dir.join("exp.toml");
    std::fs::write(&exp, body).unwrap();
    let store = dir.join("s.sqlite");
    let mut cmd = run_cmd(dir, &store, &exp);
    cmd.args(["-o", dir.join("r.html").to_str().unwrap()])
        .args(args);
    if let Some(p) = extra_path {
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", p.display()));
    }
    let out = cmd.output().unwrap();
    // 5: the run finished, but a starved load generator left nothing
    // comparable (a busy machine); the caller judges the stored trials.
    assert!(
        matches!(out.status.code(), Some(0 | 5)),
        "{}",
        super::stderr(&out)
    );
    let data = Store::open(&store, scalelab::catalog())
        .unwrap()
        .load_run("latest")
        .unwrap();
    (data, super::stderr(&out))
}

/// How many trials the latest run in `store` has (0 if none yet).
pub fn count_trials(store: &Path) -> usize {
    Store::open(store, scalelab::catalog())
        .ok()
        .and_then(|s| s.load_run("latest").ok())
        .map_or(0, |d| d.trials.len())
}

/// Waits up to `secs` for `cond`, polling every 20 ms.
pub fn wait_for(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The PID in the first `nginx-*/nginx.pid` under `work`.
pub fn nginx_pid(work: &Path) -> Option<u32> {
    std::fs::read_dir(work).ok()?.flatten().find_map(|e| {
        let text = std::fs::read_to_string(e.path().join("nginx.pid")).ok()?;
        text.trim().parse().ok()
    })
}

/// The `nginx-*` directories under `work`.
pub fn nginx_dirs(work: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(work)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("nginx-"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Sends `sig` to the child.
pub fn signal(child: &std::process::Child, sig: libc::c_int) {
    scalelab::sys::process::signal(child.id(), sig);
}

/// A private directory holding an nginx experiment (`exp.toml`), its store
/// (`s.sqlite`) and the servers' work directory (`work/`).
pub struct Lab {
    pub dir: tempfile::TempDir,
    pub exp: PathBuf,
    pub store: PathBuf,
}

impl Lab {
    /// An nginx + HTTP experiment with `body` appended (see [`experiment`]).
    pub fn new(body: &str) -> Lab {
        let dir = tempfile::tempdir().unwrap();
        let exp = experiment(dir.path(), body);
        let store = dir.path().join("s.sqlite");
        Lab { dir, exp, store }
    }

    /// `scalelab --store STORE run EXP`, servers under `work/`.
    pub fn run(&self) -> std::process::Command {
        run_cmd(self.dir.path(), &self.store, &self.exp)
    }

    /// `scalelab --store STORE run EXP --resume ID`.
    pub fn resume(&self, id: i64) -> std::process::Command {
        let mut cmd = self.run();
        cmd.args(["--resume", &id.to_string()]);
        cmd
    }

    /// Where the servers' private directories go.
    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// The latest run's id.
    pub fn latest(&self) -> i64 {
        Store::open(&self.store, scalelab::catalog())
            .unwrap()
            .resolve_run("latest")
            .unwrap()
    }
}

/// Spawns `cmd` with stdout discarded and stderr kept for the assertions.
pub fn spawn_quiet(mut cmd: std::process::Command) -> std::process::Child {
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Starts a real nginx on `dir/nginx.conf` (prefix `dir`, log
/// `dir/error.log`), as a test's own `external` server, and returns its
/// master's PID once it has written `dir/nginx.pid`.
pub fn start_nginx(dir: &Path) -> u32 {
    let _ = std::fs::remove_file(dir.join("nginx.pid"));
    let out = std::process::Command::new("nginx")
        .arg("-p")
        .arg(dir)
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .arg("-e")
        .arg(dir.join("error.log"))
        .output()
        .unwrap();
    assert!(out.status.success(), "nginx: {}", super::stderr(&out));
    let pid_file = dir.join("nginx.pid");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let pid = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok());
        match pid {
            Some(p) => return p,
            None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            None => panic!("nginx wrote no {}", pid_file.display()),
        }
    }
}
