//! Renames and moves of files and folders, with every reference patched.
//!
//! A move is first a [`MovePlan`]: each file that moves, each reference that changes
//! (file, line, field, old -> new text), and each reference the move touches but
//! leaves alone because it is ambiguous, all shown before anything is touched.
//! [`apply`] then performs it crash-safely:
//!
//! 1. Refuse, changing nothing, if a target exists, a path is not canonical or leaves
//!    the project, or a file to patch changed on disk since it was indexed.
//! 2. Write a journal under `.kiln/journal/` (see `journal.rs`): the original of every
//!    file to be patched and the renames, flushed to disk before any project file
//!    changes.
//! 3. Patch each file through a temporary file and a rename, replacing only the bytes
//!    of the references (every other byte stays identical), then rename the files
//!    and folders and record the moves in the redirect log.
//! 4. Delete the journal. If the process dies before this, the next open rolls
//!    everything back from the journal.
//!
//! The semantics are POSIX `mv`'s, stricter where it would lose data: a file or
//! folder moves to a path that must not exist (never onto a file, never merged into
//! a folder); [`MoveRequest::from_arguments`] turns `mv A B/` or `mv A B` with `B` an
//! existing folder into "move A inside B". A folder moves as one rename, with
//! whatever it holds (hidden files too).
//!
//! [`apply`] returns the [`Operation`] that undoes it: moving back restores every
//! file byte for byte, including the redirect log, and removes the folders the move
//! created.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::Path;
use std::sync::Arc;

use kiln_core::ResourcePath;
use serde::{Deserialize, Serialize};

use crate::Checker;
use crate::error::{CheckerError, io_err};
use crate::findings::{Finding, Place, SharedStrings, replacement_text};
use crate::graph::Target;
use crate::index::{WriteScans, is_excluded, is_within as within, split_extension};
use crate::journal::{self, Journal, crash_point, crashed};
use crate::lookup::keys_naming;
use crate::redirects::{REDIRECT_FILE, Redirects};
use crate::scan::{Naming, RefView};

pub use crate::journal::recover;

/// A requested move: project paths of files (with extension) or folders, each to
/// the exact path it should have (see [`MoveRequest::from_arguments`] for `mv`'s
/// "into a folder").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveRequest {
    /// Pairs of old and new paths, applied together.
    pub pairs: Vec<(String, String)>,
    /// Set on the move that undoes another: what else to put back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undoes: Option<Box<UndoneMove>>,
}

/// What the move being undone did besides moving files, so that undoing it restores
/// the project byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UndoneMove {
    /// The lines it appended to the redirect log (old -> new), removed again when
    /// they are still the log's last lines.
    pub logged: Vec<(String, String)>,
    /// The folders it created, removed again when empty.
    pub created_dirs: Vec<String>,
    /// Whether it created the redirect log, removed again when nothing else is in it.
    #[serde(default)]
    pub created_log: bool,
    /// The text each reference it patched had before (by file after the move and
    /// JSON pointer), so that undoing writes back the same spelling (`props/rock`
    /// and not `props/rock.json`, where both name the file).
    #[serde(default)]
    pub texts: Vec<(String, String, String)>,
    /// References that named nothing before the move and the moved file after it
    /// (a missing reference the move satisfied), by file after the move and JSON
    /// pointer: undoing leaves them as they are.
    #[serde(default)]
    pub adopted: Vec<(String, String)>,
}

impl MoveRequest {
    /// One file or folder to an exact new path.
    pub fn new(old: &str, new: &str) -> Self {
        MoveRequest {
            pairs: vec![(old.to_owned(), new.to_owned())],
            undoes: None,
        }
    }

    /// The moves `mv SOURCE... DEST` asks for, as a user means them: `DEST/` (with
    /// a trailing slash), or `DEST` an existing folder, or several sources move each
    /// source inside `DEST`, keeping its name; otherwise the one source is renamed to
    /// `DEST`. A folder renamed only in case (`Textures` -> `textures`) is a rename.
    pub fn from_arguments(root: &Path, sources: &[String], dest: &str) -> Self {
        // `.` and `./` are the project root.
        let dest = match dest {
            "." | "./" => "/",
            other => other.strip_prefix("./").unwrap_or(other),
        };
        let into_folder = dest.ends_with('/')
            || sources.len() > 1
            || (fs::symlink_metadata(root.join(dest)).is_ok_and(|m| m.is_dir())
                && !sources
                    .iter()
                    .any(|s| s.trim_end_matches('/').to_lowercase() == dest.to_lowercase()));
        let dest = dest.trim_end_matches('/');
        let pairs = sources
            .iter()
            .map(|s| {
                let s = s.trim_end_matches('/');
                let target = if into_folder {
                    let name = s.rsplit('/').next().unwrap_or(s);
                    if dest.is_empty() {
                        name.to_owned()
                    } else {
                        format!("{dest}/{name}")
                    }
                } else {
                    dest.to_owned()
                };
                (s.to_owned(), target)
            })
            .collect();
        MoveRequest {
            pairs,
            undoes: None,
        }
    }
}

/// One reference that a move rewrites.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// Where it is written (the file's path before the move).
    pub place: Place,
    /// Byte range of the text in the file.
    pub span: (u32, u32),
    /// The text now.
    pub old_text: Arc<str>,
    /// The text after the move.
    pub new_text: Arc<str>,
}

/// The edits to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileEdit {
    /// The file (its path before the move).
    pub file: String,
    /// Content hash when indexed; the file must still have it when applying.
    pub expected_hash: u64,
    /// The references to rewrite, in file order.
    pub changes: Vec<Change>,
}

/// Why a reference the move touches is left as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum SkipReason {
    /// Written without extension, it may mean several files, and not all of them
    /// move together: Kiln cannot know which was meant.
    Ambiguous {
        /// The files it may mean now.
        candidates: Vec<String>,
    },
    /// It names one file now; after the move a moved file has the same path without
    /// extension, so it will be ambiguous.
    BecomesAmbiguous {
        /// The files it may mean after the move.
        candidates: Vec<String>,
    },
}

/// A reference a move touches but does not patch, listed in the preview.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Where it is written.
    pub place: Place,
    /// Its text.
    pub text: String,
    /// Why it is not patched.
    #[serde(flatten)]
    pub reason: SkipReason,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.reason {
            SkipReason::Ambiguous { candidates } => write!(
                f,
                "not patched, ambiguous: {}: \"{}\" could be {}",
                self.place,
                self.text,
                candidates.join(" or ")
            ),
            SkipReason::BecomesAmbiguous { candidates } => write!(
                f,
                "not patched, becomes ambiguous: {}: \"{}\" could then be {}",
                self.place,
                self.text,
                candidates.join(" or ")
            ),
        }
    }
}

/// How an operation changes the redirect log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogUpdate {
    /// Nothing to record (a fix moves no file).
    None,
    /// Append these moves.
    Append(Vec<(String, String)>),
    /// Take these lines (appended by the move being undone) off the log's end; if
    /// they are not its last lines any more, append the undoing moves instead.
    RemoveLast {
        /// The lines to remove.
        logged: Vec<(String, String)>,
        /// The moves to append otherwise.
        fallback: Vec<(String, String)>,
        /// Whether the undone move created the log: then a log left with nothing but
        /// its header is removed.
        created: bool,
    },
}

/// Everything a move will do, shown before it is applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MovePlan {
    /// The renames on disk, old -> new: files, or whole folders.
    pub renames: Vec<(String, String)>,
    /// Every file that moves, old -> new (the files inside renamed folders too).
    pub moves: Vec<(String, String)>,
    /// Files whose references are rewritten.
    pub edits: Vec<FileEdit>,
    /// References the move touches but leaves alone, with the reason.
    pub skipped: Vec<Skipped>,
    /// Sources that are already where the request puts them (`mv A A`).
    pub unchanged: Vec<String>,
    /// References that name nothing now and a moved file after the move (file and
    /// JSON pointer): a missing reference the move satisfies.
    pub adopted: Vec<(String, String)>,
    /// What happens to the redirect log.
    pub log: LogUpdate,
    /// Folders to remove afterwards if empty (those the undone move created).
    pub remove_dirs: Vec<String>,
}

impl MovePlan {
    /// A plan that only patches references (a fix): nothing moves.
    pub fn patches(edits: Vec<FileEdit>) -> Self {
        MovePlan {
            renames: Vec::new(),
            moves: Vec::new(),
            edits,
            skipped: Vec::new(),
            unchanged: Vec::new(),
            adopted: Vec::new(),
            log: LogUpdate::None,
            remove_dirs: Vec::new(),
        }
    }

    /// Number of references rewritten.
    pub fn change_count(&self) -> usize {
        self.edits.iter().map(|e| e.changes.len()).sum()
    }

    /// Whether applying it would change nothing.
    pub fn is_empty(&self) -> bool {
        self.renames.is_empty() && self.edits.is_empty()
    }
}

/// An operation on project files that can be planned (again) and applied: what
/// [`apply`] returns to undo what it did, and what an editor's history keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    /// A move, planned anew when applied, so that references written since are
    /// patched too.
    Move(MoveRequest),
    /// Patches only (a fix, or its undoing): applied as planned, refused if a file
    /// changed since.
    Patch(Box<MovePlan>),
}

impl Operation {
    /// The plan that performs the operation now.
    pub fn plan(&self, checker: &Checker) -> Result<MovePlan, CheckerError> {
        match self {
            Operation::Move(request) => plan(checker, request),
            Operation::Patch(plan) => Ok((**plan).clone()),
        }
    }
}

/// Collects changes per file, then orders each file's changes by position.
#[derive(Default)]
struct Edits {
    files: BTreeMap<String, FileEdit>,
    /// The texts, entities and components the changes share: a folder move's
    /// 250,000 changes name its 22,000 files, each from many places.
    strings: SharedStrings,
}

impl Edits {
    /// Adds the change that rewrites `raw`, written in `file`, to `new_text`.
    fn add_change(&mut self, file: &Arc<str>, expected_hash: u64, raw: &RefView, new_text: &str) {
        let change = Change {
            place: Place::shared(file, raw, &mut self.strings),
            span: raw.span,
            old_text: self.strings.get(raw.text),
            new_text: self.strings.get(new_text),
        };
        self.add(file, expected_hash, change);
    }

    fn add(&mut self, file: &str, expected_hash: u64, change: Change) {
        let edit = self
            .files
            .entry(file.to_owned())
            .or_insert_with(|| FileEdit {
                file: file.to_owned(),
                expected_hash,
                changes: Vec::new(),
            });
        // One string may be reached twice (a folder move lists a reference under
        // each file it may mean): patch it once.
        if !edit.changes.iter().any(|c| c.span == change.span) {
            edit.changes.push(change);
        }
    }

    /// Adds the change that rewrites reference `index` of `file` to `new_text`.
    fn add_reference(&mut self, checker: &Checker, file: &str, index: usize, new_text: &str) {
        let Some(entry) = checker.index().file(file) else {
            return;
        };
        entry.with_scan(|scan| {
            if let Some(raw) = scan.get(index) {
                self.add_change(&entry.path, entry.hash, &raw, new_text);
            }
        });
    }

    fn into_edits(self) -> Vec<FileEdit> {
        let mut edits: Vec<FileEdit> = self.files.into_values().collect();
        for e in &mut edits {
            e.changes.sort_by_key(|c| c.span);
            // The room grown while collecting: a third of 250,000 changes' 60 MB.
            e.changes.shrink_to_fit();
        }
        edits
    }
}

fn refused(from: &str, to: &str, reason: impl Into<String>) -> CheckerError {
    CheckerError::MoveRefused {
        from: from.to_owned(),
        to: to.to_owned(),
        reason: reason.into(),
    }
}

/// Where `path` is after `renames` (of files or folders).
fn renamed_path(renames: &[(String, String)], path: &str) -> String {
    renames
        .iter()
        .find(|(old, _)| within(path, old))
        .map_or_else(
            || path.to_owned(),
            |(old, new)| format!("{new}{}", &path[old.len()..]),
        )
}

/// Why `new` cannot be where `old` goes, if it cannot: it must be a plain path inside
/// the project, not where Kiln keeps no resources, free, and every name the move
/// creates (a new folder, a new file name) canonical. Names it keeps (a file moved
/// into a folder, the folders that exist) are left as they are: a move never makes
/// a name worse, and never refuses to carry a non-canonical one along.
fn check_target(
    root: &Path,
    old: &str,
    new: &str,
    is_folder: bool,
    restoring: bool,
) -> Result<(), String> {
    if new.is_empty() {
        return Err("the new path is empty".into());
    }
    let problem = if new.starts_with('/') || new.as_bytes().get(1) == Some(&b':') {
        Some("is absolute (paths start at the project root)")
    } else if new.contains('\\') {
        Some("contains a backslash (use /)")
    } else if new.split('/').any(str::is_empty) {
        Some("has an empty segment (//)")
    } else if new.split('/').any(|s| s == "." || s == "..") {
        Some("has a '.' or '..' segment")
    } else {
        None
    };
    if let Some(problem) = problem {
        return Err(format!("{new} {problem}"));
    }
    if is_excluded(new) {
        return Err(format!(
            "{new} is where Kiln keeps no resources (hidden, .git/, .kiln/ or build/)"
        ));
    }
    if within(new, old) && new != old {
        return Err("a folder cannot move inside itself".into());
    }
    // On a case-insensitive file system `Rock.png` and `rock.png` are one file, and a
    // case-only rename is allowed; on a case-sensitive one they may be two, and the
    // other one must not be overwritten.
    let same_file = || {
        use std::os::unix::fs::MetadataExt;
        match (
            fs::symlink_metadata(root.join(old)),
            fs::symlink_metadata(root.join(new)),
        ) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    };
    if fs::symlink_metadata(root.join(new)).is_ok() && !same_file() {
        let what = if root.join(new).is_dir() {
            "a folder"
        } else {
            "a file"
        };
        return Err(format!(
            "{new} already exists ({what}); Kiln never moves onto or merges into an existing path"
        ));
    }
    if restoring {
        // Undoing a move puts names back as they were, canonical or not.
        return Ok(());
    }
    let segments: Vec<&str> = new.split('/').collect();
    let old_name = old.rsplit('/').next().unwrap_or(old);
    for (k, segment) in segments.iter().enumerate() {
        let prefix = segments[..=k].join("/");
        let last = k + 1 == segments.len();
        if !last {
            match fs::symlink_metadata(root.join(&prefix)) {
                Ok(m) if m.is_dir() => continue,
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(format!("{prefix} is a link; Kiln never moves through one"));
                }
                Ok(_) => return Err(format!("{prefix} is a file, not a folder")),
                Err(_) => {}
            }
        } else if *segment == old_name {
            continue;
        }
        let check = if last && !is_folder && split_extension(old).is_some() {
            ResourcePath::split_file(segment).map(|_| ())
        } else {
            ResourcePath::parse(segment).map(|_| ())
        };
        if let Err(e) = check {
            let fix = e
                .suggestion
                .map(|s| format!(" (did you mean {s}?)"))
                .unwrap_or_default();
            return Err(format!(
                "\"{segment}\" is not a canonical name: {}{fix}",
                e.reason
            ));
        }
    }
    Ok(())
}

/// Follows `rel` from the root without following a symbolic link, and returns
/// the folders above it that do not exist yet (a rename to it creates them),
/// outermost first. Refused when a folder on the way is a link or a file, or when
/// `rel` must exist and does not or is a link.
fn reached_without_links(
    root: &Path,
    rel: &str,
    must_exist: bool,
) -> Result<Vec<String>, CheckerError> {
    let refused = |why: String| CheckerError::Refused(format!("{rel}: {why}"));
    let segments: Vec<&str> = rel.split('/').collect();
    for k in 0..segments.len() {
        let prefix = segments[..=k].join("/");
        let last = k + 1 == segments.len();
        match crate::walk::stat_below(root, &prefix) {
            Ok((rustix::fs::FileType::Directory, _)) => {}
            Ok((rustix::fs::FileType::Symlink, _)) => {
                return Err(refused(format!(
                    "{prefix} is a link now; Kiln never moves through one"
                )));
            }
            Ok(_) if last => {}
            Ok(_) => return Err(refused(format!("{prefix} is not a folder"))),
            Err(_) if !must_exist => {
                return Ok((k..segments.len() - 1)
                    .map(|j| segments[..=j].join("/"))
                    .collect());
            }
            Err(e) => return Err(refused(format!("{prefix} cannot be reached: {e}"))),
        }
    }
    Ok(Vec::new())
}

/// Plans moving each `old` (a file, or a folder with everything under it) to `new`.
pub fn plan(checker: &Checker, request: &MoveRequest) -> Result<MovePlan, CheckerError> {
    let index = checker.index();
    let root = checker.project().root();
    let mut renames: Vec<(String, String)> = Vec::new();
    let mut moves: Vec<(String, String)> = Vec::new();
    let mut unchanged = Vec::new();
    for (old, new) in &request.pairs {
        let (old, new) = (old.trim_end_matches('/'), new.trim_end_matches('/'));
        if old == new {
            unchanged.push(old.to_owned());
            continue;
        }
        for path in [old, new] {
            if path == kiln_core::project::PROJECT_FILE || path == REDIRECT_FILE {
                return Err(refused(
                    old,
                    new,
                    format!("{path} is the project's own file and stays where it is"),
                ));
            }
        }
        let files = checker.files_under(old);
        let is_file = files.len() == 1 && files[0] == old;
        let is_folder = !is_file
            && !is_excluded(old)
            && journal::is_plain_relative(old)
            && fs::symlink_metadata(root.join(old)).is_ok_and(|m| m.is_dir());
        if !is_file && !is_folder {
            return Err(CheckerError::Refused(format!(
                "nothing to move: {old} is not a file or folder of the project"
            )));
        }
        check_target(root, old, new, is_folder, request.undoes.is_some())
            .map_err(|reason| refused(old, new, reason))?;
        checker
            .project()
            .check_inside(&root.join(new))
            .map_err(|_| refused(old, new, "the path leads outside the project"))?;
        for f in files {
            let target = format!("{new}{}", &f[old.len()..]);
            moves.push((f, target));
        }
        renames.push((old.to_owned(), new.to_owned()));
    }
    // The questions below are about the moved files, at their old paths and new.
    let asked: Vec<String> = moves
        .iter()
        .flat_map(|(o, n)| [o.clone(), n.clone()])
        .collect();
    checker.expect_questions_about(&asked);
    // The moves of one request must not step on each other.
    for (i, (old_a, new_a)) in renames.iter().enumerate() {
        for (old_b, new_b) in renames.iter().skip(i + 1) {
            if within(new_a, new_b) || within(new_b, new_a) {
                return Err(refused(
                    old_b,
                    new_b,
                    format!("{old_a} would also move to {new_a}"),
                ));
            }
            if within(old_a, old_b) || within(old_b, old_a) {
                return Err(refused(
                    old_b,
                    new_b,
                    format!("{old_a} and {old_b} overlap; move the outer one"),
                ));
            }
            if within(new_a, old_b) || within(new_b, old_a) {
                return Err(refused(
                    old_b,
                    new_b,
                    "a target is inside a folder this request moves away",
                ));
            }
        }
    }

    let moved: HashMap<&str, &str> = moves
        .iter()
        .map(|(o, n)| (o.as_str(), n.as_str()))
        .collect();
    let arrivals = Arrivals::of(&moved);
    let mut edits = Edits::default();
    // Every reference to a moved file, in one pass over the files that name any of
    // them (each decoded once), not one question per moved file.
    let keys: Vec<&str> = moves.iter().flat_map(|(old, _)| keys_naming(old)).collect();
    let mut refusal = None;
    checker.each_reference_under(&keys, |from, _, raw, target| {
        let (Target::Resolved(old) | Target::Missing(old)) = &target else {
            return;
        };
        let (Some(&new), None) = (moved.get(&**old), &refusal) else {
            return;
        };
        let file = &*from.path;
        let ext_old = split_extension(old).map(|(_, e)| e);
        if raw.expected_type.is_some() && ext_old != split_extension(new).map(|(_, e)| e) {
            refusal = Some(refused(
                old,
                new,
                format!(
                    "{} refers to it as a .{} resource, and the move changes its type",
                    Place::of(&from.path, raw),
                    ext_old.unwrap_or("")
                ),
            ));
            return;
        }
        if raw.naming == Naming::RelativeUri {
            // Relative to the referencing file, where it is after the moves.
            let at = moved.get(file).copied().unwrap_or(file);
            if let Some(text) = uri_after(at, raw, new) {
                edits.add_change(&from.path, from.hash, raw, &text);
            }
            return;
        }
        let mut text = replacement_text(file, raw, old, new);
        // Written without extension, the new text must not become ambiguous
        // beside a file that has the same path without extension: then the full
        // path says the same thing, unambiguously.
        if raw.expected_type.is_none() && text != new && arrivals.shares_base(checker, &moved, new)
        {
            text = new.to_owned();
        }
        edits.add_change(&from.path, from.hash, raw, &text);
    });
    if let Some(refusal) = refusal {
        return Err(refusal);
    }
    // A file with relative URIs (a glTF file) that moves without what they name
    // must name it from where it goes; moving with it, it needs no patch.
    let mut buf = String::new();
    for (old, new) in &moves {
        let Some(entry) = index.file(old) else {
            continue;
        };
        entry.with_scan(|scan| {
            for raw in scan.iter() {
                if raw.naming != Naming::RelativeUri {
                    continue;
                }
                let target = match crate::graph::resolve(index, (old, &raw), &mut buf) {
                    Some(Target::Resolved(t)) => moved
                        .get(&*t)
                        .map_or_else(|| t.to_string(), |n| n.to_string()),
                    // A missing file keeps being the one it names.
                    Some(Target::Missing(t)) => t.to_string(),
                    // It names no file of the project: nothing to keep.
                    _ => continue,
                };
                if let Some(text) = uri_after(new, &raw, &target) {
                    edits.add_change(&entry.path, entry.hash, &raw, &text);
                }
            }
        });
    }
    let skipped = ambiguity(checker, &moved, &mut edits);
    if let Some(undone) = &request.undoes {
        restore_spellings(checker, &renames, &mut edits, undone);
        let leave: HashSet<(&str, &str)> = undone
            .adopted
            .iter()
            .map(|(f, p)| (f.as_str(), p.as_str()))
            .collect();
        for edit in edits.files.values_mut() {
            edit.changes
                .retain(|c| !leave.contains(&(&*c.place.file, c.place.pointer.as_str())));
        }
        edits.files.retain(|_, e| !e.changes.is_empty());
    }
    let adopted = adopted(checker, &moved);

    let log = match &request.undoes {
        Some(undone) => LogUpdate::RemoveLast {
            logged: undone.logged.clone(),
            fallback: moves.clone(),
            created: undone.created_log,
        },
        None if moves.is_empty() => LogUpdate::None,
        None => LogUpdate::Append(moves.clone()),
    };
    Ok(MovePlan {
        renames,
        moves,
        edits: edits.into_edits(),
        skipped,
        unchanged,
        adopted,
        log,
        remove_dirs: request
            .undoes
            .as_ref()
            .map(|u| u.created_dirs.clone())
            .unwrap_or_default(),
    })
}

/// The text a relative URI `raw` gets so that, written in a file at `at`, it names
/// `target`; `None` when its text already does (it moved along with its file).
fn uri_after(at: &str, raw: &RefView, target: &str) -> Option<String> {
    let named = crate::gltf::resolve_uri(at, raw.text);
    (named.as_deref() != Ok(target)).then(|| crate::gltf::replacement_uri(at, target, raw.text))
}

/// The references that name nothing now and will name a moved file after the move:
/// typed ones missing exactly that file, and strings equal to its new path (or to
/// that path without extension) that resolve to nothing.
fn adopted(checker: &Checker, moved: &HashMap<&str, &str>) -> Vec<(String, String)> {
    let index = checker.index();
    let mut out = Vec::new();
    // Whole new paths win over any match without extension, so such a string is
    // the moved file's after the move whatever it named before.
    let mut whole: HashSet<&str> = HashSet::new();
    let mut texts: HashSet<&str> = HashSet::new();
    for new in moved.values() {
        whole.insert(new);
        for r in checker.refs_to(new) {
            if let Some(raw) = index.file(&r.file).and_then(|f| f.scan().get(r.index)) {
                out.push((r.file.to_string(), raw.pointer.to_owned()));
            }
        }
        if let Some((base, _)) = split_extension(new) {
            texts.insert(base);
        }
    }
    // A string written without type is filed under its text: only those written as
    // one of these are looked at, in file order.
    let mut generic: BTreeSet<(Arc<str>, u32)> = BTreeSet::new();
    for text in whole.iter().chain(&texts) {
        generic.extend(checker.filed_under(text));
    }
    for (file, i) in generic {
        let Some(raw) = index.file(&file).and_then(|f| f.scan().get(i as usize)) else {
            continue;
        };
        if raw.expected_type.is_some() || raw.naming != Naming::ProjectPath {
            continue;
        }
        let named_after =
            whole.contains(raw.text) || (texts.contains(raw.text) && !has_base(index, raw.text));
        if named_after && !index.contains(raw.text) {
            out.push((file.to_string(), raw.pointer.to_owned()));
        }
    }
    out
}

/// Whether some file has `base` as its path without extension.
fn has_base(index: &crate::index::Index, base: &str) -> bool {
    index
        .files_from(base)
        .map(|f| &*f.path)
        .take_while(|p| p.starts_with(base))
        .any(|p| split_extension(p).is_some_and(|(b, _)| b == base))
}

/// Puts back the spelling each reference had before the move being undone, where
/// that spelling names the same file as the one computed (a relative URI from where
/// its file is after `renames`).
fn restore_spellings(
    checker: &Checker,
    renames: &[(String, String)],
    edits: &mut Edits,
    undone: &UndoneMove,
) {
    let before: HashMap<(&str, &str), &str> = undone
        .texts
        .iter()
        .map(|(file, pointer, text)| ((file.as_str(), pointer.as_str()), text.as_str()))
        .collect();
    for edit in edits.files.values_mut() {
        let scan = checker.index().file(&edit.file).map(|e| e.scan());
        for c in &mut edit.changes {
            let Some(&text) = before.get(&(&*c.place.file, c.place.pointer.as_str())) else {
                continue;
            };
            let uri = scan
                .and_then(|s| s.iter().find(|r| r.span == c.span))
                .is_some_and(|r| r.naming == Naming::RelativeUri);
            let full = &*c.new_text;
            let base = split_extension(full).map(|(b, _)| b);
            let same_file = if uri {
                let at = renamed_path(renames, &c.place.file);
                let named = |t: &str| crate::gltf::resolve_uri(&at, t).ok();
                named(text).is_some() && named(text) == named(full)
            } else {
                text == full
                    || Some(text) == base
                    || split_extension(text).map(|(b, _)| b) == Some(full)
            };
            if same_file {
                c.new_text = Arc::from(text);
            }
        }
    }
}

/// The moved files' new paths, and how many share each path without extension:
/// whether another arriving file shares a base with one is then a lookup, not a
/// pass over every move for each reference (a folder move of 4,412 files spent
/// most of its plan there).
struct Arrivals<'m> {
    paths: HashSet<&'m str>,
    by_base: HashMap<&'m str, usize>,
}

impl<'m> Arrivals<'m> {
    fn of(moved: &HashMap<&'m str, &'m str>) -> Self {
        let mut by_base: HashMap<&str, usize> = HashMap::new();
        for new in moved.values() {
            if let Some((base, _)) = split_extension(new) {
                *by_base.entry(base).or_default() += 1;
            }
        }
        Arrivals {
            paths: moved.values().copied().collect(),
            by_base,
        }
    }

    /// Whether, after the moves, another file has the same path without extension
    /// as `new` (one of the arrivals), or that path as its whole path (one already
    /// there and staying, or another one arriving).
    fn shares_base(&self, checker: &Checker, moved: &HashMap<&str, &str>, new: &str) -> bool {
        let Some((base, _)) = split_extension(new) else {
            return false;
        };
        // A file whose whole path is that text would even win over `new`.
        let same_base =
            |p: &str| p != new && (p == base || split_extension(p).is_some_and(|(b, _)| b == base));
        let staying = checker
            .index()
            .files_from(base)
            .map(|f| &*f.path)
            .take_while(|p| p.starts_with(base))
            .any(|p| same_base(p) && !moved.contains_key(p));
        // `new` itself is one of the arrivals with that base.
        staying || self.paths.contains(base) || self.by_base.get(base).is_some_and(|&n| n > 1)
    }
}

/// What a move does to references written without extension: an ambiguous one whose
/// candidates all move to one new path is patched (added to `edits`); any other
/// ambiguous one touched by the move, and any unambiguous one the move makes
/// ambiguous, is listed.
fn ambiguity(checker: &Checker, moved: &HashMap<&str, &str>, edits: &mut Edits) -> Vec<Skipped> {
    let index = checker.index();
    let mut skipped = Vec::new();
    // Only a reference written without extension is ambiguous: those filed under
    // a moved file's path without extension, in one pass (each once, however many
    // of its candidates move).
    let bases: Vec<&str> = moved
        .keys()
        .filter_map(|old| split_extension(old).map(|(base, _)| base))
        .collect();
    checker.each_reference_under(&bases, |from, _, raw, target| {
        let Target::Ambiguous(candidates) = &target else {
            return;
        };
        if !candidates.iter().any(|c| moved.contains_key(&**c)) {
            return;
        }
        let new_bases: BTreeSet<Option<&str>> = candidates
            .iter()
            .map(|c| {
                moved
                    .get(&**c)
                    .and_then(|new| split_extension(new))
                    .map(|(base, _)| base)
            })
            .collect();
        match new_bases.into_iter().collect::<Vec<_>>().as_slice() {
            [Some(base)] => edits.add_change(&from.path, from.hash, raw, base),
            _ => skipped.push(Skipped {
                place: Place::of(&from.path, raw),
                text: raw.text.to_owned(),
                reason: SkipReason::Ambiguous {
                    candidates: candidates.iter().map(|c| c.to_string()).collect(),
                },
            }),
        }
    });
    // A moved file arriving beside another with the same path without extension
    // makes the references that named the other one alone ambiguous; one arriving
    // at a path that is another file's path without extension takes over the
    // references written that way (a whole path wins).
    let mut arriving: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for new in moved.values() {
        if let Some((base, _)) = split_extension(new) {
            arriving.entry(base).or_default().push(new);
        }
        arriving.entry(new).or_default().push(new);
    }
    for (base, news) in arriving {
        let staying: Vec<&str> = index
            .files_from(base)
            .map(|f| &*f.path)
            .take_while(|p| p.starts_with(base))
            .filter(|p| split_extension(p).is_some_and(|(b, _)| b == base))
            .filter(|p| !moved.contains_key(p))
            .collect();
        for file in &staying {
            for r in checker.refs_to(file) {
                let Some(raw) = index.file(&r.file).and_then(|e| e.scan().get(r.index)) else {
                    continue;
                };
                if raw.expected_type.is_some()
                    || raw.naming != Naming::ProjectPath
                    || raw.text != base
                {
                    continue;
                }
                let mut candidates: Vec<String> =
                    staying.iter().chain(&news).map(|s| s.to_string()).collect();
                candidates.sort();
                skipped.push(Skipped {
                    place: Place::of(&r.file, &raw),
                    text: raw.text.to_owned(),
                    reason: SkipReason::BecomesAmbiguous { candidates },
                });
            }
        }
    }
    skipped
}

/// The patches that point every reference to `old` (a file that exists: one about
/// to be deleted) at `new` instead, as a move of `old` to `new` would patch them,
/// leaving alone the references made from files in `except` (those being deleted
/// along with it); no file moves. Ambiguous references that may mean `old` are not
/// patched (see [`Checker::ambiguous_references_to`]).
pub fn plan_retarget(checker: &Checker, old: &str, new: &str, except: &[String]) -> MovePlan {
    let mut edits = Edits::default();
    point_resolved_references(checker, old, new, except, &mut edits);
    MovePlan::patches(edits.into_edits())
}

/// Adds to `edits` the patch of every reference the graph resolves to `old` (made
/// outside the files or folders `except`) to name `new`, spelled as it was spelled.
fn point_resolved_references(
    checker: &Checker,
    old: &str,
    new: &str,
    except: &[String],
    edits: &mut Edits,
) {
    for r in checker.refs_to(old) {
        if except.iter().any(|e| crate::index::is_within(&r.file, e)) {
            continue;
        }
        if let Some(raw) = checker
            .index()
            .file(&r.file)
            .and_then(|f| f.scan().get(r.index))
        {
            edits.add_reference(
                checker,
                &r.file,
                r.index,
                &replacement_text(&r.file, &raw, old, new),
            );
        }
    }
}

/// The patches that point references to `old` (a file that no longer exists, e.g.
/// renamed outside Kiln) at `new` instead; no file moves.
pub fn plan_repoint(checker: &Checker, old: &str, new: &str) -> MovePlan {
    let mut edits = Edits::default();
    // Typed references still point at the missing file in the graph.
    point_resolved_references(checker, old, new, &[], &mut edits);
    // Generic ones stopped resolving when the file went away: match their text,
    // where it now names nothing.
    let base = split_extension(old).map_or(old, |(b, _)| b);
    let base_paths = checker.index().by_base_path();
    for f in checker.index().files() {
        for (i, raw) in f.scan().iter().enumerate() {
            let names_it = raw.text == old || raw.text == base;
            let resolves = checker.index().contains(raw.text) || base_paths.contains_key(raw.text);
            let generic = raw.expected_type.is_none() && raw.naming == Naming::ProjectPath;
            if generic && names_it && !resolves {
                edits.add_reference(
                    checker,
                    &f.path,
                    i,
                    &replacement_text(&f.path, &raw, old, new),
                );
            }
        }
    }
    MovePlan::patches(edits.into_edits())
}

/// The patches `kiln check --fix` makes: references that use an old path from the
/// redirect log and resolve to nothing, rewritten to the path the resource has now.
pub fn plan_redirect_fixes(checker: &Checker) -> MovePlan {
    let mut edits = Edits::default();
    for finding in checker.findings() {
        let Finding::StaleRedirect {
            place, replacement, ..
        } = finding
        else {
            continue;
        };
        let Some(entry) = checker.index().file(&place.file) else {
            continue;
        };
        let Some(raw) = entry
            .scan()
            .iter()
            .find(|r| r.pointer == place.pointer && r.line == place.line)
        else {
            continue;
        };
        let file = place.file.clone();
        let change = Change {
            place,
            span: raw.span,
            old_text: Arc::from(raw.text),
            new_text: Arc::from(replacement),
        };
        edits.add(&file, entry.hash, change);
    }
    MovePlan::patches(edits.into_edits())
}

/// `text` as the content of a JSON string, in the style of `raw` (the content it
/// replaces): quotes, backslashes and control characters escaped, and `/` written
/// `\/` where the original wrote it so, so that a patch and its undoing give back
/// the same bytes.
fn encode_like(text: &str, raw: &[u8]) -> String {
    let escaped_slash = raw.windows(2).any(|w| w == b"\\/");
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' if escaped_slash => out.push_str("\\/"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// The patches that undo the `prepared` edits once applied: each change's new text
/// back to its old one, at the positions the new texts have in the patched files.
fn inverse_patches(prepared: &[Prepared]) -> Vec<FileEdit> {
    prepared
        .iter()
        .map(|p| {
            let mut shift: i64 = 0;
            let changes = p
                .edit
                .changes
                .iter()
                .zip(&p.lengths)
                .map(|(c, &len)| {
                    let start = (c.span.0 as i64 + shift) as u32;
                    let end = start + len as u32;
                    shift += len as i64 - (c.span.1 - c.span.0) as i64;
                    Change {
                        place: c.place.clone(),
                        span: (start, end),
                        old_text: c.new_text.clone(),
                        new_text: c.old_text.clone(),
                    }
                })
                .collect();
            FileEdit {
                file: p.edit.file.clone(),
                expected_hash: p.written_hash,
                changes,
            }
        })
        .collect()
}

/// Whether `file` is of a glTF type: in its binary form, only its JSON chunk holds
/// references.
fn is_gltf_type(checker: &Checker, file: &str) -> bool {
    let ext = split_extension(file).map_or("", |(_, e)| e);
    checker
        .index()
        .registry()
        .resource_type(ext)
        .is_some_and(|t| matches!(t.format, kiln_core::registry::ResourceFormat::Gltf))
}

/// Where the JSON of `file` is, if it is a binary glTF file (`bytes` its content;
/// `gltf_type`: see [`is_gltf_type`]).
fn glb_json(
    gltf_type: bool,
    file: &str,
    bytes: &[u8],
) -> Result<Option<std::ops::Range<usize>>, CheckerError> {
    let ext = split_extension(file).map_or("", |(_, e)| e);
    if !gltf_type || !crate::gltf::is_binary(ext, bytes) {
        return Ok(None);
    }
    crate::gltf::glb_layout(bytes)
        .map(|layout| Some(layout.json))
        .map_err(|message| CheckerError::Malformed {
            file: file.to_owned(),
            message,
        })
}

/// `bytes`, the content of `edit.file`, with `edit`'s changes written in, and the
/// length of each change's text as written. Refused if a change does not fit the
/// content (it is not the version planned for).
fn patch(
    edit: &FileEdit,
    bytes: &[u8],
    gltf_type: bool,
) -> Result<(Vec<u8>, Vec<usize>), CheckerError> {
    let changed = || CheckerError::Changed {
        file: edit.file.clone(),
    };
    // In a binary glTF file, only its JSON chunk holds references.
    let glb = glb_json(gltf_type, &edit.file, bytes)?;
    let texts: Vec<String> = edit
        .changes
        .iter()
        .map(|c| {
            let (s, e) = (c.span.0 as usize, c.span.1 as usize);
            let outside_json = glb.as_ref().is_some_and(|j| s < j.start || e > j.end);
            match bytes.get(s..e) {
                Some(old) if !outside_json => Ok(encode_like(&c.new_text, old)),
                _ => Err(changed()),
            }
        })
        .collect::<Result<_, _>>()?;
    // Built left to right at its final size: many patched files may be held until
    // they are written, each without a grown buffer's spare room.
    let size = (texts.iter().map(String::len).sum::<usize>() + bytes.len()).saturating_sub(
        edit.changes
            .iter()
            .map(|c| c.span.1.saturating_sub(c.span.0) as usize)
            .sum(),
    );
    let mut out = Vec::with_capacity(size);
    let mut from = 0;
    for (c, text) in edit.changes.iter().zip(&texts) {
        let (s, e) = (c.span.0 as usize, c.span.1 as usize);
        // Changes are sorted by span and never overlap (one per string).
        out.extend_from_slice(bytes.get(from..s).ok_or_else(changed)?);
        out.extend_from_slice(text.as_bytes());
        from = e;
    }
    out.extend_from_slice(bytes.get(from..).unwrap_or_default());
    let lengths: Vec<usize> = texts.iter().map(String::len).collect();
    if glb.is_some() {
        // Padded again, with both lengths fixed; the other chunks as they were.
        out = crate::gltf::repack_glb(bytes, &out).map_err(|message| CheckerError::Malformed {
            file: edit.file.clone(),
            message,
        })?;
    }
    Ok((out, lengths))
}

/// How many bytes of patched files an apply keeps from their first reading to
/// their writing. Past it, a file is read a second time when it is written, and
/// must still be the version read first: a move of a folder that patches 43,000
/// files (120 MB of them, at 100,000 files) held every original and every patched
/// copy at once. A move of a file with 1,000 references keeps all of its files.
#[cfg(not(test))]
const HOLD_PATCHED_BYTES: usize = 16 << 20;
/// Tests keep a small file or two and read the others again: every test of an
/// apply takes both ways.
#[cfg(test)]
const HOLD_PATCHED_BYTES: usize = 300;

/// One patched file between its first reading and its writing.
struct Prepared<'p> {
    edit: &'p FileEdit,
    /// Where it ends up (a rename may carry it along).
    final_path: String,
    /// The version that was read: the file is replaced only if it is still that.
    identity: FileIdentity,
    /// See [`is_gltf_type`].
    gltf_type: bool,
    /// The hash of the patched bytes (the journal's, and a second reading's check).
    written_hash: u64,
    /// The length of each change's text as written.
    lengths: Vec<usize>,
    /// The patched bytes, while within [`HOLD_PATCHED_BYTES`]; made again from the
    /// file otherwise.
    held: Option<Vec<u8>>,
}

/// Applies `plan` (see the module docs). Returns the operation that undoes it.
pub fn apply(checker: &mut Checker, plan: &MovePlan) -> Result<Operation, CheckerError> {
    let applied = apply_with(checker, plan, true)?;
    if let Some(inverse_edits) = applied.inverse_edits {
        return Ok(Operation::Patch(Box::new(MovePlan::patches(inverse_edits))));
    }
    Ok(Operation::Move(MoveRequest {
        pairs: plan
            .renames
            .iter()
            .rev()
            .map(|(o, n)| (n.clone(), o.clone()))
            .collect(),
        undoes: Some(Box::new(UndoneMove {
            created_log: applied.created_log,
            logged: applied.logged,
            created_dirs: applied.created_dirs,
            adopted: plan
                .adopted
                .iter()
                .map(|(file, pointer)| (renamed_path(&plan.renames, file), pointer.clone()))
                .collect(),
            texts: plan
                .edits
                .iter()
                .flat_map(|e| {
                    let file = renamed_path(&plan.renames, &e.file);
                    e.changes.iter().map(move |c| {
                        (
                            file.clone(),
                            c.place.pointer.clone(),
                            c.old_text.to_string(),
                        )
                    })
                })
                .collect(),
        })),
    }))
}

/// [`apply`] for a command that has no history to undo it in: what undoing
/// needs is not made (each patched reference's old text and place: 48 MB for a
/// folder move patching 250,000 references).
pub fn apply_without_undo(checker: &mut Checker, plan: &MovePlan) -> Result<(), CheckerError> {
    apply_with(checker, plan, false).map(|_| ())
}

/// What [`apply_with`] did that undoing it must know besides the plan.
struct Applied {
    /// The patches that undo a plan of patches only.
    inverse_edits: Option<Vec<FileEdit>>,
    created_log: bool,
    logged: Vec<(String, String)>,
    created_dirs: Vec<String>,
}

/// [`apply`]; the patches that undo a plan of patches only are worked out if
/// `undo`.
fn apply_with(checker: &mut Checker, plan: &MovePlan, undo: bool) -> Result<Applied, CheckerError> {
    let root = checker.project().root().to_owned();
    // One writer at a time, from the first read to the journal's deletion.
    let lock = crate::lock::exclusive(&root, &|| checker.notify_waiting())?;
    if journal::is_pending(&root) {
        return Err(CheckerError::Refused(
            "another operation's journal is in .kiln/journal; reopen the project to recover it"
                .into(),
        ));
    }
    // Read and patch every file first, its original going to the journal's backups
    // as it is read: any refusal leaves the project untouched (and the backups are
    // removed when `backups` is dropped).
    let mut backups = journal::Backups::start(&root)?;
    let mut prepared: Vec<Prepared> = Vec::with_capacity(plan.edits.len());
    let mut backed_up: Vec<(String, Option<(u64, u64)>)> = Vec::new();
    let mut held_bytes = 0usize;
    let folders = crate::walk::FolderCursor::default();
    for edit in &plan.edits {
        let (bytes, identity) = read_with_identity(&root, &edit.file, &folders)?;
        if xxhash_rust::xxh3::xxh3_64(&bytes) != edit.expected_hash {
            return Err(CheckerError::Changed {
                file: edit.file.clone(),
            });
        }
        let gltf_type = is_gltf_type(checker, &edit.file);
        let (out, lengths) = patch(edit, &bytes, gltf_type)?;
        backed_up.push((edit.file.clone(), Some(backups.append(&bytes)?)));
        held_bytes = held_bytes.saturating_add(out.len());
        prepared.push(Prepared {
            edit,
            final_path: renamed_path(&plan.renames, &edit.file),
            identity,
            gltf_type,
            written_hash: xxhash_rust::xxh3::xxh3_64(&out),
            lengths,
            held: (held_bytes <= HOLD_PATCHED_BYTES).then_some(out),
        });
    }
    // Patches only are undone by patches (a move is undone by moving back).
    let inverse_edits = (undo && plan.renames.is_empty()).then(|| inverse_patches(&prepared));

    // The redirect log is one more patched file.
    let log_path = root.join(REDIRECT_FILE);
    let log_before = match fs::read_to_string(&log_path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err(&log_path)(e)),
    };
    let (log_after, logged) = match &plan.log {
        LogUpdate::None => (None, Vec::new()),
        LogUpdate::Append(moves) => (
            Some(Redirects::appended(log_before.as_deref(), moves)),
            moves.clone(),
        ),
        LogUpdate::RemoveLast {
            logged,
            fallback,
            created,
        } => {
            match log_before
                .as_deref()
                .and_then(|t| Redirects::without_last(t, logged))
            {
                Some(text) if *created && text == Redirects::HEADER => {
                    (Some(String::new()), Vec::new())
                }
                Some(text) => (Some(text), Vec::new()),
                None => (
                    Some(Redirects::appended(log_before.as_deref(), fallback)),
                    fallback.clone(),
                ),
            }
        }
    };

    // What is renamed, and the folders it goes into, are reached without a link:
    // a folder swapped for one since the plan would carry the rename elsewhere.
    let mut created_dirs: Vec<String> = Vec::new();
    for (old, new) in &plan.renames {
        reached_without_links(&root, old, true)?;
        for dir in reached_without_links(&root, new, false)? {
            if !created_dirs.contains(&dir) {
                created_dirs.push(dir);
            }
        }
    }

    let mut journal = Journal {
        renames: plan.renames.clone(),
        patched: backed_up,
        created_dirs: created_dirs.clone(),
        written: prepared.iter().map(|p| Some(p.written_hash)).collect(),
        pid: std::process::id(),
    };
    if let Some(after) = &log_after {
        let range = match log_before.as_deref() {
            Some(text) => Some(backups.append(text.as_bytes())?),
            None => None,
        };
        journal.patched.push((REDIRECT_FILE.to_owned(), range));
        // An emptied log is removed: then there is nothing of Kiln's to restore over.
        let hash = (!after.is_empty()).then(|| xxhash_rust::xxh3::xxh3_64(after.as_bytes()));
        journal.written.push(hash);
    }
    checker.forget_question_lookup();
    let index = checker.index();
    // The files kept are scanned for the index on a thread of their own while the
    // journal is flushed and the files written (mostly waiting for the disk); the
    // others are scanned by the threads that write them.
    let held: Vec<(&str, &[u8])> = (prepared.iter())
        .filter_map(|p| Some((p.final_path.as_str(), p.held.as_deref()?)))
        .collect();
    let (outcome, (held_hashes, held_scans)) = scanned_during(index, &held, || {
        journal::begin(&root, &journal, backups)?;
        Ok::<_, CheckerError>((|| -> Result<_, CheckerError> {
            let replaced = replace_files(&root, index, &prepared)?;
            for (old, new) in &plan.renames {
                journal::rename(&root, old, new)?;
                crash_point()?;
            }
            match log_after.as_deref() {
                // An undone move that created the log leaves none.
                Some("") => fs::remove_file(&log_path).map_err(io_err(&log_path))?,
                Some(text) => {
                    write_unsynced(&log_path, text.as_bytes()).map_err(io_err(&log_path))?
                }
                None => {}
            }
            if log_after.is_some() {
                crash_point()?;
            }
            Ok(replaced)
        })())
    });
    let (replaced, mut scans) = match outcome? {
        Ok(replaced) => replaced,
        Err(e) if crashed() => {
            // Simulated kill: leave the journal for the next open to recover.
            return Err(e);
        }
        Err(e) => {
            // Put everything back; the journal makes this the same path as crash
            // recovery.
            recover(&root)?;
            return Err(e);
        }
    };
    journal::finish(&root)?;
    journal::remove_empty_dirs(&root, &plan.remove_dirs);
    drop(lock);
    // The kept bytes are written and scanned: their room (up to
    // `HOLD_PATCHED_BYTES`) goes back before the written files' tables are joined,
    // which is when a big move peaks.
    drop(held);
    for p in &mut prepared {
        p.held = None;
    }
    drop((journal, log_after));

    // Patched files are taken from what was written and scanned; the moves and the
    // log are looked at on disk.
    scans.push(held_scans);
    let mut held_hashes = held_hashes.into_iter();
    let mut sealed = index.sealed_for_write(scans);
    // Each file read again was scanned by the thread that wrote it; the kept ones
    // beside the writes, in order. One without a hash is looked at on disk.
    let mut touched: Vec<String> = Vec::new();
    let mut written: Vec<crate::index::Written> = Vec::with_capacity(prepared.len());
    for (p, replaced) in prepared.iter().zip(replaced) {
        match replaced.hash.or_else(|| held_hashes.next()) {
            Some(hash) => written.push(crate::index::Written {
                path: &p.final_path,
                size: replaced.size,
                mtime_ns: replaced.mtime_ns,
                scanned: sealed(&p.final_path, hash),
            }),
            None => touched.push(p.final_path.clone()),
        }
    }
    for (old, new) in &plan.renames {
        touched.push(old.clone());
        touched.push(new.clone());
    }
    touched.push(REDIRECT_FILE.to_owned());
    // The moved files' entries follow them, so that the refresh reads none again.
    checker.carry_renamed(&plan.renames);
    checker.refresh_written(&touched, &written)?;
    checker.changed_by_kiln(plan.moves.len() + written.len());
    Ok(Applied {
        inverse_edits,
        created_log: log_before.is_none() && !logged.is_empty(),
        logged,
        created_dirs,
    })
}

/// Runs `work` (the journal's flush and the writes: mostly waiting for the disk)
/// while a second thread hashes and scans `files` (path, new content) for the index
/// ([`Index::encode_for_write`](crate::index::Index::encode_for_write)): their
/// hashes in order, and the scans. Without a thread to be had, they are scanned
/// after `work`.
fn scanned_during<T>(
    index: &crate::index::Index,
    files: &[(&str, &[u8])],
    work: impl FnOnce() -> T,
) -> (T, (Vec<u64>, WriteScans)) {
    let scan_all = || {
        let mut scans = WriteScans::default();
        let hashes = (files.iter())
            .map(|(path, bytes)| index.encode_for_write(&mut scans, path, bytes))
            .collect::<Vec<_>>();
        (hashes, scans)
    };
    std::thread::scope(|s| {
        let scanning = std::thread::Builder::new()
            .name("kiln-scan-written".into())
            .spawn_scoped(s, scan_all);
        let done = work();
        let scanned = scanning.ok().and_then(|h| h.join().ok());
        (done, scanned.unwrap_or_else(scan_all))
    })
}

/// What identifies one version of a file cheaply: a save by another program (in place
/// or by renaming a new file over it) changes at least one of these.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
}

// The stat fields' integer types differ between targets; the conversions are only
// no-ops on some of them.
#[allow(clippy::useless_conversion)]
fn identity_of(st: &rustix::fs::Stat) -> FileIdentity {
    FileIdentity {
        dev: u64::try_from(st.st_dev).unwrap_or(0),
        ino: u64::try_from(st.st_ino).unwrap_or(0),
        size: u64::try_from(st.st_size).unwrap_or(0),
        mtime: (
            i64::try_from(st.st_mtime).unwrap_or(0),
            i64::try_from(st.st_mtime_nsec).unwrap_or(0),
        ),
    }
}

/// Reads the file at `rel` and its identity, from one open file (so they describe
/// the same version), opened in its folder below the root without following a
/// link; only a regular file is read.
fn read_with_identity(
    root: &Path,
    rel: &str,
    folders: &crate::walk::FolderCursor,
) -> Result<(Vec<u8>, FileIdentity), CheckerError> {
    use std::io::Read;
    let path = root.join(rel);
    let (mut file, st) = folders.open_regular(root, rel).map_err(io_err(&path))?;
    let identity = identity_of(&st);
    let mut bytes = Vec::with_capacity(usize::try_from(identity.size).unwrap_or(0));
    file.read_to_end(&mut bytes).map_err(io_err(&path))?;
    Ok((bytes, identity))
}

/// A test's stand-in for another program, run just before a file is replaced.
#[cfg(test)]
type ReplaceHook = Arc<dyn Fn(&Path) + Send + Sync>;

#[cfg(test)]
thread_local! {
    /// In tests, runs just before each file is replaced (another program saving).
    static BEFORE_REPLACE: std::cell::RefCell<Option<ReplaceHook>> =
        const { std::cell::RefCell::new(None) };
}

fn before_replace_hook(path: &Path) {
    #[cfg(test)]
    BEFORE_REPLACE.with(|hook| {
        if let Some(hook) = &*hook.borrow() {
            hook(path);
        }
    });
    #[cfg(not(test))]
    let _ = path;
}

/// What a thread replacing files takes from the thread that started the apply: in
/// tests, its simulated kill and its stand-in for another program's saves.
#[derive(Clone)]
struct ReplaceScope {
    crash: journal::CrashScope,
    #[cfg(test)]
    hook: Option<ReplaceHook>,
}

impl ReplaceScope {
    fn current() -> Self {
        ReplaceScope {
            crash: journal::CrashScope::current(),
            #[cfg(test)]
            hook: BEFORE_REPLACE.with(|h| h.borrow().clone()),
        }
    }

    fn enter(&self) {
        self.crash.enter();
        #[cfg(test)]
        BEFORE_REPLACE.with(|h| h.borrow_mut().clone_from(&self.hook));
    }
}

/// From this many patched files on, a move replaces them on several threads.
/// Creating and renaming a file is kernel work that runs in parallel on different
/// folders: two threads replace a thousand files in about 70% of the time one
/// takes (BENCHMARKS.md). Below it, a thread costs more than it saves.
const PARALLEL_REPLACE_FROM: usize = 64;

/// A patched file as written: its size and modification time, and the hash of its
/// new content, scanned for the index into its thread's [`WriteScans`].
struct Replaced {
    size: u64,
    mtime_ns: u64,
    /// `None` for a file kept since its first reading: scanned beside the writes
    /// (see [`scanned_during`]).
    hash: Option<u64>,
}

/// Replaces each prepared file by a temporary file renamed over it, unless it is no
/// longer the version that was read, and scans what it wrote for the index. The
/// files are cut into runs of neighbours (mostly whole folders) that up to four
/// threads take in turn; the first failure stops the others, and the journal
/// (already flushed) puts back whatever any of them replaced.
fn replace_files(
    root: &Path,
    index: &crate::index::Index,
    prepared: &[Prepared],
) -> Result<(Vec<Replaced>, Vec<WriteScans>), CheckerError> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let threads = if prepared.len() >= PARALLEL_REPLACE_FROM {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        // Tests take the threaded path on any machine.
        if cfg!(test) { cores.max(2) } else { cores }
    } else {
        1
    };
    let run = prepared.len().div_ceil(threads * 4).max(1);
    let runs: Vec<&[Prepared]> = prepared.chunks(run).collect();
    let (next, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
    let take_runs = || {
        let (mut done, mut scans) = (Vec::new(), WriteScans::default());
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(files) = runs.get(k) else {
                break;
            };
            done.push((k, replace_run(root, index, files, &stop, &mut scans)));
        }
        (done, scans)
    };
    let scope = ReplaceScope::current();
    let (mut results, scans) = std::thread::scope(|s| {
        // A thread that cannot be had leaves its share to the others.
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| {
                let scope = &scope;
                std::thread::Builder::new()
                    .name("kiln-replace".into())
                    .spawn_scoped(s, || {
                        scope.enter();
                        take_runs()
                    })
                    .ok()
            })
            .collect();
        let (mut results, scans) = take_runs();
        let mut all_scans = vec![scans];
        for helper in helpers {
            match helper.join() {
                Ok((done, scans)) => {
                    results.extend(done);
                    all_scans.push(scans);
                }
                Err(_) => {
                    stop.store(true, Ordering::Relaxed);
                    results.push((
                        usize::MAX,
                        Err(CheckerError::Refused(
                            "a thread replacing files stopped unexpectedly".into(),
                        )),
                    ));
                }
            }
        }
        (results, all_scans)
    });
    // In file order, so that the error reported is the first file's whichever
    // thread met it.
    results.sort_by_key(|(k, _)| *k);
    let mut replaced = Vec::with_capacity(prepared.len());
    for (_, result) in results {
        replaced.extend(result?);
    }
    Ok((replaced, scans))
}

/// Replaces one run of files (see [`replace_files`]); stops early once `stop` is
/// set, and sets it on a failure.
fn replace_run(
    root: &Path,
    index: &crate::index::Index,
    prepared: &[Prepared],
    stop: &std::sync::atomic::AtomicBool,
    scans: &mut WriteScans,
) -> Result<Vec<Replaced>, CheckerError> {
    use std::sync::atomic::Ordering;
    let mut replaced = Vec::with_capacity(prepared.len());
    let folders = crate::walk::FolderCursor::default();
    for p in prepared {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        match replace_one(root, index, &folders, p, scans) {
            Ok(one) => replaced.push(one),
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
    }
    Ok(replaced)
}

/// Replaces one file by a temporary file holding its patched bytes, renamed over
/// it. The patched bytes are the ones held since the first reading, or made again
/// from the file read a second time, which must still be the version read first.
/// Everything happens in the file's folder, opened below the root without
/// following a link (`folders`): a folder swapped for a link since the plan never
/// carries a write outside the project.
fn replace_one(
    root: &Path,
    index: &crate::index::Index,
    folders: &crate::walk::FolderCursor,
    p: &Prepared,
    scans: &mut WriteScans,
) -> Result<Replaced, CheckerError> {
    use rustix::fs::{Mode, OFlags};
    let file = p.edit.file.as_str();
    let path = root.join(file);
    let io = |e: rustix::io::Errno| io_err(&path)(e.into());
    let changed = || CheckerError::Changed {
        file: file.to_owned(),
    };
    // Another program may have saved the file since it was read: check just before
    // replacing it, and stop (rolling back) rather than overwrite.
    before_replace_hook(&path);
    let made_again;
    let new_bytes: &[u8] = match &p.held {
        Some(bytes) => bytes,
        None => {
            let (bytes, identity) =
                read_with_identity(root, file, folders).map_err(|_| changed())?;
            if identity != p.identity || xxhash_rust::xxh3::xxh3_64(&bytes) != p.edit.expected_hash
            {
                return Err(changed());
            }
            let (out, _) = patch(p.edit, &bytes, p.gltf_type)?;
            if xxhash_rust::xxh3::xxh3_64(&out) != p.written_hash {
                return Err(changed());
            }
            made_again = out;
            &made_again
        }
    };
    let now = folders.lstat(root, file).ok();
    if now.as_ref().map(identity_of).as_ref() != Some(&p.identity) {
        return Err(changed());
    }
    let (folder, name) = crate::walk::folder_and_name(file).map_err(io_err(&path))?;
    let dir = folders.folder(root, folder).map_err(io_err(&path))?;
    let dir = &*dir;
    let temp = journal::temp_name(Path::new(name), std::process::id());
    let temp_path = path.with_file_name(&temp);
    let create =
        OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let fd = rustix::fs::openat(dir, &temp, create, Mode::from_raw_mode(0o666))
        .map_err(|e| io_err(&temp_path)(e.into()))?;
    // The time of the file that holds exactly these bytes, from the open file (a
    // rename keeps it): the index takes them without reading back.
    let mut out = fs::File::from(fd);
    std::io::Write::write_all(&mut out, new_bytes).map_err(io_err(&temp_path))?;
    let mtime_ns = crate::walk::stat_of(&rustix::fs::fstat(&out).map_err(io)?).mtime_ns;
    drop(out);
    crash_point()?;
    rustix::fs::renameat(dir, &temp, dir, name).map_err(io)?;
    crash_point()?;
    // A file read again is scanned here, while its bytes are at hand.
    Ok(Replaced {
        size: new_bytes.len() as u64,
        mtime_ns,
        hash: (p.held.is_none()).then(|| index.encode_for_write(scans, &p.final_path, new_bytes)),
    })
}

/// A temporary file and a rename, without an fsync of its own (the journal was
/// flushed before; see `journal::begin`).
fn write_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temp = journal::temp_name(path, std::process::id());
    fs::write(&temp, bytes)?;
    fs::rename(&temp, path).inspect_err(|_| {
        let _ = fs::remove_file(&temp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::crash_after;
    use std::sync::Arc;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (path, content) in files {
            let full = dir.join(path);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, content).unwrap();
        }
    }

    fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_owned()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).unwrap() {
                let e = e.unwrap();
                let rel = e
                    .path()
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                if rel.starts_with(".kiln") {
                    continue;
                }
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                } else {
                    out.push((rel, fs::read(e.path()).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    /// A project of `files` in a temporary folder, its files as they are, a checker
    /// on it, and the plan of moving `old` to `new`.
    fn planned_move(
        files: &[(&str, &str)],
        old: &str,
        new: &str,
    ) -> (tempfile::TempDir, Vec<(String, Vec<u8>)>, Checker, MovePlan) {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), files);
        let before = snapshot(dir.path());
        let checker = reopen(dir.path()).unwrap();
        let p = plan(&checker, &MoveRequest::new(old, new)).unwrap();
        (dir, before, checker, p)
    }

    fn reopen(dir: &Path) -> Result<Checker, CheckerError> {
        Checker::open(
            dir,
            Arc::new(kiln_core::Registry::with_builtins()),
            &crate::index::BuildOptions::default(),
        )
    }

    /// A kill after any step of an apply is rolled back when the project is next
    /// opened: every file, its name and its bytes, as before.
    #[test]
    fn a_kill_at_any_step_is_rolled_back_on_the_next_open() {
        let files = [
            ("kiln.project", "{}"),
            ("kiln.redirects", "# log\n"),
            (
                "levels/a.level",
                r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/m", "material": "materials/old/m"}}}]}"#,
            ),
            (
                "units/u.unit",
                r#"{"entities": [{"id": "y", "components": {"mesh": {"mesh": "meshes/m", "material": "materials/old/m"}}}]}"#,
            ),
            (
                "materials/old/m.material",
                r#"{"texture": "materials/old/t"}"#,
            ),
            ("materials/old/t.png", "png"),
            ("meshes/m.mesh", "{}"),
        ];
        // The journal (its backups, its manifest under a temporary name), then 3
        // patched files (each a temporary file, then a rename) + 1 folder rename +
        // the redirect log = 10 steps.
        for steps in 0..10 {
            let (dir, before, mut checker, p) =
                planned_move(&files, "materials/old", "materials/new");
            crash_after(Some(steps));
            assert!(apply(&mut checker, &p).is_err());
            crash_after(None);
            if steps >= 2 {
                assert!(dir.path().join(".kiln/journal/journal.json").is_file());
                assert_ne!(snapshot(dir.path()), before, "step {steps} changed nothing");
            }

            let reopened = reopen(dir.path()).unwrap();
            assert_eq!(
                snapshot(dir.path()),
                before,
                "not rolled back after step {steps}"
            );
            assert!(!dir.path().join(".kiln/journal").exists());
            assert_eq!(reopened.references_to("materials/old/m.material").len(), 2);
        }
    }

    /// A project whose move patches enough files to replace them on several
    /// threads: `n` files naming `tex/t.png`, in two folders.
    fn many_referrers(n: usize) -> Vec<(String, String)> {
        let mut files = vec![
            ("kiln.project".to_owned(), "{}".to_owned()),
            ("tex/t.png".to_owned(), "png".to_owned()),
        ];
        for i in 0..n {
            files.push((
                format!("d{}/f{i:03}.json", i % 2),
                r#"["tex/t.png"]"#.to_owned(),
            ));
        }
        files
    }

    fn as_pairs(files: &[(String, String)]) -> Vec<(&str, &str)> {
        files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect()
    }

    /// Replaced on several threads, a kill at any step still leaves a journal that
    /// the next open rolls back completely, however far each thread got.
    #[test]
    fn a_kill_while_threads_replace_files_is_rolled_back_on_the_next_open() {
        let files = many_referrers(PARALLEL_REPLACE_FROM + 6);
        let files = as_pairs(&files);
        // The journal (2 steps), 2 per patched file, the rename and the log.
        let steps = 2 + 2 * (files.len() - 2) + 2;
        let mut completed = false;
        for kill_after in (2..steps + 1).step_by(11).chain([3, steps - 1, steps]) {
            let (dir, before, mut checker, p) = planned_move(&files, "tex/t.png", "tex/u.png");
            assert!(p.edits.len() >= PARALLEL_REPLACE_FROM);
            crash_after(Some(kill_after));
            let result = apply(&mut checker, &p);
            crash_after(None);
            if result.is_ok() {
                completed = true;
                continue;
            }
            assert!(dir.path().join(".kiln/journal/journal.json").is_file());
            // The kill stopped every thread: no more files replaced than steps
            // taken (a temporary file and a rename each, after the journal's 2),
            // but for one renamed by each of up to four threads just before.
            let replaced = snapshot(dir.path())
                .iter()
                .filter(|(f, bytes)| f.ends_with(".json") && bytes == br#"["tex/u.png"]"#)
                .count();
            assert!(
                replaced <= (kill_after - 2) / 2 + 4,
                "{replaced} replaced in {kill_after} steps"
            );
            reopen(dir.path()).unwrap();
            assert_eq!(
                snapshot(dir.path()),
                before,
                "not rolled back after step {kill_after}"
            );
            assert!(!dir.path().join(".kiln/journal").exists());
        }
        assert!(completed, "no kill came after the last step");
    }

    /// A save by another program to a file a helper thread is about to replace
    /// stops every thread; the move names that file and rolls back the rest.
    #[test]
    fn a_save_while_threads_replace_files_is_never_overwritten() {
        let files = many_referrers(PARALLEL_REPLACE_FROM + 6);
        let files = as_pairs(&files);
        // Every fifth file: some are replaced by the caller's thread, others by a
        // helper, whichever takes their run.
        let victims: Vec<String> = (0..PARALLEL_REPLACE_FROM + 6)
            .step_by(5)
            .map(|i| format!("d{}/f{i:03}.json", i % 2))
            .collect();
        for victim in &victims {
            let (dir, before, mut checker, p) = planned_move(&files, "tex/t.png", "tex/u.png");
            let target = dir.path().join(victim);
            BEFORE_REPLACE.with(|h| {
                *h.borrow_mut() = Some(Arc::new(move |path: &Path| {
                    if path == target {
                        let temp = path.with_extension("swp");
                        fs::write(&temp, r#"["saved by someone else"]"#).unwrap();
                        fs::rename(&temp, path).unwrap();
                    }
                }))
            });
            let result = apply(&mut checker, &p);
            BEFORE_REPLACE.with(|h| *h.borrow_mut() = None);
            match result {
                Err(CheckerError::Changed { file }) => assert_eq!(&file, victim),
                other => panic!("{victim}: not refused: {other:?}"),
            }
            let after = snapshot(dir.path());
            for (file, bytes) in &before {
                let now = after.iter().find(|(f, _)| f == file).map(|(_, b)| b);
                if file == victim {
                    assert_eq!(
                        now.map(Vec::as_slice),
                        Some(&br#"["saved by someone else"]"#[..])
                    );
                } else {
                    assert_eq!(now, Some(bytes), "{file} not rolled back");
                }
            }
            assert_eq!(after.len(), before.len(), "files left behind");
            assert!(!dir.path().join(".kiln/journal").exists());
        }
    }

    /// A folder swapped for a link to an exact copy of it outside the project,
    /// before the move or while it replaces other files: nothing outside is
    /// written. Before, the move is refused untouched; during, the half-done move's
    /// journal names a path that now leads outside, and is set aside and reported.
    #[test]
    fn a_folder_swapped_for_a_link_never_carries_a_move_outside() {
        let files = [
            ("kiln.project", "{}"),
            ("a/x.json", r#"["tex/t.png"]"#),
            ("b/y.json", r#"["tex/t.png"]"#),
            ("tex/t.png", "png"),
        ];
        for during in [false, true] {
            let (dir, before, mut checker, p) = planned_move(&files, "tex/t.png", "tex/u.png");
            let outside = tempfile::tempdir().unwrap();
            let copy = outside.path().join("b");
            fs::create_dir(&copy).unwrap();
            fs::write(copy.join("y.json"), r#"["tex/t.png"]"#).unwrap();
            let (root, link_to) = (dir.path().to_owned(), copy.clone());
            let swap = move || {
                fs::remove_dir_all(root.join("b")).unwrap();
                std::os::unix::fs::symlink(&link_to, root.join("b")).unwrap();
            };
            if during {
                let first = dir.path().join("a/x.json");
                let swap = std::sync::Mutex::new(Some(swap));
                BEFORE_REPLACE.with(|h| {
                    *h.borrow_mut() = Some(Arc::new(move |path: &Path| {
                        if path == first
                            && let Some(swap) = swap.lock().unwrap().take()
                        {
                            swap();
                        }
                    }))
                });
            } else {
                swap();
            }
            let result = apply(&mut checker, &p);
            BEFORE_REPLACE.with(|h| *h.borrow_mut() = None);
            assert!(
                result.is_err(),
                "during: {during}: the move went through the link"
            );
            assert_eq!(
                fs::read_to_string(copy.join("y.json")).unwrap(),
                r#"["tex/t.png"]"#,
                "during: {during}: written outside the project"
            );
            assert_eq!(
                fs::read_dir(&copy).unwrap().count(),
                1,
                "left a file outside"
            );
            let reopened = reopen(dir.path()).unwrap();
            assert!(!dir.path().join(".kiln/journal").exists());
            if during {
                // The journal names a path that now leads outside: recovery sets
                // it aside whole (as for a crafted one) and says so, backups kept.
                let set_aside = reopened
                    .findings()
                    .into_iter()
                    .any(|f| matches!(f, crate::findings::Finding::JournalSetAside { .. }));
                assert!(set_aside, "the half-done move is not reported");
                continue;
            }
            fs::remove_file(dir.path().join("b")).unwrap();
            let now: Vec<_> = snapshot(dir.path())
                .into_iter()
                .filter(|(f, _)| !f.starts_with('b'))
                .collect();
            let was: Vec<_> = before
                .into_iter()
                .filter(|(f, _)| !f.starts_with('b'))
                .collect();
            assert_eq!(now, was, "the project changed");
        }
    }

    /// The folder of a file being moved swapped for a link to a copy outside
    /// after the plan: the rename is refused before anything changes.
    #[test]
    fn a_rename_never_goes_through_a_folder_swapped_for_a_link() {
        let files = [
            ("kiln.project", "{}"),
            ("a/x.json", r#"["tex/t.png"]"#),
            ("tex/t.png", "png"),
        ];
        let (dir, _, mut checker, p) = planned_move(&files, "tex/t.png", "tex/u.png");
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir(outside.path().join("tex")).unwrap();
        fs::write(outside.path().join("tex/t.png"), "png").unwrap();
        fs::remove_dir_all(dir.path().join("tex")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("tex"), dir.path().join("tex")).unwrap();
        let result = apply(&mut checker, &p);
        assert!(
            matches!(&result, Err(CheckerError::Refused(why)) if why.contains("link")),
            "{result:?}"
        );
        assert!(
            outside.path().join("tex/t.png").is_file(),
            "renamed outside"
        );
        assert!(
            !outside.path().join("tex/u.png").exists(),
            "renamed outside"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("a/x.json")).unwrap(),
            r#"["tex/t.png"]"#
        );
        assert!(!dir.path().join(".kiln/journal").exists());
    }

    /// A kill during recovery itself: the next open recovers what is left.
    #[test]
    fn a_kill_during_recovery_is_recovered_on_the_next_open() {
        let files = [
            ("kiln.project", "{}"),
            ("a.json", r#"["tex/t.png"]"#),
            ("b.json", r#"["tex/t.png"]"#),
            ("tex/t.png", "png"),
        ];
        // Recovery steps: 1 rename back, then for the 2 patched files a temporary
        // file and a rename each, then the new log (removed).
        for kill_recovery_after in 0..6 {
            let (dir, before, mut checker, p) = planned_move(&files, "tex/t.png", "tex/u.png");
            // Kill the apply at its last step, once the log is written and before the
            // journal's deletion: after the journal (2), two patched files (2 each)
            // and the rename, 7 steps have passed.
            crash_after(Some(2 + 2 * 2 + 1));
            assert!(apply(&mut checker, &p).is_err());
            assert!(
                dir.path().join("tex/u.png").is_file(),
                "the apply ran to its end"
            );
            // Kill the recovery part way.
            crash_after(Some(kill_recovery_after));
            let first = reopen(dir.path());
            crash_after(None);
            assert!(
                first.is_err(),
                "recovery step {kill_recovery_after} was not killed"
            );
            reopen(dir.path()).unwrap();
            assert_eq!(
                snapshot(dir.path()),
                before,
                "recovery killed after step {kill_recovery_after}"
            );
            assert!(!dir.path().join(".kiln/journal").exists());
        }
    }

    const RACE_FILES: [(&str, &str); 5] = [
        ("kiln.project", "{}"),
        ("a.json", r#"["tex/t.png"]"#),
        ("b.json", r#"["tex/t.png"]"#),
        ("c.json", r#"["tex/t.png"]"#),
        ("tex/t.png", "png"),
    ];

    /// Another program saves a file while a move is being applied: the move stops
    /// before overwriting it, names it, and rolls back; the save is kept.
    #[test]
    fn a_save_during_an_apply_is_never_overwritten() {
        for victim in ["a.json", "b.json", "c.json"] {
            let dir = tempfile::tempdir().unwrap();
            write(dir.path(), &RACE_FILES);
            let registry = Arc::new(kiln_core::Registry::with_builtins());
            let mut checker =
                Checker::open(dir.path(), registry, &crate::index::BuildOptions::default())
                    .unwrap();
            let p = plan(&checker, &MoveRequest::new("tex/t.png", "tex/u.png")).unwrap();
            assert_eq!(p.edits.len(), 3);
            let target = dir.path().join(victim);
            BEFORE_REPLACE.with(|h| {
                *h.borrow_mut() = Some(Arc::new(move |path: &Path| {
                    if path == target {
                        // An editor's atomic save: a new file renamed over the old.
                        let temp = path.with_extension("swp");
                        fs::write(&temp, r#"["saved by someone else"]"#).unwrap();
                        fs::rename(&temp, path).unwrap();
                    }
                }))
            });
            let result = apply(&mut checker, &p);
            BEFORE_REPLACE.with(|h| *h.borrow_mut() = None);
            match result {
                Err(CheckerError::Changed { file }) => assert_eq!(file, victim),
                other => panic!("{victim}: not refused: {other:?}"),
            }
            for (file, content) in RACE_FILES {
                let now = fs::read_to_string(dir.path().join(file)).unwrap();
                if file == victim {
                    assert_eq!(now, r#"["saved by someone else"]"#);
                } else {
                    assert_eq!(now, content, "{file} not rolled back");
                }
            }
            assert!(!dir.path().join(".kiln/journal").exists());
        }
    }

    /// A kill while the journal itself is being written leaves an operation that
    /// never started: it is discarded, and nothing in the project changes.
    #[test]
    fn a_torn_journal_is_an_operation_that_never_started() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &RACE_FILES);
        let before = snapshot(dir.path());
        let journal = dir.path().join(".kiln/journal");
        fs::create_dir_all(&journal).unwrap();
        fs::write(journal.join("backups.bin"), "x").unwrap();
        fs::write(journal.join("journal.json.tmp"), r#"{"renames": [["a.js"#).unwrap();
        let registry = Arc::new(kiln_core::Registry::with_builtins());
        Checker::open(dir.path(), registry, &crate::index::BuildOptions::default()).unwrap();
        assert_eq!(snapshot(dir.path()), before);
        assert!(!journal.exists());
    }

    /// A file saved by another program after Kiln died mid-move is left as saved by
    /// the recovery; the files Kiln had patched are rolled back.
    #[test]
    fn recovery_keeps_a_save_made_after_the_crash() {
        let (dir, _, mut checker, p) = planned_move(&RACE_FILES, "tex/t.png", "tex/u.png");
        // Killed once a.json and b.json are patched and c.json is not: after the
        // journal (2 steps) and two files (a temporary file and a rename each).
        crash_after(Some(2 + 2 * 2));
        assert!(apply(&mut checker, &p).is_err());
        crash_after(None);
        let read = |f: &str| fs::read_to_string(dir.path().join(f)).unwrap();
        assert_eq!(read("a.json"), r#"["tex/u.png"]"#, "a.json was patched");
        assert_eq!(read("b.json"), r#"["tex/u.png"]"#, "b.json was patched");
        assert_eq!(read("c.json"), r#"["tex/t.png"]"#, "c.json was not");
        // Someone saves a and c.
        fs::write(dir.path().join("a.json"), "[\"mine\"]").unwrap();
        fs::write(dir.path().join("c.json"), "[\"mine too\"]").unwrap();
        reopen(dir.path()).unwrap();
        assert_eq!(read("a.json"), "[\"mine\"]");
        assert_eq!(
            read("b.json"),
            r#"["tex/t.png"]"#,
            "Kiln's patch rolled back"
        );
        assert_eq!(read("c.json"), "[\"mine too\"]");
        assert!(dir.path().join("tex/t.png").is_file());
    }

    /// Past the bytes an apply keeps, a file is read again when it is written: a
    /// save made since its first reading is never overwritten, whether the editor
    /// renamed a new file over it or wrote it in place keeping its size and time
    /// (then only its content tells). The files kept are rolled back too.
    #[test]
    fn a_file_read_again_before_it_is_written_must_be_the_version_read_first() {
        let files = many_referrers(40);
        let pairs = as_pairs(&files);
        let patched: usize = files.iter().skip(2).map(|(_, c)| c.len() + 4).sum();
        assert!(patched > 2 * HOLD_PATCHED_BYTES, "every file would be kept");
        for in_place in [false, true] {
            let (dir, before, mut checker, p) = planned_move(&pairs, "tex/t.png", "tex/u.png");
            // The last file written, far past what is kept.
            let victim = dir.path().join(&p.edits.last().unwrap().file);
            let saved = r#"["tex/t.pnG"]"#;
            let target = victim.clone();
            BEFORE_REPLACE.with(|h| {
                *h.borrow_mut() = Some(Arc::new(move |path: &Path| {
                    if path != target {
                        return;
                    }
                    if in_place {
                        let mtime = fs::metadata(path).unwrap().modified().unwrap();
                        fs::write(path, saved).unwrap();
                        let file = fs::File::options().write(true).open(path).unwrap();
                        file.set_modified(mtime).unwrap();
                    } else {
                        let temp = path.with_extension("swp");
                        fs::write(&temp, saved).unwrap();
                        fs::rename(&temp, path).unwrap();
                    }
                }))
            });
            let result = apply(&mut checker, &p);
            BEFORE_REPLACE.with(|h| *h.borrow_mut() = None);
            assert!(
                matches!(result, Err(CheckerError::Changed { .. })),
                "in place {in_place}: {result:?}"
            );
            assert_eq!(fs::read_to_string(&victim).unwrap(), saved);
            let now = snapshot(dir.path());
            for (file, bytes) in &before {
                if dir.path().join(file) != victim {
                    assert!(
                        now.contains(&(file.clone(), bytes.clone())),
                        "{file} not rolled back"
                    );
                }
            }
            assert!(!dir.path().join(".kiln/journal").exists());
        }
    }

    /// A file that changed since the plan refuses the apply before anything is
    /// written: the project is as it was, and the backups already written for the
    /// files read before it are removed with the journal's folder.
    #[test]
    fn an_apply_refused_while_reading_leaves_no_journal() {
        let files = many_referrers(10);
        let pairs = as_pairs(&files);
        let (dir, _, mut checker, p) = planned_move(&pairs, "tex/t.png", "tex/u.png");
        let last = p.edits.last().unwrap().file.clone();
        fs::write(dir.path().join(&last), r#"["tex/t.png", "other"]"#).unwrap();
        let before = snapshot(dir.path());
        match apply(&mut checker, &p) {
            Err(CheckerError::Changed { file }) => assert_eq!(file, last),
            other => panic!("not refused: {other:?}"),
        }
        assert_eq!(snapshot(dir.path()), before);
        assert!(!dir.path().join(".kiln/journal").exists());
    }

    /// The journal's folder swapped for a link after the project was opened: the
    /// apply refuses before writing a backup anywhere, and the project is as it was.
    #[test]
    fn a_journal_folder_swapped_for_a_link_is_never_written_through() {
        let files = many_referrers(4);
        let pairs = as_pairs(&files);
        let (dir, before, mut checker, p) = planned_move(&pairs, "tex/t.png", "tex/u.png");
        let elsewhere = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join(".kiln")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(".kiln/journal")).unwrap();
        let result = apply(&mut checker, &p);
        assert!(
            matches!(result, Err(CheckerError::Refused(_))),
            "{result:?}"
        );
        assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
        fs::remove_file(dir.path().join(".kiln/journal")).unwrap();
        assert_eq!(snapshot(dir.path()), before);
    }

    /// A move that changed at least a tenth of the project's files (patched or
    /// moved) stores the cache when its checker is dropped: the next open scans
    /// none of them again (it may read some, written too recently to trust their
    /// times, and find them the same). A smaller move leaves the cache as it was.
    #[test]
    fn a_move_changing_a_tenth_of_the_files_stores_the_cache() {
        // Referrers, textures beside the one referred to, what moves, stored.
        let cases = [
            (40, 0, ("tex/t.png", "tex/u.png"), true),
            (2, 0, ("tex/t.png", "tex/u.png"), false),
            (1, 20, ("tex", "gfx/tex"), true),
        ];
        for (referrers, textures, (old, new), stored) in cases {
            let mut files = many_referrers(referrers);
            for i in 0..60 {
                files.push((format!("other/o{i:02}.json"), "[]".to_owned()));
            }
            for i in 0..textures {
                files.push((format!("tex/x{i:02}.png"), "png".to_owned()));
            }
            let (dir, _, checker, p) = planned_move(&as_pairs(&files), old, new);
            drop(checker);
            age(dir.path(), &files);
            // Stored with the files' new times: the open that moves writes nothing.
            drop(reopen(dir.path()).unwrap());
            let mut checker = reopen(dir.path()).unwrap();
            apply_without_undo(&mut checker, &p).unwrap();
            drop(checker);
            let parsed = reopen(dir.path()).unwrap().index().stats().parsed;
            if stored {
                assert_eq!(
                    parsed, 0,
                    "{referrers} referrers, {old}: files scanned again"
                );
            } else {
                // The patched files, the moved one and the redirect log.
                assert_eq!(parsed, referrers + 2, "{referrers} referrers, {old}");
            }
        }
    }

    /// Sets the files' times a minute back: no entry is then read again for being
    /// too new to trust.
    fn age(root: &Path, files: &[(String, String)]) {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        for (file, _) in files {
            let f = fs::File::options()
                .write(true)
                .open(root.join(file))
                .unwrap();
            f.set_modified(old).unwrap();
        }
    }

    /// The files a move carries along keep their index entries under their new
    /// paths, scans still in the cache's bytes: none is read again. The index after
    /// the move is the one a fresh open builds.
    #[test]
    fn moved_files_are_carried_in_the_index_not_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = vec![("kiln.project".to_owned(), "{}".to_owned())];
        for i in 0..6 {
            files.push((
                format!("art/m{i}.material"),
                format!(r#"{{"texture": "art/t{i}"}}"#),
            ));
            files.push((format!("art/t{i}.png"), "png".to_owned()));
        }
        files.push((
            "levels/a.level".to_owned(),
            r#"{"entities": [{"id": "e", "components": {"mesh": {"material": "art/m0"}}}]}"#
                .to_owned(),
        ));
        write(dir.path(), &as_pairs(&files));
        age(dir.path(), &files);
        drop(reopen(dir.path()).unwrap());
        let mut checker = reopen(dir.path()).unwrap();
        let p = plan(&checker, &MoveRequest::new("art", "gfx/art")).unwrap();
        apply(&mut checker, &p).unwrap();
        let patched: Vec<String> = p
            .edits
            .iter()
            .map(|e| renamed_path(&p.renames, &e.file))
            .collect();
        let moved: Vec<&crate::index::FileEntry> = checker
            .index()
            .files_in_folder("gfx/art")
            .filter(|f| !patched.contains(&f.path.to_string()))
            .collect();
        assert_eq!(
            moved.len(),
            6,
            "the materials' textures and the materials not patched"
        );
        for f in &moved {
            assert!(!f.scan_is_decoded(), "{} was read again", f.path);
        }
        // The patched files' new scans are kept in the cache's encoding too.
        for path in &patched {
            let f = checker.index().file(path).unwrap();
            assert!(!f.scan_is_decoded(), "{path} holds its scan decoded");
        }
        let fresh = reopen(dir.path()).unwrap();
        let entries = |c: &Checker| -> Vec<(String, u64, u64, u64, crate::scan::FileScan)> {
            c.index()
                .files()
                .filter(|f| f.path.as_ref() != REDIRECT_FILE)
                .map(|f| {
                    (
                        f.path.to_string(),
                        f.size,
                        f.mtime_ns,
                        f.hash,
                        f.scan().clone(),
                    )
                })
                .collect()
        };
        assert_eq!(entries(&checker), entries(&fresh));
    }
}
