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
    std::process::exit(match run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            cli::exit::ERROR
        }
    });
}

fn run() -> anyhow::Result<i32> {
    let cli = cli::Cli::parse_args();
    let shutdown = scalelab::shutdown::Shutdown::new();
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
