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

#[cfg(test)]
mod tests {
    use crate::judging::test_support::run_data;
    use crate::record::probe::limiter::{Limiter, LimiterKind, LimiterNumbers};

    /// The fixture's one curve (peak at 100, collapse to 4000) with the
    /// trials at `outside` points limited by `kind`, the others by the CPU.
    fn with_limiters(outside: &[u32], kind: LimiterKind) -> crate::store::RunData {
        let mut data = run_data(&["linux"]);
        for t in &mut data.trials {
            let k = if outside.contains(&t.point.index) {
                kind
            } else {
                LimiterKind::ServerCpu
            };
            t.context.limiter = Some(Limiter {
                kind: k,
                verdict: k.label().into(),
                crossed: vec![k],
                figures: LimiterNumbers::default(),
            });
        }
        data
    }

    #[test]
    fn a_collapse_on_background_limited_points_says_so_on_its_mark_its_fit_and_the_export() {
        let data = with_limiters(&[0, 3, 4], LimiterKind::BackgroundLoad);
        let mut agg = crate::judging::rows::collect(&data);
        crate::judging::analyse::analyse(&mut agg);
        // Five levels are too few for a fit: one stands in, as a sixth would give.
        agg.fits[0].usl = Some(Ok(crate::judging::test_support::usl(0.02, 0.00002, 9000.0)));
        let verdicts = crate::judging::fits::curve_verdicts(&agg).join("\n");
        assert!(verdicts.contains("collapse (-68"), "{verdicts}");
        assert!(
            verdicts.contains("(caveat: every point past the peak was limited by background load (other processes) (1000, 4000): not the server's decline)"),
            "{verdicts}"
        );
        assert!(
            verdicts.contains("(caveat: 9 of 15 trials were limited by background load (other processes): the fit describes them, not the server)"),
            "{verdicts}"
        );
        let charts = crate::report::charts::charts(&agg);
        let svg = &charts[0].svg.0;
        assert!(
            // -68.4%: the median at 4000 is of its 2 trials that were not
            // client-bound, as its verdict's is.
            svg.contains("collapse -68.4% (client/background-limited)"),
            "{svg}"
        );
        assert!(
            svg.contains("(on client/background-limited trials)"),
            "{svg}"
        );
        let text = crate::report::terminal::render(&data, false);
        assert!(
            text.contains("(caveat: every point past the peak"),
            "{text}"
        );
        let json = crate::report::json::export(&data);
        let caveat = &json["fits"][0]["caveat"];
        assert!(
            caveat["past_peak"].as_str().unwrap().contains("1000, 4000"),
            "{caveat}"
        );
        assert!(
            caveat["fit"].as_str().unwrap().starts_with("9 of 15"),
            "{caveat}"
        );
    }

    #[test]
    fn a_collapse_the_server_itself_limited_carries_no_caveat() {
        // One point past the peak is the server's: the decline is its own.
        let data = with_limiters(&[4], LimiterKind::ClientBound);
        let mut agg = crate::judging::rows::collect(&data);
        crate::judging::analyse::analyse(&mut agg);
        let verdicts = crate::judging::fits::curve_verdicts(&agg).join("\n");
        assert!(verdicts.contains("collapse"), "{verdicts}");
        assert!(!verdicts.contains("caveat"), "{verdicts}");
        // The peak itself client-bound: said on the peak.
        let data = with_limiters(&[2], LimiterKind::ClientBound);
        let mut agg = crate::judging::rows::collect(&data);
        crate::judging::analyse::analyse(&mut agg);
        let verdicts = crate::judging::fits::curve_verdicts(&agg).join("\n");
        assert!(
            verdicts
                .contains("the peak is at a point limited by the load generator (client-bound)"),
            "{verdicts}"
        );
    }
}
