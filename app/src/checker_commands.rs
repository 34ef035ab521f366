//! `kiln check`, `kiln refs`, `kiln deps` and `kiln mv`: the dependency checker from the
//! command line.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use dependency_checker::index::BuildOptions;
use dependency_checker::rename::{self, MovePlan, MoveRequest};
use dependency_checker::{Checker, ReferenceView};
use indicatif::{ProgressBar, ProgressStyle};
use kiln_core::Registry;
use serde_json::json;

use crate::cli::{EXIT_FINDINGS, EXIT_OK};

/// Opens the project's checker, with a progress counter (on stderr) when stdout is a
/// terminal: a cold index of a big project takes a moment, and piped output stays clean.
pub fn open_checker(project: &Path) -> anyhow::Result<Checker> {
    let bar = std::io::stdout().is_terminal().then(|| {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} indexing: {pos} files")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar
    });
    let options = BuildOptions {
        progress: bar
            .clone()
            .map(|b| Arc::new(move |n: u64| b.set_position(n)) as Arc<dyn Fn(u64) + Send + Sync>),
        threads: 0,
    };
    let checker = Checker::open(project, Arc::new(Registry::with_builtins()), &options);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(checker?)
}

/// `kiln check [--fix]`.
pub fn check(project: &Path, fix: bool, as_json: bool, out: &mut dyn Write) -> anyhow::Result<u8> {
    let mut checker = open_checker(project)?;
    if fix {
        let plan = rename::plan_redirect_fixes(&checker);
        if plan.change_count() > 0 {
            rename::apply(&mut checker, &plan)?;
            if !as_json {
                print_plan(&plan, out)?;
                writeln!(
                    out,
                    "fixed {} references to moved resources",
                    plan.change_count()
                )?;
            }
        }
    }
    let findings = checker.findings();
    if as_json {
        writeln!(out, "{}", serde_json::to_string_pretty(&findings)?)?;
    } else {
        for f in &findings {
            writeln!(out, "{f}")?;
        }
        let errors = findings.iter().filter(|f| f.is_error()).count();
        writeln!(
            out,
            "{} findings ({errors} errors, {} warnings) in {} files",
            findings.len(),
            findings.len() - errors,
            checker.index().stats().files
        )?;
    }
    Ok(if findings.is_empty() {
        EXIT_OK
    } else {
        EXIT_FINDINGS
    })
}

fn print_json(refs: &[ReferenceView], out: &mut dyn Write) -> anyhow::Result<()> {
    let views: Vec<serde_json::Value> = refs.iter().map(view_json).collect();
    writeln!(out, "{}", serde_json::to_string_pretty(&views)?)?;
    Ok(())
}

fn view_json(r: &ReferenceView) -> serde_json::Value {
    json!({
        "file": r.place.file,
        "line": r.place.line,
        "pointer": r.place.pointer,
        "entity": r.place.entity,
        "component": r.place.component,
        "text": r.text,
        "target": format!("{:?}", r.target),
    })
}

fn require_exists(checker: &Checker, resource: &str) -> anyhow::Result<()> {
    if checker.files_under(resource).is_empty() {
        anyhow::bail!(
            "{resource} is not a file or folder of the project (give the path with its extension, e.g. materials/bark.material)"
        );
    }
    Ok(())
}

/// `kiln refs RESOURCE`.
pub fn refs(
    project: &Path,
    resource: &str,
    as_json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let checker = open_checker(project)?;
    require_exists(&checker, resource)?;
    let refs = checker.references_to(resource);
    if as_json {
        print_json(&refs, out)?;
    } else {
        for r in &refs {
            writeln!(out, "{}: \"{}\"", r.place, r.text)?;
        }
        writeln!(out, "{} references to {resource}", refs.len())?;
    }
    Ok(EXIT_OK)
}

/// `kiln deps RESOURCE`.
pub fn deps(
    project: &Path,
    resource: &str,
    as_json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let checker = open_checker(project)?;
    require_exists(&checker, resource)?;
    let deps = checker.dependencies_of(resource);
    if as_json {
        print_json(&deps, out)?;
    } else {
        use dependency_checker::graph::Target;
        for d in &deps {
            let target = match &d.target {
                Target::Resolved(f) => f.to_string(),
                Target::Missing(f) => format!("{f} (missing)"),
                Target::Ambiguous(c) => {
                    format!(
                        "ambiguous: {}",
                        c.iter().map(|p| &**p).collect::<Vec<_>>().join(" or ")
                    )
                }
                Target::Invalid(reason) => format!("invalid: {reason}"),
            };
            writeln!(out, "{} -> {target}", d.place)?;
        }
        writeln!(out, "{resource} references {} resources", deps.len())?;
    }
    Ok(EXIT_OK)
}

fn print_plan(plan: &MovePlan, out: &mut dyn Write) -> std::io::Result<()> {
    for (old, new) in &plan.moves {
        writeln!(out, "move {old} -> {new}")?;
    }
    for edit in &plan.edits {
        for c in &edit.changes {
            writeln!(
                out,
                "patch {}: \"{}\" -> \"{}\"",
                c.place, c.old_text, c.new_text
            )?;
        }
    }
    Ok(())
}

/// The moves `kiln mv` arguments ask for: `OLD NEW`, or `SOURCE... FOLDER/` to move
/// several files or folders into a folder (each keeps its name).
pub fn move_request(paths: &[String]) -> anyhow::Result<MoveRequest> {
    match paths {
        [] | [_] => {
            anyhow::bail!("kiln mv needs OLD and NEW, or several sources and a destination folder")
        }
        [old, new] => Ok(MoveRequest::new(old, new)),
        [sources @ .., folder] => {
            let folder = folder.trim_end_matches('/');
            let pairs = sources
                .iter()
                .map(|s| {
                    let name = s.trim_end_matches('/').rsplit('/').next().unwrap_or(s);
                    (s.clone(), format!("{folder}/{name}"))
                })
                .collect();
            Ok(MoveRequest { pairs })
        }
    }
}

/// `kiln mv OLD NEW [--dry-run]`, or `kiln mv SOURCE... FOLDER/`.
pub fn mv(
    project: &Path,
    paths: &[String],
    dry_run: bool,
    as_json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<u8> {
    let request = move_request(paths)?;
    let mut checker = open_checker(project)?;
    let plan = rename::plan(&checker, &request)?;
    if as_json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&json!({"dry_run": dry_run, "plan": plan}))?
        )?;
    } else {
        print_plan(&plan, out)?;
    }
    if !dry_run {
        rename::apply(&mut checker, &plan)?;
    }
    if !as_json {
        let verb = if dry_run { "would move" } else { "moved" };
        writeln!(
            out,
            "{verb} {} files and patch{} {} references in {} files",
            plan.moves.len(),
            if dry_run { "" } else { "ed" },
            plan.change_count(),
            plan.edits.len()
        )?;
    }
    Ok(EXIT_OK)
}
