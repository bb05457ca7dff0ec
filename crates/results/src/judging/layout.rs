//! Which sweep axis the charts put on x, and how the other axes split the
//! points into groups (one chart per group).
//!
//! The x axis is `connections` when it is numeric and varies, else the first
//! numeric axis that varies, else the first numeric axis at all. Every other
//! axis becomes a group key: the pgbench recipe sweeps `load.script` x
//! `connections`, so it gets one chart per script, with connections on x.
//! A run with no numeric axis has one group and no x values; its charts are
//! bar charts with one bar group per point.

use crate::model::{AxisTarget, Coord, Point};

#[derive(Clone, Debug, PartialEq)]
/// How a run's points are laid out on its charts: the x axis and the groups.
pub struct Layout {
    /// The numeric axis on x, if any.
    pub x_axis: Option<String>,
    /// The other axes; each combination of their values is one group.
    pub group_axes: Vec<String>,
    /// Each group's points, in the order the groups are drawn.
    pub groups: Vec<Group>,
}

#[derive(Clone, Debug, PartialEq)]
/// One combination of the non-x axes' values, and its points.
pub struct Group {
    /// `load.script=select-only`, or empty when there is only one group.
    pub label: String,
    /// Point indices in sweep order.
    pub points: Vec<u32>,
}

impl Layout {
    /// The layout of `points`: the numeric axis on x where there is one.
    pub fn new(points: &[Point]) -> Layout {
        let axes = axis_names(points);
        let x_axis = pick_x_axis(points, &axes);
        // Without an x axis every point is a category of one chart.
        let group_axes: Vec<String> = match &x_axis {
            Some(x) => axes.into_iter().filter(|a| a != x).collect(),
            None => Vec::new(),
        };
        let mut groups: Vec<Group> = Vec::new();
        for p in points {
            let label = group_label(p, &group_axes);
            match groups.iter_mut().find(|g| g.label == label) {
                Some(g) => g.points.push(p.index),
                None => groups.push(Group {
                    label,
                    points: vec![p.index],
                }),
            }
        }
        Layout {
            x_axis,
            group_axes,
            groups,
        }
    }

    /// The point's x value, when the layout has a numeric x axis.
    pub fn x_of(&self, p: &Point) -> Option<f64> {
        self.x_axis.as_deref().and_then(|a| p.number(a))
    }

    /// The group a point index belongs to.
    pub fn group_of(&self, index: u32) -> usize {
        self.groups
            .iter()
            .position(|g| g.points.contains(&index))
            .unwrap_or(0)
    }

    /// A short label for a point within its group: the x value, or the full
    /// coordinates when there is no x axis.
    pub fn short_label(&self, p: &Point) -> String {
        match &self.x_axis {
            Some(axis) => p
                .coord(axis)
                .map(Coord::display)
                .unwrap_or_else(|| p.label()),
            None => p.label(),
        }
    }
}

fn axis_names(points: &[Point]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in points.iter().flat_map(|p| &p.coords) {
        let axis = c.axis();
        if !out.contains(&axis) {
            out.push(axis);
        }
    }
    out
}

fn pick_x_axis(points: &[Point], axes: &[String]) -> Option<String> {
    let numeric: Vec<&str> = axes
        .iter()
        .map(String::as_str)
        .filter(|a| is_numeric(points, a))
        .collect();
    let varies = |a: &&str| distinct_values(points, a) >= 2;
    let connections = AxisTarget::Connections.name();
    let preferred = numeric.iter().copied().find(|a| *a == connections);
    preferred
        .filter(varies)
        .or_else(|| numeric.iter().copied().find(varies))
        .or(preferred)
        .or(numeric.first().copied())
        .map(str::to_string)
}

fn is_numeric(points: &[Point], axis: &str) -> bool {
    points
        .iter()
        .filter(|p| p.coord(axis).is_some())
        .all(|p| p.number(axis).is_some())
}

fn distinct_values(points: &[Point], axis: &str) -> usize {
    let mut seen: Vec<f64> = Vec::new();
    for v in points.iter().filter_map(|p| p.number(axis)) {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    seen.len()
}

fn group_label(p: &Point, group_axes: &[String]) -> String {
    p.coords
        .iter()
        .filter(|c| group_axes.contains(&c.axis()))
        .map(|c| format!("{}={}", c.target, c.display()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether an axis counts concurrency or processors, the USL's N: the
/// load's connections and threads, the server's CPUs, and the server
/// settings its kind lists in `ServerKind::parallelism`. The USL is fitted
/// when the x axis is one of these and a series has at least
/// `FEW_POINTS` (6) distinct x values; a shorter series gets its measured
/// peak and decline only (see `super::fits`). A rate, a memory limit or a
/// dataset size gets no fit.
pub fn usl_applies(axis: &AxisTarget, parallelism: &[String]) -> bool {
    match axis {
        AxisTarget::Connections | AxisTarget::Threads | AxisTarget::ServerCpus => true,
        AxisTarget::Rate | AxisTarget::Connreqs | AxisTarget::ServerMemory => false,
        AxisTarget::Server(setting) => parallelism.iter().any(|p| p == setting),
        // The load's concurrency is the common `connections` and `threads`.
        AxisTarget::Load(_) | AxisTarget::Dataset(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_win_and_other_axes_group() {
        let mut pts = Vec::new();
        for (i, (script, c)) in [("select", 1), ("select", 8), ("tpcb", 1), ("tpcb", 8)]
            .iter()
            .enumerate()
        {
            pts.push(Point::new(
                i as u32,
                &[
                    ("load.script", toml::Value::from(*script)),
                    ("connections", toml::Value::from(*c)),
                ],
            ));
        }
        let l = Layout::new(&pts);
        assert_eq!(l.x_axis.as_deref(), Some("connections"));
        assert_eq!(l.group_axes, vec!["load.script".to_string()]);
        assert_eq!(l.groups.len(), 2);
        assert_eq!(l.groups[1].label, "load.script=tpcb");
        assert_eq!(l.groups[1].points, vec![2, 3]);
        assert_eq!(l.group_of(3), 1);
        assert_eq!(l.short_label(&pts[3]), "8");
    }

    #[test]
    fn a_varying_numeric_axis_beats_constant_connections() {
        let pts: Vec<Point> = [1, 2, 4]
            .iter()
            .enumerate()
            .map(|(i, cpus)| {
                Point::new(
                    i as u32,
                    &[
                        ("connections", toml::Value::from(64)),
                        ("server_cpus", toml::Value::from(*cpus)),
                    ],
                )
            })
            .collect();
        let l = Layout::new(&pts);
        assert_eq!(l.x_axis.as_deref(), Some("server_cpus"));
        assert_eq!(l.groups.len(), 1);
        assert_eq!(l.groups[0].label, "connections=64");
    }

    #[test]
    fn no_numeric_axis_means_categories() {
        let pts = vec![
            Point::new(0, &[("server.profile", toml::Value::from("a"))]),
            Point::new(1, &[("server.profile", toml::Value::from("b"))]),
        ];
        let l = Layout::new(&pts);
        assert_eq!(l.x_axis, None);
        assert_eq!(l.groups.len(), 1);
        assert_eq!(l.groups[0].points, vec![0, 1]);
        assert_eq!(l.x_of(&pts[0]), None);
    }

    #[test]
    fn usl_only_on_concurrency_axes() {
        let applies = |name: &str, kind: &str| {
            let axis = AxisTarget::from_name(name).unwrap();
            let parallelism = crate::server::kind(kind).map_or(vec![], |k| {
                k.parallelism.iter().map(|p| p.to_string()).collect()
            });
            usl_applies(&axis, &parallelism)
        };
        assert!(applies("connections", "nginx"));
        assert!(applies("server_cpus", "nginx"));
        assert!(applies("server.worker_processes", "nginx"));
        assert!(applies("server.threads", "bind"));
        assert!(!applies("server.worker_connections", "nginx"));
        assert!(!applies("server.scale", "postgres"), "an old store's axis");
        assert!(!applies("load.scale", "postgres"));
        assert!(!applies("server.worker_processes", "no-such-kind"));
        assert!(!applies("load.frame_size", "router"));
        assert!(!applies("rate", "nginx"));
        assert!(!applies("server_memory", "nginx"));
    }
}
