//! One system swept over server CPUs (or any other numeric axis beside x):
//! each CPU count becomes a series of its own, so every chart overlays the
//! 1, 2, … CPU curves, each with its USL fit, instead of drawing one chart
//! per count (seed 000's SMP figures compare the curves at a glance).

use crate::judging::layout::Group;
use crate::judging::rows::Aggregate;

/// The aggregate with its groups turned into series (`server_cpus=1`,
/// `server_cpus=2`, …) in one group, when there is one system, two or more
/// groups, and every axis that splits them is numeric.
pub fn groups_as_series(agg: &Aggregate) -> Option<Aggregate> {
    let layout = &agg.layout;
    let numeric = layout
        .group_axes
        .iter()
        .all(|a| agg.points.iter().all(|p| p.number(a).is_some()));
    if agg.systems.len() != 1 || layout.groups.len() < 2 || layout.x_axis.is_none() || !numeric {
        return None;
    }
    let label = |g: usize| layout.groups[g].label.clone();
    let mut flat = agg.clone();
    flat.systems = (0..layout.groups.len()).map(label).collect();
    flat.baseline = None;
    for c in &mut flat.cells {
        c.system = label(c.group);
        c.group = 0;
    }
    for f in &mut flat.fits {
        f.system = label(f.group);
        f.group = 0;
    }
    flat.layout.group_axes.clear();
    flat.layout.groups = vec![Group {
        label: String::new(),
        points: agg.points.iter().map(|p| p.index).collect(),
    }];
    Some(flat)
}
