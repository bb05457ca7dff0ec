//! Energy drawn: the terminal's cells and lines, the HTML table and the
//! CSV's columns, from what [`crate::judging::energy`] judged.

use crate::judging::energy::{domains_line, measured, shared_note, SHARED};
use crate::judging::rows::{Aggregate, Cell};
use crate::judging::{format, probe_view};
use crate::store::Trial;

/// The terminal's two cells: median watts and headline ops/J (marked when
/// the client shares the package); `-` without a figure.
pub(crate) fn terminal_cells(c: &Cell) -> [String; 2] {
    let Some(e) = &c.energy else {
        return ["-".into(), "-".into()];
    };
    let mark = if e.client_shares_meter {
        format!(" {SHARED}")
    } else {
        String::new()
    };
    [
        e.watts_median.map_or("-".into(), |w| format!("{w:.1}")),
        e.summary.as_ref().map_or("-".into(), |s| {
            format!("{}{mark}", format::sig(s.headline, 3))
        }),
    ]
}

/// The terminal's energy lines under the tables: the domains, the shared
/// package, and each non-baseline point's ops/J verdict.
pub(crate) fn terminal_lines(agg: &Aggregate) -> String {
    if !measured(agg) {
        return String::new();
    }
    let mut out = format!(
        "\nenergy ({}), {} ops/J of the successful trials",
        domains_line(agg),
        agg.headline_word()
    );
    if let Some(note) = shared_note(agg) {
        out.push_str(&format!("\n  {note}"));
    }
    for c in &agg.cells {
        if let Some(v) = c.energy.as_ref().and_then(|e| e.verdict_text.as_ref()) {
            let vs = agg.baseline.as_deref().unwrap_or("-");
            out.push_str(&format!(
                "\n  {} {}: ops/J vs {vs} {v}",
                c.point.label(),
                c.system
            ));
        }
    }
    out.push('\n');
    out
}

/// The HTML report's energy section body (after its chart): what was
/// measured, whose energy it holds, and a table of every point.
pub(crate) fn html_table(agg: &Aggregate) -> maud::Markup {
    use maud::html;
    if !measured(agg) {
        return maud::Markup::default();
    }
    let first = agg.layout.x_axis.as_deref().unwrap_or("point");
    let vs = agg.baseline.as_deref().map(|b| format!("ops/J vs {b}"));
    html! {
        p { "Measured: " (domains_line(agg)) "." }
        @if let Some(note) = shared_note(agg) { p class="muted" { (note[..1].to_uppercase()) (note[1..]) "." } }
        div class="scroll" { table {
            tr {
                th { (first) } th { "system" } th class="num" { "W" }
                th class="num" { (agg.headline_word()) " ops/J" } th class="num" { "min–max" }
                th class="num" { "n" } @if let Some(vs) = &vs { th { (vs) } }
            }
            @for c in agg.cells.iter() {
                @let e = c.energy.as_ref();
                @let s = e.and_then(|e| e.summary.as_ref());
                @let [w, ops] = terminal_cells(c);
                tr {
                    td { (agg.layout.short_label(&c.point)) } td { (c.system) }
                    td class="num" { (w) } td class="num" { (ops) }
                    td class="num" { (s.map_or("-".into(), |s| format!("{}–{}", format::sig(s.min, 3), format::sig(s.max, 3)))) }
                    td class="num" { (s.map_or(0, |s| s.n)) }
                    @if vs.is_some() { td { (e.and_then(|e| e.verdict_text.clone()).unwrap_or_else(|| "-".into())) } }
                }
            }
        } }
    }
}

/// Reads one energy column of a trial, numbers written with the CSV's
/// own formatter; empty without a figure.
pub(crate) type CsvRead = fn(&Trial, fn(f64) -> String) -> String;

/// The CSV's energy columns (`watts`, `ops_per_joule`, `energy_joules`,
/// `energy_measured_s`, `energy_domains`); none when no trial of the run
/// measured energy, so such a run's CSV is as it was.
pub(crate) fn csv_columns(
    data: &crate::store::RunData,
) -> Vec<(&'static str, super::csv_schema::ColumnType, CsvRead)> {
    use super::csv_schema::ColumnType::{Number, Text};
    let any = data
        .trials
        .iter()
        .any(|t| t.probe.as_ref().is_some_and(|p| p.energy.is_some()));
    if !any {
        return Vec::new();
    }
    fn number(t: &Trial, read: probe_view::Read, num: fn(f64) -> String) -> String {
        probe_view::number(t.probe.as_ref(), read)
            .map(num)
            .unwrap_or_default()
    }
    vec![
        ("watts", Number, |t, num| number(t, |p| p.watts, num)),
        ("ops_per_joule", Number, |t, num| {
            number(t, |p| p.ops_per_joule, num)
        }),
        ("energy_joules", Number, |t, num| {
            number(t, |p| p.energy.as_ref().map(|e| e.joules), num)
        }),
        ("energy_measured_s", Number, |t, num| {
            number(t, |p| p.energy.as_ref().map(|e| e.measured_s), num)
        }),
        ("energy_domains", Text, |t, _| {
            let e = t.probe.as_ref().and_then(|p| p.energy.as_ref());
            e.map(|e| e.domains.join("; ")).unwrap_or_default()
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::probe::energy::{EnergySource, EnergySummary};

    fn with_energy(data: &mut crate::store::RunData, system: &str, watts: f64) {
        for t in data.trials.iter_mut().filter(|t| t.system == system) {
            let rps = t.throughput();
            if let (Some(p), Some(rps)) = (t.probe.as_mut(), rps) {
                p.watts = Some(watts);
                p.energy = Some(EnergySummary {
                    source: EnergySource::Rapl,
                    domains: vec!["package-0".into()],
                    joules: watts * 10.0,
                    measured_s: 10.0,
                    wraps: 0,
                    client_shares_meter: true,
                });
                p.set_energy_per_op(rps, true);
            }
        }
    }

    #[test]
    fn ops_per_joule_is_summarised_and_compared_like_throughput() {
        let mut data = crate::judging::test_support::run_data(&["a", "b"]);
        with_energy(&mut data, "a", 100.0);
        with_energy(&mut data, "b", 50.0);
        let agg = crate::judging::analyse::aggregate(&data);
        assert!(measured(&agg));
        let c = agg
            .cells
            .iter()
            .find(|c| c.system == "b" && c.energy.is_some())
            .unwrap();
        let e = c.energy.as_ref().unwrap();
        assert_eq!(e.watts_median, Some(50.0));
        for (ops, rps) in e.ops_per_joule.iter().zip(&c.throughput) {
            assert!((ops - rps / 50.0).abs() < 1e-9);
        }
        let cmp = e.comparison.as_ref().expect("b against a");
        assert!(cmp.ratio > 1.0, "half the watts: more ops per joule");
        assert!(!cmp.sentence.contains("faster"), "{}", cmp.sentence);
        assert_eq!(domains_line(&agg), "rapl: package-0");
        assert!(shared_note(&agg).unwrap().starts_with("at every point"));
        assert!(terminal_lines(&agg).contains("ops/J vs a"));
    }

    #[test]
    fn without_energy_nothing_is_said() {
        let data = crate::judging::test_support::run_data(&["a", "b"]);
        let agg = crate::judging::analyse::aggregate(&data);
        assert!(!measured(&agg));
        assert_eq!(terminal_lines(&agg), "");
        assert!(shared_note(&agg).is_none());
    }

    /// Issue 41: a command meter's line says `command:` once.
    #[test]
    fn a_command_meters_label_is_said_once() {
        let mut data = crate::judging::test_support::run_data(&["a"]);
        let meter = crate::probe::energy::meter::Meter::command("ipmi-power --watts".into());
        for t in data.trials.iter_mut() {
            let rps = t.throughput();
            if let (Some(p), Some(rps)) = (t.probe.as_mut(), rps) {
                p.watts = Some(100.0);
                p.energy = Some(EnergySummary {
                    source: meter.source(),
                    domains: meter.domains(),
                    joules: 1000.0,
                    measured_s: 10.0,
                    wraps: 0,
                    client_shares_meter: false,
                });
                p.set_energy_per_op(rps, false);
            }
        }
        let agg = crate::judging::analyse::aggregate(&data);
        assert_eq!(domains_line(&agg), "command: ipmi-power --watts");
    }
}
