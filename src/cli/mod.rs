//! Command-line arguments: raw clap arguments, cross-checked into what each
//! command needs (as ripgrep separates parsing from high-level arguments).

pub mod agent;
pub mod check;
pub mod compare;
pub mod doctor;
pub mod doctor_machine;
pub mod exit;
pub mod habits;
pub mod history;
pub mod load_args;
pub mod load_dns;
pub mod load_forward;
pub mod load_http;
pub mod load_mysql;
pub mod load_pg;
pub mod model;
pub mod plan;
pub mod report;
pub mod run;
pub mod run_repeats;

use clap::{Parser, Subcommand};
use scalelab::shutdown::Shutdown;
use std::path::PathBuf;

/// The store used when neither `--store` nor `SCALELAB_STORE` is given.
pub const DEFAULT_STORE: &str = "scalelab.sqlite";

#[derive(Parser, Debug)]
#[command(
    name = "scalelab",
    version,
    about = "Measure how servers and the systems under them scale.",
    after_help = exit::HELP
)]
pub struct Cli {
    /// SQLite store holding every run and trial [env: SCALELAB_STORE]
    /// [default: ./scalelab.sqlite]; `history` takes it repeated
    #[arg(long, global = true, value_name = "PATH", action = clap::ArgAction::Append)]
    pub store: Vec<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run an experiment: start the servers, sweep, store every trial, report.
    Run(run::RunArgs),
    /// One ad-hoc load run, like wrk/wrk2 or pgbench.
    #[command(subcommand)]
    Load(LoadCommand),
    /// Write the self-contained HTML report of a run and print its path.
    Report(report::ReportArgs),
    /// Export a run's trials as JSON or CSV.
    Export(report::ExportArgs),
    /// List the runs in the store.
    List,
    /// Compare N runs point by point, each side against the first (repeats
    /// of one label pooled; between runs the run is the unit).
    Compare(compare::CompareArgs),
    /// The runs of one recipe across stores, in order, with change points
    /// per sweep point and what changed at each.
    History(history::HistoryArgs),
    /// Regression gate for CI and `git bisect run`: exit 0 good, 1 a
    /// significant regression, 125 cannot say.
    Check(check::CheckArgs),
    /// Fit the Universal Scalability Law to (N, X) pairs from a CSV file.
    Model(model::ModelArgs),
    /// Plan runs: `plan RECIPE --detect 5%` prints the runs and trials that
    /// resolve a change, from the recipe's stored runs; `--labels "A,B,C"
    /// --runs 3` prints a randomised schedule of boots and runs, so no
    /// label's runs all come first.
    Plan(plan::PlanArgs),
    /// Show which servers and tools each recipe needs, and which are missing.
    Doctor(doctor::DoctorArgs),
    /// The remote end of a multi-host run (started by the coordinator over ssh).
    #[command(hide = true)]
    Agent(agent::AgentArgs),
    /// DNS helpers: query sets for the DNS lab.
    #[command(subcommand)]
    Dns(DnsCommand),
}

#[derive(Subcommand, Debug)]
pub enum DnsCommand {
    /// Write a dnsperf-format query file drawn from the lab's names with a
    /// heavy-tailed (Zipf) popularity, deterministic per seed.
    Queries(load_dns::DnsQueriesArgs),
    /// Start a DNS lab (a private namespace with NSD, and Unbound or BIND),
    /// run a command inside it, and remove it: for dnsperf, dig, and
    /// `scalelab load dns` by hand.
    Lab(load_dns::DnsLabArgs),
}

/// The ad-hoc load commands: one line per kind, its variant, the module
/// with its `run(&Args, &Shutdown)`, and its arguments. The macro makes the
/// enum and its dispatch, so a new kind's command is that one line.
macro_rules! load_commands {
    ($( $(#[$doc:meta])* $variant:ident => $module:ident :: $args:ident, )*) => {
        #[derive(Subcommand, Debug)]
        pub enum LoadCommand {
            $( $(#[$doc])* $variant($module::$args), )*
        }

        impl LoadCommand {
            /// The peer flags of the load kind the command line names
            /// (its subcommand's name, as typed), for [`habits::explain`].
            fn habits(name: &str) -> &'static [habits::Habit] {
                $( if stringify!($variant).eq_ignore_ascii_case(name) {
                    return $module::HABITS;
                } )*
                &[]
            }

            /// Runs the load command; the returned number is the exit code.
            fn run(&self, shutdown: &Shutdown) -> anyhow::Result<i32> {
                match self {
                    $( LoadCommand::$variant(a) => $module::run(a, shutdown), )*
                }
            }
        }
    };
}

load_commands! {
    /// HTTP/1.1 load, closed loop like wrk or constant rate like wrk2 -R.
    Http => load_http::LoadHttpArgs,
    /// PostgreSQL load with pgbench's built-in scripts or a custom script (-f).
    Pg => load_pg::LoadPgArgs,
    /// DNS over UDP, like dnsperf (-q, -Q) or resperf (--ramp).
    Dns => load_dns::LoadDnsArgs,
    /// IPv4 forwarding through a lab router (A - R - B namespaces): the
    /// RFC 2544 zero-loss throughput search.
    Forward => load_forward::LoadForwardArgs,
    /// MySQL/MariaDB load with sysbench's OLTP scripts.
    Mysql => load_mysql::LoadMysqlArgs,
}

impl Cli {
    /// The command line of this process, parsed; on an error, clap's
    /// message with a peer's flag named in its scalelab form (see
    /// [`habits`]), for the caller to print and exit with (2, or `check`'s
    /// abort code).
    pub fn try_parse_args() -> Result<Cli, clap::Error> {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        Cli::command_for_help()
            .try_get_matches_from(&args)
            .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m))
            .map_err(|e| Cli::explain(e, &args))
    }

    /// The command line's grammar as `--help` shows it: the global
    /// `--store` is left out of every `load` command's help, since `load`
    /// refuses it ([`refuse_store_on_load`]).
    pub fn command_for_help() -> clap::Command {
        // clap propagates a global argument only to subcommands that lack
        // one of its id: `load` gets its own, hidden, which its kinds
        // inherit; parsing reads it as the same `--store`.
        let hidden_store = clap::Arg::new("store")
            .long("store")
            .global(true)
            .hide(true)
            .value_name("PATH")
            .action(clap::ArgAction::Append)
            .value_parser(clap::value_parser!(PathBuf));
        <Cli as clap::CommandFactory>::command()
            .mut_subcommand("load", |load| load.arg(hidden_store))
    }

    /// `err`, the parse error of `args`, as [`Cli::parse_args`] shows it.
    pub fn explain(err: clap::Error, args: &[std::ffi::OsString]) -> clap::Error {
        let kind = habits::load_kind(args).unwrap_or_default();
        habits::explain(err, LoadCommand::habits(&kind))
    }

    /// `--store`, else `SCALELAB_STORE`, else `./scalelab.sqlite`.
    pub fn store_path(&self) -> PathBuf {
        self.store
            .last()
            .cloned()
            .or_else(|| std::env::var_os("SCALELAB_STORE").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from(DEFAULT_STORE))
    }
}

/// Whether the command line names the `check` subcommand (read leniently,
/// so that a bad flag to `check` is still known to be one).
pub fn is_check(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    use clap::CommandFactory;
    Cli::command()
        .ignore_errors(true)
        .try_get_matches_from(args)
        .is_ok_and(|m| m.subcommand_name() == Some("check"))
}

/// Runs the parsed command; the returned number is the exit code.
pub fn dispatch(cli: Cli, shutdown: &Shutdown) -> anyhow::Result<i32> {
    refuse_store_on_load(&cli)?;
    let store = cli.store_path();
    if cli.store.len() > 1 && !matches!(cli.command, Command::History(_)) {
        anyhow::bail!(
            "--store was given {} times; only `scalelab history` reads several stores (give \
             the others as STORE:RUN to `compare` and `report`)",
            cli.store.len()
        );
    }
    match &cli.command {
        Command::Run(a) => run::run(a, &store, !cli.store.is_empty(), shutdown),
        Command::Load(load) => load.run(shutdown),
        Command::Dns(DnsCommand::Queries(a)) => load_dns::queries(a),
        Command::Dns(DnsCommand::Lab(a)) => load_dns::lab(a, shutdown),
        Command::Report(a) => report::report(a, &store),
        Command::Export(a) => report::export(a, &store),
        Command::List => report::list(&store),
        Command::Compare(a) => compare::run(a, &store),
        Command::History(a) => history::run(a, &cli.store, &store),
        Command::Check(a) => check::run(a, &store),
        Command::Model(a) => model::run(a),
        Command::Plan(a) => plan::run(a, &store),
        Command::Doctor(a) => doctor::run(a),
        Command::Agent(a) => agent::run(a, shutdown),
    }
}

/// `--store` is global, but a `scalelab load` run prints its result and
/// stores nothing: the flag is refused rather than silently ignored.
fn refuse_store_on_load(cli: &Cli) -> anyhow::Result<()> {
    match (&cli.command, cli.store.last()) {
        (Command::Load(_), Some(path)) => anyhow::bail!(
            "--store {}: `scalelab load` stores nothing (it prints one run's result; \
             --json for a machine-readable copy); to store trials, write an experiment \
             file and use `scalelab run FILE --store {}`",
            path.display(),
            path.display()
        ),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod fuzz {
    //! Fuzzing the argument parsing with proptest, in the normal test suite
    //! with a fixed budget: flags from the real vocabulary with hostile
    //! values (huge, negative, NaN, garbage). Parsing, and checking the load
    //! shape the arguments ask for, never panic.

    use super::{Cli, Command, LoadCommand};
    use clap::Parser;
    use proptest::prelude::*;

    const FLAGS: &[&str] = &[
        "-c",
        "-t",
        "-d",
        "-R",
        "--timeout",
        "--connreqs",
        "-n",
        "--source-addrs",
        "-j",
        "--rate",
        "--max-tries",
        "-s",
        "--clients",
        "--threads",
        "--duration",
        "--resume",
        "--script",
        "-H",
        "-m",
        "--coalesce",
    ];

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|x| x.to_string()),
            "[0-9]{1,25}(\\.[0-9]{1,3})?(ms|s|m|h|x|)",
            prop_oneof![
                Just("NaN"),
                Just("inf"),
                Just("-inf"),
                Just("1e400"),
                Just("")
            ]
            .prop_map(str::to_string),
            "\\PC{0,6}",
        ]
    }

    fn args() -> impl Strategy<Value = Vec<String>> {
        let head = prop_oneof![
            Just(vec!["load", "http", "http://127.0.0.1:9/"]),
            Just(vec!["load", "pg", "host=127.0.0.1 port=9"]),
            Just(vec!["run", "x.toml"]),
        ];
        let pairs = proptest::collection::vec((proptest::sample::select(FLAGS), value()), 0..5);
        (head, pairs).prop_map(|(head, pairs)| {
            let mut out: Vec<String> = std::iter::once("scalelab")
                .chain(head)
                .map(str::to_string)
                .collect();
            for (flag, value) in pairs {
                out.push(flag.to_string());
                out.push(value);
            }
            out
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

        #[test]
        fn parsing_arguments_never_panics(args in args()) {
            let Ok(cli) = Cli::try_parse_from(&args) else {
                return Ok(());
            };
            let spec = match &cli.command {
                Command::Load(LoadCommand::Http(a)) => super::load_http::spec(a),
                Command::Load(LoadCommand::Pg(a)) => super::load_pg::spec(a),
                _ => return Ok(()),
            };
            if spec.validate().is_ok() {
                let d = spec.duration.max(spec.timeout);
                prop_assert!(std::time::Instant::now().checked_add(d * 2).is_some());
                if let scalelab::load::Pacing::Open { rate } = spec.pacing {
                    // The drivers' per-connection interval.
                    let gap = std::time::Duration::try_from_secs_f64(f64::from(spec.connections) / rate);
                    prop_assert!(gap.is_ok_and(|g| std::time::Instant::now().checked_add(g).is_some()));
                }
            }
        }
    }

    #[test]
    fn the_defect_arguments_are_errors() {
        let huge = [
            "scalelab",
            "load",
            "http",
            "http://127.0.0.1:9/",
            "-d",
            "99999999999999999999s",
        ];
        assert!(Cli::try_parse_from(huge).is_err());
        let many = [
            "scalelab",
            "load",
            "http",
            "http://127.0.0.1:9/",
            "-c",
            "4000000000",
        ];
        let err = Cli::try_parse_from(many).unwrap_err().to_string();
        assert!(err.contains("`connections` must be 1 to 1000000"), "{err}");
    }
}
