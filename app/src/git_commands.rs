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

fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if meta.len() > MAX_FILE {
        anyhow::bail!(
            "{} is larger than Kiln reads ({} bytes)",
            path.display(),
            meta.len()
        );
    }
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
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
            writeln!(out, "kiln diff: {shown}: {why}")?;
            Ok(Outcome::findings_if(a != b))
        }
    }
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
        Err(why) => writeln!(out, "  not read by Kiln ({why}); the file changed")?,
    }
    Ok(Outcome::Done)
}

/// The marker of Kiln's lines in `.gitattributes` and in hooks.
const MARK_BEGIN: &str =
    "# >>> kiln setup-git (merge and diff by meaning; kiln setup-git writes this block)";
const MARK_END: &str = "# <<< kiln setup-git";

/// How the hooks and git's configuration run this `kiln`: `kiln` when that is what
/// `PATH` finds, its full path otherwise.
fn kiln_command() -> String {
    let me = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::canonicalize(p).ok());
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("kiln"))
            .find(|p| p.is_file())
            .and_then(|p| std::fs::canonicalize(p).ok())
    });
    match me {
        Some(me) if on_path.as_ref() == Some(&me) => "kiln".to_owned(),
        Some(me) => crate::shell::shell_quoted(&me),
        None => "kiln".to_owned(),
    }
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
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

/// `kiln setup-git`: registers Kiln's merge driver and diff with the repository the
/// project is in, and installs the hooks that follow moves after a merge or rebase.
/// Says what it did; a second run changes nothing.
pub fn setup_git(project_dir: &Path, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let project = kiln_core::Project::open(project_dir)?;
    let root = project.root();
    let top =
        PathBuf::from(git(root, &["rev-parse", "--show-toplevel"]).context(
            "the project is not in a git repository (run git init, or git clone, first)",
        )?);
    let kiln = kiln_command();
    let mut changed = Vec::new();

    // .gitattributes at the project's root: shared with the team when committed.
    let mut block = vec![MARK_BEGIN.to_owned()];
    for ext in kiln_types(&project) {
        block.push(format!("*.{ext} merge=kiln diff=kiln"));
    }
    block.push("kiln.project merge=kiln diff=kiln".to_owned());
    block.push("kiln.redirects merge=kiln".to_owned());
    block.push(MARK_END.to_owned());
    let block = block.join("\n") + "\n";
    let attributes = root.join(".gitattributes");
    // Read from inside the project only, and never taken as empty when it is there
    // but unreadable: the block is written into what the team already has.
    let old = match kiln_core::read_below(root, Path::new(".gitattributes"), MAX_FILE) {
        Ok(bytes) => String::from_utf8(bytes)
            .with_context(|| format!("{} is not UTF-8 text", attributes.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", attributes.display())),
    };
    let new = replace_block(&old, &block);
    if new != old {
        kiln_core::write_below(root, Path::new(".gitattributes"), new.as_bytes())
            .context("writing .gitattributes")?;
        changed.push(format!(
            "{}: Kiln merges and diffs levels, prefabs, materials, meshes, kiln.project and the redirect log (commit it: the team shares it)",
            attributes.strip_prefix(&top).unwrap_or(&attributes).display()
        ));
    }

    // The driver and the diff, in this clone's configuration.
    for (key, value) in [
        (
            "merge.kiln.name",
            "Kiln: levels by authoring id, resources key by key".to_owned(),
        ),
        (
            "merge.kiln.driver",
            format!("{kiln} merge %O %A %B --path %P"),
        ),
        ("diff.kiln.command", format!("{kiln} git-diff")),
    ] {
        let now = git(root, &["config", "--get", key]).unwrap_or_default();
        if now != value {
            git(root, &["config", key, &value])?;
            changed.push(format!("git config {key} \"{value}\""));
        }
    }

    // The hooks that apply the merged redirect log.
    let hooks = PathBuf::from(git(root, &["rev-parse", "--git-path", "hooks"])?);
    let hooks = if hooks.is_absolute() {
        hooks
    } else {
        root.join(hooks)
    };
    let rel = root.strip_prefix(&top).unwrap_or(Path::new(""));
    let project_arg = if rel.as_os_str().is_empty() {
        "\"$(git rev-parse --show-toplevel)\"".to_owned()
    } else {
        format!(
            "\"$(git rev-parse --show-toplevel)\"/{}",
            crate::shell::shell_quoted(rel)
        )
    };
    let script = format!(
        "#!/bin/sh\n{MARK_BEGIN}\n# After a merge or a rebase: point references at the files the merged redirect log moved.\n{kiln} after-merge --project {project_arg}\n{MARK_END}\n"
    );
    let mut refused = Vec::new();
    for hook in ["post-merge", "post-rewrite"] {
        let path = hooks.join(hook);
        let now = std::fs::read_to_string(&path).ok();
        match now {
            Some(text) if text == script => {}
            Some(text) if !text.contains(MARK_BEGIN) => refused.push(hook),
            _ => {
                std::fs::create_dir_all(&hooks).context("making git's hooks folder")?;
                kiln_core::write_atomic(&path, script.as_bytes())
                    .with_context(|| format!("writing {}", path.display()))?;
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                        .with_context(|| format!("making {} runnable", path.display()))?;
                }
                changed.push(format!(
                    "{}: follows moves after a {}",
                    path.strip_prefix(&top).unwrap_or(&path).display(),
                    if hook == "post-merge" {
                        "merge"
                    } else {
                        "rebase"
                    }
                ));
            }
        }
    }

    writeln!(out, "kiln setup-git in {}", top.display())?;
    if changed.is_empty() {
        writeln!(out, "  already set up: nothing changed")?;
    }
    for c in &changed {
        writeln!(out, "  {c}")?;
    }
    for hook in &refused {
        writeln!(
            out,
            "  note: {} has a {hook} hook of its own, left as it is; add this line to it:\n    {kiln} after-merge --project {project_arg}",
            hooks.display()
        )?;
    }
    if !changed.is_empty() {
        writeln!(
            out,
            "git config and hooks are this clone's: each teammate runs kiln setup-git once."
        )?;
    }
    Ok(Outcome::Done)
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

/// `kiln after-merge`: what the hooks run. Points every reference that still names
/// a path the redirect log moved at where the file is now, and says what changed
/// and what to commit.
pub fn after_merge(project: &Path, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let (mut checker, plugins) = crate::checker_commands::open_checker(project)?;
    crate::plugins::report(&plugins, false, &mut std::io::stderr());
    let plan = dependency_checker::ops::plan_redirect_fixes(&checker);
    if plan.is_empty() {
        return Ok(Outcome::Done);
    }
    dependency_checker::ops::apply_without_undo(&mut checker, &plan)?;
    writeln!(
        out,
        "kiln: the merge brought moves of files that other changes still named; {} reference{} now name{} where the files are:",
        plan.change_count(),
        if plan.change_count() == 1 { "" } else { "s" },
        if plan.change_count() == 1 { "s" } else { "" }
    )?;
    crate::checker_reports::print_patches(&plan, "  ", out)?;
    writeln!(
        out,
        "kiln: commit them (git commit -am \"Follow moved files\")"
    )?;
    Ok(Outcome::Done)
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
