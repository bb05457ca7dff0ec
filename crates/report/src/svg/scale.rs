//! Axis scales and tick placement.

/// How values map to positions along an axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScaleKind {
    Linear,
    Log2,
    Log10,
}

impl ScaleKind {
    fn forward(self, v: f64) -> f64 {
        match self {
            ScaleKind::Linear => v,
            ScaleKind::Log2 => v.max(f64::MIN_POSITIVE).log2(),
            ScaleKind::Log10 => v.max(f64::MIN_POSITIVE).log10(),
        }
    }

    fn inverse(self, t: f64) -> f64 {
        match self {
            ScaleKind::Linear => t,
            ScaleKind::Log2 => t.exp2(),
            ScaleKind::Log10 => 10f64.powf(t),
        }
    }

    pub fn is_log(self) -> bool {
        self != ScaleKind::Linear
    }
}

/// A scale's domain and its ticks.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub kind: ScaleKind,
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
}

impl Axis {
    /// Where `v` falls, from 0 (at `lo`) to 1 (at `hi`).
    pub fn frac(&self, v: f64) -> f64 {
        let (a, b) = (self.kind.forward(self.lo), self.kind.forward(self.hi));
        if b == a {
            0.5
        } else {
            (self.kind.forward(v) - a) / (b - a)
        }
    }

    /// A linear axis over `[min, max]` with "nice" ticks (1, 2, 5 x 10^k),
    /// starting at zero when `from_zero` (throughput axes should).
    pub fn linear(min: f64, max: f64, from_zero: bool, max_ticks: usize) -> Axis {
        let min = if from_zero { min.min(0.0) } else { min };
        let (min, max) = if max > min {
            (min, max)
        } else {
            (
                min - 0.5 * min.abs().max(1.0),
                max + 0.5 * max.abs().max(1.0),
            )
        };
        let step = nice_step((max - min) / max_ticks.saturating_sub(1).max(1) as f64);
        let lo = (min / step).floor() * step;
        let hi = (max / step).ceil() * step;
        let count = ((hi - lo) / step).round() as usize;
        let ticks = (0..=count).map(|i| lo + i as f64 * step).collect();
        Axis {
            kind: ScaleKind::Linear,
            lo,
            hi,
            ticks,
        }
    }

    /// A linear axis padded by 4% on each side, with ticks at the data
    /// values when they are few (sweep points), else nice ticks.
    pub fn linear_data(values: &[f64]) -> Axis {
        let (min, max) = min_max(values);
        let nice = Axis::linear(min, max, false, 7);
        let pad = ((max - min) * 0.04).max(if max == min { 1.0 } else { 0.0 });
        let ticks = if distinct(values).len() <= 10 {
            distinct(values)
        } else {
            nice.ticks
                .into_iter()
                .filter(|t| *t >= min && *t <= max)
                .collect()
        };
        Axis {
            kind: ScaleKind::Linear,
            lo: min - pad,
            hi: max + pad,
            ticks,
        }
    }

    /// A log axis over positive `values`, padded by 4% of the span on each
    /// side. Ticks are the data values when there are at most `max_ticks`
    /// of them (sweeps like 1, 10, 100, 1000, 4000), else powers of the base.
    pub fn log_data(kind: ScaleKind, values: &[f64], max_ticks: usize) -> Axis {
        let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
        let (min, max) = if positive.is_empty() {
            (1.0, 10.0)
        } else {
            min_max(&positive)
        };
        let (a, b) = (kind.forward(min), kind.forward(max));
        let pad = ((b - a) * 0.04).max(0.1);
        let d = distinct(&positive);
        let ticks = if d.len() <= max_ticks {
            d
        } else {
            power_ticks(kind, min, max, max_ticks)
        };
        Axis {
            kind,
            lo: kind.inverse(a - pad),
            hi: kind.inverse(b + pad),
            ticks,
        }
    }

    /// A log10 axis for quantities spanning decades (latency), ticks at
    /// 1-2-5 steps when the span is short, at powers of ten otherwise.
    pub fn log10_nice(values: &[f64]) -> Axis {
        let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
        let (min, max) = if positive.is_empty() {
            (1.0, 10.0)
        } else {
            min_max(&positive)
        };
        let lo = 10f64.powf(min.log10().floor());
        let hi = 10f64.powf(max.log10().ceil()).max(lo * 10.0);
        let decades = (hi / lo).log10().round() as i32;
        let mults: &[f64] = if decades <= 2 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        let mut ticks = Vec::new();
        for e in 0..=decades {
            for m in mults {
                let t = lo * 10f64.powi(e) * m;
                if t <= hi * 1.0001 {
                    ticks.push(t);
                }
            }
        }
        Axis {
            kind: ScaleKind::Log10,
            lo,
            hi,
            ticks,
        }
    }
}

/// The "nice number" at or above `raw`: 1, 2, 5 or 10 x 10^k (Heckbert,
/// "Nice numbers for graph labels", Graphics Gems, 1990).
pub fn nice_step(raw: f64) -> f64 {
    if raw.is_nan() || raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let exp = raw.log10().floor();
    let base = 10f64.powf(exp);
    let f = raw / base;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * base
}

/// Log2 when the positive sweep values are spread more evenly on a log
/// scale than on a linear one and span at least a factor of 4 (1, 2, 4, 8
/// and 1, 10, 100, 1000, 4000 are log; 1..16 in steps of 1 is linear).
pub fn choose_kind(values: &[f64]) -> ScaleKind {
    let d = distinct(values);
    if d.is_empty() || d[0] <= 0.0 {
        return ScaleKind::Linear;
    }
    let span = d[d.len() - 1] / d[0];
    if span < 4.0 {
        return ScaleKind::Linear;
    }
    if d.len() < 3 {
        return if span >= 16.0 {
            ScaleKind::Log2
        } else {
            ScaleKind::Linear
        };
    }
    let log: Vec<f64> = d.iter().map(|v| v.log2()).collect();
    if unevenness(&log) < unevenness(&d) {
        ScaleKind::Log2
    } else {
        ScaleKind::Linear
    }
}

/// Largest gap over smallest gap of sorted values.
fn unevenness(sorted: &[f64]) -> f64 {
    let gaps: Vec<f64> = sorted.windows(2).map(|w| w[1] - w[0]).collect();
    let (lo, hi) = min_max(&gaps);
    if lo <= 0.0 {
        f64::INFINITY
    } else {
        hi / lo
    }
}

fn power_ticks(kind: ScaleKind, min: f64, max: f64, max_ticks: usize) -> Vec<f64> {
    let (a, b) = (kind.forward(min).floor(), kind.forward(max).ceil());
    let count = (b - a) as usize + 1;
    let stride = count.div_ceil(max_ticks.max(1)).max(1);
    (0..count)
        .step_by(stride)
        .map(|i| kind.inverse(a + i as f64))
        .filter(|t| *t >= min * 0.999 && *t <= max * 1.001)
        .collect()
}

/// Sorted distinct finite values.
pub fn distinct(values: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

fn min_max(values: &[f64]) -> (f64, f64) {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if min.is_finite() && max.is_finite() {
        (min, max)
    } else {
        (0.0, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(0.13), 0.2);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(7.0), 10.0);
        assert_eq!(nice_step(12_000.0), 20_000.0);
    }

    #[test]
    fn linear_axis_from_zero_covers_the_data() {
        let a = Axis::linear(61_000.0, 83_000.0, true, 6);
        assert_eq!(a.lo, 0.0);
        assert!(a.hi >= 83_000.0 && a.hi <= 100_000.0);
        assert_eq!(a.ticks.first(), Some(&0.0));
        assert_eq!(a.ticks.last(), Some(&a.hi));
        assert!(a.ticks.len() <= 7);
    }

    #[test]
    fn concurrency_sweeps_get_log_axes() {
        assert_eq!(
            choose_kind(&[1.0, 10.0, 100.0, 1000.0, 4000.0]),
            ScaleKind::Log2
        );
        assert_eq!(choose_kind(&[1.0, 2.0, 4.0, 8.0, 16.0]), ScaleKind::Log2);
        let ones: Vec<f64> = (1..=16).map(f64::from).collect();
        assert_eq!(choose_kind(&ones), ScaleKind::Linear);
        assert_eq!(choose_kind(&[0.0, 5.0, 10.0]), ScaleKind::Linear);
    }

    #[test]
    fn log_axis_ticks_at_sweep_points() {
        let xs = [1.0, 10.0, 100.0, 1000.0, 4000.0];
        let a = Axis::log_data(ScaleKind::Log2, &xs, 12);
        assert_eq!(a.ticks, xs.to_vec());
        assert!(a.lo < 1.0 && a.hi > 4000.0);
        assert!(
            (a.frac(1.0) - (1.0 - a.frac(4000.0))).abs() < 1e-9,
            "symmetric padding"
        );
        let many: Vec<f64> = (0..20).map(|i| 2f64.powi(i)).collect();
        let a = Axis::log_data(ScaleKind::Log2, &many, 8);
        assert!(a.ticks.len() <= 8 && a.ticks[0] == 1.0);
    }

    #[test]
    fn latency_axis_spans_decades() {
        let a = Axis::log10_nice(&[80.0, 120.0, 30_000.0]);
        assert_eq!((a.lo, a.hi), (10.0, 100_000.0));
        assert_eq!(a.ticks, vec![10.0, 100.0, 1000.0, 10_000.0, 100_000.0]);
        let a = Axis::log10_nice(&[150.0, 900.0]);
        assert_eq!(a.ticks, vec![100.0, 200.0, 500.0, 1000.0]);
    }
}
