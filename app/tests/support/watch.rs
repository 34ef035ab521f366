//! A `kiln watch` process for tests: started in a project, its output read line by
//! line, killed when dropped.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// A running `kiln watch`.
pub struct Watch {
    pub child: Child,
    lines: Receiver<String>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Watch {
    /// `kiln watch` in `dir`, once it says it is watching.
    pub fn start(dir: &Path) -> Watch {
        Watch::start_with(dir, &[]).0
    }

    /// `kiln watch ARGS` in `dir`, once it says it is watching, with the lines it
    /// printed until then.
    pub fn start_with(dir: &Path, args: &[&OsStr]) -> (Watch, Vec<String>) {
        let mut child = super::kiln_command()
            .arg("watch")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if tx.send(line.unwrap_or_default()).is_err() {
                    return;
                }
            }
        });
        let mut w = Watch { child, lines };
        // A project whose plugins were never built builds them first.
        let seen = w.until_within(Duration::from_secs(300), |l| l.starts_with("watching"));
        (w, seen)
    }

    /// Lines until one matches (panics after 20 s).
    pub fn until(&mut self, pred: impl Fn(&str) -> bool) -> Vec<String> {
        self.until_within(Duration::from_secs(20), pred)
    }

    /// Lines until one matches (panics after `wait`).
    pub fn until_within(&mut self, wait: Duration, pred: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + wait;
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            if let Ok(line) = self.lines.recv_timeout(Duration::from_millis(100)) {
                let done = pred(&line);
                seen.push(line);
                if done {
                    return seen;
                }
            }
        }
        panic!("no matching line; saw {seen:#?}");
    }

    /// Every line printed until the watcher has been quiet for `quiet`.
    pub fn settle(&mut self, quiet: Duration) -> Vec<String> {
        let mut seen = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(quiet) {
            seen.push(line);
        }
        seen
    }
}
