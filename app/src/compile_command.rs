//! `kiln compile`: levels -> blobs under `OUT/build/`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use kiln_core::Project;
use kiln_core::project::BUILD_DIR;

use crate::outcome::Outcome;

/// The blob file of level `level` (e.g. `levels/forest.level`) under `out_root`.
pub fn blob_path(out_root: &Path, level: &str) -> PathBuf {
    out_root.join(blob_rel(level))
}

/// The blob file of level `level`, relative to the output root.
fn blob_rel(level: &str) -> PathBuf {
    Path::new(BUILD_DIR).join(format!("{level}.bin"))
}

/// Writes level `level`'s blob under `out_root/build/`, never through a link there,
/// and removes from its folder the temporary blobs of compiles that were killed
/// while writing (`build/` is not a project folder, so the walk's sweep never
/// reaches it).
pub fn write_blob(out_root: &Path, level: &str, blob: &[u8]) -> std::io::Result<()> {
    write_blob_with(out_root, level, |file| file.write_all(blob))
}

/// [`write_blob`] of what `write` writes (through a buffer).
fn write_blob_with(
    out_root: &Path,
    level: &str,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let rel = blob_rel(level);
    kiln_core::fs::write_below_with(out_root, &rel, |file| {
        let mut buffered = std::io::BufWriter::with_capacity(1 << 16, file);
        write(&mut buffered)?;
        buffered.flush()
    })?;
    if let Some(folder) = rel.parent()
        && let Ok(dir) = kiln_core::fs::open_folder_below(out_root, folder, false)
    {
        kiln_core::fs::sweep_leftovers(&dir);
    }
    Ok(())
}

/// Normalises a level argument: `levels/forest` and `levels/forest.level` both name
/// `levels/forest.level`.
pub(crate) fn level_file(arg: &str) -> String {
    if arg.ends_with(".level") {
        arg.to_owned()
    } else {
        format!("{arg}.level")
    }
}

/// How `kiln compile` runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// How each level compiles.
    pub compile: kiln_core::CompileOptions,
    /// Write blobs even with a stale prebuilt plugin.
    pub allow_stale_plugins: bool,
}

/// Compiles `levels` (all levels when empty) of the project at `project_dir`.
/// Returns [`Outcome::Findings`] if any level failed to compile; the others are still
/// written. A failed level's previous blob is left as it was. With a plugin whose
/// prebuilt library was built from other sources (nothing here can build the
/// ones there are), nothing is written unless `allow_stale_plugins`.
pub fn run(
    project_dir: &Path,
    out_dir: Option<&Path>,
    levels: &[String],
    Options {
        compile: options,
        allow_stale_plugins,
    }: Options,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let project = Project::open(project_dir)?;
    // The levels and prefabs are read as one committed state: a move in another
    // process is waited for (and one a crash cut short is rolled back), so no level
    // is compiled half moved. A project Kiln cannot write to (compiled with --out
    // elsewhere) has no lock to take, and no move can run in it.
    let _reading = match dependency_checker::Checker::committed_state(
        project.root(),
        &crate::checker_commands::say_waiting,
    ) {
        Ok(lock) => Some(lock),
        Err(dependency_checker::CheckerError::Io { source, .. })
            if matches!(
                source.kind(),
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
            ) =>
        {
            None
        }
        Err(e) => return Err(e.into()),
    };
    let (registry, plugins) = crate::plugins::registry_with_plugins(&project);
    crate::plugins::report(&plugins, false, &mut std::io::stderr());
    for e in &plugins.errors {
        writeln!(out, "error: {e}")?;
    }
    if allow_stale_plugins {
        for w in &plugins.warnings {
            writeln!(
                out,
                "warning: {w} (--allow-stale-plugins: compiled all the same)"
            )?;
        }
    } else if !plugins.warnings.is_empty() {
        for w in &plugins.warnings {
            writeln!(out, "error: {w}")?;
        }
        writeln!(
            out,
            "nothing compiled: the blobs would carry old plugin code. Prebuild the plugins again, or pass --allow-stale-plugins to write them anyway"
        )?;
        return Ok(Outcome::Findings);
    }
    let out_root = out_dir.map_or_else(|| project.root().to_owned(), Path::to_owned);
    // A folder named with --out is the user's choice, and may not exist yet; below
    // it, `build/` is made without following links.
    if out_dir.is_some() {
        std::fs::create_dir_all(&out_root)
            .with_context(|| format!("creating the output folder {}", out_root.display()))?;
    }
    let levels = if levels.is_empty() {
        project.levels()?
    } else {
        levels.iter().map(|l| level_file(l)).collect()
    };
    let mut failed = 0;
    for level in &levels {
        let start = Instant::now();
        // Streamed: a level's text is never held whole, nor its blob (see
        // core/src/compiler/streamed.rs).
        match project.compile_streamed(&registry, level, options) {
            Ok(compiled) => {
                for e in compiled.left_out() {
                    writeln!(out, "warning: {e} (left out)")?;
                }
                let target = blob_path(&out_root, level);
                write_blob_with(&out_root, level, |file| compiled.write_blob(file))
                    .with_context(|| format!("writing {}", target.display()))?;
                writeln!(
                    out,
                    "compiled {level}: {} {}, {} bytes in {:.1} ms -> {}",
                    compiled.entity_count(),
                    if compiled.entity_count() == 1 {
                        "entity"
                    } else {
                        "entities"
                    },
                    compiled.blob_len(),
                    start.elapsed().as_secs_f64() * 1000.0,
                    target.display()
                )?;
            }
            Err(e) => {
                failed += 1;
                writeln!(out, "error: {e}")?;
            }
        }
    }
    writeln!(out, "{} compiled, {failed} failed", levels.len() - failed)?;
    Ok(if failed == 0 && plugins.errors.is_empty() {
        Outcome::Done
    } else {
        Outcome::Findings
    })
}
