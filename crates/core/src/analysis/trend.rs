//! The trend of a measurement against time: the ordinary least-squares
//! slope of y on x with its Student-t confidence interval (e.g. Montgomery,
//! Peck & Vining, "Introduction to Linear Regression Analysis", 5th ed.,
//! §2.3: se(b) = sqrt(s² / Sxx), s² = SSE / (n − 2), CI b ± t(n − 2) se(b)),
//! turned into the relative change over the span of x and judged against
//! the noise floor as a minimum-effect test: a trend is claimed only when
//! its whole interval lies beyond the floor on one side (as the verdicts
//! of [`super::compare`] are meant to be).

/// A least-squares line through (x, y) pairs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slope {
    /// Change of y per unit of x.
    pub slope: f64,
    /// Its two-sided confidence interval at the level asked.
    pub ci: (f64, f64),
    /// Mean of y.
    pub mean_y: f64,
    /// Span of x: its largest value less its smallest.
    pub span_x: f64,
}

/// The least-squares slope of `y` on `x` with its two-sided `level` CI
/// (0.95 for 95%); `None` with fewer than 3 finite pairs, or when every x
/// is the same.
pub fn slope(x: &[f64], y: &[f64], level: f64) -> Option<Slope> {
    let pairs: Vec<(f64, f64)> = (x.iter().zip(y))
        .map(|(a, b)| (*a, *b))
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .collect();
    let n = pairs.len() as f64;
    if pairs.len() < 3 {
        return None;
    }
    let mean_x = pairs.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pairs.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = pairs.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let b = sxy / sxx;
    let sse: f64 = (pairs.iter())
        .map(|p| (p.1 - mean_y - b * (p.0 - mean_x)).powi(2))
        .sum();
    let se = (sse / (n - 2.0) / sxx).sqrt();
    let t = super::student_t::quantile(1.0 - (1.0 - level) / 2.0, n - 2.0)?;
    let (lo, hi) = pairs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
        (lo.min(p.0), hi.max(p.0))
    });
    Some(Slope {
        slope: b,
        ci: (b - t * se, b + t * se),
        mean_y,
        span_x: hi - lo,
    })
}

/// A trend as a relative change over the span of x, judged against a
/// noise floor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drift {
    /// The fitted change from the first x to the last, as a fraction of
    /// the mean of y (−0.06: 6% lower at the end).
    pub change: f64,
    /// Its confidence interval.
    pub ci: (f64, f64),
    /// Whether the whole interval lies beyond the floor on one side.
    pub beyond_floor: bool,
}

/// The relative change over the span of x from [`slope`], claimed only
/// when its whole `level` interval lies beyond `noise` (0.02: 2%) on one
/// side; `None` as for [`slope`], or when the mean of y is not positive.
pub fn drift(x: &[f64], y: &[f64], level: f64, noise: f64) -> Option<Drift> {
    let s = slope(x, y, level)?;
    if s.mean_y <= 0.0 {
        return None;
    }
    let rel = |v: f64| v * s.span_x / s.mean_y;
    let ci = (rel(s.ci.0), rel(s.ci.1));
    let floor = noise.max(0.0);
    Some(Drift {
        change: rel(s.slope),
        ci,
        beyond_floor: ci.0 > floor || ci.1 < -floor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exact line, y = 2 + 3x, has no residual: the interval is the
    /// point.
    #[test]
    fn an_exact_line_has_its_slope_and_a_zero_width_interval() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y: Vec<f64> = x.iter().map(|v| 2.0 + 3.0 * v).collect();
        let s = slope(&x, &y, 0.95).unwrap();
        assert!((s.slope - 3.0).abs() < 1e-12);
        assert!((s.ci.1 - s.ci.0).abs() < 1e-9);
        assert_eq!(s.span_x, 4.0);
    }

    /// A textbook value: x = 1..5, y = (1, 3, 2, 5, 4): b = 0.8,
    /// SSE = 3.6, s² = 1.2, Sxx = 10, se = 0.3464, t(3, 0.975) = 3.1824,
    /// so the 95% CI is 0.8 ± 1.1024.
    #[test]
    fn the_interval_follows_the_residuals() {
        let s = slope(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1.0, 3.0, 2.0, 5.0, 4.0], 0.95).unwrap();
        assert!((s.slope - 0.8).abs() < 1e-12);
        assert!((s.ci.0 - (0.8 - 1.1024)).abs() < 1e-3, "{:?}", s.ci);
        assert!((s.ci.1 - (0.8 + 1.1024)).abs() < 1e-3, "{:?}", s.ci);
    }

    #[test]
    fn a_drift_is_claimed_only_beyond_the_floor() {
        let x: Vec<f64> = (0..10).map(f64::from).collect();
        // A steady 10% fall over the span, with a little noise.
        let noisy: Vec<f64> = (x.iter().enumerate())
            .map(|(i, v)| 1000.0 - 100.0 * v / 9.0 + if i % 2 == 0 { 3.0 } else { -3.0 })
            .collect();
        let d = drift(&x, &noisy, 0.95, 0.02).unwrap();
        assert!(
            d.beyond_floor && d.change < -0.09 && d.change > -0.11,
            "{d:?}"
        );
        // A 1% fall is inside a 2% floor, however tight its interval.
        let small: Vec<f64> = x.iter().map(|v| 1000.0 - 10.0 * v / 9.0).collect();
        assert!(!drift(&x, &small, 0.95, 0.02).unwrap().beyond_floor);
        // Flat but noisy: no claim.
        let flat: Vec<f64> = (0..10)
            .map(|i| if i % 3 == 0 { 1040.0 } else { 980.0 })
            .collect();
        assert!(!drift(&x, &flat, 0.95, 0.02).unwrap().beyond_floor);
        assert_eq!(drift(&[1.0, 2.0], &[1.0, 2.0], 0.95, 0.02), None);
        assert_eq!(slope(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0], 0.95), None);
    }
}
