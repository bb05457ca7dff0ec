//! What a kind needs installed, as Debian packages. Each server and load
//! kind lists its own requirements in its registry entry; this module holds
//! the type, the peer tools of the benchmarks, and the check.

/// One thing a recipe needs on the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// What it is, for people: `nginx`, `PostgreSQL server`.
    pub what: &'static str,
    /// The Debian package that provides it.
    pub package: &'static str,
    /// Any of these paths present means it is installed (`*` matches one
    /// path component, for versioned directories).
    pub paths: &'static [&'static str],
}

/// Peer tools the side-by-side benchmarks compare against, and what the
/// other scripts under `bench/` and `scripts/` run.
pub const BENCH_TOOLS: &[Requirement] = &[
    Requirement {
        what: "wrk (bench/http-vs-wrk.sh)",
        package: "wrk",
        paths: &["/usr/bin/wrk"],
    },
    Requirement {
        what: "h2load (bench/http2-vs-h2load.sh)",
        package: "nghttp2-client",
        paths: &["/usr/bin/h2load"],
    },
    Requirement {
        what: "openssl (bench/http-vs-wrk.sh -T: nginx's certificate)",
        package: "openssl",
        paths: &["/usr/bin/openssl"],
    },
    Requirement {
        what: "pgbench (bench/pg-vs-pgbench.sh)",
        package: "postgresql-contrib",
        paths: &["/usr/bin/pgbench"],
    },
    Requirement {
        what: "dnsperf and resperf (bench/dns-vs-dnsperf.sh)",
        package: "dnsperf",
        paths: &["/usr/bin/dnsperf"],
    },
    Requirement {
        what: "kxdpgun (bench/xdp-ab.sh)",
        package: "knot-dnsutils",
        paths: &["/usr/sbin/kxdpgun", "/usr/bin/kxdpgun"],
    },
    Requirement {
        what: "trafgen (bench/xdp-ab.sh)",
        package: "netsniff-ng",
        paths: &["/usr/sbin/trafgen", "/usr/bin/trafgen"],
    },
    Requirement {
        what: "strace (bench/syscalls.sh)",
        package: "strace",
        paths: &["/usr/bin/strace"],
    },
    Requirement {
        what: "iperf3 (bench/forward-vs-iperf3.sh)",
        package: "iperf3",
        paths: &["/usr/bin/iperf3"],
    },
    Requirement {
        what: "sysbench (bench/mysql-vs-sysbench.sh)",
        package: "sysbench",
        paths: &["/usr/bin/sysbench"],
    },
    Requirement {
        what: "sqlite3 (bench/faults.sh and bench/limiter-cost.sh read the store)",
        package: "sqlite3",
        paths: &["/usr/bin/sqlite3"],
    },
    Requirement {
        what: "curl (bench/syscalls.sh)",
        package: "curl",
        paths: &["/usr/bin/curl"],
    },
    Requirement {
        what: "make (bench/bisect-demo.sh builds each commit)",
        package: "make",
        paths: &["/usr/bin/make"],
    },
    Requirement {
        what: "chromium (scripts/report-screenshots.sh)",
        package: "chromium",
        paths: &["/usr/bin/chromium"],
    },
    Requirement {
        what: "pidstat (the limiter's per-thread figures checked in tests/it/limiter.rs)",
        package: "sysstat",
        paths: &["/usr/bin/pidstat"],
    },
];

/// Programs only the test suite runs: the agentless hosts' POSIX scripts
/// are linted and run under more than one `sh`, the HTML pages are
/// validated, `git bisect run` drives `check`, the fingerprint is checked. `scalelab doctor --packages` lists them, so
/// `scripts/setup.sh` installs them with everything else.
pub const TEST_TOOLS: &[Requirement] = &[
    Requirement {
        what: "shellcheck (the bare hosts' scripts are linted as POSIX sh)",
        package: "shellcheck",
        paths: &["/usr/bin/shellcheck"],
    },
    Requirement {
        what: "posh (the bare hosts' scripts run under a strict POSIX shell)",
        package: "posh",
        paths: &["/bin/posh", "/usr/bin/posh"],
    },
    Requirement {
        what: "tidy (the HTML report and pages are validated)",
        package: "tidy",
        paths: &["/usr/bin/tidy"],
    },
    Requirement {
        what: "git (tests/it/bisect.rs runs `check` under a real `git bisect run`)",
        package: "git",
        paths: &["/usr/bin/git"],
    },
    Requirement {
        what: "systemd-detect-virt (the fingerprint's virtualization, checked against it)",
        package: "systemd",
        paths: &["/usr/bin/systemd-detect-virt", "/bin/systemd-detect-virt"],
    },
];

/// The POSIX shells the tests run the agentless hosts' scripts under:
/// `dash` (Debian's `/bin/sh`, Essential) and `posh` (a strict POSIX
/// shell, [`TEST_TOOLS`]). The tests loop over this one list, so the guard
/// test (tests/it/installed) sees each shell they start.
pub const TEST_SHELLS: &[&str] = &["dash", "posh"];

/// The profiler behind `run --profile` (flame graphs of the server).
pub const PROFILER: Requirement = Requirement {
    what: "perf (run --profile)",
    package: "linux-perf",
    paths: &["/usr/bin/perf"],
};

impl Requirement {
    /// Whether any of its paths exists on this machine.
    pub fn installed(&self) -> bool {
        self.paths.iter().any(|p| glob_exists(p))
    }
}

/// Whether a path with `*` components exists.
fn glob_exists(pattern: &str) -> bool {
    let Some((head, tail)) = pattern.split_once('*') else {
        return std::path::Path::new(pattern).exists();
    };
    let Ok(entries) = std::fs::read_dir(head) else {
        return false;
    };
    entries
        .flatten()
        .any(|e| glob_exists(&format!("{}{}", e.path().display(), tail)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_versioned_directories() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("15/bin")).unwrap();
        std::fs::write(dir.path().join("15/bin/postgres"), "").unwrap();
        let root = dir.path().display();
        assert!(glob_exists(&format!("{root}/*/bin/postgres")));
        assert!(!glob_exists(&format!("{root}/*/bin/initdb")));
    }
}
