//! Is a trial's window steady? A class for the series of its timeline
//! buckets (completed requests per 100 ms), after Barrett et al.,
//! "Virtual Machine Warmup Blows Hot and Cold" (OOPSLA 2017): change
//! points split the series into segments, segments whose levels differ by
//! less than a tolerance are one, and the shape of what is left names the
//! class (their flat / warmup / slowdown / no steady state). Here:
//!
//! - [`Steadiness::Steady`]: one level, no trend.
//! - [`Steadiness::Warming`]: levels that only rise, the last one flat and
//!   at least a third of the window (a rise, then flat).
//! - [`Steadiness::Drifting`]: a straight line explains the series (no
//!   shift is left in its residuals) and it moves by the floor or more
//!   over the window.
//! - [`Steadiness::Stepped`]: any other shift of level (a fall, a rise that
//!   comes late, several).
//! - [`Steadiness::TooShort`]: fewer than [`MIN_BUCKETS`] judged buckets.
//! - [`Steadiness::Ramped`]: not judged, because the offered rate ramps by
//!   design (the DNS driver's resperf-style ramp); the runner decides it
//!   from what the trial's load kind says of it (its facts'
//!   `rises_by_design`), not from the buckets.
//!
//! The method, step by step:
//!
//! 1. The series is divided by its median, so levels are shares of it.
//! 2. Its noise σ is from the first differences, which a level shift
//!    barely moves (Fryzlewicz, "Wild binary segmentation for multiple
//!    change-point detection", Ann. Statist. 42(6), 2014, §3): 2.2219
//!    times their absolute values' first quartile (Rousseeuw & Croux's
//!    Qn constant, see `difference_noise`), not their MAD, so that
//!    levels that change in most buckets are not taken for noise.
//! 3. Seeded binary segmentation (Kovács, Li, Bühlmann, Haubner & Munk,
//!    Biometrika 110(1), 2023) with the CUSUM statistic (Scott & Knott
//!    1974; Vostrikova 1981): in a segment, over the segment and every
//!    seeded interval inside it (so levels that alternate, which split the
//!    whole into two alike halves, are still found), the split k
//!    maximising `sqrt(nL·nR/n)·|mean_L − mean_R| / σ` (n, nL, nR of its
//!    interval) is a change point when that statistic reaches
//!    `C·sqrt(2·ln n)` (n the whole series; Fryzlewicz's threshold, with his
//!    conservative C = 1.3) **and** the medians of its two sides differ by
//!    at least the run's noise floor (`[trials] noise`): Barrett's merge
//!    of segments equal within a tolerance, with the tolerance the floor
//!    the verdicts use, so a shift no verdict could call a difference is
//!    no shift here either. Each side keeps at least [`MIN_SEGMENT`]
//!    buckets, so one late bucket is never a level of its own.
//! 4. A trend is the Theil–Sen slope (robust to a single odd bucket): its
//!    change over the window must reach the floor and its t (against σ)
//!    the same threshold.
//!
//! The caller leaves out the partial last bucket (it covers less time
//! than the others) and the first bucket of the window (the load
//! generator's start: each load run opens its connections afresh, and
//! the first 100 ms hold their handshakes and, for a server that queues,
//! what the warm-up left in its queue), see [`judged_buckets`].

use super::summary::median;

/// Fewest whole buckets a window needs for a class: one second of 100 ms
/// buckets.
pub const MIN_BUCKETS: usize = 10;

/// Fewest buckets on each side of a change point.
pub const MIN_SEGMENT: usize = 3;

/// Fryzlewicz's constant C in the threshold `C·sqrt(2·ln n)`.
pub const THRESHOLD_C: f64 = 1.3;

/// The class of a window (see the module doc).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Steadiness {
    /// One level, no trend beyond the floor.
    Steady,
    /// A rise, then flat.
    Warming,
    /// A trend over the window.
    Drifting,
    /// A shift of level.
    Stepped,
    /// Too few buckets to tell.
    TooShort,
    /// Not judged: the offered rate ramps by design (a resperf-style rate
    /// ramp rises over its window, so a trend there is the measurement).
    Ramped,
}

impl Steadiness {
    /// Every class, in the order reports list them.
    pub const ALL: [Steadiness; 6] = [
        Steadiness::Steady,
        Steadiness::Warming,
        Steadiness::Drifting,
        Steadiness::Stepped,
        Steadiness::TooShort,
        Steadiness::Ramped,
    ];

    /// The stored and exported word: `steady`, `warming`, `drifting`,
    /// `stepped`, `too_short`, `ramped`.
    pub fn as_str(self) -> &'static str {
        match self {
            Steadiness::Steady => "steady",
            Steadiness::Warming => "warming",
            Steadiness::Drifting => "drifting",
            Steadiness::Stepped => "stepped",
            Steadiness::TooShort => "too_short",
            Steadiness::Ramped => "ramped",
        }
    }

    /// The class a stored word names.
    pub fn parse(word: &str) -> Option<Steadiness> {
        Self::ALL.into_iter().find(|s| s.as_str() == word)
    }

    /// Whether the window is unsteady (warming, drifting or stepped): what
    /// `[trials] unsteady = "exclude"` leaves out. Too short and ramped
    /// are not.
    pub fn unsteady(self) -> bool {
        matches!(
            self,
            Steadiness::Warming | Steadiness::Drifting | Steadiness::Stepped
        )
    }
}

/// A window's class and what decided it.
#[derive(Clone, Debug, PartialEq)]
pub struct Classified {
    /// The class.
    pub class: Steadiness,
    /// The levels found (each segment's median as a share of the series'
    /// median) with the bucket each starts at.
    pub levels: Vec<(usize, f64)>,
    /// A trend's change over the window, as a share of the median (0 when
    /// the class is not drifting).
    pub trend: f64,
    /// The noise σ of one bucket, as a share of the median.
    pub noise: f64,
}

impl Classified {
    /// The class of a window whose offered rate ramps by design: not
    /// judged ([`Steadiness::Ramped`]).
    pub fn ramped() -> Classified {
        Classified {
            class: Steadiness::Ramped,
            levels: Vec::new(),
            trend: 0.0,
            noise: 0.0,
        }
    }

    /// `stepped: 1.00 → 0.42 at bucket 12`, `drifting: -6.1% over the window`.
    pub fn describe(&self) -> String {
        let word = self.class.as_str();
        match self.class {
            Steadiness::Drifting => format!("{word}: {:+.1}% over the window", self.trend * 100.0),
            Steadiness::Warming | Steadiness::Stepped => {
                let levels: Vec<String> = self
                    .levels
                    .iter()
                    .map(|(at, l)| format!("{l:.2} from bucket {at}"))
                    .collect();
                format!("{word}: levels {}", levels.join(", "))
            }
            Steadiness::Steady | Steadiness::TooShort => word.to_string(),
            Steadiness::Ramped => {
                format!("{word}: the offered rate ramps, so its trend is not judged")
            }
        }
    }
}

/// The buckets of a window that are judged: its whole buckets without
/// the first (the load generator's start, see the module doc).
pub fn judged_buckets(whole: &[f64]) -> &[f64] {
    whole.get(1..).unwrap_or(&[])
}

/// The class of `buckets` (whole buckets only) against the noise floor
/// `floor` (a share: 0.02 for 2%).
pub fn classify(buckets: &[f64], floor: f64) -> Classified {
    let short = Classified {
        class: Steadiness::TooShort,
        levels: Vec::new(),
        trend: 0.0,
        noise: 0.0,
    };
    let Some(mid) = median(buckets).filter(|m| *m > 0.0) else {
        return short;
    };
    if buckets.len() < MIN_BUCKETS {
        return short;
    }
    let y: Vec<f64> = buckets.iter().map(|b| b / mid).collect();
    let sigma = difference_noise(&y);
    let threshold = THRESHOLD_C * (2.0 * (y.len() as f64).ln()).sqrt();
    let test = Test {
        sigma,
        threshold,
        floor,
    };
    let trend = test.trend(&y);
    if trend != 0.0 {
        let fit = line(&y);
        let residual: Vec<f64> = (0..y.len()).map(|i| y[i] - fit.at(i) + 1.0).collect();
        if test.change_points(&residual).is_empty() {
            return Classified {
                class: Steadiness::Drifting,
                levels: Vec::new(),
                trend,
                noise: sigma,
            };
        }
    }
    let mut cuts = test.change_points(&y);
    cuts.sort_unstable();
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts.iter().copied())
        .chain(std::iter::once(y.len()))
        .collect();
    let levels = merged_levels(&y, bounds, floor);
    let bounds: Vec<usize> = levels
        .iter()
        .map(|(at, _)| *at)
        .chain(std::iter::once(y.len()))
        .collect();
    let class = shape(&test, &y, &bounds, &levels);
    Classified {
        class,
        levels,
        trend: 0.0,
        noise: sigma,
    }
}

/// The segments' levels (start, median), adjacent ones whose medians
/// differ by less than the floor merged (Barrett's merge of equivalent
/// segments: a split found inside a sub-segment can leave two neighbours
/// at one level).
fn merged_levels(y: &[f64], mut bounds: Vec<usize>, floor: f64) -> Vec<(usize, f64)> {
    let level = |b: &[usize], i: usize| median(&y[b[i]..b[i + 1]]).unwrap_or(1.0);
    let mut i = 0;
    while i + 2 < bounds.len() {
        if (level(&bounds, i) - level(&bounds, i + 1)).abs() < floor {
            bounds.remove(i + 1);
        } else {
            i += 1;
        }
    }
    (0..bounds.len() - 1)
        .map(|i| (bounds[i], level(&bounds, i)))
        .collect()
}

/// The class of segmented levels: one is steady; rising levels whose last
/// is flat and a third of the window or more are warming; else stepped.
fn shape(test: &Test, y: &[f64], bounds: &[usize], levels: &[(usize, f64)]) -> Steadiness {
    if levels.len() == 1 {
        return Steadiness::Steady;
    }
    let rising = levels.windows(2).all(|w| w[1].1 > w[0].1);
    let last_start = bounds[bounds.len() - 2];
    let last = &y[last_start..];
    let flat_tail = last.len() * 3 >= y.len() && test.trend(last) == 0.0;
    if rising && flat_tail {
        Steadiness::Warming
    } else {
        Steadiness::Stepped
    }
}

/// σ of one value from the first differences: 2.2219 times their
/// absolute values' first quartile, never zero (a fixed-rate server can
/// give identical buckets). A first difference of normal noise has
/// variance 2σ², and the first quartile of its absolute value is
/// 0.4506σ: Rousseeuw & Croux's Qn constant ("Alternatives to the median
/// absolute deviation", JASA 88(424), 1993), whose pairs here are
/// neighbours. It holds while up to three differences in four cross a
/// change of level, where the MAD holds up to one in two: a server that
/// stalls for 300 ms in every 700 has more than half of its differences
/// at a stall's edge, and their MAD took it for noise (σ 0.36 of the
/// median, so no split was significant).
fn difference_noise(y: &[f64]) -> f64 {
    let mut abs: Vec<f64> = y.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    abs.sort_by(f64::total_cmp);
    let quartile = abs
        .get(abs.len().saturating_sub(1) / 4)
        .copied()
        .unwrap_or(0.0);
    (2.2219 * quartile).max(1e-6)
}

/// A change point inside one interval.
struct Split {
    /// Where, from the interval's start.
    at: usize,
    /// Its CUSUM statistic.
    stat: f64,
    /// The right side's median less the left's.
    shift: f64,
    /// The shorter side's length.
    shorter: usize,
}

impl Split {
    /// How far the shorter side's level moves the mean of a series of
    /// `n`: the shift times that side's share of it.
    fn weight(&self, n: usize) -> f64 {
        self.shift.abs() * self.shorter as f64 / n as f64
    }
}

/// The thresholds one series is judged by.
struct Test {
    sigma: f64,
    threshold: f64,
    floor: f64,
}

impl Test {
    /// The change points of `y`: binary segmentation, and where it finds
    /// none in a segment, seeded binary segmentation inside it (Kovács,
    /// Li, Bühlmann, Haubner & Munk, "Seeded binary segmentation: a
    /// general methodology for fast and optimal changepoint detection",
    /// Biometrika 110(1), 2023): the best split over every seeded
    /// interval inside the segment, the largest statistic first. Plain
    /// binary segmentation judges the whole segment only, and misses
    /// levels that alternate (a server stalling 300 ms in every 700): the
    /// two sides' means and medians come out alike however the segment is
    /// split. A split found in a seeded interval must also matter to the
    /// window: its shift times its shorter side's share of the whole
    /// series reaches the floor (a 6% dip over 3 of 26 buckets moves the
    /// window's mean by 0.7%, no step at a 2% floor).
    fn change_points(&self, y: &[f64]) -> Vec<usize> {
        let seeds = seeded_intervals(y.len());
        let mut out = Vec::new();
        self.segment(y, (0, y.len()), &seeds, &mut out);
        out
    }

    /// Adds the change points inside `y[s..e]` to `out`.
    fn segment(
        &self,
        y: &[f64],
        (s, e): (usize, usize),
        seeds: &[(usize, usize)],
        out: &mut Vec<usize>,
    ) {
        let whole = self.best_split(&y[s..e]).map(|split| s + split.at);
        let k = whole.or_else(|| {
            seeds
                .iter()
                .filter(|(a, b)| *a >= s && *b <= e && (*a, *b) != (s, e))
                .filter_map(|&(a, b)| self.best_split(&y[a..b]).map(|split| (a, split)))
                .filter(|(_, split)| split.weight(y.len()) >= self.floor)
                .max_by(|x, z| x.1.stat.total_cmp(&z.1.stat))
                .map(|(a, split)| a + split.at)
        });
        let Some(k) = k else {
            return;
        };
        out.push(k);
        self.segment(y, (s, k), seeds, out);
        self.segment(y, (k, e), seeds, out);
    }

    /// The split of `y` with the largest CUSUM statistic, when it is a
    /// change point: significant and beyond the floor.
    fn best_split(&self, y: &[f64]) -> Option<Split> {
        let n = y.len();
        if n < 2 * MIN_SEGMENT {
            return None;
        }
        let total: f64 = y.iter().sum();
        let mut left = y[..MIN_SEGMENT - 1].iter().sum::<f64>();
        let mut best: Option<(usize, f64)> = None;
        for k in MIN_SEGMENT..=n - MIN_SEGMENT {
            left += y[k - 1];
            let (nl, nr) = (k as f64, (n - k) as f64);
            let diff = left / nl - (total - left) / nr;
            let stat = (nl * nr / n as f64).sqrt() * diff.abs() / self.sigma;
            if best.map_or(true, |(_, s)| stat > s) {
                best = Some((k, stat));
            }
        }
        let (k, stat) = best?;
        let shift = median(&y[k..]).unwrap_or(0.0) - median(&y[..k]).unwrap_or(0.0);
        (stat >= self.threshold && shift.abs() >= self.floor).then_some(Split {
            at: k,
            stat,
            shift,
            shorter: k.min(n - k),
        })
    }

    /// The trend's change over `y` (the Theil–Sen slope), when it reaches
    /// the floor and is significant; else 0.
    fn trend(&self, y: &[f64]) -> f64 {
        let n = y.len() as f64;
        if y.len() < MIN_BUCKETS.min(2 * MIN_SEGMENT) {
            return 0.0;
        }
        let fit = line(y);
        let change = fit.slope * (n - 1.0);
        // se(slope) = σ / sqrt(Σ(x − x̄)²), Σ(x − x̄)² = n(n²−1)/12: the
        // least-squares slope's, which Theil–Sen's nearly matches (its
        // efficiency is about 0.91 for normal errors, Sen 1968).
        let se = self.sigma / (n * (n * n - 1.0) / 12.0).sqrt();
        let t = fit.slope.abs() / se;
        if change.abs() >= self.floor && t >= self.threshold {
            change
        } else {
            0.0
        }
    }
}

/// The seeded intervals of a series of `n` (Kovács et al. 2023, §2,
/// with decay 1/2): at each level, intervals of `n/2^(k-1)` buckets
/// (down to two shortest segments), `2·⌈n/l⌉ − 1` of them evenly shifted
/// so that neighbours overlap by half. About `4n` intervals in all.
fn seeded_intervals(n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut length = n as f64 / 2.0;
    while length >= (2 * MIN_SEGMENT) as f64 {
        let count = 2 * (n as f64 / length).ceil() as usize - 1;
        let shift = (n as f64 - length) / (count - 1) as f64;
        for i in 0..count {
            let start = (i as f64 * shift).floor() as usize;
            let end = ((i as f64 * shift + length).ceil() as usize).min(n);
            out.push((start, end));
        }
        length /= 2.0;
    }
    out.dedup();
    out
}

/// A line over positions 0..n.
struct Line {
    intercept: f64,
    slope: f64,
}

impl Line {
    fn at(&self, i: usize) -> f64 {
        self.intercept + self.slope * i as f64
    }
}

/// The Theil–Sen line (Theil 1950; Sen, JASA 63(324), 1968): the median
/// of the slopes between every pair of points, and the median intercept.
/// One late or early bucket moves it little, where it would tilt a
/// least-squares line.
fn line(y: &[f64]) -> Line {
    let mut slopes = Vec::with_capacity(y.len() * y.len() / 2);
    for i in 0..y.len() {
        for j in i + 1..y.len() {
            slopes.push((y[j] - y[i]) / (j - i) as f64);
        }
    }
    let slope = median(&slopes).unwrap_or(0.0);
    let intercepts: Vec<f64> = (0..y.len()).map(|i| y[i] - slope * i as f64).collect();
    Line {
        intercept: median(&intercepts).unwrap_or(0.0),
        slope,
    }
}

#[cfg(test)]
#[path = "steady_tests.rs"]
mod tests;
