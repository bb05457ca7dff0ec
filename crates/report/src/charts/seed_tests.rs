//! The seed figures of issue 27 from the renderers' fixture: seed 000's
//! combined two-axis chart, 001's object-size bars, 003's relative bars,
//! 004's CPU line, and a frame-size axis that gets no concurrency charts.

use super::{charts, Chart, ChartKind};
use crate::judging::format;
use crate::judging::rows::{collect, Aggregate};
use crate::judging::test_support::{aggregate, at_nominal_frequency, fake_analyse, run_data};
use crate::model::{AxisTarget, Coord};
use crate::store::RunData;

fn of(all: &[Chart], kind: ChartKind) -> Vec<&Chart> {
    all.iter().filter(|c| c.kind == kind).collect()
}

/// The first chart of `kind`.
fn first(agg: &Aggregate, kind: ChartKind) -> Chart {
    charts(agg)
        .into_iter()
        .find(|c| c.kind == kind)
        .expect("a chart of that kind")
}

fn svg(c: &Chart) -> &str {
    &c.svg.0
}

#[test]
fn the_cpu_line_sits_at_the_server_cpu_count_on_a_client_axis() {
    let (mut data, _) = aggregate(&["mariadb"]);
    let mut agg = collect(&data);
    fake_analyse(&mut agg);
    let t = &first(&agg, ChartKind::Throughput);
    assert_eq!(
        agg.facts.server_cpus,
        Some(2),
        "the fixture's 2 online CPUs"
    );
    assert!(svg(t).contains("server's CPUs (2)"), "{}", svg(t));
    assert!(t.caption.contains("the CPUs the server could use"));
    // The probe's count on the server host wins over the environment's.
    for t in &mut data.trials {
        if let Some(p) = t.probe.as_mut() {
            p.online_cpus = 100;
        }
    }
    let mut agg = collect(&data);
    fake_analyse(&mut agg);
    let all = charts(&agg);
    let t = &of(&all, ChartKind::Throughput)[0];
    assert!(svg(t).contains("server's CPUs (100)"));
    let x = |s: &str, label: &str| -> f64 {
        // The mark's line comes just before its label.
        let at = s.find(label).unwrap();
        let line = s[..at].rfind(r#"<line class="mark" x1=""#).unwrap();
        let rest = &s[line + r#"<line class="mark" x1=""#.len()..];
        rest[..rest.find('"').unwrap()].parse().unwrap()
    };
    // Same x as the throughput marker at connections=100.
    let peak = x(svg(t), "server's CPUs (100)");
    assert!(
        svg(t).contains(&format!(r#"x1="{peak:.1}""#)),
        "the line is drawn at x=100"
    );
    let combined = &of(&all, ChartKind::PerClient)[0];
    assert!(svg(combined).contains(">server's CPUs</text>"));
    // Outside the swept range, no line.
    for t in &mut data.trials {
        if let Some(p) = t.probe.as_mut() {
            p.online_cpus = 9000;
        }
    }
    let mut agg = collect(&data);
    fake_analyse(&mut agg);
    let t = &first(&agg, ChartKind::Throughput);
    assert!(!svg(t).contains("server's CPUs"));
}

#[test]
fn no_cpu_line_when_x_is_the_cpu_count_itself() {
    let mut data = run_data(&["nginx"]);
    for t in &mut data.trials {
        t.point.coords[0].target = AxisTarget::ServerCpus;
    }
    let mut agg = collect(&data);
    fake_analyse(&mut agg);
    let t = &first(&agg, ChartKind::Throughput);
    assert!(!svg(t).contains("server's CPUs"));
}

/// The fixture on a frame-size axis, with the real analysis.
fn frames() -> Aggregate {
    let mut data = run_data(&["no firewall", "100 nft rules"]);
    data.run.load_kind = "forward".into();
    data.run.rate_unit = scalelab_lab::catalog().rate_unit_of("forward");
    data.run.server_kind = "router".into();
    data.run.parallelism = scalelab_lab::catalog()
        .parallelism_of("router")
        .map(|p| p.iter().map(|s| s.to_string()).collect());
    for t in &mut data.trials {
        t.point.coords[0].target = AxisTarget::Load("frame_size".into());
    }
    crate::judging::analyse::aggregate(&data)
}

#[test]
fn a_frame_size_axis_gets_no_efficiency_peak_or_collapse() {
    let mut agg = frames();
    assert!(!agg.usl_axis);
    assert!(agg
        .fits
        .iter()
        .all(|f| f.shape.is_none() && f.usl.is_none()));
    assert!(crate::judging::fits::curve_verdicts(&agg).is_empty());
    let all = charts(&agg);
    assert!(of(&all, ChartKind::Efficiency).is_empty(), "no efficiency");
    assert!(
        of(&all, ChartKind::PerClient).is_empty(),
        "nothing per frame"
    );
    let t = &of(&all, ChartKind::Throughput)[0];
    assert!(!svg(t).contains("peak") && !svg(t).contains("collapse"));
    assert!(svg(t).contains(">frames/s</text>"));
    // Captions speak of frames, not HTTP requests.
    let text: String = all.iter().map(|c| c.caption.clone()).collect();
    assert!(!text.contains("wrk") && !text.contains("response bytes"));
    let lat = &of(&all, ChartKind::Latency)[1];
    assert!(
        lat.caption.contains("one-way frame latency"),
        "{}",
        lat.caption
    );
    // A bidirectional run says the rate sums both directions.
    agg.facts.rate_note = crate::load::forward::test_extras(true).rate_note();
    let all = charts(&agg);
    let t = &of(&all, ChartKind::Throughput)[0];
    assert!(svg(t).contains(">frames/s, both directions summed</text>"));
    assert!(t.caption.contains("sum of both directions"));
    agg.facts.rate_note = crate::load::forward::test_extras(false).rate_note();
    let t = &first(&agg, ChartKind::Throughput);
    assert!(svg(t).contains(">frames/s, one direction (A→B)</text>"));
}

#[test]
fn the_combined_chart_draws_three_curves_on_two_axes() {
    let mut data = run_data(&["postgres"]);
    data.run.load_kind = "pg".into();
    data.run.rate_unit = scalelab_lab::catalog().rate_unit_of("pg");
    for t in &mut data.trials {
        if let Some(p) = t.probe.as_mut() {
            // Load × frequency rising with the level, read from cpufreq.
            let x = t.point.coords[0].value.as_integer().unwrap() as f64;
            p.load_x_freq = Some(1000.0 + x);
        }
    }
    let mut agg = collect(&data);
    fake_analyse(&mut agg);
    let all = charts(&agg);
    let c = &of(&all, ChartKind::PerClient);
    assert_eq!(c.len(), 1, "one chart, not panels");
    let s = svg(c[0]);
    assert_eq!(s.matches("<svg").count(), 1);
    assert_eq!(s.matches(r#"class="series""#).count(), 3);
    assert!(s.contains(">transactions/s</text>"), "left axis");
    assert!(s.contains("class=\"right-axis\""), "right axis");
    // No CPU count among 1, 10, 100…: the ratios are to the lowest level.
    assert!(s.contains("× its value at connections=1"));
    // Per client at 10 over per client at 1, as the tooltip shows it.
    let cell = |x: f64| agg.cells.iter().find(|c| c.x == Some(x)).unwrap();
    let (t1, t10) = (
        cell(1.0).headline().unwrap(),
        cell(10.0).headline().unwrap(),
    );
    let ratio = (t10 / 10.0) / t1;
    assert!(s.contains(&format!("{ratio:.2}× per unit at the baseline")));
    let lxf = cell(10.0).server.load_x_freq.unwrap() / cell(1.0).server.load_x_freq.unwrap();
    assert!(s.contains(&format!("{lxf:.2}× (")), "load × freq ratio");
    assert!(!s.contains("class=\"warning\""), "cpufreq: no warning");
    assert!(c[0].caption.contains("dotted, CPU load × frequency"));
}

/// Issue 46: on a busy host the machine's busy share is 1.00 at every
/// level, so the dotted curve was flat and the caption pointed the wrong
/// way. It is the server's CPUs × the clock; without the server's CPU, the
/// machine's, and the caption says so.
#[test]
fn load_times_frequency_is_the_servers_share_on_a_busy_host() {
    let busy_host = |server_cpu: bool| {
        let mut data = run_data(&["postgres"]);
        data.run.load_kind = "pg".into();
        data.run.rate_unit = scalelab_lab::catalog().rate_unit_of("pg");
        for t in &mut data.trials {
            if let Some(p) = t.probe.as_mut() {
                // Both CPUs busy at every level, at 2000 MHz.
                (p.cpu_busy, p.freq_mhz_mean, p.load_x_freq) = (1.0, Some(2000.0), Some(4000.0));
                if !server_cpu {
                    p.server_cpu_util = None;
                }
            }
        }
        let mut agg = collect(&data);
        fake_analyse(&mut agg);
        (first(&agg, ChartKind::PerClient), agg)
    };
    let (c, agg) = busy_host(true);
    let cell = |x: f64| agg.cells.iter().find(|c| c.x == Some(x)).unwrap();
    let ratio = cell(10.0).server.cpu_util.unwrap() / cell(1.0).server.cpu_util.unwrap();
    assert!((ratio - 1.0).abs() > 0.1, "the fixture's server CPU rises");
    let s = svg(&c);
    assert!(
        s.contains(&format!("{ratio:.2}× (")),
        "the server's ratio: {s}"
    );
    assert!(s.contains("busy GHz, the server's)"), "{s}");
    assert!(
        c.caption.contains("CPU load × frequency of the server"),
        "{}",
        c.caption
    );
    let (c, _) = busy_host(false);
    assert!(svg(&c).contains("1.00× ("), "the machine's, flat");
    assert!(
        c.caption.contains("of the whole machine")
            && c.caption.contains("the server's own CPU was not measured"),
        "{}",
        c.caption
    );
}

/// Issue 46: an N-run page's six series drew 18 curves on one combined
/// chart. More than three series are small multiples, each caption says
/// so, and every series is on one of them in its own colour.
#[test]
fn the_combined_chart_of_many_series_is_drawn_as_small_multiples() {
    let names = ["a", "b", "c", "d", "e", "f"];
    let (_, agg) = aggregate(&names);
    let all = charts(&agg);
    let combined = of(&all, ChartKind::PerClient);
    assert_eq!(combined.len(), 2, "six series, three to a chart");
    for (k, c) in combined.iter().enumerate() {
        let s = svg(c);
        assert!(s.matches(r#"class="series""#).count() <= 3 * 3, "{s}");
        assert!(s.contains(&format!("({} of 2)", k + 1)), "titled");
        assert!(
            c.caption.contains(&format!(
                "Chart {} of 2: the 6 series' 18 curves would cover one another",
                k + 1
            )),
            "{}",
            c.caption
        );
    }
    assert!(svg(combined[1]).contains(">d<") && !svg(combined[1]).contains(">a<"));
    let (_, three) = aggregate(&names[..3]);
    let one = charts(&three);
    let c = of(&one, ChartKind::PerClient);
    assert_eq!(c.len(), 1, "three series stay on one chart");
    assert!(!c[0].caption.contains("Chart 1 of"), "{}", c[0].caption);
}

#[test]
fn a_nominal_frequency_is_warned_about_on_the_chart() {
    let mut data = run_data(&["postgres"]);
    at_nominal_frequency(&mut data);
    let mut agg = collect(&data);
    fake_analyse(&mut agg);
    let c = &first(&agg, ChartKind::PerClient);
    assert!(
        svg(c).contains("CPU frequency is nominal (none: no cpufreq)"),
        "{}",
        svg(c)
    );
    assert!(c.caption.contains("nominal on this host"));
}

#[test]
fn relative_bars_print_each_ratio_to_the_baseline_at_the_top() {
    let (_, agg) = aggregate(&["seed config", "defaults", "third"]);
    let all = charts(&agg);
    let bars = of(&all, ChartKind::Throughput);
    let rel = bars
        .iter()
        .find(|c| svg(c).contains("Relative to seed config at connections=4000"))
        .expect("the relative bars");
    assert_eq!(svg(rel).matches(r#"class="bar""#).count(), 3);
    let top = agg
        .points
        .iter()
        .find(|p| agg.layout.x_of(p) == Some(4000.0))
        .unwrap();
    let base = agg
        .cell("seed config", top.index)
        .unwrap()
        .headline()
        .unwrap();
    for s in &agg.systems {
        let cell = agg.cell(s, top.index).unwrap();
        let v = cell.headline().unwrap();
        // Each percentage carries its verdict's mark (issue 35).
        let mark = crate::judging::verdict::percent_mark(cell.comparison.as_ref());
        let label = format!(">{}{mark}</text>", format::percent(v / base));
        assert!(svg(rel).contains(&label), "{s}: {label}");
    }
    let marks: Vec<_> = agg
        .systems
        .iter()
        .filter_map(|s| agg.cell(s, top.index)?.comparison.as_ref())
        .map(|c| crate::judging::verdict::mark(&c.verdict))
        .collect();
    assert!(
        marks.contains(&Some('~')),
        "the fixture has a no-difference: {marks:?}"
    );
    assert!(svg(rel).contains(">100%</text>"));
    // One system: nothing to be relative to.
    let (_, one) = aggregate(&["alone"]);
    assert!(!charts(&one).iter().any(|c| svg(c).contains("Relative to")));
}

/// The fixture swept over three files beside connections, each moving
/// its own size per request.
fn object_sizes() -> RunData {
    let mut data = run_data(&["reuseport", "no reuseport"]);
    let base = data.trials.clone();
    data.trials.clear();
    for (k, (path, size)) in [
        ("/1k.bin", 1024.0),
        ("/8k.bin", 8192.0),
        ("/16k.bin", 16384.0),
    ]
    .into_iter()
    .enumerate()
    {
        for mut t in base.clone() {
            t.point.index += k as u32 * 5;
            t.point.coords.insert(
                0,
                Coord {
                    target: AxisTarget::Load("path".into()),
                    value: path.into(),
                },
            );
            if let Some(m) = t.measurement.as_mut() {
                m.gbit_s = m.rps.0 * size * 8.0 / 1e9;
            }
            data.trials.push(t);
        }
    }
    data
}

#[test]
fn object_sizes_are_bars_per_system_in_requests_and_gbit() {
    let data = object_sizes();
    let mut agg = collect(&data);
    fake_analyse(&mut agg);
    assert_eq!(agg.layout.group_axes, vec!["load.path".to_string()]);
    let all = charts(&agg);
    let fig = of(&all, ChartKind::Bandwidth)
        .into_iter()
        .find(|c| svg(c).contains("by load.path"))
        .expect("the object-size figure");
    let s = svg(fig);
    assert_eq!(s.matches("<svg").count(), 2, "requests/s and Gbit/s");
    assert!(s.contains("requests/s by load.path at connections=4000"));
    assert!(s.contains("Gbit/s by load.path at connections=4000"));
    assert_eq!(s.matches(r#"class="bar""#).count(), 2 * 2 * 3);
    for label in [
        "/1k.bin (1.0KiB each)",
        "/8k.bin (8.0KiB each)",
        "/16k.bin (16.0KiB each)",
    ] {
        assert!(s.contains(&format!(">{label}</text>")), "{label}");
    }
    assert!(s.contains(">reuseport</text>") && s.contains(">no reuseport</text>"));
    // The bars are the cells' own values at connections=4000.
    let cell = agg
        .cells
        .iter()
        .find(|c| c.system == "no reuseport" && c.x == Some(4000.0) && c.group == 1)
        .unwrap();
    assert!(s.contains(&format!(">{:.3}</text>", cell.gbit_s.unwrap())));
    assert!(s.contains(&format!(
        ">{}</text>",
        format::rate(cell.headline().unwrap())
    )));
    // Without bytes (pgbench's scripts) there is no such figure.
    let (_, plain) = aggregate(&["pg"]);
    assert!(!charts(&plain).iter().any(|c| svg(c).contains(" by ")));
}

/// Issue 46 (2.4): nginx-short-lived's Gbit/s bars at c=1024 came from
/// client-bound points with no mark, while the relative bars marked them
/// ✗. Every bar now carries the mark the point's verdict has, the
/// baseline's own included.
#[test]
fn bars_of_points_in_no_verdict_are_marked_as_the_relative_bars_are() {
    let mut data = object_sizes();
    let top = |t: &crate::store::Trial| t.point.coords[1].value.as_integer() == Some(4000);
    for t in &mut data.trials {
        // "no reuseport" at 8k, and the baseline at 1k: every trial client-bound.
        let group = t.point.index / 5;
        let bound = top(t)
            && ((t.system == "no reuseport" && group == 1)
                || (t.system == "reuseport" && group == 0));
        if bound {
            t.context.client_bound = Some(true);
            t.context.client_bound_reason = Some("client CPU 99% of its cores".into());
        }
    }
    let agg = crate::judging::analyse::aggregate(&data);
    let all = charts(&agg);
    let fig = of(&all, ChartKind::Bandwidth)
        .into_iter()
        .find(|c| svg(c).contains("by load.path"))
        .expect("the object-size figure");
    let s = svg(fig);
    let cell = |system: &str, group: usize| {
        (agg.cells.iter())
            .find(|c| c.system == system && c.x == Some(4000.0) && c.group == group)
            .unwrap()
    };
    for (system, group) in [("no reuseport", 1), ("reuseport", 0)] {
        let c = cell(system, group);
        let gbit = format!(">{:.3} ✗</text>", c.gbit_s.unwrap());
        let rate = format!(">{} ✗</text>", format::rate(c.headline().unwrap()));
        assert!(s.contains(&gbit), "{system}: {gbit} in {s}");
        assert!(s.contains(&rate), "{system}: {rate}");
        assert!(
            s.contains("(not comparable: client-bound at 3 of 3 trials)"),
            "{s}"
        );
    }
    // A comparable bar keeps its plain value.
    let ok = cell("no reuseport", 2);
    let mark = crate::judging::verdict::percent_mark(ok.comparison.as_ref());
    assert!(s.contains(&format!(">{:.3}{mark}</text>", ok.gbit_s.unwrap())));
    assert!(fig.caption.contains("✗: not comparable"), "{}", fig.caption);
    // The relative bars give the same mark, the client-bound baseline's too.
    let rel: Vec<&str> = of(&all, ChartKind::Throughput)
        .into_iter()
        .map(svg)
        .filter(|s| s.contains("Relative to reuseport"))
        .collect();
    assert!(rel.iter().any(|s| s.contains(">100% ✗</text>")), "{rel:?}");
}
