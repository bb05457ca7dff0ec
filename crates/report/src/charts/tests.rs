//! The seed charts from the renderers' fixture: what each figure draws and
//! when it is left out.

use super::{charts, kind_sections, Chart, ChartKind};
use crate::analysis::shape::PastPeak;
use crate::judging::rows::{collect, Aggregate};
use crate::judging::test_support::{aggregate, fake_analyse, run_data};
use crate::load::dns::facts::ramp_extras;

fn of(all: &[Chart], kind: ChartKind) -> Vec<&Chart> {
    all.iter().filter(|c| c.kind == kind).collect()
}

#[test]
fn a_concurrency_sweep_gets_every_seed_figure() {
    let (_, agg) = aggregate(&["linux", "freebsd"]);
    let all = charts(&agg);
    let per = of(&all, ChartKind::PerClient);
    assert_eq!(per.len(), 1);
    assert!(per[0].svg.0.contains("Throughput, throughput per client"));
    assert!(per[0].svg.0.contains(">linux per client</text>"));
    assert!(
        per[0].caption.contains("no CPU frequency"),
        "no load × freq in the fixture"
    );
    let lat = of(&all, ChartKind::Latency);
    assert_eq!(lat.len(), 2, "percentiles against x, and at the top");
    assert!(lat[1]
        .svg
        .0
        .contains("Latency percentiles at connections=4000"));
    assert_eq!(lat[1].svg.0.matches(r#"class="bar""#).count(), 2 * 5);
    let bw = of(&all, ChartKind::Bandwidth);
    assert_eq!(bw[0].svg.0.matches("<svg").count(), 1, "one figure");
    assert_eq!(
        bw[0].svg.0.matches(r#"class="series""#).count(),
        2 * 2,
        "two panels"
    );
    let mem = of(&all, ChartKind::Memory);
    assert!(mem[0].svg.0.contains("linux resident") && !mem[0].svg.0.contains("virtual"));
}

#[test]
fn load_times_frequency_is_a_panel_when_the_probe_has_it() {
    let mut data = run_data(&["pg"]);
    for t in &mut data.trials {
        if let Some(p) = t.probe.as_mut() {
            p.load_x_freq = Some(2500.0);
        }
    }
    let mut agg = collect(&data);
    fake_analyse(&mut agg);
    let all = charts(&agg);
    let per = of(&all, ChartKind::PerClient);
    assert!(per[0].svg.0.contains("CPU load × frequency"));
    assert!(per[0].svg.0.contains("2.50 busy GHz"));
    assert_eq!(
        per[0].svg.0.matches(r#"class="series""#).count(),
        3,
        "throughput, per client and load × frequency on one chart"
    );
}

#[test]
fn a_collapse_is_marked_on_the_throughput_chart() {
    let (_, mut agg) = aggregate(&["linux", "freebsd"]);
    agg.fits[0].shape.as_mut().unwrap().past_peak = PastPeak::Collapse { drop: 0.45 };
    let all = charts(&agg);
    let t = &of(&all, ChartKind::Throughput)[0];
    assert!(
        t.svg.0.contains("linux: collapse -45.0% (4000)"),
        "{}",
        t.svg.0
    );
    assert!(t.svg.0.contains("linux: peak (100)"));
    assert!(
        t.svg.0.contains("freebsd: peak (100)"),
        "mild decline: its peak only"
    );
    assert!(!t.svg.0.contains("freebsd: collapse"));
    assert!(t.caption.contains("measured peak"));
}

/// The fixture with `server_cpus` = 1 and 2 beside connections.
fn two_cpu_counts() -> Aggregate {
    let mut data = run_data(&["nginx"]);
    let mut more = data.trials.clone();
    for (cpus, list) in [(1, &mut data.trials), (2, &mut more)] {
        for t in list.iter_mut() {
            t.point.index += (cpus - 1) * 5;
            t.point.coords.push(crate::model::Coord {
                target: crate::model::AxisTarget::ServerCpus,
                value: i64::from(cpus).into(),
            });
        }
    }
    data.trials.extend(more);
    let mut agg = collect(&data);
    fake_analyse(&mut agg);
    agg
}

#[test]
fn server_cpu_counts_share_one_throughput_chart() {
    let agg = two_cpu_counts();
    assert_eq!(agg.layout.groups.len(), 2);
    let all = charts(&agg);
    let t = of(&all, ChartKind::Throughput);
    assert_eq!(t.len(), 1, "one chart, not one per CPU count");
    assert!(
        t[0].svg.0.contains(">server_cpus=1</text>")
            && t[0].svg.0.contains(">server_cpus=2</text>")
    );
    assert_eq!(t[0].svg.0.matches(r#"class="series""#).count(), 2);
    assert!(
        t[0].svg.0.contains(r#"class="fit""#),
        "each curve with its fit"
    );
    let lat = of(&all, ChartKind::Latency);
    assert_eq!(lat.len(), 2, "the other charts overlay the CPU counts too");
    assert_eq!(lat[1].svg.0.matches(r#"class="bar""#).count(), 2 * 5);
    assert_eq!(of(&all, ChartKind::PerClient).len(), 1);
    let split = of(&all, ChartKind::CpuBreakdown);
    assert!(
        split[0].svg.0.contains(">server_cpus</text>"),
        "named by its axis"
    );
    assert!(split[0].svg.0.contains(">100%</text>") && !split[0].svg.0.contains(">150%</text>"));
}

#[test]
fn a_dataset_sweep_is_drawn_against_dataset_over_memory() {
    let (_, mut agg) = aggregate(&["pg"]);
    for c in &mut agg.cells {
        c.facts.dataset_bytes = Some(c.x.unwrap() * 1e5);
        c.facts.memory_limit_bytes = Some(1e8);
    }
    let all = charts(&agg);
    let t = &of(&all, ChartKind::Throughput)[0];
    assert!(t.svg.0.contains("dataset size / server memory limit (×)"));
    assert!(t.svg.0.contains("dataset = memory limit (1×)"));
    // Issue 46: the caption named a CPU-count line the chart does not
    // draw; it names the line it draws.
    assert!(
        !t.caption.contains("the CPUs the server could use"),
        "{}",
        t.caption
    );
    assert!(
        t.caption
            .contains("Grey dashed vertical: the dataset as large as the server memory limit (1×)"),
        "{}",
        t.caption
    );
    assert!(t.svg.0.contains(">0.01×</text>") && t.svg.0.contains(">4×</text>"));
    assert!(
        !t.svg.0.contains(r#"class="fit""#),
        "no USL on a dataset axis"
    );
    assert!(of(&all, ChartKind::Efficiency).is_empty());
    // Issue 41: the CPU split at every dataset size, not only the last.
    let split = &of(&all, ChartKind::CpuBreakdown)[0];
    assert!(
        split.svg.0.contains("at each dataset size"),
        "{}",
        split.svg.0
    );
    let points = agg
        .cells
        .iter()
        .filter(|c| c.server.cpu_shares.is_some())
        .count();
    assert!(points > 1);
    for c in agg.cells.iter().filter(|c| c.server.cpu_shares.is_some()) {
        let label = format!(
            ">{}</text>",
            super::dataset::ratio(c.x.unwrap() * 1e5 / 1e8)
        );
        assert!(split.svg.0.contains(&label), "{label}: {}", split.svg.0);
    }
}

#[test]
fn forwarding_rates_are_drawn_against_the_line_rate() {
    let mut data = run_data(&["router"]);
    for t in &mut data.trials {
        t.point.coords[0].target = crate::model::AxisTarget::Load("frame_size".into());
    }
    let mut agg = collect(&data);
    fake_analyse(&mut agg);
    for c in &mut agg.cells {
        c.facts.server_figures = vec![crate::record::server::ServerFigure {
            name: crate::model::topology::LINK_GBIT,
            value: 10.0,
        }];
        c.facts.extras = crate::load::forward::test_extras(true);
    }
    let all = charts(&agg);
    let t = &of(&all, ChartKind::Throughput)[0];
    assert!(t.svg.0.contains("10 Gbit/s line rate"));
    assert_eq!(t.svg.0.matches(r#"class="guide""#).count(), 1);
    assert!(t.svg.0.contains("load.frame_size (bytes)"));
    assert!(
        t.svg.0.contains(">10M</text>"),
        "log10 ticks up to the line rate"
    );
    assert!(
        !t.svg.0.contains(r#"class="mark""#),
        "no peak over frame sizes"
    );
    assert!(t.caption.contains("line rate"));
}

#[test]
fn ramps_are_drawn_answered_against_offered() {
    let (_, mut agg) = aggregate(&["unbound"]);
    assert!(kind_sections(&charts(&agg)).is_empty(), "no ramp, no chart");
    let seconds = || (0..5).map(|s| (s * 1000, s * 900));
    for c in &mut agg.cells {
        c.facts.extras = ramp_extras(seconds(), &[]);
    }
    agg.cells[0].facts.extras =
        ramp_extras(seconds(), &["the ramp stopped at 7.2s, a second behind"]);
    let all = charts(&agg);
    let sections = kind_sections(&all);
    assert_eq!(sections.len(), 1, "one section for the kind's charts");
    let r = of(&all, ChartKind::Kind(sections[0]));
    assert!(
        r[0].caption
            .contains(": the ramp stopped at 7.2s, a second behind."),
        "a ramp's notes are in its chart's caption: {}",
        r[0].caption
    );
    assert_eq!(r.len(), 1, "one chart per system");
    assert_eq!(
        r[0].svg.0.matches(r#"class="series""#).count(),
        5,
        "one curve per point"
    );
    assert!(r[0].svg.0.contains("every query answered"));
    assert!(r[0].svg.0.contains("offered rate (queries/s)"));
}

/// Issue 41: a worker's 8 TiB of reserved address space (VSZ) gets a chart
/// of its own; the resident line keeps a scale it can be read on.
#[test]
fn resident_memory_keeps_its_own_scale_beside_an_8_tib_vsz() {
    let (_, mut agg) = aggregate(&["linux"]);
    for (i, c) in agg.cells.iter_mut().enumerate() {
        c.server.rss_per_worker = Some(10e6 + 1e6 * i as f64);
        c.server.vsz_per_worker = Some(8.0 * 1024f64.powi(4));
    }
    let all = charts(&agg);
    let mem = of(&all, ChartKind::Memory);
    assert_eq!(mem.len(), 2, "resident and virtual, each on its own axis");
    let (rss, vsz) = (&mem[0].svg.0, &mem[1].svg.0);
    assert!(
        rss.contains("linux resident") && !rss.contains("virtual"),
        "{rss}"
    );
    assert!(
        vsz.contains("linux virtual") && !vsz.contains("resident"),
        "{vsz}"
    );
    // The resident axis tops out near the resident figures (MB), not at
    // the virtual size's millions of MB.
    assert!(rss.contains(">10 MB</text>"), "{rss}");
    assert!(!rss.contains("000000 MB</text>"), "{rss}");
    assert!(
        vsz.contains("000000 MB</text>") || vsz.contains("M MB</text>"),
        "{vsz}"
    );
}
