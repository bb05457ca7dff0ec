//! `scalelab doctor --machine [--reset]`: this machine's knobs as a run
//! reads them at its start, the warnings a run would print, and (`--reset`)
//! putting back what a killed `run --tune` left changed.

use scalelab::probe::machine;

/// Prints the readings and warnings; with `reset`, first puts back every
/// leftover tune of a dead scalelab under the base directory.
pub fn run(reset: bool) -> anyhow::Result<i32> {
    if reset {
        let base = scalelab::runner::default_base_dir();
        let lines = scalelab::runner::tune::state::reclaim(&base);
        if lines.is_empty() {
            outln!(
                "nothing to put back: no leftover tune of a dead scalelab under {}",
                base.display()
            );
        }
        for line in lines {
            outln!("reset: {line}");
        }
        outln!();
    }
    let facts = machine::gather(None, machine::CHECK_WINDOW);
    let readings = serde_json::to_value(machine::readings(&facts))?;
    let flat = scalelab::probe::flatten(&readings);
    let width = flat.keys().map(|k| k.len()).max().unwrap_or(0);
    for (key, value) in &flat {
        outln!("{key:<width$}  {value}");
    }
    let warnings = machine::warnings(&facts);
    if warnings.is_empty() {
        outln!("\nnothing here biases a comparison");
    }
    for w in &warnings {
        outln!("warning: {w}");
    }
    Ok(0)
}
