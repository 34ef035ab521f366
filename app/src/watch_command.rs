//! `kiln watch`: compile every level once, then recompile the levels that each change
//! affects, printing one line per rebuild. The data compiler a game running beside the
//! editor reads from.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use dependency_checker::watch::{Debounce, ProjectWatcher};

use crate::checker_commands::open_checker;
use crate::outcome::Outcome;
use crate::query_service::{Answering, QueryServer, SOCKET};
use anyhow::Context;

use crate::compile_command::{blob_path, write_blob};
use crate::live::{affected_levels, levels_using_types, summarize};
use kiln_plugin_host::project::ProjectPlugins;

/// The levels `kiln watch` has built, kept to be updated incrementally (see
/// `kiln_core::incremental`): a save that changed a few entities' fields
/// recompiles those entities and patches the blob, instead of the level.
type Built = std::collections::HashMap<String, kiln_core::incremental::IncrementalLevel>;

/// Compiles `level` and writes its blob; a level that fails keeps its last good blob.
/// With `incremental`, a level built before is brought up to date from what its
/// own text changed; otherwise (a prefab or the plugins changed) it is compiled in
/// full. Returns the warnings and the line to print.
fn rebuild(
    checker: &dependency_checker::Checker,
    out_root: &Path,
    level: &str,
    (built, incremental): (&mut Built, bool),
) -> anyhow::Result<(Vec<String>, String)> {
    use kiln_core::incremental::{IncrementalLevel, Update};
    let registry = checker.index().registry().clone();
    let project = checker.project();
    // A preview, as the editor's: a component of a plugin that is not loaded is
    // left out (and said), and the rest of the level is built.
    let options = kiln_core::CompileOptions {
        skip_unknown_components: true,
    };
    let failed = |e: &dyn std::fmt::Display| {
        (
            Vec::new(),
            format!("error: {e} (the last good blob of {level} stays)"),
        )
    };
    let text = match project.level_text(level) {
        Ok(text) => text,
        Err(e) => return Ok(failed(&e)),
    };
    let mut source = project.resource_source();
    let update = match built.get_mut(level).filter(|_| incremental) {
        Some(kept) => kept.update(&registry, &mut source, &text),
        None => IncrementalLevel::compile(&registry, &mut source, level, &text, options).map(
            |(fresh, update)| {
                built.insert(level.to_owned(), fresh);
                update
            },
        ),
    };
    let update = match update {
        Ok(update) => update,
        Err(e) => return Ok(failed(&e)),
    };
    let Some(kept) = built.get(level) else {
        return Ok(failed(&"the build was lost"));
    };
    let compiled = kept.compiled();
    let how = match &update {
        Update::Unchanged => {
            return Ok((Vec::new(), format!("{level} is unchanged; its blob stays")));
        }
        Update::Patched { entities, .. } => format!(
            "incremental: {} {}",
            entities.len(),
            if entities.len() == 1 {
                "entity"
            } else {
                "entities"
            }
        ),
        Update::Full { reason } => format!("full: {reason}"),
    };
    write_blob(out_root, level, &compiled.blob)
        .with_context(|| format!("writing {}", blob_path(out_root, level).display()))?;
    // Components left out are said when the level is compiled in full; a patch
    // changes none.
    let warnings = match update {
        Update::Full { .. } => compiled
            .left_out
            .iter()
            .map(|e| format!("warning: {e} (left out)"))
            .collect(),
        _ => Vec::new(),
    };
    let line = format!("built {level} ({} entities, {how})", compiled.entity_count);
    Ok((warnings, line))
}

/// The component types `plugins` registered.
fn plugin_types(plugins: &ProjectPlugins) -> std::collections::HashSet<String> {
    (plugins.loaded.iter())
        .flat_map(|p| p.component_types.iter().cloned())
        .collect()
}

/// Whether `changed` touches the project's plugins: a file in a plugin folder
/// (its sources, or a prebuilt library pulled with them), or `kiln.project`,
/// which lists them.
fn touches_plugins(checker: &dependency_checker::Checker, changed: &[String]) -> bool {
    let entries = &checker.project().config().plugins;
    changed.iter().any(|c| {
        c == kiln_core::project::PROJECT_FILE
            || entries
                .iter()
                .any(|entry| dependency_checker::fs::is_within(c, entry))
    })
}

/// Shuts the plugins down and loads them again, building those whose sources
/// changed, with a checker on the new registry: the answers served and the
/// levels built from now on follow them, as a command started now would. Returns
/// the component types of the old plugins and the new ones, whose levels are
/// rebuilt.
fn reload_plugins(
    project_dir: &Path,
    (checker, plugins): (dependency_checker::Checker, ProjectPlugins),
    out: &mut dyn Write,
) -> anyhow::Result<(
    dependency_checker::Checker,
    ProjectPlugins,
    std::collections::HashSet<String>,
)> {
    let start = Instant::now();
    let mut types = plugin_types(&plugins);
    // The checker's registry holds the old plugins' function pointers: it goes
    // first, then the plugins are shut down and unloaded.
    drop(checker);
    drop(plugins);
    let (checker, plugins) = open_checker(project_dir)?;
    for (entry, took) in &plugins.built {
        writeln!(out, "built plugin {entry} in {:.1} s", took.as_secs_f64())?;
    }
    for w in &plugins.warnings {
        writeln!(out, "warning: {w}")?;
    }
    for e in &plugins.errors {
        writeln!(out, "error: {e}")?;
    }
    for m in kiln_plugin_host::take_messages() {
        writeln!(out, "plugin said: {}", m.text)?;
    }
    let names: Vec<&str> = plugins.loaded.iter().map(|p| p.name.as_str()).collect();
    writeln!(
        out,
        "reloaded plugins ({}) in {:.1} ms",
        if names.is_empty() {
            "none loaded".to_owned()
        } else {
            names.join(", ")
        },
        start.elapsed().as_secs_f64() * 1000.0
    )?;
    checker.lookup();
    types.extend(plugin_types(&plugins));
    Ok((checker, plugins, types))
}

/// Runs `kiln watch` until the process is stopped; with `build` false
/// (`--no-build`) it only keeps the index current and answers queries, writing no
/// build output.
pub fn run(
    project_dir: &Path,
    out_dir: Option<&Path>,
    build: bool,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let (mut checker, mut plugins) = open_checker(project_dir)?;
    crate::plugins::report(&plugins, true, &mut std::io::stderr());
    let root = checker.project().root().to_owned();
    let out_root = out_dir.map_or_else(|| root.clone(), Path::to_owned);
    // As for `kiln compile`: a folder named with --out may not exist yet.
    if out_dir.is_some() {
        std::fs::create_dir_all(&out_root)
            .with_context(|| format!("creating the output folder {}", out_root.display()))?;
    }
    // Watch first, so that nothing changed during the first build is missed.
    let watcher = ProjectWatcher::start(&root, Debounce::default())?;
    let levels = if build {
        checker.project().levels()?
    } else {
        Vec::new()
    };
    let mut built = Built::new();
    for level in &levels {
        let start = Instant::now();
        let (warnings, line) = rebuild(&checker, &out_root, level, (&mut built, false))?;
        for w in warnings {
            writeln!(out, "{w}")?;
        }
        writeln!(
            out,
            "{line} in {:.1} ms",
            start.elapsed().as_secs_f64() * 1000.0
        )?;
    }
    // Answer `kiln check`, `refs`, `deps` and `mv` from this process's index while it
    // runs (see `query_service`); without a socket, those commands work alone.
    let (queries, mut answering) = Answering::new(watcher.sync_cookies());
    // Filed now, kept current after: the first question does not pay for it.
    checker.lookup();
    // The big levels' layouts, so that even their first save is scanned by the
    // entities it changed (see `Checker::keep_level_layout`).
    for level in &levels {
        checker.keep_level_layout(level);
        if let Some(kept) = built.get_mut(level)
            && kept.text_len() >= kiln_core::incremental::PREPARED_FROM
        {
            kept.prepare_updates();
        }
    }
    let mut plugin_report = crate::checker_reports::plugin_report(&plugins);
    let _server = match QueryServer::start(&root, watcher.sync_cookies(), queries) {
        Ok(server) => {
            writeln!(
                out,
                "answering kiln check, refs, deps and mv on {}",
                root.join(SOCKET).display()
            )?;
            Some(server)
        }
        Err(e) => {
            writeln!(out, "note: not answering queries: {e:#}")?;
            None
        }
    };
    writeln!(
        out,
        "watching {} for changes (Ctrl+C stops)",
        root.display()
    )?;
    out.flush()?;
    loop {
        // Wake now and then even without events: a project folder renamed or
        // deleted must be noticed before the next edit is silently ignored. A
        // question whose sync cookie is lost is answered after a re-walk.
        let wake = if answering.busy() { 50 } else { 1000 };
        let batch = watcher.next_batch(Duration::from_millis(wake));
        if watcher.root_is_gone() {
            writeln!(
                out,
                "the project folder {} was moved, renamed or deleted; stopping (run kiln watch where it is now)",
                root.display()
            )?;
            out.flush()?;
            return Ok(Outcome::Failed);
        }
        // A saved level is built before the index takes the batch in: what it
        // includes is known from its last build, and the preview should not wait
        // for the index (a 10,000-entity level is 3.7 MB to scan).
        let mut built_early: Vec<String> = Vec::new();
        if let Some(batch) = batch
            .as_ref()
            .filter(|b| build && !b.rescan && !touches_plugins(&checker, &b.paths))
        {
            let root = checker.project().root();
            let saved = |p: &&String| {
                p.ends_with(".level")
                    && checker.index().contains(p)
                    && std::fs::symlink_metadata(root.join(p)).is_ok_and(|m| m.is_file())
            };
            for level in batch.paths.iter().filter(saved) {
                // Compiled in full when a prefab it includes changed too.
                let includes_changed = built.get(level).is_none_or(|kept| {
                    (kept.compiled().units.iter()).any(|unit| batch.paths.contains(unit))
                });
                let start = Instant::now();
                let (warnings, line) =
                    rebuild(&checker, &out_root, level, (&mut built, !includes_changed))?;
                for w in warnings {
                    writeln!(out, "{w}")?;
                }
                // From the first event of the save, as the other rebuilds say it.
                let total = batch.first_event.map_or(start, |t| t.min(start)).elapsed();
                let total = total.as_secs_f64() * 1000.0;
                writeln!(out, "{line} after {level} changed: {total:.1} ms")?;
                out.flush()?;
                built_early.push(level.clone());
            }
        }
        let (mut changed, synced, first_event, renamed) = match batch {
            Some(batch) => {
                let report = checker.apply_changes(&batch)?;
                (
                    report.changed,
                    batch.synced,
                    batch.first_event,
                    report.renamed,
                )
            }
            None => Default::default(),
        };
        // Plugins whose sources changed are built and swapped in before any
        // question of this batch is answered: a command started now would load
        // them as they are.
        let plugin_types = if touches_plugins(&checker, &changed) {
            let types;
            (checker, plugins, types) = reload_plugins(project_dir, (checker, plugins), out)?;
            plugin_report = crate::checker_reports::plugin_report(&plugins);
            // Blobs compiled with the old plugins' code are built again in full.
            built.clear();
            types
        } else {
            Default::default()
        };
        // What the batch changed is in `changed` already; a move answered for a
        // command in a terminal reaches the watcher as nothing new, so it is asked
        // for after the answers.
        checker.take_changed();
        let mut answers = crate::query_service::CheckerAnswers {
            checker: &mut checker,
            plugins: &plugin_report,
        };
        answering.answer_ready(&mut answers, &synced)?;
        for path in checker.take_changed() {
            if !changed.contains(&path) {
                changed.push(path);
            }
        }
        if changed.is_empty() {
            continue;
        }
        let report = dependency_checker::ChangeReport { changed, renamed };
        for (old, new) in &report.renamed {
            writeln!(
                out,
                "note: {old} was renamed to {new} outside Kiln; `kiln check` lists the references to fix"
            )?;
        }
        if !build {
            continue;
        }
        let mut affected = affected_levels(&checker, &report.changed);
        affected.extend(levels_using_types(&checker, &plugin_types));
        for level in &built_early {
            affected.remove(level);
        }
        let detect_ms = first_event.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1000.0);
        if affected.is_empty() && built_early.is_empty() {
            writeln!(
                out,
                "changed {}: no level affected",
                summarize(&report.changed)
            )?;
        }
        for level in &affected {
            let start = Instant::now();
            // Reached through something else that changed (a prefab, a plugin):
            // compiled in full.
            let (warnings, line) = rebuild(&checker, &out_root, level, (&mut built, false))?;
            for w in warnings {
                writeln!(out, "{w}")?;
            }
            let total = detect_ms + start.elapsed().as_secs_f64() * 1000.0;
            writeln!(
                out,
                "{line} after {} changed: {total:.1} ms",
                summarize(&report.changed)
            )?;
        }
        out.flush()?;
    }
}
