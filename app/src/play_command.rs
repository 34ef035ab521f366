//! `kiln play LEVEL`: the level spawned with the project's plugins and simulated
//! headless for a number of frames, as the editor's Play runs it, then the world
//! poses of its entities (and everything the plugins logged, frame by frame)
//! written as JSON: what a plugin's author asserts in a test, on a machine with no
//! window.

use std::io::Write;
use std::path::Path;

use anyhow::Context as _;
use kiln_core::{EntityManager, Project, World, spawn_level};
use serde_json::{Value, json};

use crate::outcome::Outcome;

/// How `kiln play` runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlayOptions {
    /// Frames to simulate.
    pub frames: u32,
    /// Seconds each frame advances.
    pub dt: f32,
}

/// The most frames one run simulates (a typo of a few zeros should not run for
/// hours).
pub const MAX_FRAMES: u32 = 1_000_000;

/// Plays `level` of the project at `project_dir` and writes the report to `dump`,
/// or to `out` without one. Exit status 1 when the level does not compile or spawn,
/// or a plugin did not load.
pub fn run(
    project_dir: &Path,
    level: &str,
    options: PlayOptions,
    dump: Option<&Path>,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let PlayOptions { frames, dt } = options;
    if frames > MAX_FRAMES {
        anyhow::bail!("--frames {frames}: at most {MAX_FRAMES}");
    }
    if !(dt.is_finite() && dt > 0.0 && dt <= 1.0) {
        anyhow::bail!("--dt {dt}: a number of seconds above 0 and at most 1");
    }
    let project = Project::open(project_dir)?;
    let (registry, plugins) = crate::plugins::registry_with_plugins(&project);
    crate::plugins::report(&plugins, true, &mut std::io::stderr());
    let file = crate::compile_command::level_file(level);
    let compiled = match project.compile_with(&registry, &file, Default::default()) {
        Ok(compiled) => compiled,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(Outcome::Findings);
        }
    };
    let mut entities = EntityManager::new();
    let mut world = World::new();
    let spawned = match spawn_level(&compiled.blob, &registry, &mut entities, &mut world) {
        Ok(spawned) => spawned,
        Err(e) => {
            eprintln!("error: {file}: {e}");
            return Ok(Outcome::Findings);
        }
    };
    let mut log: Vec<Value> = Vec::new();
    let mut take_log = |frame: u32| {
        for m in kiln_plugin_host::take_messages() {
            let level = match m.level {
                0 => "info",
                1 => "warning",
                _ => "error",
            };
            log.push(json!({"frame": frame, "level": level, "text": m.text}));
        }
    };
    take_log(0);
    // As the editor's Play steps: each plugin's `update`, then every component's
    // `simulate`.
    for frame in 1..=frames {
        for plugin in &plugins.loaded {
            plugin.update(dt);
        }
        world.simulate(dt, &entities);
        take_log(frame);
    }
    let poses: Vec<Value> = (spawned.ids().zip(&spawned.entities))
        .filter_map(|(id, &entity)| {
            let t = world.transforms.lookup(entity)?;
            let (scale, rotation, translation) =
                world.transforms.world(t).to_scale_rotation_translation();
            Some(json!({
                "id": id,
                "position": translation.to_array(),
                "rotation": rotation.to_array(),
                "scale": scale.to_array(),
            }))
        })
        .collect();
    let report = json!({
        "schema": "kiln-play/1",
        "level": file,
        "frames": frames,
        "dt": dt,
        "seconds": f64::from(frames) * f64::from(dt),
        "entities": poses,
        "log": log,
    });
    let text = serde_json::to_string_pretty(&report)? + "\n";
    match dump {
        Some(path) => kiln_core::write_atomic(path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?,
        None => out.write_all(text.as_bytes())?,
    }
    drop(world);
    Ok(if plugins.errors.is_empty() {
        Outcome::Done
    } else {
        Outcome::Findings
    })
}
