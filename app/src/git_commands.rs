//! Kiln in a team that shares its project through git: the merge driver
//! (`kiln merge`), the semantic diff (`kiln diff`, and git's external diff through
//! `kiln git-diff`), `kiln setup-git`, which registers them with a repository, and
//! the hook it installs (`kiln after-merge`), which points references at files the
//! merged redirect log moved.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context as _;

use crate::outcome::Outcome;

/// The most a file given to the merge or the diff may hold.
const MAX_FILE: u64 = 1 << 30;

/// A file given as an argument: only a regular file (a FIFO would block the
/// merge for ever), at most [`MAX_FILE`] bytes.
fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    kiln_core::fs::read_argument(path, MAX_FILE)
        .with_context(|| format!("reading {}", path.display()))
}

/// `kiln merge BASE OURS THEIRS [--path PATH]`: git's merge driver (`%O %A %B %P`).
/// Writes the result into OURS; exit status 0 when clean, 1 with conflicts (git
/// then stops the merge). A file Kiln cannot merge goes to git's line merge.
pub fn merge(
    base: &Path,
    ours: &Path,
    theirs: &Path,
    path: Option<&str>,
    err: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let shown = path.map_or_else(|| ours.display().to_string(), str::to_owned);
    let (b, o, t) = (read(base)?, read(ours)?, read(theirs)?);
    match kiln_merge::merge_file(&shown, &b, &o, &t) {
        kiln_merge::Outcome::Merged { text, conflicts } => {
            kiln_core::write_atomic(ours, text.as_bytes())
                .with_context(|| format!("writing the merge of {shown}"))?;
            if conflicts.is_empty() {
                return Ok(Outcome::Done);
            }
            writeln!(
                err,
                "kiln merge: {shown}: {} conflict{} (open it in the Kiln editor to resolve; kiln check lists them):",
                conflicts.len(),
                if conflicts.len() == 1 { "" } else { "s" }
            )?;
            for c in &conflicts {
                writeln!(err, "  {}", c.describe())?;
            }
            Ok(Outcome::Findings)
        }
        kiln_merge::Outcome::NotKilns(why) => {
            writeln!(err, "kiln merge: {shown}: {why}; git's line merge takes it")?;
            let status = Command::new("git")
                .args(["merge-file", "-L", "ours", "-L", "base", "-L", "theirs"])
                .arg(ours)
                .arg(base)
                .arg(theirs)
                .status()
                .context("running git merge-file")?;
            Ok(match status.code() {
                Some(0) => Outcome::Done,
                _ => Outcome::Findings,
            })
        }
    }
}

/// `kiln diff OLD NEW [--path PATH]`: what changed between two versions of a file,
/// by what it means. Exit status 0 when nothing did, 1 when something did.
pub fn diff(
    old: &Path,
    new: &Path,
    path: Option<&str>,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let shown = path.map_or_else(|| new.display().to_string(), str::to_owned);
    let (a, b) = (read(old)?, read(new)?);
    match kiln_merge::diff::diff_file(&shown, &a, &b) {
        Ok(lines) if lines.is_empty() => Ok(Outcome::Done),
        Ok(lines) => {
            for line in lines {
                writeln!(out, "{line}")?;
            }
            Ok(Outcome::Findings)
        }
        Err(why) => {
            writeln!(out, "kiln diff: {shown}: {why}; git's text diff follows")?;
            text_diff(old, new, out)?;
            Ok(Outcome::findings_if(a != b))
        }
    }
}

/// git's own text diff of two files, for a version Kiln cannot read.
fn text_diff(old: &Path, new: &Path, out: &mut dyn Write) -> anyhow::Result<()> {
    let diff = Command::new("git")
        .args(["diff", "--no-index", "--no-color", "--no-ext-diff", "--"])
        .arg(old)
        .arg(new)
        .output()
        .context("running git diff")?;
    out.write_all(&diff.stdout)?;
    Ok(())
}

/// `kiln git-diff PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX NEW-MODE`: git's
/// external diff (`diff.kiln.command`), printing a header and the semantic diff.
pub fn git_diff(args: &[String], out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let [path, old, _, _, new, _, _] = args else {
        anyhow::bail!(
            "git passes 7 arguments to an external diff; got {}",
            args.len()
        );
    };
    // git names /dev/null for a side where the file does not exist.
    let side = |p: &str| -> anyhow::Result<Vec<u8>> {
        if p == "/dev/null" {
            Ok(Vec::new())
        } else {
            read(Path::new(p))
        }
    };
    let (a, b) = (side(old)?, side(new)?);
    writeln!(out, "kiln diff {path}")?;
    match kiln_merge::diff::diff_file(path, &a, &b) {
        Ok(lines) if lines.is_empty() => {
            writeln!(out, "  (no change in meaning: formatting only)")?
        }
        Ok(lines) => {
            for line in lines {
                writeln!(out, "  {line}")?;
            }
        }
        Err(why) => {
            writeln!(out, "  not read by Kiln ({why}); git's text diff follows")?;
            text_diff(Path::new(old), Path::new(new), out)?;
        }
    }
    Ok(Outcome::Done)
}

/// The marker of Kiln's lines in `.gitattributes` and in hooks.
const MARK_BEGIN: &str =
    "# >>> kiln setup-git (merge and diff by meaning; kiln setup-git writes this block)";
const MARK_END: &str = "# <<< kiln setup-git";

/// This `kiln`'s full path, shell-quoted: where the hooks and git's configuration
/// look for Kiln when `PATH` has none.
fn recorded_kiln() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(p).ok())
        .map_or_else(|| "kiln".to_owned(), |me| crate::shell::shell_quoted(&me))
}

/// The shell function `kiln_hook_run` that everything Kiln registers with git runs Kiln
/// through: the `kiln` on `PATH` first (so a reinstall anywhere is found), else the
/// one that ran `setup-git`; with neither, it says so and returns 127, and the
/// caller falls back to git's own merge or diff.
fn launcher(recorded: &str) -> String {
    format!(
        "kiln_hook_run() {{ K=$(command -v kiln 2>/dev/null) || K={recorded}; if [ -x \"$K\" ]; then \"$K\" \"$@\"; else echo \"kiln: Kiln is not installed here (not on PATH, nor at \"{recorded}\"): install it, or run kiln setup-git again\" >&2; return 127; fi; }}; "
    )
}

/// git's merge driver: Kiln's merge, or git's line merge where Kiln is missing.
fn driver_command(recorded: &str) -> String {
    format!(
        "{}kiln_hook_run merge %O %A %B --path %P || {{ s=$?; if [ $s -eq 127 ]; then echo kiln: git merges %P line by line >&2; git merge-file -L ours -L base -L theirs %A %O %B; else exit $s; fi; }}",
        launcher(recorded)
    )
}

/// git's external diff: Kiln's diff, or git's text diff where Kiln is missing.
fn diff_command(recorded: &str) -> String {
    format!(
        "{}kiln_hook_diff() {{ kiln_hook_run git-diff \"$@\" || {{ [ $? -eq 127 ] && git diff --no-index --no-ext-diff -- \"$2\" \"$5\"; true; }}; }}; kiln_hook_diff",
        launcher(recorded)
    )
}

/// The hooks Kiln installs: name, what the block runs, what it is for.
fn hook_blocks(recorded: &str, project_arg: &str) -> Vec<(&'static str, String, &'static str)> {
    let k = launcher(recorded);
    vec![
        (
            "pre-merge-commit",
            format!(
                "{k}kiln_hook_run after-merge --hook pre-merge-commit --project {project_arg} || exit 1"
            ),
            "checks a merge before git commits it, and stops it when it broke what neither side had",
        ),
        (
            "post-merge",
            format!("{k}kiln_hook_run after-merge --hook post-merge --project {project_arg}"),
            "follows moves after a merge or pull",
        ),
        (
            "post-rewrite",
            format!(
                "if [ \"$1\" = rebase ]; then {k}kiln_hook_run after-merge --hook post-rewrite --project {project_arg}; fi"
            ),
            "follows moves and checks the project after a rebase",
        ),
        (
            "post-commit",
            format!(
                "if [ -f \"$(git rev-parse --git-path CHERRY_PICK_HEAD)\" ] || git log -1 --format=%B | grep -q '^This reverts commit'; then {k}kiln_hook_run after-merge --hook post-commit --project {project_arg}; fi"
            ),
            "follows moves and checks the project after a cherry-pick or revert",
        ),
    ]
}

/// A hook's text with Kiln's block put in: a new hook is the block alone; in a
/// hook of the user's, the block replaces Kiln's earlier block, or (the first
/// time) goes right after the `#!` line, so that it runs before any `exit` of
/// theirs. No other line is touched. `None`: a hook Kiln cannot add to (not a
/// shell script).
fn hook_with_block(now: Option<&str>, block: &str) -> Option<String> {
    let Some(text) = now else {
        return Some(format!("#!/bin/sh\n{block}"));
    };
    if text.contains(MARK_BEGIN) && text.contains(MARK_END) {
        return Some(replace_block(text, block));
    }
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let shell = [
        "#!/bin/sh",
        "#!/bin/bash",
        "#!/usr/bin/env sh",
        "#!/usr/bin/env bash",
        "#!/bin/dash",
    ]
    .iter()
    .any(|s| first.trim_end() == *s);
    if !shell {
        return None;
    }
    Some(format!("{first}\n{block}{rest}"))
}

/// Runs git in `dir`; its output, trimmed, or an error with what git said.
pub(crate) fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .context("running git (is it installed?)")?;
    if !out.status.success() {
        anyhow::bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The file types whose merge and diff Kiln takes: its own, and those the project
/// declares reference rules for.
fn kiln_types(project: &kiln_core::Project) -> Vec<String> {
    let mut types: Vec<String> = ["level", "unit", "material", "mesh"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    for ext in project.config().references.keys() {
        if !types.contains(ext) && kiln_core::path::is_extension(ext) {
            types.push(ext.clone());
        }
    }
    types
}

/// Everything `kiln setup-git` installs, as it should be in this clone.
struct Setup {
    root: PathBuf,
    top: PathBuf,
    /// The repository's own hooks folder (`hooks` in its common git folder):
    /// the only place Kiln writes hooks.
    hooks: PathBuf,
    /// Where git runs hooks from instead, when `core.hooksPath` points
    /// elsewhere: Kiln writes nothing there (it may be outside the repository,
    /// or a folder the team shares) and says what to add.
    hooks_elsewhere: Option<PathBuf>,
    attributes_block: String,
    config: Vec<(&'static str, String)>,
    hooks_wanted: Vec<(&'static str, String, &'static str)>,
    recorded: String,
}

impl Setup {
    fn of(project_dir: &Path) -> anyhow::Result<Setup> {
        let project = kiln_core::Project::open(project_dir)?;
        let root = project.root().to_owned();
        let top = PathBuf::from(git(&root, &["rev-parse", "--show-toplevel"]).context(
            "the project is not in a git repository (run git init, or git clone, first)",
        )?);
        let recorded = recorded_kiln();
        let mut block = vec![MARK_BEGIN.to_owned()];
        for ext in kiln_types(&project) {
            block.push(format!("*.{ext} merge=kiln diff=kiln"));
        }
        block.push("kiln.project merge=kiln diff=kiln".to_owned());
        block.push("kiln.redirects merge=kiln".to_owned());
        block.push(MARK_END.to_owned());
        let attributes_block = block.join("\n") + "\n";
        let config = vec![
            (
                "merge.kiln.name",
                "Kiln: levels by authoring id, resources key by key".to_owned(),
            ),
            ("merge.kiln.driver", driver_command(&recorded)),
            ("diff.kiln.command", diff_command(&recorded)),
        ];
        let absolute = |p: String| {
            let p = PathBuf::from(p);
            if p.is_absolute() { p } else { root.join(p) }
        };
        let common = absolute(git(&root, &["rev-parse", "--git-common-dir"])?);
        let hooks = common.join("hooks");
        let run_from = absolute(git(&root, &["rev-parse", "--git-path", "hooks"])?);
        let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        };
        let hooks_elsewhere = (!same(&run_from, &hooks)).then_some(run_from);
        let rel = root.strip_prefix(&top).unwrap_or(Path::new(""));
        let project_arg = if rel.as_os_str().is_empty() {
            "\"$(git rev-parse --show-toplevel)\"".to_owned()
        } else {
            format!(
                "\"$(git rev-parse --show-toplevel)\"/{}",
                crate::shell::shell_quoted(rel)
            )
        };
        let hooks_wanted = hook_blocks(&recorded, &project_arg)
            .into_iter()
            .map(|(name, line, why)| {
                (
                    name,
                    format!("{MARK_BEGIN}\n# Kiln: {why}.\n{line}\n{MARK_END}\n"),
                    why,
                )
            })
            .collect();
        Ok(Setup {
            root,
            top,
            hooks,
            hooks_elsewhere,
            attributes_block,
            config,
            hooks_wanted,
            recorded,
        })
    }

    /// The hook `name` as it is now in the repository's own hooks folder (never
    /// through a link there).
    fn read_hook(&self, name: &str) -> Option<String> {
        let common = self.hooks.parent()?;
        let bytes = kiln_core::read_below(common, &Path::new("hooks").join(name), MAX_FILE).ok()?;
        String::from_utf8(bytes).ok()
    }

    /// Writes the hook `name` into the repository's own hooks folder, making it
    /// if needed, never through a link there; runnable.
    fn write_hook(&self, name: &str, text: &str) -> anyhow::Result<()> {
        let path = self.hooks.join(name);
        let common = self.hooks.parent().unwrap_or(&self.hooks);
        kiln_core::write_below(common, &Path::new("hooks").join(name), text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        kiln_core::os::set_executable(&path)
            .with_context(|| format!("making {} runnable", path.display()))
    }

    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.top)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    fn attributes(&self) -> anyhow::Result<String> {
        let attributes = self.root.join(".gitattributes");
        // Read from inside the project only, and never taken as empty when it is
        // there but unreadable: the block is written into what the team has.
        match kiln_core::read_below(&self.root, Path::new(".gitattributes"), MAX_FILE) {
            Ok(bytes) => String::from_utf8(bytes)
                .with_context(|| format!("{} is not UTF-8 text", attributes.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(e).with_context(|| format!("reading {}", attributes.display())),
        }
    }
}

/// `kiln setup-git`: registers Kiln's merge driver and diff with the repository the
/// project is in, and installs the hooks that check and mend merges, rebases,
/// cherry-picks and reverts. Says what it did; a second run changes nothing.
pub fn setup_git(project_dir: &Path, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let setup = Setup::of(project_dir)?;
    let mut changed = Vec::new();

    let old = setup.attributes()?;
    let new = replace_block(&old, &setup.attributes_block);
    if new != old {
        kiln_core::write_below(&setup.root, Path::new(".gitattributes"), new.as_bytes())
            .context("writing .gitattributes")?;
        changed.push(format!(
            "{}: Kiln merges and diffs levels, prefabs, materials, meshes, kiln.project and the redirect log (commit it: the team shares it)",
            setup.shown(&setup.root.join(".gitattributes"))
        ));
    }

    for (key, value) in &setup.config {
        let now = git(&setup.root, &["config", "--get", key]).unwrap_or_default();
        if now != *value {
            git(&setup.root, &["config", key, value])?;
            changed.push(format!("git config {key}"));
        }
    }

    let mut refused = Vec::new();
    // With core.hooksPath elsewhere, git runs no hook from the repository's own
    // folder, and Kiln writes none where it points: it says what to add there.
    let wanted = match setup.hooks_elsewhere {
        None => &setup.hooks_wanted[..],
        Some(_) => &[],
    };
    for (hook, block, why) in wanted {
        let path = setup.hooks.join(hook);
        let now = setup.read_hook(hook);
        let Some(text) = hook_with_block(now.as_deref(), block) else {
            refused.push((*hook, block.clone()));
            continue;
        };
        if now.as_deref() == Some(text.as_str()) {
            continue;
        }
        setup.write_hook(hook, &text)?;
        changed.push(format!("{}: {why}", setup.shown(&path)));
    }

    writeln!(out, "kiln setup-git in {}", setup.top.display())?;
    if changed.is_empty() {
        writeln!(out, "  already set up: nothing changed")?;
    }
    for c in &changed {
        writeln!(out, "  {c}")?;
    }
    for (hook, block) in &refused {
        writeln!(
            out,
            "  note: {} has a {hook} hook of its own that is not a shell script, left as it is; have it run these lines:\n{}",
            setup.hooks.display(),
            block
                .lines()
                .map(|l| format!("    {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        )?;
    }
    if let Some(elsewhere) = &setup.hooks_elsewhere {
        writeln!(
            out,
            "  note: git's core.hooksPath points at {}: git runs the hooks there, and Kiln writes nothing outside the repository's own .git. For Kiln to check and mend merges, rebases, cherry-picks and reverts, add to the hooks there:",
            elsewhere.display()
        )?;
        for (hook, block, _) in &setup.hooks_wanted {
            writeln!(out, "  {hook}:")?;
            for line in block.lines() {
                writeln!(out, "    {line}")?;
            }
        }
    }
    if !changed.is_empty() {
        writeln!(
            out,
            "git config and hooks are this clone's: each teammate runs kiln setup-git once. Hooks and git find Kiln on PATH, else at {}.",
            setup.recorded
        )?;
    }
    Ok(Outcome::findings_if(setup.hooks_elsewhere.is_some()))
}

/// `kiln setup-git --check`: says what is installed and what is missing or out of
/// date, and changes nothing. Exit status 1 when something is.
pub fn check_setup(project_dir: &Path, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let setup = Setup::of(project_dir)?;
    let mut missing = 0;
    let mut say = |ok: bool, what: String, out: &mut dyn Write| -> std::io::Result<()> {
        if !ok {
            missing += 1;
        }
        writeln!(out, "  {} {what}", if ok { "ok     " } else { "MISSING" })
    };
    writeln!(out, "kiln setup-git --check in {}", setup.top.display())?;
    let attributes = setup.attributes()?;
    let current = replace_block(&attributes, &setup.attributes_block) == attributes;
    say(
        current,
        format!(
            "{}: Kiln's block{}",
            setup.shown(&setup.root.join(".gitattributes")),
            if current || !attributes.contains(MARK_BEGIN) {
                ""
            } else {
                " (out of date)"
            }
        ),
        out,
    )?;
    for (key, value) in &setup.config {
        let now = git(&setup.root, &["config", "--get", key]).unwrap_or_default();
        say(
            now == *value,
            format!(
                "git config {key}{}",
                if now.is_empty() || now == *value {
                    ""
                } else {
                    " (out of date)"
                }
            ),
            out,
        )?;
    }
    if let Some(elsewhere) = &setup.hooks_elsewhere {
        say(
            false,
            format!(
                "hooks: git's core.hooksPath points at {}, where Kiln writes none (kiln setup-git says what to add there)",
                elsewhere.display()
            ),
            out,
        )?;
    }
    let wanted = match setup.hooks_elsewhere {
        None => &setup.hooks_wanted[..],
        Some(_) => &[],
    };
    for (hook, block, why) in wanted {
        let path = setup.hooks.join(hook);
        let now = setup.read_hook(hook);
        let ok = now
            .as_deref()
            .is_some_and(|text| hook_with_block(Some(text), block).as_deref() == Some(text));
        say(ok, format!("{} ({why})", setup.shown(&path)), out)?;
    }
    let on_path = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join("kiln").is_file()));
    writeln!(
        out,
        "  {} kiln on PATH{}",
        if on_path { "ok     " } else { "note   " },
        if on_path {
            String::new()
        } else {
            format!(" (not found: git runs {} instead)", setup.recorded)
        }
    )?;
    if missing > 0 {
        writeln!(out, "{missing} missing or out of date: run kiln setup-git")?;
    }
    Ok(Outcome::findings_if(missing > 0))
}

/// `text` with Kiln's block replaced by `block` (added at the end if it has none).
fn replace_block(text: &str, block: &str) -> String {
    if let (Some(begin), Some(end)) = (text.find(MARK_BEGIN), text.find(MARK_END))
        && begin < end
    {
        let after = text[end..].find('\n').map_or(text.len(), |n| end + n + 1);
        return format!("{}{block}{}", &text[..begin], &text[after..]);
    }
    let mut out = text.to_owned();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(block);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_is_added_once_and_replaced_in_place() {
        let block = format!("{MARK_BEGIN}\n*.level merge=kiln\n{MARK_END}\n");
        let mine = "*.png binary\n";
        let once = replace_block(mine, &block);
        assert_eq!(once, format!("*.png binary\n{block}"));
        assert_eq!(replace_block(&once, &block), once);
        let newer = format!("{MARK_BEGIN}\n*.level merge=kiln\n*.unit merge=kiln\n{MARK_END}\n");
        let twice = replace_block(&format!("{once}*.wav binary\n"), &newer);
        assert_eq!(twice, format!("*.png binary\n{newer}*.wav binary\n"));
    }
}
