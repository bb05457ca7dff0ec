//! The scalelab binary: parse arguments, run, print the error chain, set
//! the exit code. Everything else lives in the library and in `cli/`.

fn main() {
    std::process::exit(match run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            2
        }
    });
}

fn run() -> anyhow::Result<i32> {
    Ok(0)
}
