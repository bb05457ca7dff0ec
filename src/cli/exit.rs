//! The exit codes, so that a script can tell a partial run from an empty
//! one. Listed in `--help` ([`HELP`]) and docs/commands.md.

/// Every trial (or the load run) measured what it should.
pub const OK: i32 = 0;
/// An error before anything ran: bad input, a missing store, a busy fixed
/// port, a run that is already being resumed (also clap's usage errors).
pub const ERROR: i32 = 2;
/// The run finished, but some trials failed (their reasons are stored).
pub const SOME_FAILED: i32 = 3;
/// Nothing was measured: every trial failed, or a load run completed no
/// request.
pub const NOTHING_MEASURED: i32 = 4;
/// Nothing comparable: a run in which every comparison against the
/// baseline (every point, with one system) is "not comparable" (errors
/// above the threshold, or a load generator that fell behind;
/// `scalelab::judging::analyse::nothing_comparable`), or a `compare` in
/// which a run shares no comparable point with the baseline.
pub const NOTHING_COMPARABLE: i32 = 5;
/// Interrupted by SIGINT or SIGTERM, or a run with trials discarded
/// because scalelab was stopped during their window; `--resume` continues
/// a run.
pub const INTERRUPTED: i32 = 130;
/// `check`'s error that is not about the candidate (a missing or corrupt
/// store, a bad flag): `git bisect run` aborts on an exit of 128 or more
/// (git-bisect(1)), where 2 would name the commit bad.
pub const CHECK_ABORT: i32 = 128;

/// The exit code of an error in `command`: [`CHECK_ABORT`] for `check`
/// (so `git bisect run` aborts instead of naming a commit), else [`ERROR`].
pub fn for_error(is_check: bool) -> i32 {
    if is_check {
        CHECK_ABORT
    } else {
        ERROR
    }
}

/// For `check`, which only reads stores and has nothing to clean up:
/// SIGINT and SIGTERM end the process at once with 128 + the signal (130,
/// 143, which `git bisect run` reads as abort), never a verdict printed
/// after the signal.
pub fn check_exits_on_signal() {
    extern "C" fn on_signal(sig: libc::c_int) {
        // SAFETY: _exit is async-signal-safe and takes no pointers.
        unsafe { libc::_exit(128 + sig) }
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installs a handler that only calls the async-signal-safe
        // _exit; the function pointer lives for the whole program.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}

pub const HELP: &str = "\
Exit codes:
  0    every trial (or the load run) measured what it should
  2    error before anything ran (bad input, missing store, busy fixed port,
       run already being resumed); `check` exits 128 instead, so that
       `git bisect run` aborts (see `scalelab check --help`)
  3    the run finished but some trials failed (reasons are in the store)
  4    nothing was measured: every trial failed, a load run completed
       no request, or `load forward` found no rate that passed
  5    nothing comparable: every point of the run is \"not comparable\"
       (errors above the threshold, or the load generator fell behind its
       schedule), or `compare` found no point a run shares comparably with
       the baseline; no verdict is drawn
  130  interrupted (SIGINT/SIGTERM), or trials discarded because scalelab
       was stopped (Ctrl-Z, SIGSTOP) during their window;
       `scalelab run FILE --resume ID` continues a run; a load run prints
       what it measured before the signal";

/// The exit code of a run that was not interrupted, from its trial counts.
pub fn for_trials(ok: usize, failed: usize) -> i32 {
    match (ok, failed) {
        (0, _) => NOTHING_MEASURED,
        (_, 0) => OK,
        _ => SOME_FAILED,
    }
}

/// The exit code of a load run that completed `requests` requests (cut
/// short when `shutdown` was triggered).
pub fn for_load(requests: u64, shutdown: &scalelab::shutdown::Shutdown) -> i32 {
    if shutdown.is_triggered() {
        INTERRUPTED
    } else if requests == 0 {
        eprintln!("nothing was measured: no request completed");
        NOTHING_MEASURED
    } else {
        OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_and_empty_runs_are_told_apart() {
        assert_eq!(for_trials(4, 0), OK);
        assert_eq!(for_trials(3, 1), SOME_FAILED);
        assert_eq!(for_trials(0, 4), NOTHING_MEASURED);
        assert_ne!(SOME_FAILED, ERROR);
        assert_ne!(NOTHING_MEASURED, ERROR);
    }

    #[test]
    fn checks_errors_abort_git_bisect_and_others_stay_2() {
        // git-bisect(1): 1-127 but 125 is "bad", 128 and above abort.
        assert!(for_error(true) >= 128);
        assert_eq!(for_error(false), ERROR);
        let args = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        for check in [
            &["scalelab", "check", "base.sqlite"][..],
            &[
                "scalelab",
                "--store",
                "s.sqlite",
                "check",
                "--max-regresion",
                "5",
            ],
            &["scalelab", "check", "--max-regression", "500", "x"],
            &["scalelab", "check"],
        ] {
            assert!(crate::cli::is_check(args(check)), "{check:?}");
        }
        for other in [
            &["scalelab", "run", "check"][..],
            &["scalelab", "runn"],
            &["scalelab"],
        ] {
            assert!(!crate::cli::is_check(args(other)), "{other:?}");
        }
    }
}
