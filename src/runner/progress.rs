//! Progress on a terminal (a bar with an ETA, the point and the trial out
//! of the stopping rule's budget) and one line per trial plus one per
//! warning, which is also what a CI log shows when there is no terminal.

use indicatif::{HumanDuration, ProgressBar, ProgressState, ProgressStyle};
use std::cell::RefCell;
use std::time::Duration;

pub struct Progress {
    /// `None` when no terminal is attached: plain lines go straight to
    /// stderr, with no escape codes.
    bar: Option<ProgressBar>,
    /// `point 2/6`, shown with the trial on the bar.
    point: RefCell<String>,
}

impl Progress {
    pub fn new(expected_trials: u64, visible: bool) -> Self {
        let bar = visible.then(|| {
            let bar = ProgressBar::new(expected_trials);
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:30.cyan/blue} {pos}/{len} trials  elapsed {elapsed}  ETA {eta_known}  {msg}",
                )
                .map(|s| {
                    s.with_key("eta_known", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = w.write_str(&eta_text(s.pos(), s.eta()));
                    })
                })
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        Progress {
            bar,
            point: RefCell::new(String::new()),
        }
    }

    /// Point `n` of `of` starts.
    pub fn point(&self, n: usize, of: usize) {
        *self.point.borrow_mut() = format!("point {n}/{of}");
    }

    /// A new trial starts; `what` says which.
    pub fn starting(&self, what: &str) {
        if let Some(b) = &self.bar {
            b.set_message(format!("[{}] {what}", self.point.borrow()));
        }
    }

    /// A warning about the trial that just finished (client-bound, errors):
    /// one line, at once, with a `!` so a log can be searched for it.
    pub fn warn(&self, line: &str) {
        self.finished_line(&format!("  ! {line}"));
    }

    /// A trial finished: print its line (above the bar on a terminal).
    pub fn finished(&self, line: &str) {
        self.finished_line(line);
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }

    fn finished_line(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// The stopping rule added trials beyond the first estimate.
    pub fn grow(&self, by: u64) {
        if let Some(b) = &self.bar {
            b.inc_length(by);
        }
    }

    pub fn done(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// The bar's ETA: unknown (`-`) until a trial has finished, since the rate
/// it is extrapolated from is not measured yet (it read `ETA 0s` on the
/// first frame); then indicatif's.
fn eta_text(finished: u64, eta: Duration) -> String {
    if finished == 0 {
        "-".into()
    } else {
        HumanDuration(eta).to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_eta_is_unknown_until_a_trial_has_finished() {
        use std::time::Duration;
        assert_eq!(super::eta_text(0, Duration::ZERO), "-");
        assert_eq!(super::eta_text(1, Duration::from_secs(90)), "2 minutes");
    }
}
