//! The scalelab binary: parse arguments, run, print the error chain, set
//! the exit code. Everything else lives in the library and in `cli/`.

/// `print!` that ends the process quietly when stdout is a closed pipe
/// (`scalelab list | head`), as C tools do, instead of panicking. SIGPIPE
/// stays ignored because the load generators write to sockets.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if write!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

/// `println!` with the same closed-pipe handling as [`out!`].
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
}

mod cli;

fn main() {
    // `check` answers `git bisect run`: its errors abort the bisect
    // (exit::CHECK_ABORT) instead of reading as "bad" (2).
    let is_check = cli::is_check(std::env::args_os());
    std::process::exit(match run(is_check) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            cli::exit::for_error(is_check)
        }
    });
}

fn run(is_check: bool) -> anyhow::Result<i32> {
    let cli = match cli::Cli::try_parse_args() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() && is_check => {
            let _ = e.print();
            return Ok(cli::exit::CHECK_ABORT);
        }
        Err(e) => e.exit(),
    };
    let shutdown = scalelab::shutdown::Shutdown::new();
    if is_check {
        // Nothing to stop or save: a signal ends `check` at once (130/143).
        cli::exit::check_exits_on_signal();
        return cli::dispatch(cli, &shutdown);
    }
    let on_signal = shutdown.clone();
    // First Ctrl-C asks every loop to stop and the servers to be cleaned up;
    // a second one exits at once.
    ctrlc::set_handler(move || {
        if on_signal.is_triggered() {
            std::process::exit(cli::exit::INTERRUPTED);
        }
        eprintln!("\ninterrupted: stopping servers and saving what was measured...");
        on_signal.trigger();
    })?;
    cli::dispatch(cli, &shutdown)
}
