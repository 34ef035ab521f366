//! Renames and moves of files and folders, with every reference patched.
//!
//! A move is first a [`MovePlan`]: each file that moves, and each reference that
//! changes (file, line, field, old -> new text), which can be shown before anything is
//! touched. [`apply`] then performs it crash-safely:
//!
//! 1. Refuse, changing nothing, if a target exists, a path is not canonical or leaves
//!    the project, or a file to patch changed on disk since it was indexed.
//! 2. Write a journal under `.kiln/journal/`: the original of every file to be patched
//!    (in one backup file) and a manifest of the moves, flushed to disk before any
//!    project file changes.
//! 3. Patch each file through a temporary file and a rename, replacing only the bytes
//!    of the references (every other byte stays identical), then move the files and
//!    append the moves to the redirect log.
//! 4. Delete the journal. If the process dies before this, [`recover`] (run when a
//!    project is opened) rolls everything back from the journal.
//!
//! [`apply`] returns the inverse move, so an editor can undo the whole operation as
//! one step.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use kiln_core::{ResourcePath, write_atomic};
use serde::{Deserialize, Serialize};

use crate::Checker;
use crate::error::{CheckerError, io_err};
use crate::findings::{Finding, Place, replacement_text};
use crate::redirects::{REDIRECT_FILE, Redirects};

/// A requested move: project paths of a file (with extension) or a folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveRequest {
    /// Pairs of old and new paths, applied together.
    pub pairs: Vec<(String, String)>,
}

impl MoveRequest {
    /// One file or folder.
    pub fn new(old: &str, new: &str) -> Self {
        MoveRequest {
            pairs: vec![(old.to_owned(), new.to_owned())],
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
    pub old_text: String,
    /// The text after the move.
    pub new_text: String,
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

/// Everything a move will do, shown before it is applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MovePlan {
    /// Files that move, old -> new.
    pub moves: Vec<(String, String)>,
    /// Files whose references are rewritten.
    pub edits: Vec<FileEdit>,
}

impl MovePlan {
    /// Number of references rewritten.
    pub fn change_count(&self) -> usize {
        self.edits.iter().map(|e| e.changes.len()).sum()
    }
}

/// Collects changes per file, then orders each file's changes by position.
#[derive(Default)]
struct Edits(BTreeMap<String, FileEdit>);

impl Edits {
    fn add(&mut self, file: &str, expected_hash: u64, change: Change) {
        self.0
            .entry(file.to_owned())
            .or_insert_with(|| FileEdit {
                file: file.to_owned(),
                expected_hash,
                changes: Vec::new(),
            })
            .changes
            .push(change);
    }

    fn into_plan(self, moves: Vec<(String, String)>) -> MovePlan {
        let mut edits: Vec<FileEdit> = self.0.into_values().collect();
        for e in &mut edits {
            e.changes.sort_by_key(|c| c.span);
        }
        MovePlan { moves, edits }
    }
}

fn refuse<T>(message: String) -> Result<T, CheckerError> {
    Err(CheckerError::Refused(message))
}

/// Plans moving each `old` (a file, or a folder with everything under it) to `new`.
pub fn plan(checker: &Checker, request: &MoveRequest) -> Result<MovePlan, CheckerError> {
    let index = checker.index();
    let mut moves: Vec<(String, String)> = Vec::new();
    for (old, new) in &request.pairs {
        let (old, new) = (old.trim_end_matches('/'), new.trim_end_matches('/'));
        let files = checker.files_under(old);
        if files.is_empty() {
            return refuse(format!(
                "nothing to move: {old} is not a file or folder of the project"
            ));
        }
        let is_file = files.len() == 1 && files[0] == old;
        for f in files {
            let target = if is_file {
                new.to_owned()
            } else {
                format!("{new}{}", &f[old.len()..])
            };
            if let Err(e) = ResourcePath::split_file(&target) {
                return refuse(format!("cannot move {f} to {target}: {e}"));
            }
            moves.push((f, target));
        }
    }
    let sources: HashSet<&str> = moves.iter().map(|(o, _)| o.as_str()).collect();
    let mut targets = HashSet::new();
    for (old, new) in &moves {
        if !targets.insert(new.as_str()) {
            return refuse(format!("two files would move to {new}"));
        }
        let case_only = old.to_lowercase() == new.to_lowercase() && old != new;
        let occupied = (index.contains(new) && !sources.contains(new.as_str()))
            || (!case_only && !index.contains(new) && checker.project().root().join(new).exists());
        if occupied {
            return refuse(format!("cannot move {old} to {new}: {new} already exists"));
        }
        checker
            .project()
            .check_inside(&checker.project().root().join(new))?;
    }
    let mut edits = Edits::default();
    for (old, new) in &moves {
        let ext_old = old.rsplit_once('.').map(|(_, e)| e);
        let ext_new = new.rsplit_once('.').map(|(_, e)| e);
        for r in checker.graph().references_to(old) {
            let Some(entry) = index.file(&r.file) else {
                continue;
            };
            let Some(raw) = entry.scan.get(r.index) else {
                continue;
            };
            if raw.expected_type.is_some() && ext_old != ext_new {
                return refuse(format!(
                    "cannot move {old} to {new}: {} refers to it as a .{} resource, and the move changes its type",
                    Place::of(&r.file, &raw),
                    ext_old.unwrap_or("")
                ));
            }
            let change = Change {
                place: Place::of(&r.file, &raw),
                span: raw.span,
                old_text: raw.text.to_owned(),
                new_text: replacement_text(&raw, old, new),
            };
            edits.add(&r.file, entry.hash, change);
        }
    }
    Ok(edits.into_plan(moves))
}

/// The patches that point references to `old` (a file that no longer exists, e.g.
/// renamed outside Kiln) at `new` instead; no file moves.
pub fn plan_repoint(checker: &Checker, old: &str, new: &str) -> MovePlan {
    let mut edits = Edits::default();
    let mut add = |file: &str, index: usize| {
        let Some(entry) = checker.index().file(file) else {
            return;
        };
        let Some(raw) = entry.scan.get(index) else {
            return;
        };
        let change = Change {
            place: Place::of(file, &raw),
            span: raw.span,
            old_text: raw.text.to_owned(),
            new_text: replacement_text(&raw, old, new),
        };
        edits.add(file, entry.hash, change);
    };
    // Typed references still point at the missing file in the graph.
    for r in checker.graph().references_to(old) {
        add(&r.file, r.index);
    }
    // Generic ones stopped resolving when the file went away: match their text.
    let base = old.rsplit_once('.').map_or(old, |(b, _)| b);
    for f in checker.index().files() {
        for (i, raw) in f.scan.iter().enumerate() {
            if raw.expected_type.is_none() && (raw.text == old || raw.text == base) {
                add(&f.path, i);
            }
        }
    }
    edits.into_plan(Vec::new())
}

/// The patches `kiln check --fix` makes: references that use an old path from the
/// redirect log, rewritten to the path the resource has now.
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
            .scan
            .iter()
            .find(|r| r.pointer == place.pointer && r.line == place.line)
        else {
            continue;
        };
        let file = place.file.clone();
        let change = Change {
            place,
            span: raw.span,
            old_text: raw.text.to_owned(),
            new_text: replacement,
        };
        edits.add(&file, entry.hash, change);
    }
    edits.into_plan(Vec::new())
}

/// The journal of an operation in progress.
#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    /// Files moved (or about to be), old -> new.
    moves: Vec<(String, String)>,
    /// Files patched (or about to be), with the byte range of their original content
    /// in the journal's backup file. A file that did not exist before has none.
    patched: Vec<(String, Option<(u64, u64)>)>,
}

const JOURNAL_DIR: &str = ".kiln/journal";
const JOURNAL_FILE: &str = "journal.json";
const BACKUP_FILE: &str = "backups.bin";

fn journal_dir(root: &Path) -> PathBuf {
    root.join(JOURNAL_DIR)
}

/// Writes `bytes` to `path` and flushes it to disk.
fn write_durable(path: &Path, bytes: &[u8]) -> Result<(), CheckerError> {
    let mut f = fs::File::create(path).map_err(io_err(path))?;
    std::io::Write::write_all(&mut f, bytes).map_err(io_err(path))?;
    f.sync_all().map_err(io_err(path))
}

/// Flushes a folder's entries (new and renamed files in it) to disk.
fn sync_dir(dir: &Path) -> Result<(), CheckerError> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(dir))
}

/// Applies `plan` (see the module docs). Returns the inverse move.
pub fn apply(checker: &mut Checker, plan: &MovePlan) -> Result<MoveRequest, CheckerError> {
    let root = checker.project().root().to_owned();
    if journal_dir(&root).join(JOURNAL_FILE).exists() {
        return refuse(
            "another operation's journal is in .kiln/journal; reopen the project to recover it"
                .into(),
        );
    }
    // Read and patch every file in memory first: any refusal leaves the disk untouched.
    let mut patched: Vec<(String, Vec<u8>, Vec<u8>)> = Vec::new();
    for edit in &plan.edits {
        let path = root.join(&edit.file);
        let bytes = fs::read(&path).map_err(io_err(&path))?;
        if xxhash_rust::xxh3::xxh3_64(&bytes) != edit.expected_hash {
            return refuse(format!(
                "{} changed on disk since it was indexed; re-index and plan again",
                edit.file
            ));
        }
        let mut out = bytes.clone();
        for c in edit.changes.iter().rev() {
            let (s, e) = (c.span.0 as usize, c.span.1 as usize);
            if e > out.len() || s > e {
                return refuse(format!(
                    "{}: a planned change lies outside the file; re-index and plan again",
                    edit.file
                ));
            }
            out.splice(s..e, c.new_text.bytes());
        }
        patched.push((edit.file.clone(), bytes, out));
    }
    let mut log_moves = plan.moves.clone();
    log_moves.retain(|(o, n)| o != n);

    // The journal is the commit point: every original in one backup file and the
    // manifest, both flushed to disk before any project file changes. Project files
    // are then replaced by rename without a flush of their own (ext4 and most
    // journaling file systems write a renamed-over file's data before committing the
    // rename), so a thousand-file rename costs two flushes, not a thousand.
    let dir = journal_dir(&root);
    fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let mut journal = Journal {
        moves: plan.moves.clone(),
        patched: Vec::new(),
    };
    let mut backups: Vec<u8> = Vec::new();
    let mut backup = |original: &[u8]| {
        let range = (backups.len() as u64, original.len() as u64);
        backups.extend_from_slice(original);
        Some(range)
    };
    for (file, original, _) in &patched {
        journal.patched.push((file.clone(), backup(original)));
    }
    let redirect_path = root.join(REDIRECT_FILE);
    if !log_moves.is_empty() {
        let range = fs::read(&redirect_path)
            .ok()
            .and_then(|original| backup(&original));
        journal.patched.push((REDIRECT_FILE.to_owned(), range));
    }
    write_durable(&dir.join(BACKUP_FILE), &backups)?;
    let manifest =
        serde_json::to_vec(&journal).map_err(|e| CheckerError::Refused(e.to_string()))?;
    write_durable(&dir.join(JOURNAL_FILE), &manifest)?;
    sync_dir(&dir)?;

    let result = (|| -> Result<(), CheckerError> {
        for (file, _, new_bytes) in &patched {
            let path = root.join(file);
            write_unsynced(&path, new_bytes).map_err(io_err(&path))?;
            crash_point()?;
        }
        for (old, new) in &plan.moves {
            move_file(&root, old, new)?;
            crash_point()?;
        }
        if !log_moves.is_empty() {
            Redirects::append(&root, &log_moves)?;
            crash_point()?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        if crashed() {
            // Simulated kill: leave the journal for the next open to recover.
            return Err(e);
        }
        // Put everything back; the journal makes this the same path as crash recovery.
        recover(&root)?;
        return Err(e);
    }
    fs::remove_dir_all(&dir).map_err(io_err(&dir))?;
    for (old, _) in &plan.moves {
        remove_empty_parents(&root, old);
    }

    let mut touched: Vec<String> = patched.iter().map(|(f, _, _)| f.clone()).collect();
    for (old, new) in &plan.moves {
        touched.push(old.clone());
        touched.push(new.clone());
    }
    touched.push(REDIRECT_FILE.to_owned());
    checker.refresh(&touched)?;
    Ok(MoveRequest {
        pairs: plan
            .moves
            .iter()
            .rev()
            .map(|(o, n)| (n.clone(), o.clone()))
            .collect(),
    })
}

#[cfg(test)]
thread_local! {
    /// Steps left before a simulated kill, in tests.
    static CRASH_AFTER: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    static CRASHED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// In tests, stops `apply` dead after the configured number of steps.
fn crash_point() -> Result<(), CheckerError> {
    #[cfg(test)]
    {
        let left = CRASH_AFTER.get();
        if let Some(n) = left {
            if n == 0 {
                CRASHED.set(true);
                return Err(CheckerError::Refused("simulated crash".into()));
            }
            CRASH_AFTER.set(Some(n - 1));
        }
    }
    Ok(())
}

fn crashed() -> bool {
    #[cfg(test)]
    {
        CRASHED.get()
    }
    #[cfg(not(test))]
    {
        false
    }
}

/// A temporary file and a rename, without an fsync of its own (the caller syncs once).
fn write_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let temp = dir.join(format!(".{name}.{}.kiln-tmp", std::process::id()));
    fs::write(&temp, bytes)?;
    fs::rename(&temp, path).inspect_err(|_| {
        let _ = fs::remove_file(&temp);
    })
}

/// Moves one file, through a temporary name when only the case changes (so that
/// case-insensitive file systems rename it too).
fn move_file(root: &Path, old: &str, new: &str) -> Result<(), CheckerError> {
    let (from, to) = (root.join(old), root.join(new));
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    if old.to_lowercase() == new.to_lowercase() {
        let temp = root.join(format!("{old}.kiln-case-rename"));
        fs::rename(&from, &temp).map_err(io_err(&from))?;
        fs::rename(&temp, &to).map_err(io_err(&to))
    } else {
        fs::rename(&from, &to).map_err(io_err(&from))
    }
}

fn remove_empty_parents(root: &Path, file: &str) {
    let mut dir = root.join(file);
    while dir.pop() && dir != root {
        if fs::remove_dir(&dir).is_err() {
            break;
        }
    }
}

/// Rolls back an operation that a crash interrupted, if its journal exists: moved
/// files go back, patched files get their backed-up content. Returns whether there was
/// anything to recover. Run when a project is opened.
pub fn recover(root: &Path) -> Result<bool, CheckerError> {
    let dir = journal_dir(root);
    let manifest = dir.join(JOURNAL_FILE);
    let bytes = match fs::read(&manifest) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Backups without a manifest: the crash came before the commit point and
            // no project file was touched.
            if dir.exists() {
                fs::remove_dir_all(&dir).map_err(io_err(&dir))?;
            }
            return Ok(false);
        }
        Err(e) => return Err(io_err(&manifest)(e)),
    };
    let journal: Journal = serde_json::from_slice(&bytes).map_err(|e| {
        CheckerError::Refused(format!("{}: unreadable journal: {e}", manifest.display()))
    })?;
    for (old, new) in journal.moves.iter().rev() {
        let (from, to) = (root.join(new), root.join(old));
        if from.exists() && (!to.exists() || old.to_lowercase() == new.to_lowercase()) {
            move_file(root, new, old)?;
        }
        let temp = root.join(format!("{old}.kiln-case-rename"));
        if temp.exists() {
            fs::rename(&temp, &to).map_err(io_err(&temp))?;
        }
    }
    let backups = fs::read(dir.join(BACKUP_FILE)).map_err(io_err(dir.join(BACKUP_FILE)))?;
    for (file, range) in &journal.patched {
        let path = root.join(file);
        match range {
            Some((start, len)) => {
                let original = usize::try_from(*start)
                    .ok()
                    .zip(usize::try_from(*len).ok())
                    .and_then(|(s, l)| backups.get(s..s.checked_add(l)?))
                    .ok_or_else(|| {
                        CheckerError::Refused(format!(
                            "{}: the journal's backup of {file} is truncated",
                            dir.display()
                        ))
                    })?;
                write_atomic(&path, original).map_err(io_err(&path))?;
            }
            None => {
                let _ = fs::remove_file(&path);
            }
        }
    }
    fs::remove_dir_all(&dir).map_err(io_err(&dir))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
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
        // 3 patched files + 2 moves + the redirect log = 6 steps.
        for crash_after in 0..6 {
            let dir = tempfile::tempdir().unwrap();
            write(dir.path(), &files);
            let before = snapshot(dir.path());
            let registry = Arc::new(kiln_core::Registry::with_builtins());
            let options = crate::index::BuildOptions::default();
            let mut checker = Checker::open(dir.path(), registry.clone(), &options).unwrap();
            let p = plan(
                &checker,
                &MoveRequest::new("materials/old", "materials/new"),
            )
            .unwrap();
            CRASH_AFTER.set(Some(crash_after));
            CRASHED.set(false);
            assert!(apply(&mut checker, &p).is_err());
            CRASH_AFTER.set(None);
            assert!(dir.path().join(".kiln/journal/journal.json").is_file());
            assert_ne!(
                snapshot(dir.path()),
                before,
                "step {crash_after} changed nothing"
            );

            let reopened = Checker::open(dir.path(), registry, &options).unwrap();
            assert_eq!(
                snapshot(dir.path()),
                before,
                "not rolled back after step {crash_after}"
            );
            assert!(!dir.path().join(".kiln/journal").exists());
            assert_eq!(reopened.references_to("materials/old/m.material").len(), 2);
        }
    }
}
