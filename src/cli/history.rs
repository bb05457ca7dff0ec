//! `scalelab history RECIPE [SOURCE…]`: the runs of one recipe from any
//! number of stores, in order, with change points per sweep point.

use super::report::open_existing;
use anyhow::Context;
use scalelab::judging::history::{self, Order, SourcedRun};
use std::path::{Path, PathBuf};

/// `--order`: the judging layer's [`Order`], spelled for the command line
/// here, so the judging crate needs no argument parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OrderArg {
    /// By start time (then store and id).
    Time,
    /// By label, numbers in labels compared as numbers (`v9` before `v10`).
    Label,
}

impl From<OrderArg> for Order {
    fn from(o: OrderArg) -> Order {
        match o {
            OrderArg::Time => Order::Time,
            OrderArg::Label => Order::Label,
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct HistoryArgs {
    /// The recipe's name (its `name = "…"`, as `scalelab list` shows it).
    pub recipe: String,
    /// Where the runs are: a store file (all its runs of the recipe), or
    /// `STORE:RUN` for one run; with none, every `--store` (repeat it for
    /// several) or the default store.
    pub sources: Vec<String>,
    /// Order the runs by start time or by label (`v9` before `v10`).
    #[arg(long, value_enum, default_value = "time")]
    pub order: OrderArg,
    /// Print JSON instead of the text.
    #[arg(long)]
    pub json: bool,
    /// Also write the history as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Smallest change reported, in percent (default: the newest run's
    /// `[trials] noise`).
    #[arg(long, value_name = "PERCENT")]
    pub min_change: Option<f64>,
}

pub fn run(a: &HistoryArgs, stores: &[PathBuf], default_store: &Path) -> anyhow::Result<i32> {
    if let Some(p) = a
        .min_change
        .filter(|p| !(p.is_finite() && (0.0..100.0).contains(p)))
    {
        anyhow::bail!("--min-change {p} is not a percentage between 0 and 100");
    }
    let mut runs = gather(a, stores, default_store)?;
    if !a.json {
        // The terminal's text and the page (which escapes HTML itself) show
        // a label's control characters escaped, never raw.
        runs.iter_mut()
            .for_each(|r| scalelab::judging::format::terminal_safe_names(&mut r.data));
    }
    let h = history::history(
        &a.recipe,
        runs,
        a.order.into(),
        a.min_change.map(|p| p / 100.0),
    )?;
    if let Some(path) = &a.html {
        let page = scalelab::report::history::page::render(&h, env!("CARGO_PKG_VERSION"));
        std::fs::write(path, page)
            .with_context(|| format!("cannot write the history page to {}", path.display()))?;
        eprintln!("history page: {}", path.display());
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&h)?);
    } else {
        out!("{}", scalelab::report::history::text::render(&h));
    }
    Ok(super::exit::OK)
}

/// Every run the sources name, each with its store file.
fn gather(
    a: &HistoryArgs,
    stores: &[PathBuf],
    default_store: &Path,
) -> anyhow::Result<Vec<SourcedRun>> {
    let mut out = Vec::new();
    let mut whole_stores: Vec<PathBuf> = stores.to_vec();
    for source in &a.sources {
        match source.rsplit_once(':') {
            Some((store, run)) if !store.is_empty() => {
                let data = open_existing(Path::new(store))?.load_run(run)?;
                out.push(sourced(Path::new(store), data));
            }
            _ => whole_stores.push(PathBuf::from(source)),
        }
    }
    if a.sources.is_empty() && whole_stores.is_empty() {
        whole_stores.push(default_store.to_path_buf());
    }
    for store in &whole_stores {
        let s = open_existing(store)?;
        for listing in s.list_runs()? {
            if listing.run.name == a.recipe {
                out.push(sourced(store, s.load_run(&listing.run.id.to_string())?));
            }
        }
    }
    Ok(out)
}

fn sourced(store: &Path, data: scalelab::store::RunData) -> SourcedRun {
    SourcedRun {
        store: store.display().to_string(),
        data,
    }
}
