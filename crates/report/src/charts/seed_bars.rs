//! Bar figures at the highest load of a sweep:
//!
//! - seed 003: one bar per system at the group's highest concurrency, with
//!   its throughput relative to the baseline printed on the bar
//!   ("FreeBSD (128%) > DragonflyBSD (110%) > Debian (100%)" at c4000);
//! - seed 001: one bar per system for each object size (the one other
//!   sweep axis, such as `load.path` = 1K, 8K, 16K files) at the highest
//!   concurrency all of them reached, in the load's unit and in Gbit/s.

use super::{Chart, ChartKind, GroupCtx};
use crate::judging::format;
use crate::judging::rows::{Aggregate, Cell};
use crate::svg::{Bar, BarChart, BarSeries};
use maud::html;

impl GroupCtx<'_> {
    /// Seed 003's bars: each system's throughput at the highest x where
    /// the baseline and one other system were measured, labelled with its
    /// ratio to the baseline, on a concurrency axis only.
    pub(super) fn relative_at_top(&self) -> Option<Chart> {
        let base = self.agg.baseline.as_deref()?;
        if self.agg.systems.len() < 2 || !self.agg.usl_axis || self.dataset.is_some() {
            return None;
        }
        let measured = |s: &str, x: f64| {
            self.cells(s)
                .into_iter()
                .find(|c| c.x == Some(x) && c.headline().is_some())
        };
        let top = self
            .cells(base)
            .iter()
            .filter_map(|c| c.x)
            .filter(|x| {
                let others = self.agg.systems.iter().filter(|s| s.as_str() != base);
                measured(base, *x).is_some() && others.clone().any(|s| measured(s, *x).is_some())
            })
            .reduce(f64::max)?;
        let base_value = measured(base, top)?.headline()?;
        let at = self.at(top);
        let mut c = BarChart::new(
            &format!("Relative to {base} {at}{}", self.suffix),
            "one bar per system (legend); on each, its share of the baseline",
            &self.rate_label(),
        );
        c.value_format = format::rate;
        c.axes.categories = vec![at.trim_start_matches("at ").to_string()];
        for (i, s) in self.agg.systems.iter().enumerate() {
            let Some(cell) = measured(s, top) else {
                continue;
            };
            let sum = cell.summary.as_ref()?;
            let label = relative_label(cell, sum.headline, base_value);
            c.bar_labels.insert((c.series.len(), 0), label.clone());
            c.series.push(BarSeries {
                label: s.clone(),
                color: i,
                values: vec![Some(Bar {
                    value: sum.headline,
                    lo: Some(sum.min),
                    hi: Some(sum.max),
                    tip: format!(
                        "{}: {}",
                        super::tip(cell, sum.headline, format::rate),
                        label
                    ),
                })],
            });
        }
        let caption = format!(
            "Bars: the {} throughput of each system {at}, whiskers min–max; the percentage \
             on each bar is its throughput over {base}'s, as in the \"relative\" table, marked \
             as its verdict is (✗: not comparable; ?: too few trials or runs to judge; ~: no \
             significant difference; unmarked: significant).{}",
            self.agg.headline_word(),
            self.direction_sentence()
        );
        self.finish_bars(ChartKind::Throughput, c, caption)
    }
}

/// `128%`, with the verdict's mark: `128% ✗` for a point in no verdict,
/// `124% ?` where it could not be judged, `101% ~` for no difference.
fn relative_label(cell: &Cell, value: f64, base: f64) -> String {
    let pct = if base > 0.0 {
        format::percent(value / base)
    } else {
        "–".into()
    };
    format!("{pct}{}", cell_mark(cell))
}

/// The mark every view gives the cell's number: ` ✗` for a cell in no
/// verdict (its errors, or every trial client-bound:
/// [`crate::judging::judge::excluded`]), else its verdict's (` ?`, ` ~`,
/// nothing), as the rows and the ranking give it.
fn cell_mark(cell: &Cell) -> String {
    match crate::judging::judge::excluded(cell) {
        Some(_) => format!(" {}", crate::judging::verdict::EXCLUDED),
        None => crate::judging::verdict::percent_mark(cell.comparison.as_ref()),
    }
}

/// Seed 001's figure: with one sweep axis beside x whose values the
/// groups are (object sizes), and bytes moved, one bar per system for
/// each of its values at the highest x every group and system reached:
/// the load's unit on top, Gbit/s below.
pub(super) fn by_group_at_top(agg: &Aggregate) -> Option<Chart> {
    let [group_axis] = agg.layout.group_axes.as_slice() else {
        return None;
    };
    let x_axis = agg.layout.x_axis.as_deref()?;
    if agg.layout.groups.len() < 2 || !agg.cells.iter().any(|c| c.gbit_s.unwrap_or(0.0) > 0.0) {
        return None;
    }
    let measured = |s: &str, g: usize, x: f64| {
        agg.cells_in_group(g)
            .find(|c| c.system == s && c.x == Some(x) && c.headline().is_some())
    };
    let everywhere = |x: &f64| {
        (0..agg.layout.groups.len())
            .all(|g| agg.systems.iter().all(|s| measured(s, g, *x).is_some()))
    };
    let top = agg
        .cells
        .iter()
        .filter_map(|c| c.x)
        .filter(everywhere)
        .reduce(f64::max)?;
    let categories: Vec<String> = (0..agg.layout.groups.len())
        .map(|g| group_value(agg, g, group_axis))
        .collect();
    let at = format!("at {x_axis}={}", format::axis_value(top));
    let panel = |title: &str, y: &str, read: fn(&Cell) -> Option<f64>, fmt: fn(f64) -> String| {
        let mut c = BarChart::new(&format!("{title} by {group_axis} {at}"), group_axis, y);
        c.axes.plot_height = 240.0;
        c.value_format = fmt;
        c.axes.categories = categories.clone();
        for (i, s) in agg.systems.iter().enumerate() {
            let values = (0..agg.layout.groups.len())
                .map(|g| {
                    let cell = measured(s, g, top)?;
                    let v = read(cell)?;
                    // Marked as the cell's verdict is, as the relative bars are.
                    let mark = cell_mark(cell);
                    let why = crate::judging::judge::excluded(cell)
                        .map(|r| format!(" (not comparable: {r})"))
                        .unwrap_or_default();
                    if !mark.is_empty() {
                        c.bar_labels
                            .insert((c.series.len(), g), format!("{}{mark}", fmt(v)));
                    }
                    Some(Bar {
                        value: v,
                        lo: None,
                        hi: None,
                        tip: format!("{}{mark}{why}", super::tip(cell, v, fmt)),
                    })
                })
                .collect();
            c.series.push(BarSeries {
                label: s.clone(),
                color: i,
                values,
            });
        }
        c.render()
    };
    let rate = panel(agg.unit, agg.unit, Cell::headline, format::rate);
    let gbit = panel("Gbit/s", "Gbit/s", |c| c.gbit_s, |v| format!("{v:.3}"));
    let words = super::seed_figs::Words::of(agg.facts.rate_unit);
    let caption = format!(
        "One bar per system for each {group_axis}, {at} (the highest level every {group_axis} \
         and system reached): top, the {} throughput; bottom, Gbit/s of {}. The bytes per \
         {} under each {group_axis} are measured: Gbit/s over the rate. A bar is marked as its \
         verdict against the baseline is (✗: not comparable, as a point whose every trial was \
         client-bound; ?: too few trials or runs to judge; ~: no significant difference).",
        agg.headline_word(),
        words.bytes,
        words.item,
    );
    Some(Chart {
        kind: ChartKind::Bandwidth,
        svg: html! { (rate) (gbit) },
        caption,
    })
}

/// A group's value of `axis` with the bytes each response measured:
/// `/8k.bin (8.4 kB each)`.
fn group_value(agg: &Aggregate, g: usize, axis: &str) -> String {
    let group = &agg.layout.groups[g];
    let value = (group.points.first())
        .and_then(|i| agg.points.iter().find(|p| p.index == *i))
        .and_then(|p| p.coord(axis))
        .map(|c| c.display())
        .unwrap_or_else(|| group.label.clone());
    let mut sizes: Vec<f64> = agg
        .cells_in_group(g)
        .filter_map(|c| Some(c.gbit_s? * 1e9 / 8.0 / c.headline().filter(|v| *v > 0.0)?))
        .collect();
    sizes.sort_by(f64::total_cmp);
    match sizes.get(sizes.len() / 2) {
        Some(b) => format!("{value} ({} each)", format::bytes(*b)),
        None => value,
    }
}
