//! Command-line arguments: raw clap arguments, cross-checked into what each
//! command needs (as ripgrep separates parsing from high-level arguments).

pub mod compare;
pub mod doctor;
pub mod load_dns;
pub mod load_http;
pub mod load_pg;
pub mod model;
pub mod report;
pub mod run;

use clap::{Parser, Subcommand};
use scalelab::shutdown::Shutdown;
use std::path::PathBuf;

/// The store used when neither `--store` nor `SCALELAB_STORE` is given.
pub const DEFAULT_STORE: &str = "scalelab.sqlite";

#[derive(Parser, Debug)]
#[command(
    name = "scalelab",
    version,
    about = "Measure how servers and the systems under them scale."
)]
pub struct Cli {
    /// SQLite store holding every run and trial [env: SCALELAB_STORE]
    /// [default: ./scalelab.sqlite]
    #[arg(long, global = true, value_name = "PATH")]
    pub store: Option<PathBuf>,

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
    /// Compare two runs point by point, with confidence intervals and verdicts.
    Compare(compare::CompareArgs),
    /// Fit the Universal Scalability Law to (N, X) pairs from a CSV file.
    Model(model::ModelArgs),
    /// Show which servers and tools each recipe needs, and which are missing.
    Doctor(doctor::DoctorArgs),
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

#[derive(Subcommand, Debug)]
pub enum LoadCommand {
    /// HTTP/1.1 load, closed loop like wrk or constant rate like wrk2 -R.
    Http(load_http::LoadHttpArgs),
    /// PostgreSQL load with pgbench's built-in scripts.
    Pg(load_pg::LoadPgArgs),
    /// DNS over UDP, like dnsperf (-q, -Q) or resperf (--ramp).
    Dns(load_dns::LoadDnsArgs),
}

impl Cli {
    /// `--store`, else `SCALELAB_STORE`, else `./scalelab.sqlite`.
    pub fn store_path(&self) -> PathBuf {
        self.store
            .clone()
            .or_else(|| std::env::var_os("SCALELAB_STORE").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from(DEFAULT_STORE))
    }
}

/// Runs the parsed command; the returned number is the exit code.
pub fn dispatch(cli: Cli, shutdown: &Shutdown) -> anyhow::Result<i32> {
    let store = cli.store_path();
    match &cli.command {
        Command::Run(a) => run::run(a, &store, shutdown),
        Command::Load(LoadCommand::Http(a)) => load_http::run(a, shutdown),
        Command::Load(LoadCommand::Pg(a)) => load_pg::run(a, shutdown),
        Command::Load(LoadCommand::Dns(a)) => load_dns::run(a, shutdown),
        Command::Dns(DnsCommand::Queries(a)) => load_dns::queries(a),
        Command::Dns(DnsCommand::Lab(a)) => load_dns::lab(a, shutdown),
        Command::Report(a) => report::report(a, &store),
        Command::Export(a) => report::export(a, &store),
        Command::List => report::list(&store),
        Command::Compare(a) => compare::run(a, &store),
        Command::Model(a) => model::run(a),
        Command::Doctor(a) => doctor::run(a),
    }
}
