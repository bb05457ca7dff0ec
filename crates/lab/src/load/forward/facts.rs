//! What a forwarding trial records ([`ForwardReport`], stored under
//! `forward`) and the judgements only it makes: the search checked every
//! step's sent rate against its offered one (client-bound or not), and a
//! sweep over frame sizes is drawn against the link's line rate (seed
//! 001's frames/s against frame size).

use super::frame::FrameSize;
use super::ForwardReport;
use crate::load::facts::{ChartInputs, ChartMark, KindRule, RateNote, StoredFacts, TrialFacts};

impl StoredFacts for ForwardReport {
    const KEY: &'static str = "forward";
}

impl TrialFacts for ForwardReport {
    /// Decided by the search, never by the generator's CPU.
    fn client_bound(&self) -> KindRule {
        KindRule::Decided(self.client_bound.then(|| {
            "the packet generator could not offer more than the router forwarded".to_string()
        }))
    }

    /// The line rate in frames/s at each frame size, when x is the frame
    /// size and the server recorded the link speed it stands for.
    fn chart_marks(&self, chart: &ChartInputs) -> Vec<ChartMark> {
        let Some(gbit) = chart
            .server_figure(crate::model::topology::LINK_GBIT)
            .filter(|_| chart.axis.ends_with("frame_size"))
        else {
            return Vec::new();
        };
        let points = chart
            .xs
            .iter()
            .filter(|x| **x >= 1.0 && **x <= f64::from(u32::MAX))
            .map(|x| (*x, FrameSize(*x as u32).line_rate(gbit)))
            .collect();
        vec![ChartMark::Curve {
            points,
            label: format!("{} Gbit/s line rate", (chart.number)(gbit)),
            caption: "the line rate of the link the run names (veth itself has no speed)".into(),
        }]
    }

    /// Whether the rate is one direction or both summed.
    fn rate_note(&self) -> Option<RateNote> {
        Some(match self.bidirectional {
            true => RateNote {
                axis: "both directions summed".into(),
                caption: " Frames/s is the sum of both directions (A→B and B→A at once, the \
                          rate split evenly): each direction carried half."
                    .into(),
            },
            false => RateNote {
                axis: "one direction (A→B)".into(),
                caption: " Frames/s is one direction, A→B.".into(),
            },
        })
    }
}

/// Extras of a 64-byte search (`bidirectional` or one way), for the
/// shared layers' tests.
#[cfg(any(test, feature = "test-support"))]
pub fn test_extras(bidirectional: bool) -> crate::load::facts::TrialExtras {
    crate::load::facts::TrialExtras::new(ForwardReport {
        bidirectional,
        ..sample_report(false)
    })
}

/// A 64-byte bidirectional search's report, for tests.
#[cfg(any(test, feature = "test-support"))]
fn sample_report(client_bound: bool) -> ForwardReport {
    ForwardReport {
        frame_size: 64,
        bidirectional: true,
        loss: 0.0,
        pps: 1000.0,
        gbit_s: 0.0005,
        client_bound,
        generator: Default::default(),
        search: crate::load::forward::search::Outcome {
            steps: Vec::new(),
            best: None,
            client_bound,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::facts::TrialExtras;
    use crate::server::ServerFigure;

    #[test]
    fn the_search_decides_client_bound_and_the_line_rate_follows_frame_size() {
        let bound = TrialExtras::new(sample_report(true));
        let KindRule::Decided(Some(why)) = bound.client_bound() else {
            panic!("a client-bound search decides");
        };
        assert!(why.contains("could not offer more"), "{why}");
        let free = TrialExtras::new(sample_report(false));
        assert_eq!(free.client_bound(), KindRule::Decided(None));
        let note = free.rate_note().unwrap();
        assert_eq!(note.axis, "both directions summed");
        assert!(note.caption.contains("sum of both directions"));
        assert!(!free.rises_by_design());
        let xs = [64.0, 1518.0];
        let mut chart = ChartInputs {
            axis: "load.frame_size",
            xs: &xs,
            server_figures: &[ServerFigure {
                name: crate::model::topology::LINK_GBIT,
                value: 10.0,
            }],
            number: |v| format!("{v}"),
        };
        let ChartMark::Curve { points, label, .. } = &free.chart_marks(&chart)[0] else {
            panic!("a line-rate curve");
        };
        assert_eq!(label, "10 Gbit/s line rate");
        assert!((points[0].1 - 14_880_952.4).abs() < 1.0);
        chart.axis = "connections";
        assert!(free.chart_marks(&chart).is_empty());
        chart.axis = "load.frame_size";
        chart.server_figures = &[];
        assert!(free.chart_marks(&chart).is_empty());
        let (key, _) = free.stored().unwrap();
        assert_eq!(key, "forward");
    }
}
