//! Progress on a terminal (a bar with an ETA) and one line per trial, which
//! is also what a CI log shows when there is no terminal.

use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress {
    /// `None` when no terminal is attached: lines go straight to stderr.
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(expected_trials: u64, visible: bool) -> Self {
        let bar = visible.then(|| {
            let bar = ProgressBar::new(expected_trials);
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:30.cyan/blue} {pos}/{len} trials  elapsed {elapsed}  ETA {eta}  {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        Progress { bar }
    }

    /// A new trial starts; `what` says which.
    pub fn starting(&self, what: &str) {
        if let Some(b) = &self.bar {
            b.set_message(what.to_string());
        }
    }

    /// A trial finished: print its line (above the bar on a terminal).
    pub fn finished(&self, line: &str) {
        match &self.bar {
            Some(b) => {
                b.println(line);
                b.inc(1);
            }
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
