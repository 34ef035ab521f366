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
    /// The most wall-clock seconds one frame may take: a plugin over it is
    /// stopped, named, and the frames completed are written.
    pub frame_budget: f32,
}

/// The default of [`PlayOptions::frame_budget`]: a frame takes milliseconds; a
/// plugin still in one after this long is taken as hung.
pub const DEFAULT_FRAME_BUDGET: f32 = 5.0;

/// What the watchdog needs to write the frames completed when a frame hangs: the
/// main thread is stuck inside the plugin then, mid-way through the world, so
/// nothing of the world is read; this is updated at the end of each frame.
struct Completed {
    /// The frame running now, and since when.
    frame: u32,
    started: Option<std::time::Instant>,
    /// Each entity's authoring id, and its world pose at the end of the last
    /// completed frame (copied each frame; made JSON only for the report).
    ids: Vec<String>,
    poses: Vec<Option<glam::Affine3A>>,
    /// What the plugins logged, frame by frame.
    log: Vec<Value>,
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
    let PlayOptions {
        frames,
        dt,
        frame_budget,
    } = options;
    if frames > MAX_FRAMES {
        anyhow::bail!("--frames {frames}: at most {MAX_FRAMES}");
    }
    if !(frame_budget.is_finite() && frame_budget > 0.0) {
        anyhow::bail!("--frame-budget {frame_budget}: a number of seconds above 0");
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
    let poses_now = |world: &World, poses: &mut Vec<Option<glam::Affine3A>>| {
        poses.clear();
        poses.extend(spawned.entities.iter().map(|&entity| {
            let t = world.transforms.lookup(entity)?;
            Some(world.transforms.world(t))
        }));
    };
    let mut first = Vec::with_capacity(spawned.entities.len());
    poses_now(&world, &mut first);
    let completed = std::sync::Arc::new(std::sync::Mutex::new(Completed {
        frame: 0,
        started: None,
        ids: spawned.ids().map(str::to_owned).collect(),
        poses: first,
        log: Vec::new(),
    }));
    let take_log = |frame: u32, log: &mut Vec<Value>| {
        for m in kiln_plugin_host::take_messages() {
            let level = match m.level {
                0 => "info",
                1 => "warning",
                _ => "error",
            };
            log.push(json!({"frame": frame, "level": level, "text": m.text}));
        }
    };
    if let Ok(mut c) = completed.lock() {
        take_log(0, &mut c.log);
    }
    start_watchdog(
        std::sync::Arc::clone(&completed),
        std::time::Duration::from_secs_f32(frame_budget),
        (file.clone(), dt),
        dump.map(Path::to_owned),
    );
    // As the editor's Play steps: each plugin's `update`, then every component's
    // `simulate`.
    for frame in 1..=frames {
        if let Ok(mut c) = completed.lock() {
            c.frame = frame;
            c.started = Some(std::time::Instant::now());
        }
        for plugin in &plugins.loaded {
            plugin.update(dt);
        }
        world.simulate(dt, &entities);
        if let Ok(mut c) = completed.lock() {
            take_log(frame, &mut c.log);
            poses_now(&world, &mut c.poses);
            c.started = None;
        }
    }
    let (poses, log) = match completed.lock() {
        Ok(mut c) => (poses_json(&c), std::mem::take(&mut c.log)),
        Err(_) => anyhow::bail!("the play's record was lost"),
    };
    let text = report_text(&file, frames, dt, poses, log, None)?;
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

/// Each entity's world pose as the report gives it.
fn poses_json(c: &Completed) -> Vec<Value> {
    (c.ids.iter().zip(&c.poses))
        .filter_map(|(id, pose)| {
            let (scale, rotation, translation) = (*pose)?.to_scale_rotation_translation();
            Some(json!({
                "id": id,
                "position": translation.to_array(),
                "rotation": rotation.to_array(),
                "scale": scale.to_array(),
            }))
        })
        .collect()
}

/// The play's report as JSON text (`kiln-play/1`); `stopped` says why it ended
/// early.
fn report_text(
    file: &str,
    frames: u32,
    dt: f32,
    poses: Vec<Value>,
    log: Vec<Value>,
    stopped: Option<Value>,
) -> anyhow::Result<String> {
    let mut report = json!({
        "schema": "kiln-play/1",
        "level": file,
        "frames": frames,
        "dt": dt,
        "seconds": f64::from(frames) * f64::from(dt),
        "entities": poses,
        "log": log,
    });
    if let Some(stopped) = stopped {
        report["stopped"] = stopped;
    }
    Ok(serde_json::to_string_pretty(&report)? + "\n")
}

/// Watches the frames from another thread: one that runs past `budget` means a
/// plugin did not return (an endless loop cannot be interrupted from outside it).
/// Then the frames completed are written (to `dump`, or stdout), the plugin is
/// named on stderr, and the process ends with status 1.
fn start_watchdog(
    completed: std::sync::Arc<std::sync::Mutex<Completed>>,
    budget: std::time::Duration,
    (file, dt): (String, f32),
    dump: Option<std::path::PathBuf>,
) {
    let tick = (budget / 4).clamp(
        std::time::Duration::from_millis(10),
        std::time::Duration::from_millis(250),
    );
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(tick);
            let Ok(mut c) = completed.lock() else { return };
            let Some(started) = c.started else { continue };
            if started.elapsed() <= budget {
                continue;
            }
            let frame = c.frame;
            let culprit = match kiln_plugin_host::call_in_progress() {
                Some(call) => call.to_string(),
                None => "a plugin did not return".to_owned(),
            };
            let message = format!(
                "frame {frame} ran past the frame budget of {:.1} s: {culprit}; it was stopped, and the {} frame{} completed are written",
                budget.as_secs_f32(),
                frame - 1,
                if frame == 2 { "" } else { "s" }
            );
            let stopped = json!({"frame": frame, "reason": message});
            let (poses, log) = (poses_json(&c), std::mem::take(&mut c.log));
            let written =
                report_text(&file, frame - 1, dt, poses, log, Some(stopped)).and_then(|text| {
                    match &dump {
                        Some(path) => kiln_core::write_atomic(path, text.as_bytes())
                            .with_context(|| format!("writing {}", path.display())),
                        None => {
                            let mut out = std::io::stdout().lock();
                            out.write_all(text.as_bytes())?;
                            out.flush()?;
                            Ok(())
                        }
                    }
                });
            eprintln!("error: {message}");
            if let Err(e) = written {
                eprintln!("error: {e:#}");
            }
            // The main thread is inside the plugin and never comes back.
            std::process::exit(1);
        }
    });
}
