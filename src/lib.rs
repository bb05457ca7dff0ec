//! scalelab: measures how servers, and the systems under them, scale.
//!
//! # Layout
//!
//! An experiment flows through the modules in this order:
//!
//! - [`recipe`]: the experiment file (TOML): parsing, validation with
//!   file/line/field errors, and expansion of the sweep into points.
//! - [`server`]: server lifecycles (nginx, PostgreSQL, MariaDB, DNS
//!   servers, the router lab, an external server). Each target writes its
//!   config into a private directory, starts the real server on loopback
//!   without systemd, holding the dataset it is handed, waits until it
//!   answers, and stops it as a whole (process group and cgroup).
//! - [`load`]: the load generators. One [`load::Driver`] trait, one driver per
//!   protocol; the shape of the load (open or closed loop, rate, requests per
//!   connection) is data in [`load::LoadSpec`]. The database drivers (pg,
//!   mysql) share one loop, `load::event_loop`, and one connection
//!   lifecycle, `load::reqresp`, generic over their protocols. The DNS and
//!   forwarding generators can also bypass the socket layer: [`load::xdp`]
//!   is AF_XDP (a UMEM, its rings, and a small XDP program assembled in
//!   Rust and attached through a BPF link).
//! - [`wire`]: the protocols both of those speak: the PostgreSQL, MySQL and
//!   DNS codecs (sans-IO: bytes in, messages out), blocking clients,
//!   connection strings, and the setup sessions a target loads its dataset
//!   through; [`wire::policy`] says where any packet may go.
//! - [`sys`]: the operating system under both: processes and readiness
//!   waits, [`sys::lifecycle`] (the one mechanism every kind starts its
//!   server with: own session, tracking cgroup, and a watchdog so nothing
//!   outlives `kill -9` of scalelab) and private network namespaces for
//!   labs that must not leak.
//! - [`placement`]: where the server may run: CPU pinning and cgroup memory
//!   limits, created and removed by name.
//! - [`probe`]: what the system under test does while it is measured: CPU,
//!   frequency, memory per process, context switches, network counters, and
//!   the environment fingerprint.
//! - [`runner`]: sweeps, interleaved trials in a seeded random order, warmup, the stopping
//!   rule, resume. It asks the load kind for the dataset of each point and
//!   starts the server holding it. Every trial is handed to the store the
//!   moment it ends.
//! - [`store`]: SQLite. Runs, trials, measurements, timelines and HDR
//!   histograms. See `docs/store-schema.md`.
//! - [`analysis`]: small pure statistics functions, each citing its method:
//!   summaries, confidence intervals, Mann-Whitney, bootstrap, the Universal
//!   Scalability Law fit, curve shape, comparisons and verdicts.
//! - [`profile`]: `run --profile`: `perf record` of the server at each
//!   system's peak and collapse points, folded with inferno, drawn as flame
//!   graphs and differential flame graphs.
//! - [`judging`]: what stored runs say, decided once and handed to the
//!   renderers typed: per-point verdicts, USL fits, curve shapes and
//!   comparisons; two stored runs compared ([`judging::runs`]), N runs
//!   merged by their labels ([`judging::multi`]), the regression gate
//!   ([`judging::check`]) and a recipe's history ([`judging::history`]).
//! - [`report`]: terminal tables, JSON, CSV, SVG charts and the
//!   self-contained HTML report, one file per format, which only draw what
//!   `judging` decided.
//! - [`remote`]: other hosts over OpenSSH: the agent, its protocol, clock
//!   offsets and lossless result transfer; and hosts without an agent
//!   (`agent = false`, the BSDs), whose managed server and interval probe
//!   run in the host's own POSIX `sh`.
//!
//! The lowest layers are a crate of their own, `scalelab-core`
//! (`crates/core`: [`analysis`], [`model`], [`kinds`], [`units`],
//! [`finite`], [`rng`], [`shutdown`], [`owned`], [`procfs`], [`placement`]
//! and [`sys`]), which depends on no other crate of the workspace; above it
//! `scalelab-wire` (`crates/wire`, [`wire`]), `scalelab-record`
//! (`crates/record`, [`record`]: what a trial hands up, and the
//! [`catalog()`] of the kinds the store is handed), `scalelab-lab`
//! (`crates/lab`: [`server`], [`load`], [`probe`] and [`profile`], what a
//! trial runs on one host), `scalelab-results` (`crates/results`:
//! [`store`] and [`judging`], which stand on core and the record and never
//! on the lab) and `scalelab-report` (`crates/report`: [`report`], the
//! renderers, standing on the results crate, which never names them). This
//! crate re-exports them under their own names, so the compiler refuses an
//! import from a lower crate into the layers above (the recipe, remote and
//! the runner), from the store, the judging layer or the report into the
//! lab, and from the judging layer into the renderers.
//!
//! Which module may import which is the layer diagram in `CONTRIBUTING.md`,
//! the real import graph: `scripts/module-loops.py` (run by
//! `scripts/test.sh`) fails on any top-level import against it and on any
//! loop.
//!
//! Leaves every layer may use: [`model`] (the sweep point, the dataset seam:
//! the workload declares a [`model::Dataset`] in `[load]`
//! ([`load::LoadPlan::dataset`]), the runner hands it to
//! [`server::Server::start`], and the target loads it through a
//! [`model::SetupSession`] that [`wire`] implements; the DNS lab's names, a
//! remote host's name, the router lab's topology), [`units`] (newtypes for
//! quantities), [`finite`] (non-finite numbers found by path before they
//! are stored), [`rng`] (the fixed-seed generator), [`owned`] (the paths
//! and cgroups scalelab makes, named after their owner's PID, removed when
//! it dies and reclaimed by the next run), [`procfs`] (the one reader of
//! this machine's `/proc`: a process's files (stat, status, schedstat,
//! its PID-reuse-safe start time, comm, cwd, io, threads, descriptors),
//! `/proc/self` and `/proc/thread-self`, the machine's stat, loadavg,
//! meminfo, cpuinfo, cmdline and IRQs, the network tables, and `/proc/sys`,
//! the one thing it writes, by a sysctl's name; and the one way to join a
//! network namespace; the one exception is shell run on another host,
//! which reads that host's `/proc` in its own `sh`: the agentless path's
//! scripts, `remote::bare`, and `remote::cluster`'s stale-agent check;
//! `probe::proc_guard`'s test keeps it so), [`shutdown`] (the Ctrl-C flag
//! that every long-running loop is handed) and [`kinds`] (what every server
//! and load kind shares: the settings parser and installation
//! requirements; each family keeps one registry of kinds,
//! [`server::KINDS`] and [`load::KINDS`]).
//!
//! Errors are typed per module (`thiserror`); only the binary uses `anyhow`.

pub use scalelab_core::{
    analysis, finite, kinds, model, owned, placement, procfs, rng, shutdown, sys, units,
};
pub use scalelab_lab::{catalog, load, probe, profile, server, tls};
pub use scalelab_record as record;
pub use scalelab_report as report;
pub use scalelab_results::{judging, store};
pub use scalelab_wire as wire;

pub mod recipe;
pub mod remote;
pub mod runner;
