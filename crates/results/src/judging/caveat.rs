//! The curve's story listens to the limiter: a peak, a decline or a
//! collapse measured at points that the load generator or other processes
//! limited describes them, not the server, and a USL fit over mostly such
//! trials fits them. Each says so where it is told: the terminal's fit and
//! verdict lines, the report's marks and tables, and the export.

use super::limiter::PointLimiter;
use crate::analysis::shape::{CurveShape, PastPeak};
use crate::record::probe::limiter::LimiterKind;

/// A fit whose curve has at least this share of its judged trials limited
/// by the load generator or background load says so.
pub const FIT_OUTSIDE_SHARE: f64 = 0.5;

/// What a curve's shape and fit rest on, when it is not the server.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct CurveCaveat {
    /// On the peak: `the peak is at a client-bound point`.
    pub peak: Option<String>,
    /// On the decline or collapse: every point past the peak was limited by the load
    /// generator or by other processes, e.g. `every point past the peak was limited by
    /// background load (64, 256)`.
    pub past_peak: Option<String>,
    /// On the fit: `52 of 72 trials were limited by the load generator or background load`.
    pub fit: Option<String>,
}

/// Whether a limiter is outside the server: the load generator, or other
/// processes.
fn outside(kind: LimiterKind) -> bool {
    matches!(kind, LimiterKind::ClientBound | LimiterKind::BackgroundLoad)
}

/// The words for a set of outside limiters.
fn who(kinds: &[LimiterKind]) -> &'static str {
    let client = kinds.contains(&LimiterKind::ClientBound);
    let background = kinds.contains(&LimiterKind::BackgroundLoad);
    match (client, background) {
        (true, true) => "the load generator or background load",
        (true, false) => "the load generator (client-bound)",
        _ => "background load (other processes)",
    }
}

/// The caveats of one curve from its points' limiters (x, any order) and
/// its shape.
pub fn of_curve(points: &[(f64, &PointLimiter)], shape: Option<&CurveShape>) -> CurveCaveat {
    let mut at: Vec<(f64, LimiterKind)> = points.iter().map(|(x, l)| (*x, l.kind)).collect();
    at.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut caveat = CurveCaveat {
        fit: fit_caveat(points),
        ..CurveCaveat::default()
    };
    let Some(shape) = shape else {
        return caveat;
    };
    if let Some((_, k)) = at.iter().find(|(x, _)| *x == shape.peak_n) {
        if outside(*k) {
            caveat.peak = Some(format!("the peak is at a point limited by {}", who(&[*k])));
        }
    }
    let declines = matches!(
        shape.past_peak,
        PastPeak::MildDecline { .. } | PastPeak::Decline { .. } | PastPeak::Collapse { .. }
    );
    let past: Vec<&(f64, LimiterKind)> = at.iter().filter(|(x, _)| *x > shape.peak_n).collect();
    if declines && !past.is_empty() && past.iter().all(|(_, k)| outside(*k)) {
        let kinds: Vec<LimiterKind> = past.iter().map(|(_, k)| *k).collect();
        let xs: Vec<String> = past
            .iter()
            .map(|(x, _)| super::format::axis_value(*x))
            .collect();
        caveat.past_peak = Some(format!(
            "every point past the peak was limited by {} ({}): not the server's decline",
            who(&kinds),
            xs.join(", ")
        ));
    }
    caveat
}

/// `52 of 72 trials were limited by ...` when at least
/// [`FIT_OUTSIDE_SHARE`] of the curve's judged trials were.
fn fit_caveat(points: &[(f64, &PointLimiter)]) -> Option<String> {
    let limiters: Vec<&PointLimiter> = points.iter().map(|(_, l)| *l).collect();
    let judged: usize = limiters.iter().map(|l| l.judged).sum();
    let client: usize = limiters.iter().map(|l| l.client_bound_trials).sum();
    let background: usize = limiters.iter().map(|l| l.background_trials).sum();
    let out = client + background;
    if judged == 0 || (out as f64) < FIT_OUTSIDE_SHARE * judged as f64 {
        return None;
    }
    let mut kinds = Vec::new();
    if client > 0 {
        kinds.push(LimiterKind::ClientBound);
    }
    if background > 0 {
        kinds.push(LimiterKind::BackgroundLoad);
    }
    Some(format!(
        "{out} of {judged} trials were limited by {}: the fit describes them, not the server",
        who(&kinds)
    ))
}

impl CurveCaveat {
    /// `; caveat: ...` after a shape sentence (the peak's and the decline's).
    pub fn after_shape(&self) -> String {
        let parts: Vec<&str> = [&self.peak, &self.past_peak]
            .into_iter()
            .filter_map(|p| p.as_deref())
            .collect();
        if parts.is_empty() {
            return String::new();
        }
        format!(" (caveat: {})", parts.join("; "))
    }

    /// ` (caveat: ...)` after a fit.
    pub fn after_fit(&self) -> String {
        self.fit
            .as_ref()
            .map(|f| format!(" (caveat: {f})"))
            .unwrap_or_default()
    }
}
