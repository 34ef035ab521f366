//! What Kiln's git hooks run once git has put a merge, cherry-pick, revert or
//! rebase into the working tree (`kiln after-merge --hook HOOK`, installed by
//! `kiln setup-git`).
//!
//! Git's merge driver sees one file at a time. A merge can still break a project
//! where every file merged clean: one branch deletes a material while the other
//! starts using it; one removes a part from a prefab while the other overrides that
//! part in a level. So after git is done with the files:
//!
//! 1. **Mend.** References that still name a path the merged redirect log moved
//!    are patched to where the file is now. Before a merge commit the patched
//!    files are staged and the commit stops, so that `git commit` takes them into
//!    the merge (git commits the index it had before the hook, and refuses to
//!    amend a merge afterwards).
//! 2. **Check.** The project's errors (those of `kiln check` and of `kiln compile`)
//!    are compared with those of the commits it was made from. An error none of
//!    them had is a *conflict across files*: it names the files concerned and what
//!    each side did to them. Before a merge commit (`pre-merge-commit`) it stops
//!    the commit: the merge stays in progress and the user finishes it with
//!    `git commit` as after any conflict. After a cherry-pick, revert or rebase
//!    (git has no hook that can stop those) it says so.
//!
//! The conflicts are recorded in `.kiln/merge-conflicts.json`; `kiln check`
//! reports those still present until they are fixed.
//!
//! The commits compared with are read from git's object store into a scratch
//! folder below `.kiln/`, never outside the project; only when the merged project
//! has errors at all (the common case has none, and costs one check).

use std::collections::BTreeMap;
use std::io::{Read as _, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use crate::git_commands::git;
use crate::outcome::Outcome;

/// The hook a check runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Hook {
    /// Before git commits a merge: may stop it.
    PreMergeCommit,
    /// After a merge or a pull: mends only (the merge was checked before its
    /// commit).
    PostMerge,
    /// After a rebase (or an amend).
    PostRewrite,
    /// After a commit made by a cherry-pick or a revert.
    PostCommit,
}

/// Where the conflicts across files are kept, below the project's root.
pub const RECORD: &str = ".kiln/merge-conflicts.json";
const RECORD_SCHEMA: &str = "kiln-merge-conflicts/1";
/// Where the compared commits are read out, below the project's root.
const SCRATCH: &str = ".kiln/merge-check";

/// The conflicts across files of one merge.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// Its format.
    pub schema: String,
    /// The hook that found them.
    pub hook: String,
    /// Ours: the commit merged into (where a file ours has is taken from).
    #[serde(default)]
    pub ours: Option<String>,
    /// Theirs: the commit merged in.
    #[serde(default)]
    pub theirs: Option<String>,
    /// The conflicts.
    pub conflicts: Vec<CrossFileConflict>,
}

/// One error the merged project has and none of the commits it came from had.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CrossFileConflict {
    /// The error, as `kiln check` or `kiln compile` says it.
    pub problem: String,
    /// The same without line and column: what it is compared by.
    pub key: String,
    /// The files it names, with what each side did to them.
    pub files: Vec<FileSides>,
    /// For an override of a part its prefab no longer has: the override, to drop.
    #[serde(default)]
    pub drop_override: Option<OverrideAt>,
}

/// One override in a level: entity `entity`'s `overrides[key]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OverrideAt {
    /// The level.
    pub level: String,
    /// The instance's authoring id in the level.
    pub entity: String,
    /// The key of its `overrides` (`head/glass`).
    pub key: String,
}

/// What each side of the merge did to one file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileSides {
    /// The file, from the project's root.
    pub path: String,
    /// What ours (HEAD) did to it since the merge base: `added`, `changed`,
    /// `deleted` or `unchanged`.
    pub ours: String,
    /// What theirs did.
    pub theirs: String,
}

impl CrossFileConflict {
    /// The conflict as people read it, one line per file after the first.
    pub fn describe(&self) -> String {
        let mut text = format!("conflict across files: {}", self.problem);
        for f in &self.files {
            text.push_str(&format!(
                "\n    {}: ours {}, theirs {}",
                f.path, f.ours, f.theirs
            ));
        }
        text
    }
}

/// `kiln after-merge --hook HOOK`: mends, checks, and (before a merge commit)
/// stops the commit on a conflict across files.
pub fn run(project: &Path, hook: Hook, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    // The plugins are loaded once, and the merged project indexed once, for both
    // the mend and the check (a library is loaded once per process anyway).
    let project = kiln_core::Project::open(project)?;
    let root = project.root().to_owned();
    let (registry, plugins) = crate::plugins::registry_with_plugins(&project);
    crate::plugins::report(&plugins, true, &mut std::io::stderr());
    let registry = Arc::new(registry);
    let mut checker = crate::checker_commands::open_checker_with(&root, registry.clone())?;
    let mended = mend(&mut checker, hook, out)?;
    if hook == Hook::PostMerge {
        return Ok(Outcome::Done);
    }
    let now = problems(&checker, &registry)?;
    drop(checker);
    if now.is_empty() {
        clear_record(&root);
        return Ok(stop_for_mends(hook, mended, out)?);
    }
    let top = PathBuf::from(git(&root, &["rev-parse", "--show-toplevel"])?);
    let rel = root
        .canonicalize()
        .ok()
        .and_then(|r| {
            top.canonicalize()
                .ok()
                .and_then(|t| r.strip_prefix(t).ok().map(Path::to_owned))
        })
        .unwrap_or_default();
    let sides = Sides::of(&root, hook)?;
    // Each compared commit is read out and checked only while some error is not
    // yet explained by one before it.
    let mut new_problems = now;
    for (k, rev) in sides.compared.iter().enumerate() {
        if new_problems.is_empty() {
            break;
        }
        let scratch = Path::new(SCRATCH).join(k.to_string());
        let found = (|| {
            read_out(&top, rev, &rel, &root, &scratch)?;
            let checker =
                crate::checker_commands::open_checker_with(&root.join(&scratch), registry.clone())?;
            problems(&checker, &registry)
        })();
        // The scratch copy goes whatever happened.
        remove_scratch(&root, &scratch);
        let found = found.with_context(|| format!("checking {rev}"))?;
        new_problems.retain(|key, _| !found.contains_key(key));
    }
    if !kiln_core::fs::goes_through_link(&root, Path::new(SCRATCH)) {
        let _ = std::fs::remove_dir(root.join(SCRATCH));
    }
    let mut conflicts = Vec::new();
    for (key, (problem, drop_override)) in new_problems {
        let files = named_files(&problem)
            .into_iter()
            .map(|path| sides.file_sides(&top, &rel, &path))
            .collect();
        conflicts.push(CrossFileConflict {
            problem,
            key,
            files,
            drop_override,
        });
    }
    if conflicts.is_empty() {
        clear_record(&root);
        return Ok(stop_for_mends(hook, mended, out)?);
    }
    let (ours, theirs) = match &sides.ours_theirs_base {
        Some((o, t, _)) => (Some(o.clone()), Some(t.clone())),
        None => (
            sides.compared.first().cloned(),
            sides.compared.get(1).cloned(),
        ),
    };
    let record = Record {
        schema: RECORD_SCHEMA.to_owned(),
        hook: hook_name(hook).to_owned(),
        ours,
        theirs,
        conflicts,
    };
    let text = serde_json::to_string_pretty(&record)? + "\n";
    kiln_core::write_below(&root, Path::new(RECORD), text.as_bytes())
        .with_context(|| format!("writing {RECORD}"))?;
    let n = record.conflicts.len();
    let what = match hook {
        Hook::PreMergeCommit => "the merge",
        Hook::PostRewrite => "the rebase",
        _ => "this commit",
    };
    writeln!(
        out,
        "kiln: {what} broke what neither side had broken ({n} conflict{} across files):",
        if n == 1 { "" } else { "s" }
    )?;
    for c in &record.conflicts {
        writeln!(out, "  {}", c.describe().replace('\n', "\n  "))?;
    }
    if hook == Hook::PreMergeCommit {
        writeln!(
            out,
            "kiln: the merge is not committed. Fix these (the editor's Conflicts tab lists them; kiln check too), then git add and git commit.{}",
            if mended {
                " The references kiln mended are staged already."
            } else {
                ""
            }
        )?;
        Ok(Outcome::Findings)
    } else {
        writeln!(
            out,
            "kiln: fix these (the editor's Conflicts tab lists them; kiln check too) and commit the fix."
        )?;
        Ok(Outcome::Done)
    }
}

/// Before a merge commit, mended references stop it too: git commits the index
/// it had before the hook ran, so the mends would be left out of the merge (and
/// after it, git refuses to amend a merge). The user finishes with `git commit`,
/// which takes them.
fn stop_for_mends(hook: Hook, mended: bool, out: &mut dyn Write) -> std::io::Result<Outcome> {
    if hook != Hook::PreMergeCommit || !mended {
        return Ok(Outcome::Done);
    }
    writeln!(
        out,
        "kiln: the mended references are staged; finish the merge with git commit, which takes them (the merge holds no conflict)."
    )?;
    Ok(Outcome::Findings)
}

fn hook_name(hook: Hook) -> &'static str {
    match hook {
        Hook::PreMergeCommit => "pre-merge-commit",
        Hook::PostMerge => "post-merge",
        Hook::PostRewrite => "post-rewrite",
        Hook::PostCommit => "post-commit",
    }
}

/// Removes the record (nothing is in conflict any more).
fn clear_record(root: &Path) {
    let _ = kiln_core::fs::remove_below(root, Path::new(RECORD), false);
}

/// The record of the last merge's conflicts across files, if there is one Kiln
/// reads.
pub fn read_record(root: &Path) -> Option<Record> {
    let bytes = kiln_core::read_below(root, Path::new(RECORD), 16 << 20).ok()?;
    serde_json::from_slice::<Record>(&bytes)
        .ok()
        .filter(|r| r.schema == RECORD_SCHEMA)
}

/// Takes the conflict with `key` out of the record (the user resolved it another
/// way); the record goes with its last conflict.
pub fn forget(root: &Path, key: &str) -> anyhow::Result<()> {
    let Some(mut record) = read_record(root) else {
        return Ok(());
    };
    record.conflicts.retain(|c| c.key != key);
    if record.conflicts.is_empty() {
        clear_record(root);
        return Ok(());
    }
    let text = serde_json::to_string_pretty(&record)? + "\n";
    kiln_core::write_below(root, Path::new(RECORD), text.as_bytes())
        .with_context(|| format!("writing {RECORD}"))?;
    Ok(())
}

/// The conflicts across files recorded by the last merge that the project still
/// has (as `kiln check` reports them); the record is rewritten without the others,
/// and removed when none is left.
pub fn still_recorded(
    checker: &dependency_checker::Checker,
    registry: &kiln_core::Registry,
) -> Vec<CrossFileConflict> {
    let root = checker.project().root();
    let Ok(bytes) = kiln_core::read_below(root, Path::new(RECORD), 16 << 20) else {
        return Vec::new();
    };
    let record = match serde_json::from_slice::<Record>(&bytes) {
        Ok(r) if r.schema == RECORD_SCHEMA => r,
        // Not Kiln's record (or a newer Kiln's): left alone, reported as nothing.
        _ => return Vec::new(),
    };
    let errors: std::collections::BTreeSet<String> = checker
        .findings()
        .iter()
        .filter(|f| f.is_error())
        .map(finding_key)
        .collect();
    let project = checker.project();
    let still = |c: &CrossFileConflict| {
        errors.contains(&c.key)
            || c.files.iter().filter(|f| f.path.ends_with(".level")).any(|f| {
                matches!(
                    project.compile_streamed(registry, &f.path, kiln_core::CompileOptions::default()),
                    Err(e) if without_positions(&e.to_string()) == c.key
                )
            })
    };
    let left: Vec<CrossFileConflict> = record
        .conflicts
        .iter()
        .filter(|c| still(c))
        .cloned()
        .collect();
    if left.is_empty() {
        clear_record(root);
    } else if left.len() < record.conflicts.len() {
        let kept = Record {
            conflicts: left.clone(),
            ..record
        };
        if let Ok(text) = serde_json::to_string_pretty(&kept) {
            let _ = kiln_core::write_below(root, Path::new(RECORD), (text + "\n").as_bytes());
        }
    }
    left
}

/// Points references at files the merged redirect log moved; whether it changed
/// anything. Before a merge commit the patched files are staged.
fn mend(
    checker: &mut dependency_checker::Checker,
    hook: Hook,
    out: &mut dyn Write,
) -> anyhow::Result<bool> {
    let plan = dependency_checker::ops::plan_redirect_fixes(checker);
    if plan.is_empty() {
        return Ok(false);
    }
    dependency_checker::ops::apply_without_undo(checker, &plan)?;
    let n = plan.change_count();
    writeln!(
        out,
        "kiln: the merge brought moves of files that other changes still named; {n} reference{} now name{} where the files are:",
        if n == 1 { "" } else { "s" },
        if n == 1 { "s" } else { "" }
    )?;
    crate::checker_reports::print_patches(&plan, "  ", out)?;
    if hook == Hook::PreMergeCommit {
        let root = checker.project().root().to_owned();
        let mut add = Command::new("git");
        add.current_dir(&root).args(["add", "--"]);
        for edit in &plan.edits {
            add.arg(&edit.file);
        }
        let status = add.status().context("running git add")?;
        if !status.success() {
            anyhow::bail!("git add of the mended files failed ({status})");
        }
    } else {
        writeln!(
            out,
            "kiln: commit them (git commit -am \"Follow moved files\")"
        )?;
    }
    Ok(true)
}

/// The errors of the project `checker` indexes, by key: what `kiln check` counts
/// as errors, and each level `kiln compile` refuses.
fn problems(
    checker: &dependency_checker::Checker,
    registry: &kiln_core::Registry,
) -> anyhow::Result<BTreeMap<String, (String, Option<OverrideAt>)>> {
    let mut out = BTreeMap::new();
    for f in checker.findings().iter().filter(|f| f.is_error()) {
        out.insert(finding_key(f), (f.to_string(), None));
    }
    let project = checker.project();
    for level in project.levels()? {
        if let Err(e) =
            project.compile_streamed(registry, &level, kiln_core::CompileOptions::default())
        {
            let text = e.to_string();
            let at = match &e {
                kiln_core::ProjectError::Compile(kiln_core::CompileError::UnknownOverride {
                    file,
                    entity,
                    key,
                    ..
                }) => {
                    let (top, below) = entity.split_once('/').unwrap_or((entity, ""));
                    Some(OverrideAt {
                        level: file.clone(),
                        entity: top.to_owned(),
                        key: if below.is_empty() {
                            key.clone()
                        } else {
                            format!("{below}/{key}")
                        },
                    })
                }
                _ => None,
            };
            out.insert(without_positions(&text), (text, at));
        }
    }
    Ok(out)
}

/// A finding compared without where in the file it is: the other side's edits
/// move lines.
pub fn finding_key(f: &dependency_checker::check::Finding) -> String {
    match serde_json::to_value(f) {
        Ok(mut v) => {
            if let Some(place) = v.get_mut("place").and_then(|p| p.as_object_mut()) {
                place.remove("line");
                place.remove("column");
            }
            v.to_string()
        }
        Err(_) => without_positions(&f.to_string()),
    }
}

/// `text` without the numbers of `line N`, `column N` and `:N:N`.
fn without_positions(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let after_marker = out.ends_with("line ") || out.ends_with("column ") || out.ends_with(':');
        if after_marker && c.is_ascii_digit() {
            let digits = rest.len() - rest.trim_start_matches(|d: char| d.is_ascii_digit()).len();
            out.push('#');
            rest = &rest[digits..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The project paths a problem's text names: words with a folder and an
/// extension, as Kiln writes paths.
fn named_files(text: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for word in
        text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | ',' | '`'))
    {
        let word = word.trim_end_matches([':', '.', ';']);
        // `file:line:column`
        let word = word.split(':').next().unwrap_or(word);
        let has_ext = word
            .rsplit_once('/')
            .is_some_and(|(_, name)| name.contains('.') && !name.starts_with('.'));
        if has_ext
            && kiln_core::path::ResourcePath::parse(word).is_ok()
            && !files.iter().any(|f| f == word)
        {
            files.push(word.to_owned());
        }
    }
    files
}

/// The commits a check compares with, and those that say what each side did.
struct Sides {
    /// The commits whose errors are not new.
    compared: Vec<String>,
    /// Ours, theirs and their merge base, where there are two sides.
    ours_theirs_base: Option<(String, String, String)>,
}

impl Sides {
    fn of(root: &Path, hook: Hook) -> anyhow::Result<Sides> {
        let rev = |name: &str| git(root, &["rev-parse", "--verify", "-q", name]).ok();
        let (ours, theirs) = match hook {
            Hook::PreMergeCommit => (rev("HEAD"), merged_in(root)),
            Hook::PostCommit => (rev("HEAD^"), rev("CHERRY_PICK_HEAD")),
            // The branch as it was, and the commit it was rebased onto (the
            // reflog's "rebase (start)" entry).
            Hook::PostRewrite => (rebased_onto(root), rev("ORIG_HEAD")),
            Hook::PostMerge => (None, None),
        };
        let base = match (&ours, &theirs) {
            (Some(o), Some(t)) => git(root, &["merge-base", o, t]).ok(),
            _ => None,
        };
        let compared: Vec<String> = [ours.clone(), theirs.clone()]
            .into_iter()
            .flatten()
            .collect();
        if compared.is_empty() {
            anyhow::bail!("no commit to compare the {} result with", hook_name(hook));
        }
        Ok(Sides {
            compared,
            ours_theirs_base: match (ours, theirs, base) {
                (Some(o), Some(t), Some(b)) => Some((o, t, b)),
                _ => None,
            },
        })
    }

    /// What each side did to `path` (from the project's root).
    fn file_sides(&self, top: &Path, rel: &Path, path: &str) -> FileSides {
        let in_repo = rel.join(path);
        let blob = |rev: &str| {
            git(
                top,
                &[
                    "rev-parse",
                    "--verify",
                    "-q",
                    &format!("{rev}:{}", in_repo.display()),
                ],
            )
            .ok()
        };
        let (ours, theirs) = match &self.ours_theirs_base {
            Some((o, t, b)) => {
                let base = blob(b);
                let did = |side: &str| match (&base, blob(side)) {
                    (None, None) => "unchanged",
                    (None, Some(_)) => "added",
                    (Some(_), None) => "deleted",
                    (Some(a), Some(b)) if *a == b => "unchanged",
                    _ => "changed",
                };
                (did(o).to_owned(), did(t).to_owned())
            }
            None => ("unknown".to_owned(), "unknown".to_owned()),
        };
        FileSides {
            path: path.to_owned(),
            ours,
            theirs,
        }
    }
}

/// Removes the scratch folder `root/scratch`, unless a link leads there.
fn remove_scratch(root: &Path, scratch: &Path) {
    if !kiln_core::fs::goes_through_link(root, scratch) {
        let _ = std::fs::remove_dir_all(root.join(scratch));
    }
}

/// Reads the project's files as commit `rev` has them (the project is `rel` below
/// the repository's top) into `root/scratch`: regular files only (no links, no
/// submodules), nothing of `.kiln/`.
fn read_out(top: &Path, rev: &str, rel: &Path, root: &Path, scratch: &Path) -> anyhow::Result<()> {
    if kiln_core::fs::goes_through_link(root, scratch) {
        anyhow::bail!(
            "{} goes through a link: the merge is not checked",
            scratch.display()
        );
    }
    remove_scratch(root, scratch);
    kiln_core::create_dir_below(root, scratch)
        .with_context(|| format!("making {}", scratch.display()))?;
    let spec = if rel.as_os_str().is_empty() {
        ".".to_owned()
    } else {
        rel.display().to_string()
    };
    let listing = Command::new("git")
        .current_dir(top)
        .args(["ls-tree", "-r", "-z", "--full-tree", rev, "--", &spec])
        .output()
        .context("running git ls-tree")?;
    if !listing.status.success() {
        anyhow::bail!(
            "git ls-tree {rev}: {}",
            String::from_utf8_lossy(&listing.stderr).trim()
        );
    }
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for entry in listing.stdout.split(|b| *b == 0) {
        let Ok(entry) = std::str::from_utf8(entry) else {
            continue;
        };
        let Some((meta, path)) = entry.split_once('\t') else {
            continue;
        };
        let mut meta = meta.split(' ');
        let (Some(mode), Some("blob"), Some(hash)) = (meta.next(), meta.next(), meta.next()) else {
            continue;
        };
        if !matches!(mode, "100644" | "100755") {
            continue;
        }
        let Ok(inside) = Path::new(path).strip_prefix(rel) else {
            continue;
        };
        let plain = inside
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
        if !plain || inside.starts_with(".kiln") || inside.as_os_str().is_empty() {
            continue;
        }
        files.push((hash.to_owned(), inside.to_owned()));
    }
    let mut cat = Command::new("git")
        .current_dir(top)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("running git cat-file")?;
    let mut stdin = cat.stdin.take().context("git cat-file's input")?;
    let hashes: String = files.iter().map(|(h, _)| format!("{h}\n")).collect();
    let feeder = std::thread::spawn(move || stdin.write_all(hashes.as_bytes()));
    let mut stdout = std::io::BufReader::new(cat.stdout.take().context("git cat-file's output")?);
    for (_, path) in &files {
        let mut header = Vec::new();
        loop {
            let mut byte = [0u8; 1];
            stdout
                .read_exact(&mut byte)
                .context("reading git cat-file")?;
            if byte[0] == b'\n' {
                break;
            }
            header.push(byte[0]);
        }
        let header = String::from_utf8_lossy(&header);
        let size: usize = header
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .with_context(|| format!("git cat-file said {header:?}"))?;
        let mut bytes = vec![0u8; size];
        stdout
            .read_exact(&mut bytes)
            .context("reading git cat-file")?;
        let mut newline = [0u8; 1];
        stdout
            .read_exact(&mut newline)
            .context("reading git cat-file")?;
        // Below the project's root, never through a link (a `.kiln` planted as
        // a link would lead the copy outside); not flushed: a scratch copy.
        let rel_path = scratch.join(path);
        let (parent, name) = (
            rel_path.parent().unwrap_or(Path::new("")),
            rel_path.file_name(),
        );
        let Some(name) = name else { continue };
        let folder = kiln_core::fs::open_folder_below(root, parent, true)
            .with_context(|| format!("making {}", parent.display()))?;
        kiln_core::fs::replace_at_with(&folder, name, kiln_core::fs::Durability::Unflushed, |f| {
            f.write_all(&bytes)
        })
        .with_context(|| format!("writing {}", rel_path.display()))?;
    }
    let _ = feeder.join();
    let _ = cat.wait();
    Ok(())
}

/// The commit being merged in, seen from `pre-merge-commit`: git writes
/// `MERGE_HEAD` only when it stops, so it is read from what git tells the hook
/// (`GIT_REFLOG_ACTION`: `merge BRANCH`, or `pull ...` with `FETCH_HEAD`).
fn merged_in(root: &Path) -> Option<String> {
    let rev = |name: &str| {
        git(
            root,
            &["rev-parse", "--verify", "-q", &format!("{name}^{{commit}}")],
        )
        .ok()
    };
    if let Some(head) = rev("MERGE_HEAD") {
        return Some(head);
    }
    let action = std::env::var("GIT_REFLOG_ACTION").unwrap_or_default();
    let mut words = action.split_whitespace();
    match words.next() {
        Some("merge") => words.filter(|w| !w.starts_with('-')).find_map(rev),
        Some("pull") => {
            let fetched = git(root, &["rev-parse", "--git-path", "FETCH_HEAD"]).ok()?;
            let fetched = std::fs::read_to_string(root.join(fetched)).ok()?;
            fetched
                .lines()
                .find(|l| !l.contains("not-for-merge"))
                .and_then(|l| l.split_whitespace().next())
                .and_then(rev)
        }
        _ => None,
    }
}

/// The commit the last rebase started from, as the reflog says.
fn rebased_onto(root: &Path) -> Option<String> {
    let log = git(root, &["reflog", "-n", "500", "--format=%H %gs"]).ok()?;
    log.lines().find_map(|line| {
        let (hash, subject) = line.split_once(' ')?;
        (subject.starts_with("rebase") && subject.contains("(start)")).then(|| hash.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_left_out_of_the_key_and_paths_are_found() {
        assert_eq!(
            without_positions("levels/a.level:12:7 (entity \"tree_01\"): line 3, column 40"),
            "levels/a.level:#:# (entity \"tree_01\"): line #, column #"
        );
        assert_eq!(
            named_files(
                "error: levels/forest.level:118:9 (entity \"lamp\"): overrides \"head/glass\", which is not an entity of units/bulb.unit (a part?)"
            ),
            ["levels/forest.level", "units/bulb.unit"]
        );
    }
}
