//! Applying a [`MovePlan`] as one transaction, crash-safely:
//!
//! 1. Refuse, changing nothing, if a target exists, a path is not canonical or leaves
//!    the project, or a file to patch changed on disk since it was indexed.
//! 2. Write a journal under `.kiln/journal/` (`fs/journal.rs`): the original of every
//!    file to be patched and the renames, flushed to disk before any project file
//!    changes.
//! 3. Patch each file through a temporary file and a rename, replacing only the bytes
//!    of the references (every other byte stays identical), then rename the files
//!    and folders and record the moves in the redirect log.
//! 4. Delete the journal. If the process dies before this, the next open rolls
//!    everything back from the journal.
//!
//! [`apply`] returns the [`Operation`] that undoes it: moving back restores every
//! file byte for byte, including the redirect log, and removes the folders the move
//! created.

use std::path::Path;

use crate::Checker;
use crate::error::{CheckerError, io_err};
use crate::fs::journal::{self, Journal, crash_point, crashed};
use crate::fs::split_extension;
use crate::index::WriteScans;
use crate::index::{REDIRECT_FILE, Redirects};
use kiln_core::fs::FileIdentity;

use kiln_core::fs::{Durability, Replacement, replace_at};

use super::plan::*;

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
    if !gltf_type || !kiln_core::gltf::is_binary(ext, bytes) {
        return Ok(None);
    }
    kiln_core::gltf::glb_layout(bytes)
        .map(|layout| Some(layout.json))
        .map_err(|message| CheckerError::Malformed {
            file: file.to_owned(),
            message,
        })
}

/// The text a JSON string's body (the bytes between its quotes) stands for, if it
/// is one.
fn json_string_body(raw: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    let body = std::str::from_utf8(raw).ok()?;
    if !body.contains('\\') {
        // No escape: the body is the text (a quote or a control character in it
        // would not have been a string body).
        return (!body.contains('"') && !body.chars().any(char::is_control))
            .then_some(std::borrow::Cow::Borrowed(body));
    }
    serde_json::from_str::<String>(&format!("\"{body}\""))
        .ok()
        .map(std::borrow::Cow::Owned)
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
    // Each span must hold the reference the plan read there, and the spans must
    // run in order without overlapping: a cache whose positions are wrong (damaged
    // with a valid checksum, or crafted) is refused before anything is written,
    // never turned into broken JSON.
    let mut after_last = 0;
    let texts: Vec<String> = edit
        .changes
        .iter()
        .map(|c| {
            let (s, e) = (c.span.0 as usize, c.span.1 as usize);
            let outside_json = glb.as_ref().is_some_and(|j| s < j.start || e > j.end);
            let in_order = s >= after_last;
            after_last = e;
            match bytes.get(s..e) {
                Some(old)
                    if !outside_json
                        && in_order
                        && json_string_body(old).as_deref() == Some(&*c.old_text) =>
                {
                    Ok(encode_like(&c.new_text, old))
                }
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
        out = kiln_core::gltf::repack_glb(bytes, &out).map_err(|message| {
            CheckerError::Malformed {
                file: edit.file.clone(),
                message,
            }
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
pub(super) const HOLD_PATCHED_BYTES: usize = 300;

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
    let lock = crate::fs::exclusive(&root, &|| checker.notify_waiting())?;
    if journal::is_pending(&root) {
        return Err(crate::error::refused(
            journal::journal_dir(&root),
            "another operation's journal is here; reopen the project to recover it",
        ));
    }
    // The plan stands only on the project it was made on: another operation since
    // (a move, a fix; see `crate::fs::ProjectLock`) may have written references it
    // does not patch, taken a name it moves to, or moved what it patches to.
    if lock.generation() != checker.generation() {
        return Err(CheckerError::ProjectChanged);
    }
    // Read and patch every file first, its original going to the journal's backups
    // as it is read: any refusal leaves the project untouched (and the backups are
    // removed when `backups` is dropped).
    let mut backups = journal::Backups::start(&root)?;
    let mut prepared: Vec<Prepared> = Vec::with_capacity(plan.edits.len());
    let mut backed_up: Vec<(String, Option<(u64, u64)>)> = Vec::new();
    let mut held_bytes = 0usize;
    let folders = crate::fs::FolderCursor::default();
    let read_and_patched = (|| {
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
        Ok(())
    })();
    if let Err(e) = read_and_patched {
        if let CheckerError::Changed { file } = &e {
            // The file is not what the index says (saved since, or an entry a
            // damaged cache gave with the right size and time but the wrong hash
            // or positions): it is read again now, so that the plan made next
            // stands on what it holds, and the cache is written again with it.
            checker.read_again(file)?;
        }
        return Err(e);
    }
    // Patches only are undone by patches (a move is undone by moving back).
    let inverse_edits = (undo && plan.renames.is_empty()).then(|| inverse_patches(&prepared));

    // The redirect log is one more patched file.
    let log_path = root.join(REDIRECT_FILE);
    let log_before = match kiln_core::fs::read_below(&root, Path::new(REDIRECT_FILE), 256 << 20)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    {
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

    // A move adds its lines to the end of the log with one append, so that what
    // another program appends meanwhile is kept; an undo, which takes lines off,
    // rewrites it.
    let log_appended: Option<String> = match (&plan.log, log_before.as_deref(), &log_after) {
        (LogUpdate::Append(_), Some(before), Some(after)) => after
            .strip_prefix(before)
            .filter(|added| !added.is_empty())
            .map(str::to_owned),
        _ => None,
    };
    let mut journal = Journal {
        renames: plan.renames.clone(),
        patched: backed_up,
        created_dirs: created_dirs.clone(),
        written: prepared.iter().map(|p| Some(p.written_hash)).collect(),
        pid: std::process::id(),
        log_appended: log_appended.clone(),
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
            match (log_after.as_deref(), log_appended.as_deref()) {
                // An undone move that created the log leaves none.
                (Some(""), _) => {
                    kiln_core::fs::remove_below(&root, Path::new(REDIRECT_FILE), false)
                        .map_err(io_err(&log_path))?
                }
                (Some(_), Some(added)) => {
                    kiln_core::fs::append_below(&root, Path::new(REDIRECT_FILE), added.as_bytes())
                        .map_err(io_err(&log_path))?
                }
                (Some(text), None) => write_unsynced(&root, REDIRECT_FILE, text.as_bytes())
                    .map_err(io_err(&log_path))?,
                (None, _) => {}
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
            // recovery. What was put back is said with the error, unless nothing
            // had been written yet (or another try is planned at once).
            use crate::fs::journal::Recovery;
            return Err(match crate::fs::journal::recover(&root)? {
                Recovery::RolledBack { restored } if restored.is_empty() => e,
                Recovery::RolledBack { .. } if e.asks_to_plan_again() => e,
                Recovery::RolledBack { restored } => CheckerError::RolledBack {
                    cause: Box::new(e),
                    restored,
                    not_restored: Vec::new(),
                    folder: None,
                },
                Recovery::Partial {
                    restored,
                    not_restored,
                    folder,
                } => CheckerError::RolledBack {
                    cause: Box::new(e),
                    restored,
                    not_restored,
                    folder: Some(folder),
                },
                Recovery::Nothing | Recovery::SetAside { .. } => e,
            });
        }
    };
    journal::finish(&root)?;
    journal::remove_empty_dirs(&root, &plan.remove_dirs);
    journal::remove_empty_dirs(&root, &emptied_folders(&plan.renames));
    let generation = lock.advance();
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
    // The index is this operation's generation of the project now.
    checker.advanced_to(generation?);
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
    // The work stays on the calling thread (in tests, its simulated kill is there);
    // the scan goes to the pool beside it.
    let mut scanned = None;
    let done = rayon::in_place_scope(|s| {
        s.spawn(|_| scanned = Some(scan_all()));
        work()
    });
    (done, scanned.unwrap_or_default())
}

/// Reads the file at `rel` and its identity, from one open file (so they describe
/// the same version), opened in its folder below the root without following a
/// link; only a regular file is read.
fn read_with_identity(
    root: &Path,
    rel: &str,
    folders: &crate::fs::FolderCursor,
) -> Result<(Vec<u8>, FileIdentity), CheckerError> {
    use std::io::Read;
    let path = root.join(rel);
    let (mut file, identity) = folders.open_identified(root, rel).map_err(io_err(&path))?;
    let mut bytes = Vec::with_capacity(usize::try_from(identity.size).unwrap_or(0));
    file.read_to_end(&mut bytes).map_err(io_err(&path))?;
    Ok((bytes, identity))
}

/// A test's stand-in for another program, run just before a file is replaced.
#[cfg(test)]
pub(super) type ReplaceHook = std::sync::Arc<dyn Fn(&Path) + Send + Sync>;

#[cfg(test)]
thread_local! {
    /// In tests, runs just before each file is replaced (another program saving).
    pub(super) static BEFORE_REPLACE: std::cell::RefCell<Option<ReplaceHook>> =
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

    /// Runs `work` in this scope on a pool thread, leaving that thread's own
    /// scope as it was for whatever task it runs next.
    fn within<T>(&self, work: impl FnOnce() -> T) -> T {
        let before = ReplaceScope::current();
        self.enter();
        let done = work();
        before.enter();
        done
    }
}

/// From this many patched files on, a move replaces them on several threads.
/// Creating and renaming a file is kernel work that runs in parallel on different
/// folders: two threads replace a thousand files in about 70% of the time one
/// takes (BENCHMARKS.md). Below it, a thread costs more than it saves.
pub(super) const PARALLEL_REPLACE_FROM: usize = 64;

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
/// files are cut into runs of neighbours (mostly whole folders) that the pool's
/// threads take in turn; the first failure stops the others, and the journal
/// (already flushed) puts back whatever any of them replaced.
fn replace_files(
    root: &Path,
    index: &crate::index::Index,
    prepared: &[Prepared],
) -> Result<(Vec<Replaced>, Vec<WriteScans>), CheckerError> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let stop = AtomicBool::new(false);
    if prepared.len() < PARALLEL_REPLACE_FROM {
        let mut scans = WriteScans::default();
        let done = replace_run(root, index, prepared, &stop, &mut scans)?;
        return Ok((done, vec![scans]));
    }
    // Runs of neighbours, a few per worker so that a slow folder does not hold the
    // others back, taken in turn by the calling thread and each pool thread.
    // The caller works too: creating and renaming files waits on the kernel, and
    // one worker more than the cores was measured 7-10% faster than the pool
    // alone (BENCHMARKS.md, "One thread pool").
    let workers = rayon::current_num_threads().max(1) + 1;
    let run = prepared.len().div_ceil(workers * 4).max(1);
    let runs: Vec<&[Prepared]> = prepared.chunks(run).collect();
    let next = AtomicUsize::new(0);
    let take_runs = || {
        let (mut done, mut scans) = (Vec::new(), WriteScans::default());
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(files) = runs.get(k) else { break };
            done.push((k, replace_run(root, index, files, &stop, &mut scans)));
        }
        (done, scans)
    };
    let scope = ReplaceScope::current();
    let helped: Mutex<Vec<_>> = Mutex::new(Vec::new());
    let mine = rayon::in_place_scope(|pool| {
        for _ in 1..workers {
            pool.spawn(|_| {
                let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    scope.within(take_runs)
                }));
                let got = caught.unwrap_or_else(|_| {
                    stop.store(true, Ordering::Relaxed);
                    let stopped = "a thread replacing files stopped unexpectedly";
                    let failed = Err(crate::error::refused(root, stopped));
                    (vec![(usize::MAX, failed)], WriteScans::default())
                });
                if let Ok(mut helped) = helped.lock() {
                    helped.push(got);
                }
            });
        }
        take_runs()
    });
    let mut results = Vec::new();
    let mut all_scans = Vec::new();
    for (done, scans) in std::iter::once(mine).chain(helped.into_inner().unwrap_or_default()) {
        results.extend(done);
        all_scans.push(scans);
    }
    // In file order, so that the error reported is the first file's whichever
    // thread met it.
    results.sort_by_key(|(k, _)| *k);
    let mut replaced = Vec::with_capacity(prepared.len());
    for (_, result) in results {
        replaced.extend(result?);
    }
    Ok((replaced, all_scans))
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
    let folders = crate::fs::FolderCursor::default();
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
    folders: &crate::fs::FolderCursor,
    p: &Prepared,
    scans: &mut WriteScans,
) -> Result<Replaced, CheckerError> {
    let file = p.edit.file.as_str();
    let path = root.join(file);
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
    if folders.identity(root, file).ok() != Some(p.identity) {
        return Err(changed());
    }
    let (folder, name) = crate::fs::folder_and_name(file).map_err(io_err(&path))?;
    let dir = folders.folder(root, folder).map_err(io_err(&path))?;
    // The folder, opened without a link, may have been moved out of the project
    // since (by another program): nothing is written into it then, before the
    // temporary is made or before it is put in place.
    let moved = || CheckerError::FolderMoved {
        folder: folder.to_owned(),
    };
    if !folders.still_at(root, folder, &dir) {
        return Err(moved());
    }
    let (replacement, mut out) =
        Replacement::start(&*dir, std::ffi::OsStr::new(name)).map_err(io_err(&path))?;
    // The time of the file that holds exactly these bytes, from the open file (a
    // rename keeps it): the index takes them without reading back.
    std::io::Write::write_all(&mut out, new_bytes).map_err(io_err(&path))?;
    let mtime_ns = kiln_core::fs::stat_of_file(&out)
        .map_err(io_err(&path))?
        .mtime_ns;
    if let Err(crash) = crash_point() {
        // As a kill would: the temporary file stays for the next open's sweep.
        replacement.leave_behind();
        return Err(crash);
    }
    if !folders.still_at(root, folder, &dir) {
        return Err(moved());
    }
    // No flush of its own: the journal was flushed before (see `journal::begin`).
    replacement
        .place(out, Durability::Unflushed)
        .map_err(io_err(&path))?;
    crash_point()?;
    // A file read again is scanned here, while its bytes are at hand.
    Ok(Replaced {
        size: new_bytes.len() as u64,
        mtime_ns,
        hash: (p.held.is_none()).then(|| index.encode_for_write(scans, &p.final_path, new_bytes)),
    })
}

/// Replaces the project file `rel` with `bytes` without a flush of its own (the
/// journal was flushed before; see `journal::begin`).
fn write_unsynced(root: &Path, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
    let (folder, name) = crate::fs::folder_and_name(rel)?;
    let dir = kiln_core::fs::open_folder_below(root, Path::new(folder), false)?;
    replace_at(
        &dir,
        std::ffi::OsStr::new(name),
        bytes,
        Durability::Unflushed,
    )
    .map(|_| ())
}

/// The folders the `renames` may have emptied: each folder a file left, and the
/// folders above it, but none a file went into. Removed (when empty: `rmdir`
/// never removes anything else) so that a move and its inverse leave the folder
/// tree as it was, and a folder move leaves no empty husk behind.
pub(super) fn emptied_folders(renames: &[(String, String)]) -> Vec<String> {
    let ancestors = |path: &str| -> Vec<String> {
        let mut out = Vec::new();
        let mut at = path;
        while let Some((parent, _)) = at.rsplit_once('/') {
            out.push(parent.to_owned());
            at = parent;
        }
        out
    };
    let kept: std::collections::HashSet<String> =
        renames.iter().flat_map(|(_, new)| ancestors(new)).collect();
    let mut out: Vec<String> = renames
        .iter()
        .flat_map(|(old, _)| ancestors(old))
        .filter(|dir| !kept.contains(dir))
        .collect();
    out.sort();
    out.dedup();
    out
}
