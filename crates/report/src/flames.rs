//! The report's "Profiles" section: a flame graph of the server per
//! profiled system and point, differential flame graphs (each system
//! against the baseline at the same point, and each system's collapse
//! against its peak), and the measured profiling overhead.
//!
//! Each graph is inferno's standalone SVG, with its search and zoom script,
//! in an `<iframe>` of its own (a `data:` URL): the script expects to own
//! its document, and the report stays one self-contained file.

use crate::flame_svg::{diff_svg, flame_svg};
use crate::store::{ProfileRecord, RunData};
use base64::Engine;
use maud::{html, Markup};

/// The section's content (the page adds its heading), or nothing when the
/// run was not profiled.
pub fn section(data: &RunData) -> Markup {
    let profiles = &data.profiles;
    if profiles.is_empty() {
        return Markup::default();
    }
    let drawn: Vec<&ProfileRecord> = profiles.iter().filter(|p| p.folded.is_some()).collect();
    let why = profiles
        .iter()
        .find_map(|p| p.error.as_deref())
        .unwrap_or("no samples");
    html! {
            @if drawn.is_empty() {
                p class="note" { "no profile: " (why) }
            } @else {
                p class="muted" {
                    "Server stacks sampled with " code { "perf record -e cpu-clock -g" }
                    " over one extra trial's measured window (not used for the statistics). \
                     Kernel frames end in " code { "_[k]" } " and are orange. Click a frame to \
                     zoom, Ctrl-F or \"Search\" to highlight. In a differential graph the frames \
                     are those of the second profile, red where it spends a larger share than \
                     the first, blue where a smaller one."
                }
                (overhead_table(profiles, data))
                @for p in &drawn {
                    (figure(&single(p)))
                    @if let Some(k) = p.folded.as_deref().and_then(crate::judging::kernel_lock::find) {
                        p class=[k.limits.then_some("note")] { (p.system) " at " (p.point.label()) ": " (k.verdict()) }
                    }
                }
                @for g in differentials(&drawn, data.run.baseline.as_deref()) { (figure(&g)) }
            }
            (super::offcpu_flames::section(profiles, figure))
            @for p in profiles.iter().filter(|p| p.folded.is_none()) {
                p class="muted" {
                    (p.system) " at " (p.point.label()) ": no profile: "
                    (p.error.as_deref().unwrap_or("unknown"))
                }
            }
    }
}

use super::offcpu_flames::Graph;

fn single(p: &ProfileRecord) -> Graph {
    let title = format!("{} at {} ({})", p.system, p.point.label(), p.role);
    let sub = format!("{} samples of the server's processes", p.samples);
    let svg = flame_svg(&title, &sub, p.folded.as_deref().unwrap_or(""));
    (title, svg)
}

/// Baseline -> each other system at the same point; peak -> collapse of
/// each system.
fn differentials(drawn: &[&ProfileRecord], baseline: Option<&str>) -> Vec<Graph> {
    let mut out = Vec::new();
    let folded = |p: &ProfileRecord| p.folded.clone().unwrap_or_default();
    for base in drawn.iter().filter(|p| Some(p.system.as_str()) == baseline) {
        for other in drawn
            .iter()
            .filter(|p| p.point.index == base.point.index && p.system != base.system)
        {
            let title = format!(
                "{} against {} at {}",
                other.system,
                base.system,
                base.point.label()
            );
            let sub = "differential: red = larger share than the baseline, blue = smaller";
            let svg = diff_svg(&title, sub, &folded(base), &folded(other));
            out.push((title, svg));
        }
    }
    for peak in drawn.iter().filter(|p| p.role == "peak") {
        let collapse = drawn
            .iter()
            .find(|p| p.system == peak.system && p.role == "collapse");
        if let Some(c) = collapse {
            let title = format!(
                "{}: collapse at {} against peak at {}",
                peak.system,
                c.point.label(),
                peak.point.label()
            );
            let sub = "differential: red = larger share at the collapse than at the peak";
            out.push((
                title.clone(),
                diff_svg(&title, sub, &folded(peak), &folded(c)),
            ));
        }
    }
    out
}

/// A graph in its own `<iframe>`, with its title as caption.
pub(crate) fn figure((title, svg): &Graph) -> Markup {
    match svg {
        Ok(svg) => {
            let height = svg_height(svg).unwrap_or(600);
            let data = base64::engine::general_purpose::STANDARD.encode(svg);
            html! {
                figure class="flame" {
                    iframe title=(title) style={ "height:" (height + 4) "px" }
                        src={ "data:image/svg+xml;base64," (data) } {}
                    figcaption { (title) }
                }
            }
        }
        Err(e) => html! { p class="muted" { (title) ": " (e.to_string()) } },
    }
}

/// The root element's `height` attribute.
fn svg_height(svg: &str) -> Option<u32> {
    let root = &svg[svg.find("<svg")?..];
    let root = &root[..root.find('>')?];
    let at = root.find(" height=\"")? + " height=\"".len();
    root[at..].split('"').next()?.parse().ok()
}

/// The noise a profile's overhead must exceed: the spread of its point's
/// trials ([`crate::record::profile::overhead_noise`]).
fn noise_of(p: &ProfileRecord, data: &RunData) -> f64 {
    let samples: Vec<f64> = (data.trials.iter())
        .filter(|t| t.system == p.system && t.point.index == p.point.index)
        .filter_map(|t| t.throughput())
        .collect();
    crate::record::profile::overhead_noise(&samples, data.run.noise)
}

fn overhead_table(profiles: &[ProfileRecord], data: &RunData) -> Markup {
    use crate::record::profile::Overhead;
    let cell = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.0}"));
    html! {
        table {
            thead { tr {
                th { "system" } th { "point" } th { "role" } th { "samples" }
                th { "plain req/s" } th { "under perf req/s" } th { "overhead" }
            } }
            tbody {
                @for p in profiles {
                    tr {
                        td { (p.system) }
                        td { (p.point.label()) }
                        td { (p.role) }
                        td class="n" { (p.samples) }
                        td class="n" { (cell(p.plain_rps)) }
                        td class="n" { (cell(p.profiled_rps)) }
                        td class="n" {
                            (Overhead::judge(p.plain_rps, p.profiled_rps, noise_of(p, data)))
                        }
                    }
                }
            }
        }
        p class="muted" {
            "Overhead: throughput lost under perf, from a plain trial and a profiled trial run \
             back to back; a difference within the spread of the point's own trials (or the \
             run's noise) is noise, not a figure."
        }
    }
}

/// Differential flame graphs between runs (the N-run page): each side's
/// profile of a system at a point against the baseline side's profile of
/// the same system, point and role (peak or collapse), on-CPU and, where
/// both recorded it, off-CPU; nothing when no pair of runs holds one.
pub fn across_runs(m: &crate::judging::multi::Merged) -> Markup {
    let graphs = graphs_across_runs(m);
    if graphs.is_empty() {
        return Markup::default();
    }
    html! {
        section id="profiles" {
            h2 { "Profiles between runs" }
            p class="muted" {
                "Each side's server stacks against the baseline side's, for the same system, \
                 point and role, from the profile trials (" code { "run --profile" } "). The \
                 frames are the second run's; red where it spends a larger share of its samples \
                 than the baseline run, blue where a smaller one."
            }
            @for g in &graphs { (figure(g)) }
        }
    }
}

/// The profiles of the runs of side `side`.
fn side_profiles(m: &crate::judging::multi::Merged, side: usize) -> Vec<&ProfileRecord> {
    (m.sides[side].runs.iter())
        .flat_map(|&r| &m.runs[r].profiles)
        .collect()
}

/// Each side's graphs against the baseline side's ([`between`]).
fn graphs_across_runs(m: &crate::judging::multi::Merged) -> Vec<Graph> {
    let base = side_profiles(m, 0);
    (1..m.sides.len())
        .flat_map(|side| {
            let names = (m.sides[0].name.as_str(), m.sides[side].name.as_str());
            between(&base, &side_profiles(m, side), names)
        })
        .collect()
}

/// The differential graphs from the profiles `before` (of the run or side
/// named `names.0`) to `after` (`names.1`): for each profile of `after`
/// whose system, point and role `before` also profiled, the on-CPU graph
/// and, where both recorded it, the off-CPU graph. The frames are
/// `after`'s, red where it spends a larger share of its samples.
pub(crate) fn between(
    before: &[&ProfileRecord],
    after: &[&ProfileRecord],
    (a, z): (&str, &str),
) -> Vec<Graph> {
    let mut graphs = Vec::new();
    for p in after {
        let Some(b) = before.iter().find(|b| {
            b.system == p.system && b.point.label() == p.point.label() && b.role == p.role
        }) else {
            continue;
        };
        let at = format!("{} at {} ({})", p.system, p.point.label(), p.role);
        if let (Some(before), Some(after)) = (&b.folded, &p.folded) {
            let title = format!("on-CPU: {z} against {a}, {at}");
            let sub = "differential: red = a larger share than in the baseline run, blue = smaller";
            graphs.push((title.clone(), diff_svg(&title, sub, before, after)));
        }
        if let (Some(before), Some(after)) = (&b.offcpu, &p.offcpu) {
            let title = format!("off-CPU: {z} against {a}, {at}");
            let sub = "differential of blocked time: red = a larger share than in the baseline run";
            graphs.push((title.clone(), diff_svg(&title, sub, before, after)));
        }
    }
    graphs
}

/// A differential graph as a file to write (`compare --profile DIR`).
#[derive(Debug)]
pub struct FlameFile {
    /// A file name of its own among the graphs: a number, then the title
    /// with every character but letters, digits, `.` and `-` made `_`.
    pub name: String,
    /// What it shows ("on-CPU: B against A, nginx at connections=16 (peak)").
    pub title: String,
    /// The SVG, or why it could not be drawn.
    pub svg: Result<String, String>,
}

/// The differential flame graphs between the sides of `m`, each against the
/// baseline side, as files (the N-run page draws the same graphs).
pub fn files_across_runs(m: &crate::judging::multi::Merged) -> Vec<FlameFile> {
    (graphs_across_runs(m).into_iter().enumerate())
        .map(|(i, (title, svg))| {
            let slug: String = (title.chars())
                .map(|c| match c {
                    'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '-' => c,
                    _ => '_',
                })
                .collect();
            FlameFile {
                name: format!("{:02}-{}.svg", i + 1, slug),
                title,
                svg: svg.map_err(|e| e.to_string()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Point;

    fn record(system: &str, index: u32, role: &str, folded: Option<&str>) -> ProfileRecord {
        ProfileRecord {
            system: system.into(),
            point: Point::new(index, &[("connections", (index * 10).into())]),
            role: role.into(),
            samples: 40,
            folded: folded.map(str::to_string),
            plain_rps: Some(1000.0),
            profiled_rps: Some(980.0),
            error: folded
                .is_none()
                .then(|| "perf is not installed".to_string()),
            offcpu: None,
            offcpu_error: None,
        }
    }

    fn data(profiles: Vec<ProfileRecord>) -> RunData {
        let mut d = crate::judging::test_support::run_data(&["a", "b"]);
        d.run.baseline = Some("a".into());
        d.profiles = profiles;
        d
    }

    const F: &str = "nginx;ngx_worker;tcp_sendmsg_[k] 30\nnginx;ngx_worker;tcp_recvmsg_[k] 10\n";

    #[test]
    fn graphs_and_differentials_are_embedded_with_their_script() {
        let html = section(&data(vec![
            record("a", 1, "peak", Some(F)),
            record("b", 1, "peak", Some(F)),
            record("a", 2, "collapse", Some(F)),
        ]))
        .into_string();
        assert_eq!(
            html.matches("<iframe").count(),
            5,
            "3 graphs + b vs a + a collapse vs peak"
        );
        assert!(html.contains("b against a at connections=10"));
        assert!(html.contains("a: collapse at connections=20 against peak at connections=10"));
        assert!(html.contains("+2.0%"), "overhead shown");
        let b64 = html
            .split("base64,")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let svg = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.contains("function search") && svg.contains("<title>tcp_sendmsg ("));
    }

    #[test]
    fn a_run_without_perf_says_no_profile() {
        let html = section(&data(vec![record("a", 1, "peak", None)])).into_string();
        assert!(html.contains("no profile: perf is not installed"), "{html}");
        assert!(!html.contains("<iframe"));
        assert_eq!(section(&data(Vec::new())).into_string(), "");
    }

    #[test]
    fn the_height_comes_from_the_root_element() {
        assert_eq!(
            svg_height(r#"<?xml?><svg version="1.1" width="1200" height="358">"#),
            Some(358)
        );
    }

    /// Issue 41: an overhead within the noise is not shown as a figure.
    #[test]
    fn an_overhead_within_the_noise_is_no_figure() {
        let mut d = data(vec![record("a", 1, "peak", Some(F))]);
        d.run.noise = 0.05;
        let html = section(&d).into_string();
        assert!(html.contains("within noise (±"), "{html}");
        assert!(!html.contains("+2.0%"), "{html}");
    }
}
