//! `kiln check`, `kiln refs`, `kiln deps` and `kiln mv` from the terminal: each
//! opens the project's checker (with a progress counter when stdout is a
//! terminal) and prints what `checker_reports.rs` reports.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use dependency_checker::BuildOptions;
use dependency_checker::Checker;
use indicatif::{ProgressBar, ProgressStyle};
use kiln_core::Registry;

use crate::outcome::Outcome;
use crate::plugins::{registry_with_plugins, report};
use kiln_plugin_host::project::ProjectPlugins;

use crate::checker_reports::{
    CheckOptions, CheckerMover, MoveOptions, check_with, deps_with, mv_with, plugin_report,
    refs_with,
};

/// Opens the project's checker with its plugins' component types (their resource
/// fields are typed references). Keep the plugins while the checker is used.
pub fn open_checker(project: &Path) -> anyhow::Result<(Checker, ProjectPlugins)> {
    let (registry, plugins) = registry_with_plugins(&kiln_core::Project::open(project)?);
    Ok((open_checker_with(project, Arc::new(registry))?, plugins))
}

/// Opens the project's checker with `registry`, with a progress counter (on stderr)
/// when stdout is a terminal: a cold index of a big project takes a moment, and piped
/// output stays clean.
pub fn open_checker_with(project: &Path, registry: Arc<Registry>) -> anyhow::Result<Checker> {
    opened_with_progress(|options| Checker::open(project, registry, options))
}

/// Runs `open` with the options a command working alone opens its checker with: a
/// progress counter (on stderr) when stdout is a terminal, since a cold index of a
/// big project takes a moment and piped output stays clean, and a note when another
/// Kiln operation holds the project.
fn opened_with_progress(
    open: impl FnOnce(&BuildOptions) -> Result<Checker, dependency_checker::CheckerError>,
) -> anyhow::Result<Checker> {
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
        waiting: Some(Arc::new(say_waiting)),
        // A command reads each reference once, if at all, and writes the cache: a
        // first index stays in the cache's encoding (peak memory below the files').
        keep_encoded: true,
    };
    let checker = open(&options);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(checker?)
}

/// Says, on standard error, that a command waits for another Kiln operation (a move)
/// that holds the project's lock.
pub(crate) fn say_waiting() {
    eprintln!(
        "waiting for another Kiln operation on this project to finish (it holds .kiln/lock)..."
    )
}

/// `kiln check [--fix [--dry-run]] [--deny-warnings]`: exit status 0 when there is no
/// error (warnings are printed), 1 when there are errors (or warnings, with
/// `--deny-warnings`); 2 when the check could not run.
pub fn check(
    project: &Path,
    options: CheckOptions,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let (registry, plugins) = registry_with_plugins(&kiln_core::Project::open(project)?);
    let registry = Arc::new(registry);
    let mut checker = open_checker_with(project, registry.clone())?;
    report(&plugins, false, &mut std::io::stderr());
    check_with(
        &mut checker,
        &plugin_report(&plugins),
        options,
        (out, &mut std::io::stderr()),
    )
}

/// `kiln refs RESOURCE`: every place that references it, and the ambiguous
/// references that may mean it.
pub fn refs(
    project: &Path,
    resource: &str,
    as_json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let (checker, plugins) = open_checker(project)?;
    report(&plugins, true, &mut std::io::stderr());
    refs_with(&checker, resource, as_json, out)
}

/// `kiln deps RESOURCE`.
pub fn deps(
    project: &Path,
    resource: &str,
    as_json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    // Only the file and the folders its references point into are looked at on
    // disk; the cache answers for the rest (see `Checker::open_for_dependencies_of`).
    let (registry, plugins) = registry_with_plugins(&kiln_core::Project::open(project)?);
    let registry = Arc::new(registry);
    let checker = opened_with_progress(|options| {
        Checker::open_for_dependencies_of(project, registry, options, resource)
    })?;
    report(&plugins, true, &mut std::io::stderr());
    deps_with(&checker, resource, as_json, out)
}

/// `kiln mv OLD NEW [--dry-run]`, or `kiln mv SOURCE... FOLDER/`.
pub fn mv(
    project: &Path,
    paths: &[String],
    dry_run: bool,
    as_json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let (mut checker, plugins) = open_checker(project)?;
    report(&plugins, true, &mut std::io::stderr());
    let options = MoveOptions { dry_run, as_json };
    // Read again in place: what the refused apply found of the files (an entry
    // read again) stays, and the rest is checked against the disk.
    let mut mover = CheckerMover {
        checker: &mut checker,
        reread: |checker: &mut Checker| Ok(checker.rescan()?),
    };
    mv_with(&mut mover, paths, options, (out, &mut std::io::stderr()))
}
