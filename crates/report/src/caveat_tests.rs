//! The curve caveat (`judging::caveat`) as every renderer shows it: the
//! chart's mark, the terminal's fit line and the export.

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
    let charts = crate::charts::charts(&agg);
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
    let text = crate::terminal::render(&data, false);
    assert!(
        text.contains("(caveat: every point past the peak"),
        "{text}"
    );
    let json = crate::json::export(&data);
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
        verdicts.contains("the peak is at a point limited by the load generator (client-bound)"),
        "{verdicts}"
    );
}
