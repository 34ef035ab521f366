//! Planning a move: each file that moves, each reference that changes (file,
//! line, field, old -> new text), and each reference the move touches but leaves
//! alone because it is ambiguous, all worked out against the index before anything
//! is touched ([`MovePlan`]).
//!
//! The semantics are POSIX `mv`'s, stricter where it would lose data: a file or
//! folder moves to a path that must not exist (never onto a file, never merged into
//! a folder); [`MoveRequest::from_arguments`] turns `mv A B/` or `mv A B` with `B` an
//! existing folder into "move A inside B". A folder moves as one rename, with
//! whatever it holds (hidden files too).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use kiln_core::fs::Kind;
use std::sync::Arc;

use kiln_core::ResourcePath;
use serde::{Deserialize, Serialize};

use crate::Checker;
use crate::check::{Finding, Place, SharedStrings, replacement_text};
use crate::error::CheckerError;
use crate::fs::{is_excluded, is_within as within, split_extension};
use crate::index::REDIRECT_FILE;
use crate::resolve::Target;
use crate::resolve::keys_naming;
use crate::scan::{Naming, RefView};

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
            || (kind_below(root, dest) == Some(Kind::Folder)
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
pub(super) fn renamed_path(renames: &[(String, String)], path: &str) -> String {
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
    if new.chars().any(char::is_control) {
        return Err(
            "the new path holds a control character (a line break, a tab); the redirect log and every tool reading paths line by line would misread it".into(),
        );
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
        let folders = crate::fs::FolderCursor::default();
        match (folders.identity(root, old), folders.identity(root, new)) {
            (Ok(a), Ok(b)) => a.dev == b.dev && a.ino == b.ino,
            _ => false,
        }
    };
    if let Some(kind) = kind_below(root, new)
        && !same_file()
    {
        let what = if kind == Kind::Folder {
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
            match kind_below(root, &prefix) {
                Some(Kind::Folder) => continue,
                Some(Kind::Link) => {
                    return Err(format!("{prefix} is a link; Kiln never moves through one"));
                }
                Some(_) => return Err(format!("{prefix} is a file, not a folder")),
                None => {}
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
pub(super) fn reached_without_links(
    root: &Path,
    rel: &str,
    must_exist: bool,
) -> Result<Vec<String>, CheckerError> {
    let refused = |why: String| crate::error::refused(rel, why);
    let segments: Vec<&str> = rel.split('/').collect();
    for k in 0..segments.len() {
        let prefix = segments[..=k].join("/");
        let last = k + 1 == segments.len();
        match crate::fs::stat_below(root, &prefix) {
            Ok((kiln_core::fs::Kind::Folder, _)) => {}
            Ok((kiln_core::fs::Kind::Link, _)) => {
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

/// What is at `rel` below `root`, reached without following a link (a link is
/// one); `None` if nothing is, or it cannot be reached.
fn kind_below(root: &Path, rel: &str) -> Option<Kind> {
    crate::fs::stat_below(root, rel).ok().map(|(kind, _)| kind)
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
            && crate::fs::is_plain_relative(old)
            && kind_below(root, old) == Some(Kind::Folder);
        if !is_file && !is_folder {
            return Err(crate::error::refused(
                old,
                "is not a file or folder of the project: nothing to move",
            ));
        }
        check_target(root, old, new, is_folder, request.undoes.is_some())
            .map_err(|reason| refused(old, new, reason))?;
        if kiln_core::fs::goes_through_link(root, Path::new(new)) {
            return Err(refused(old, new, "the path leads outside the project"));
        }
        // A name with a line break would write lines of its own into the redirect
        // log (a folder move logs every file in it).
        if let Some(odd) = files.iter().find(|f| f.chars().any(char::is_control)) {
            return Err(refused(
                old,
                new,
                format!(
                    "{} holds a control character in its name (a line break, a tab); rename it first",
                    odd.escape_debug()
                ),
            ));
        }
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
        let typed = raw
            .expected_type
            .is_some_and(|t| t != crate::scan::FULL_PATH);
        if typed && ext_old != split_extension(new).map(|(_, e)| e) {
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
                let target = match crate::resolve::resolve(index, (old, &raw), &mut buf) {
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
    let named = kiln_core::gltf::resolve_uri(at, raw.text);
    (named.as_deref() != Ok(target)).then(|| kiln_core::gltf::replacement_uri(at, target, raw.text))
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
                let named = |t: &str| kiln_core::gltf::resolve_uri(&at, t).ok();
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
    // A path the move makes (a moved file's, or a new folder: one that holds no
    // other file now) takes over the references written as that path, which named
    // the files with that path without extension (one, or several: ambiguous).
    let mut takers: BTreeSet<&str> = moved.values().copied().collect();
    for new in moved.values() {
        let mut at: &str = new;
        while let Some((dir, _)) = at.rsplit_once('/') {
            let there = (index.files_in_folder(dir)).any(|f| !moved.contains_key(&*f.path));
            if there || !takers.insert(dir) {
                break;
            }
            at = dir;
        }
    }
    let takers: Vec<&str> = takers.into_iter().collect();
    checker.each_reference_under(&takers, |from, _, raw, target| {
        if raw.naming != Naming::ProjectPath || takers.binary_search(&raw.text).is_err() {
            return;
        }
        let named: Vec<String> = match &target {
            Target::Ambiguous(candidates) => candidates.iter().map(|c| c.to_string()).collect(),
            Target::Resolved(file) if **file != *raw.text => vec![file.to_string()],
            _ => return,
        };
        // What moves with it was patched or listed above.
        if named.iter().any(|c| moved.contains_key(c.as_str())) {
            return;
        }
        let mut candidates = named;
        candidates.push(raw.text.to_owned());
        candidates.sort();
        skipped.push(Skipped {
            place: Place::of(&from.path, raw),
            text: raw.text.to_owned(),
            reason: SkipReason::BecomesAmbiguous { candidates },
        });
    });
    // One reference found both ways is listed once, where it was first found.
    let mut seen = HashSet::new();
    skipped.retain(|s| seen.insert((s.place.file.clone(), s.place.pointer.clone())));
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
        if except.iter().any(|e| crate::fs::is_within(&r.file, e)) {
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
