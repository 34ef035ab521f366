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

use std::path::Path;
use std::sync::OnceLock;

use crate::error::{CheckerError, io_err};
use crate::hash::FastMap;

/// The log's file name at the project root.
pub use kiln_core::project::REDIRECT_FILE;

/// The moves recorded in a project, oldest first.
///
/// Opening a project reads the log's text and lists the lines it ignores; the moves
/// are replayed on first use. The log grows with the project's history (one line per
/// file ever moved: 22,000 lines after one folder move at 100,000 files), and most
/// commands never ask where an old path went: a warm `kiln check` prints the
/// findings stored in the cache.
#[derive(Debug, Clone, Default)]
pub struct Redirects {
    text: String,
    /// Lines that look like moves but name paths that cannot be in the project
    /// (`../x`, `/etc/x`): ignored, and reported, 1-based line and text; the
    /// first [`REJECTED_LISTED`] only.
    rejected: Vec<(u32, String)>,
    /// How many more such lines there are.
    rejected_unlisted: usize,
    /// Whether any line is a move that is followed.
    has_moves: bool,
    replay: OnceLock<Replay>,
}

/// How many of the lines naming paths outside the project are listed one by one
/// (each is a finding of `kiln check`); the rest are counted. A log of a million
/// such lines is a crafted one, and listing each took ten times its size.
pub const REJECTED_LISTED: usize = 1000;

/// The log replayed: what [`Redirects`] builds when first asked. Every path is a
/// [`Name`], a span of the log's text, so that a log of a million moves costs its
/// text and a few words per move (a `String` per path, kept in five places, made a
/// 115 MB log take 1.96 GB).
#[derive(Debug, Clone, Default)]
struct Replay {
    names: Names,
    /// Where each old path ended up, replaying every move (paths moved back to where
    /// they were are left out).
    destination: FastMap<Name, Name>,
    /// Old paths of `destination` with their path without extension: by that
    /// path, then by the old path's text.
    by_base: Vec<(Name, Name)>,
}

/// A path of the log: an index into its [`Names`].
type Name = u32;

/// The distinct paths of the log, each a span of its text (offset and length), and
/// a table to find one by its text.
#[derive(Debug, Clone, Default)]
struct Names {
    spans: Vec<(u32, u32)>,
    table: hashbrown::HashTable<Name>,
    hasher: foldhash::fast::FixedState,
}

impl Names {
    fn hash(&self, path: &str) -> u64 {
        std::hash::BuildHasher::hash_one(&self.hasher, path)
    }

    /// The text of `name` in the log's `text`.
    fn text<'t>(&self, text: &'t str, name: Name) -> &'t str {
        let (start, len) = self.spans[name as usize];
        &text[start as usize..(start + len) as usize]
    }

    /// The name of the path `path`, if the log has it.
    fn get(&self, text: &str, path: &str) -> Option<Name> {
        (self.table)
            .find(self.hash(path), |&n| self.text(text, n) == path)
            .copied()
    }

    /// The name of `path`, a slice of the log's `text`, made if it is new.
    fn intern(&mut self, text: &str, path: &str) -> Name {
        let hash = self.hash(path);
        let spans = &self.spans;
        let found = (self.table).find(hash, |&n| {
            let (start, len) = spans[n as usize];
            &text[start as usize..(start + len) as usize] == path
        });
        if let Some(&name) = found {
            return name;
        }
        // A log is at most 256 MB (see `Redirects::load`): offsets fit in 32 bits.
        let start = path.as_ptr() as usize - text.as_ptr() as usize;
        let name = self.spans.len() as Name;
        self.spans.push((start as u32, path.len() as u32));
        let (spans, hasher) = (&self.spans, &self.hasher);
        self.table.insert_unique(hash, name, |&n| {
            let (start, len) = spans[n as usize];
            std::hash::BuildHasher::hash_one(hasher, &text[start as usize..(start + len) as usize])
        });
        name
    }
}

/// Two logs are the same when their texts are.
impl PartialEq for Redirects {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Redirects {}

/// Each line of the log that is a move: its 0-based line number, and either the
/// two paths (a move that is followed) or the line's text (one that names a path
/// that cannot be in the project). Lines that are not `old -> new` (after removing
/// `#` comments) are skipped.
fn lines(text: &str) -> impl Iterator<Item = (usize, Result<(&str, &str), &str>)> {
    text.lines().enumerate().filter_map(|(n, line)| {
        let line = line.split('#').next().unwrap_or("").trim();
        let (old, new) = line.split_once("->")?;
        let (old, new) = (old.trim(), new.trim());
        if old.is_empty() || new.is_empty() {
            return None;
        }
        // The log is a file anyone can edit or merge: only moves between paths
        // inside the project are followed.
        if crate::fs::is_plain_relative(old) && crate::fs::is_plain_relative(new) {
            Some((n, Ok((old, new))))
        } else {
            Some((n, Err(line)))
        }
    })
}

impl Redirects {
    /// Reads the log of the project at `root`; no file means no moves. Lines that are
    /// not `old -> new` (after removing `#` comments) are ignored.
    pub fn load(root: &Path) -> Result<Self, CheckerError> {
        let file = root.join(REDIRECT_FILE);
        let bytes = match kiln_core::fs::read_below(root, Path::new(REDIRECT_FILE), 256 << 20) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(io_err(&file)(e)),
        };
        let text = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Ok(Self::of_text(text))
    }

    /// Parses the log's text.
    pub fn parse(text: &str) -> Self {
        Self::of_text(text.to_owned())
    }

    fn of_text(text: String) -> Self {
        let mut rejected = Vec::new();
        let mut rejected_unlisted = 0;
        let mut has_moves = false;
        for (n, line) in lines(&text) {
            match line {
                Ok(_) => has_moves = true,
                Err(_) if rejected.len() == REJECTED_LISTED => rejected_unlisted += 1,
                Err(line) => rejected.push((n as u32 + 1, line.to_owned())),
            }
        }
        Redirects {
            text,
            rejected,
            rejected_unlisted,
            has_moves,
            replay: OnceLock::new(),
        }
    }

    /// Lines naming paths that cannot be in the project, ignored (line, text): the
    /// first [`REJECTED_LISTED`].
    pub fn rejected(&self) -> &[(u32, String)] {
        &self.rejected
    }

    /// How many more lines name paths that cannot be in the project than
    /// [`Redirects::rejected`] lists.
    pub fn rejected_unlisted(&self) -> usize {
        self.rejected_unlisted
    }

    /// Whether the log records any move it follows (without replaying it).
    pub fn has_moves(&self) -> bool {
        self.has_moves
    }

    fn replay(&self) -> &Replay {
        self.replay.get_or_init(|| Replay::of(&self.text))
    }

    #[cfg(test)]
    fn from_moves(moves: Vec<(String, String)>) -> Self {
        Self::parse(&Self::appended(Some(""), &moves))
    }

    /// Where the file once at `old` is now, replaying the moves in order; `None` if the
    /// log never moved it (or moved it back).
    pub fn follow(&self, old: &str) -> Option<String> {
        let replay = self.replay();
        let old = replay.names.get(&self.text, old)?;
        let new = replay.destination.get(&old)?;
        Some(replay.names.text(&self.text, *new).to_owned())
    }

    /// The old paths of the log whose path without extension is `base`, sorted.
    pub fn olds_with_base(&self, base: &str) -> Vec<&str> {
        let replay = self.replay();
        let Some(base) = replay.names.get(&self.text, base) else {
            return Vec::new();
        };
        let from = replay.by_base.partition_point(|&(b, _)| b < base);
        (replay.by_base[from..].iter())
            .take_while(|&&(b, _)| b == base)
            .map(|&(_, old)| replay.names.text(&self.text, old))
            .collect()
    }

    /// Every text [`Redirects::follow`] or [`Redirects::olds_with_base`] answers for:
    /// the old paths the log still moves, and those paths without extension. A
    /// string that is none of them cannot be a stale path.
    pub(crate) fn followed_texts(&self) -> crate::hash::FastSet<&str> {
        let replay = self.replay();
        (replay.destination.keys().copied())
            .chain(replay.by_base.iter().map(|&(base, _)| base))
            .map(|name| replay.names.text(&self.text, name))
            .collect()
    }

    /// Every recorded move that is followed, oldest first.
    pub fn moves(&self) -> impl Iterator<Item = (&str, &str)> {
        lines(&self.text).filter_map(|(_, line)| line.ok())
    }

    /// The first line of a log Kiln creates.
    pub const HEADER: &str =
        "# Kiln redirect log: every move, oldest first (old -> new). Commit it with the move.\n";

    /// The log's text (`None` when there is no log yet) with `moves` appended.
    pub fn appended(text: Option<&str>, moves: &[(String, String)]) -> String {
        let mut text = text.map_or_else(|| Self::HEADER.to_owned(), str::to_owned);
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        for (old, new) in moves {
            text.push_str(&format!("{old} -> {new}\n"));
        }
        text
    }

    /// The log's text with `moves` (the lines a move appended) taken off its end, if
    /// the log ends with exactly those lines; `None` otherwise. Undoing a move uses it
    /// so that move-then-undo leaves the log as it was, byte for byte.
    pub fn without_last(text: &str, moves: &[(String, String)]) -> Option<String> {
        let mut rest = text;
        for (old, new) in moves.iter().rev() {
            let line = format!("{old} -> {new}\n");
            rest = rest.strip_suffix(line.as_str())?;
        }
        Some(rest.to_owned())
    }
}

impl Replay {
    fn of(text: &str) -> Self {
        // Replay once, in order: every path's current place is where its last move
        // took it, and a path that is moved on carries everything that led to it.
        // What arrived at one path together moves together: a group, moved by
        // changing its place, and merged smaller into larger when it arrives where
        // another is, so that a chain of n moves costs n log n, not the n^2 of
        // moving each path of the chain at each step (8,000 steps took 2.9 s).
        struct Group {
            origins: Vec<Name>,
            at: Name,
        }
        // Sized once for the log's lines (a move per line at most, each with two
        // paths and a path without extension): growing the tables of a million
        // moves step by step was a fifth of the replay.
        let lines_at_most = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1;
        let mut names = Names {
            spans: Vec::with_capacity(3 * lines_at_most),
            table: hashbrown::HashTable::with_capacity(3 * lines_at_most),
            ..Names::default()
        };
        let mut groups: Vec<Group> = Vec::new();
        // The group now at a path, and the group each origin belongs to.
        let mut at_path: FastMap<Name, usize> = FastMap::default();
        let mut group_of: FastMap<Name, usize> = FastMap::default();
        at_path.reserve(lines_at_most);
        group_of.reserve(lines_at_most);
        for (_, line) in lines(text) {
            let Ok((from, to)) = line else { continue };
            let (from, to) = (names.intern(text, from), names.intern(text, to));
            let g = match at_path.remove(&from) {
                Some(g) => g,
                None => {
                    groups.push(Group {
                        origins: Vec::new(),
                        at: from,
                    });
                    groups.len() - 1
                }
            };
            // `from` itself is among what moves only if it is still where it began
            // (never moved, or moved back), which puts it in the group here.
            if let std::collections::hash_map::Entry::Vacant(e) = group_of.entry(from) {
                e.insert(g);
                groups[g].origins.push(from);
            }
            groups[g].at = to;
            match at_path.get(&to).copied() {
                Some(h) if h != g => {
                    let (big, small) = if groups[h].origins.len() >= groups[g].origins.len() {
                        (h, g)
                    } else {
                        (g, h)
                    };
                    let moving = std::mem::take(&mut groups[small].origins);
                    for &origin in &moving {
                        group_of.insert(origin, big);
                    }
                    groups[big].origins.extend(moving);
                    at_path.insert(to, big);
                }
                _ => {
                    at_path.insert(to, g);
                }
            }
        }
        drop(at_path);
        let mut destination: FastMap<Name, Name> = FastMap::default();
        destination.reserve(group_of.len());
        for (origin, g) in group_of {
            let at = groups[g].at;
            if at != origin {
                destination.insert(origin, at);
            }
        }
        drop(groups);
        let mut by_base: Vec<(Name, Name)> = Vec::new();
        for &old in destination.keys() {
            let path = names.text(text, old);
            if let Some((base, _)) = crate::fs::split_extension(path) {
                by_base.push((names.intern(text, base), old));
            }
        }
        by_base.sort_unstable_by(|a, b| {
            (a.0.cmp(&b.0)).then_with(|| names.text(text, a.1).cmp(names.text(text, b.1)))
        });
        destination.shrink_to_fit();
        Replay {
            names,
            destination,
            by_base,
        }
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
        assert_eq!(r.follow("y.png").as_deref(), Some("x.png"));
        assert_eq!(r.olds_with_base("a"), ["a.png"]);
        assert!(r.olds_with_base("c").is_empty(), "c.png was never moved");
    }

    #[test]
    fn follow_agrees_with_replaying_the_log() {
        let names = ["a.png", "b.png", "c.png", "d.png"];
        // Every log of up to four moves among four names.
        for code in 0..(16u32.pow(4)) {
            let moves: Vec<(String, String)> = (0..4)
                .map(|k| {
                    let m = (code >> (4 * k)) & 15;
                    (
                        names[(m / 4) as usize].to_owned(),
                        names[(m % 4) as usize].to_owned(),
                    )
                })
                .collect();
            let r = Redirects::from_moves(moves.clone());
            for name in names {
                let mut current = name;
                for (from, to) in &moves {
                    if current == from {
                        current = to;
                    }
                }
                let expected = (current != name).then(|| current.to_owned());
                assert_eq!(r.follow(name), expected, "{name} in {moves:?}");
            }
        }
    }

    /// A file renamed 20,000 times over, one step after another: replayed in
    /// linear time (the replay that moved every earlier name at each step took
    /// 2.9 s at 8,000 steps).
    #[test]
    fn a_long_chain_of_moves_replays_quickly() {
        let steps = 20_000;
        let moves: Vec<(String, String)> = (0..steps)
            .map(|k| (format!("a{k}.png"), format!("a{}.png", k + 1)))
            .collect();
        let started = std::time::Instant::now();
        let r = Redirects::from_moves(moves);
        let last = format!("a{steps}.png");
        assert_eq!(r.follow("a0.png").as_deref(), Some(last.as_str()));
        assert_eq!(r.follow("a7777.png").as_deref(), Some(last.as_str()));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn moves_naming_paths_outside_the_project_are_ignored_and_listed() {
        let r = Redirects::parse("a.png -> ../../etc/passwd\n/abs.png -> b.png\nc.png -> d.png\n");
        assert_eq!(r.moves().collect::<Vec<_>>(), [("c.png", "d.png")]);
        assert_eq!(
            r.rejected(),
            [
                (1, "a.png -> ../../etc/passwd".to_owned()),
                (2, "/abs.png -> b.png".to_owned())
            ]
        );
        assert_eq!(r.follow("a.png"), None);
    }

    /// A crafted log of a million lines naming paths outside: the first thousand
    /// are listed, the rest counted (each listed one is a finding).
    #[test]
    fn lines_naming_paths_outside_are_listed_up_to_a_bound() {
        let text: String = (0..REJECTED_LISTED + 5)
            .map(|k| format!("../x{k}.png -> y{k}.png\n"))
            .collect();
        let r = Redirects::parse(&text);
        assert_eq!(r.rejected().len(), REJECTED_LISTED);
        assert_eq!(r.rejected_unlisted(), 5);
        assert_eq!(r.rejected()[0], (1, "../x0.png -> y0.png".to_owned()));
    }

    #[test]
    fn undone_moves_come_off_the_end_of_the_log() {
        let moves = vec![("a.png".to_owned(), "b.png".to_owned())];
        let text = "# log\nx.png -> y.png\na.png -> b.png\n";
        assert_eq!(
            Redirects::without_last(text, &moves).as_deref(),
            Some("# log\nx.png -> y.png\n")
        );
        assert_eq!(Redirects::without_last("a.png -> c.png\n", &moves), None);
    }
}
