//! The redirect log: a plain-text file in the project, `kiln.redirects`, to which every
//! move appends `old -> new` (one line per file). It is committed with the move, so a
//! branch that still uses an old path can be fixed after a merge: `kiln check` reports
//! such references and `kiln check --fix` patches them (the seed's distributed-workflow
//! problem, solved without leaving placeholder files on disk).
//!
//! ```text
//! # kiln.redirects: one move per line, oldest first
//! textures/rose.png -> textures/flowers/rose.png
//! materials/bark.material -> materials/wood/bark.material
//! ```

use std::fs;
use std::path::Path;

use kiln_core::write_atomic;

use crate::error::{CheckerError, io_err};

/// The log's file name at the project root.
pub const REDIRECT_FILE: &str = "kiln.redirects";

/// The moves recorded in a project, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redirects {
    moves: Vec<(String, String)>,
}

impl Redirects {
    /// Reads the log of the project at `root`; no file means no moves. Lines that are
    /// not `old -> new` (after removing `#` comments) are ignored.
    pub fn load(root: &Path) -> Result<Self, CheckerError> {
        let file = root.join(REDIRECT_FILE);
        let text = match fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(io_err(&file)(e)),
        };
        Ok(Self::parse(&text))
    }

    /// Parses the log's text.
    pub fn parse(text: &str) -> Self {
        let moves = text
            .lines()
            .filter_map(|line| {
                let line = line.split('#').next().unwrap_or("").trim();
                let (old, new) = line.split_once("->")?;
                let (old, new) = (old.trim(), new.trim());
                (!old.is_empty() && !new.is_empty()).then(|| (old.to_owned(), new.to_owned()))
            })
            .collect();
        Redirects { moves }
    }

    /// Where the file once at `old` is now, replaying the moves in order; `None` if the
    /// log never moved it (or moved it back).
    pub fn follow(&self, old: &str) -> Option<String> {
        let mut current = old;
        for (from, to) in &self.moves {
            if current == from {
                current = to;
            }
        }
        (current != old).then(|| current.to_owned())
    }

    /// An old path of the log whose path without extension is `base`.
    pub fn old_with_base(&self, base: &str) -> Option<String> {
        self.moves
            .iter()
            .map(|(old, _)| old)
            .find(|old| old.rsplit_once('.').is_some_and(|(b, _)| b == base))
            .cloned()
    }

    /// Every recorded move.
    pub fn moves(&self) -> &[(String, String)] {
        &self.moves
    }

    /// Appends moves to the log of the project at `root` (atomically rewritten).
    pub fn append(root: &Path, moves: &[(String, String)]) -> Result<(), CheckerError> {
        let file = root.join(REDIRECT_FILE);
        let mut text = match fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                "# Kiln redirect log: every move, oldest first (old -> new). Commit it with the move.\n".to_owned()
            }
            Err(e) => return Err(io_err(&file)(e)),
        };
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        for (old, new) in moves {
            text.push_str(&format!("{old} -> {new}\n"));
        }
        write_atomic(&file, text.as_bytes()).map_err(io_err(&file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_replay_in_order() {
        let r = Redirects::parse(
            "# log\na.png -> b.png\nb.png -> c.png # again\nx.png -> y.png\ny.png -> x.png\nnot a move\n",
        );
        assert_eq!(r.follow("a.png").as_deref(), Some("c.png"));
        assert_eq!(r.follow("b.png").as_deref(), Some("c.png"));
        assert_eq!(r.follow("x.png"), None, "moved back");
        assert_eq!(r.old_with_base("a").as_deref(), Some("a.png"));
    }
}
