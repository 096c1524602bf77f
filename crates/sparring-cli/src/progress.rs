//! Progress on stderr: a bar on a terminal, plain lines otherwise.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sparring::Progress;
use std::io::IsTerminal as _;

/// When to print a plain progress line: at most one per `every` seconds,
/// the first after `every` seconds (a short run prints none).
pub(crate) struct PlainProgress {
    every: f64,
    last: f64,
}

impl PlainProgress {
    pub(crate) fn new(every: f64) -> Self {
        Self { every, last: 0.0 }
    }

    /// Whether a line is due `secs` seconds into the run; if so, the next
    /// one is due `every` seconds later.
    pub(crate) fn due(&mut self, secs: f64) -> bool {
        if secs - self.last >= self.every {
            self.last = secs;
            true
        } else {
            false
        }
    }
}

/// One plain progress line, for when stderr is not a terminal.
pub(crate) fn progress_line(p: &Progress, secs: f64) -> String {
    let rate = if secs > 0.0 {
        p.done as f64 / secs
    } else {
        0.0
    };
    let eta = if rate > 0.0 && p.total > p.done {
        format!("{:.0} s", (p.total - p.done) as f64 / rate)
    } else {
        "-".to_owned()
    };
    format!(
        "progress: {}/{} rows, {rate:.1} rows/s, {} failed, {} agent errors, eta {eta}",
        p.done, p.total, p.failed, p.errors
    )
}

pub(crate) fn progress_bar(quiet: bool) -> ProgressBar {
    let visible =
        !quiet && std::io::stderr().is_terminal() && std::env::var_os("NO_PROGRESS").is_none();
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    let style =
        ProgressStyle::with_template("{bar:30} {pos}/{len} rows  {per_sec}  eta {eta}  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

#[cfg(test)]
mod tests {
    use super::{PlainProgress, progress_line};
    use sparring::Progress;

    #[test]
    fn plain_lines_come_every_ten_seconds() {
        let mut lines = PlainProgress::new(10.0);
        let printed: Vec<f64> = [0.5, 3.0, 9.9, 10.0, 12.0, 19.9, 20.5, 21.0, 45.0, 46.0]
            .into_iter()
            .filter(|&t| lines.due(t))
            .collect();
        assert_eq!(printed, vec![10.0, 20.5, 45.0]);
    }

    #[test]
    fn a_plain_line_names_rate_failures_and_eta() {
        let p = Progress {
            done: 50,
            total: 200,
            failed: 3,
            errors: 1,
        };
        assert_eq!(
            progress_line(&p, 10.0),
            "progress: 50/200 rows, 5.0 rows/s, 3 failed, 1 agent errors, eta 30 s"
        );
        let finished = Progress { done: 200, ..p };
        assert!(progress_line(&finished, 40.0).ends_with("eta -"));
    }
}
