//! Seed 000's swapcache chart: throughput against the dataset's size over
//! the memory it has to fit in, with the 1.0 line where it stops fitting.
//! A pgbench scale or a table count means nothing to a reader; "1.5× the
//! memory limit" does. The yardstick is the server's cgroup memory limit
//! when it had one, else the machine's RAM.

use crate::judging::rows::{Aggregate, Cell};
use crate::svg::Mark;

/// A group whose x is dataset / memory.
#[derive(Clone, Debug, PartialEq)]
pub struct DatasetAxis {
    /// Divide by the cgroup limit (true) or by the machine's RAM.
    limit: bool,
    ram_bytes: Option<f64>,
}

impl DatasetAxis {
    /// When every measured cell of the group has a dataset size and a
    /// yardstick, and the ratio takes two or more values.
    pub fn of(agg: &Aggregate, group: usize) -> Option<DatasetAxis> {
        let cells: Vec<&Cell> = agg
            .cells_in_group(group)
            .filter(|c| c.summary.is_some())
            .collect();
        let limit = cells.iter().all(|c| c.facts.memory_limit_bytes.is_some());
        let axis = DatasetAxis {
            limit,
            ram_bytes: agg.ram_bytes,
        };
        let xs: Option<Vec<f64>> = cells.iter().map(|c| axis.x(c)).collect();
        let xs = xs?;
        let distinct = crate::svg::scale::distinct(&xs).len();
        (distinct >= 2).then_some(axis)
    }

    /// The cell's dataset over the memory available to it.
    pub fn x(&self, c: &Cell) -> Option<f64> {
        let memory = if self.limit {
            c.facts.memory_limit_bytes
        } else {
            self.ram_bytes
        };
        Some(c.facts.dataset_bytes? / memory?)
    }

    pub fn label(&self) -> String {
        format!("dataset size / {} (×)", self.yardstick())
    }

    /// What the dataset is measured against.
    pub fn yardstick(&self) -> &'static str {
        if self.limit {
            "server memory limit"
        } else {
            "RAM"
        }
    }

    /// The 1.0 line: past it the data no longer fits.
    pub fn one_line(&self) -> Mark {
        Mark {
            x: 1.0,
            label: format!(
                "dataset = {}",
                if self.limit { "memory limit" } else { "RAM" }
            ),
            color: None,
            x_in_label: true,
        }
    }
}

/// `0.15×`, `1×`, `2.1×`.
pub fn ratio(v: f64) -> String {
    let digits = if v >= 10.0 {
        0
    } else if v >= 1.0 {
        1
    } else {
        2
    };
    let s = format!("{v:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}×")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judging::test_support::aggregate;

    #[test]
    fn the_ratio_needs_a_size_and_a_yardstick_in_every_cell() {
        let (_, mut agg) = aggregate(&["pg"]);
        assert_eq!(DatasetAxis::of(&agg, 0), None, "no dataset facts");
        for (i, c) in agg.cells.iter_mut().enumerate() {
            c.facts.dataset_bytes = Some(100e6 * (i + 1) as f64);
            c.facts.memory_limit_bytes = Some(200e6);
        }
        let axis = DatasetAxis::of(&agg, 0).expect("a dataset axis");
        assert_eq!(axis.x(&agg.cells[0]), Some(0.5));
        assert_eq!(axis.label(), "dataset size / server memory limit (×)");
        agg.cells[1].facts.memory_limit_bytes = None;
        assert_eq!(DatasetAxis::of(&agg, 0), None, "no limit, no RAM");
        agg.ram_bytes = Some(400e6);
        let axis = DatasetAxis::of(&agg, 0).expect("RAM as the yardstick");
        assert_eq!(axis.x(&agg.cells[0]), Some(0.25));
        assert_eq!(axis.one_line().label, "dataset = RAM");
    }

    #[test]
    fn ratios_read_as_multiples() {
        assert_eq!(ratio(0.148), "0.15×");
        assert_eq!(ratio(1.0), "1×");
        assert_eq!(ratio(2.04), "2×");
        assert_eq!(ratio(12.4), "12×");
    }
}
