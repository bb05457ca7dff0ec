//! Progress on a terminal (a bar with an ETA, the point and the trial out
//! of the stopping rule's budget) and one line per trial plus one per
//! warning, which is also what a CI log shows when there is no terminal.

use indicatif::{ProgressBar, ProgressStyle};
use std::cell::RefCell;

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
                    "{bar:30.cyan/blue} {pos}/{len} trials  elapsed {elapsed}  ETA {eta}  {msg}",
                )
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
