//! The editor by the user's clock, from outside its process: launch to the first
//! frame and to the first frame showing the level, resident memory, CPU while
//! nothing changes, and a save (temporary file, then rename, as another tool
//! saves) to the frame that shows it. Needs an X display (`xvfb-run`).
//!
//! `editor-latency KILN demo|ENTITIES [SAVES]`: the demo project (copied), or the
//! editor benchmark's level of ENTITIES entities. The editor reports each frame it
//! builds to a file (`KILN_FRAME_LOG`), with how many times its world was
//! rebuilt; the time a line appears is read here. The peer for the launch is
//! `xmessage`, timed to its window being mapped (`xdotool search --sync`), as is
//! Kiln's window; and `bare-window`, eframe's window with one label on the same
//! renderer, the floor of any eframe editor, for the launch and the memory.
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(kiln), Some(what)) = (args.first(), args.get(1)) else {
        eprintln!("usage: editor-latency KILN demo|ENTITIES [SAVES]");
        return ExitCode::from(2);
    };
    let saves: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    match run(Path::new(kiln), what, saves) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The frame lines written so far: (frame, world revision).
fn frames(log: &Path) -> Vec<(u64, u64)> {
    frame_lines(log)
        .into_iter()
        .map(|(f, w, _)| (f, w))
        .collect()
}

/// The frame lines written so far: (frame, world revision, scene pictures drawn).
fn frame_lines(log: &Path) -> Vec<(u64, u64, u64)> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            match (w.next(), w.next(), w.next(), w.next()) {
                (Some("frame"), Some(f), Some("world"), Some(s)) => {
                    let pictures = match (w.next(), w.next()) {
                        (Some("pictures"), Some(p)) => p.parse().ok()?,
                        _ => 0,
                    };
                    Some((f.parse().ok()?, s.parse().ok()?, pictures))
                }
                _ => None,
            }
        })
        .collect()
}

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) -> Result<f64, String> {
    let t0 = Instant::now();
    while !done() {
        if t0.elapsed() > limit {
            return Err(format!("{what}: nothing after {limit:?}"));
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    Ok(t0.elapsed().as_secs_f64() * 1000.0)
}

/// Whether a visible window of `class` exists (asked of X every time: xdotool's
/// own `--sync` waits half a second between looks). Asked at most every 4 ms:
/// an xdotool every half millisecond sometimes kept the X server from taking the
/// window's own connection.
fn window_of(class: &str) -> bool {
    std::thread::sleep(Duration::from_millis(4));
    Command::new("xdotool")
        .args(["search", "--onlyvisible", "--class", class])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Milliseconds from spawning `command` to a window of `class` being mapped.
fn to_window(mut command: Command, class: &str) -> Result<(f64, std::process::Child), String> {
    let t0 = Instant::now();
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    wait_for(class, Duration::from_secs(30), || window_of(class))?;
    Ok((t0.elapsed().as_secs_f64() * 1000.0, child))
}

fn cpu_ticks(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    t(11) + t(12)
}

fn rss_mb(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let name = e.file_name();
        if name == ".kiln" || name == "build" {
            continue;
        }
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &to.join(&name))?;
        } else {
            std::fs::copy(e.path(), to.join(&name))?;
        }
    }
    Ok(())
}

fn run(kiln: &Path, what: &str, saves: usize) -> Result<(), String> {
    let scratch = std::env::temp_dir().join(format!("kiln-editor-latency-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let root = scratch.join("project");
    let level: Option<PathBuf> = if what == "demo" {
        let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../projects/demo");
        copy_dir(&demo, &root).map_err(|e| e.to_string())?;
        None
    } else {
        let n: usize = what
            .parse()
            .map_err(|_| format!("{what} is not demo or a number"))?;
        let level = kiln_benches::write_editor_project(&root, n).map_err(|e| e.to_string())?;
        // As the editor saves it, and opened when the project opens.
        let path = root.join(&level);
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
        std::fs::write(&path, kiln_core::json_format::to_canonical_string(&doc))
            .map_err(|e| e.to_string())?;
        std::fs::write(
            root.join("kiln.project"),
            format!(
                "{{\"boot_levels\": [\"{}\"]}}",
                level.trim_end_matches(".level")
            ),
        )
        .map_err(|e| e.to_string())?;
        Some(path)
    };
    let log = scratch.join("frames.log");
    let config = scratch.join("config");

    // The peer: xmessage's window.
    let mut peer = Vec::new();
    for _ in 0..5 {
        let mut xmessage = Command::new("xmessage");
        xmessage.arg("hello");
        let (ms, mut child) = to_window(xmessage, "Xmessage")?;
        peer.push(ms);
        let _ = child.kill();
        let _ = child.wait();
    }
    // The floor: a bare eframe window (`bare-window`, beside this binary) on the
    // same renderer, to its window and its memory.
    let bare_path = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .with_file_name("bare-window");
    let mut bare = Vec::new();
    let mut bare_rss = 0.0;
    for _ in 0..3 {
        let (ms, mut child) = to_window(Command::new(&bare_path), "kiln-bare-window")?;
        bare.push(ms);
        std::thread::sleep(Duration::from_secs(2));
        bare_rss = rss_mb(child.id());
        let _ = child.kill();
        let _ = child.wait();
    }
    let mut window = Vec::new();
    let mut first_frame = Vec::new();
    let mut level_frame = Vec::new();
    let mut scene_frame = Vec::new();
    let mut rss = 0.0;
    let mut idle = 0.0;
    let mut latencies = Vec::new();
    for run in 0..3 {
        let _ = std::fs::remove_file(&log);
        let mut command = Command::new(kiln);
        command
            .arg("edit")
            .arg(&root)
            .env("KILN_FRAME_LOG", &log)
            .env("KILN_TRUST", "1")
            .env("KILN_CONFIG_DIR", &config)
            .env("XDG_DATA_HOME", scratch.join("data"));
        let t0 = Instant::now();
        // Its messages, for when a run goes wrong (kept beside the frame log).
        let errors = std::fs::File::create(scratch.join(format!("kiln-{run}.err")))
            .map_err(|e| e.to_string())?;
        let mut child = command
            .stdout(Stdio::null())
            .stderr(errors)
            .spawn()
            .map_err(|e| e.to_string())?;
        let mapped = std::thread::spawn(move || {
            wait_for("kiln", Duration::from_secs(60), || window_of("kiln"))
                .ok()
                .map(|_| t0.elapsed())
        });
        wait_for("first frame", Duration::from_secs(60), || {
            !frames(&log).is_empty()
        })?;
        first_frame.push(t0.elapsed().as_secs_f64() * 1000.0);
        wait_for("level", Duration::from_secs(120), || {
            frames(&log).iter().any(|&(_, s)| s > 0)
        })?;
        level_frame.push(t0.elapsed().as_secs_f64() * 1000.0);
        wait_for("scene", Duration::from_secs(20), || {
            frame_lines(&log).iter().any(|&(_, _, p)| p > 0)
        })
        .map_err(|e| format!("{e} (see {})", scratch.display()))?;
        scene_frame.push(t0.elapsed().as_secs_f64() * 1000.0);
        match mapped.join() {
            Ok(Some(at)) => window.push(at.as_secs_f64() * 1000.0),
            _ => return Err("no kiln window".into()),
        }
        if run == 2 {
            let pid = child.id();
            std::thread::sleep(Duration::from_secs(2));
            let before = cpu_ticks(pid);
            std::thread::sleep(Duration::from_secs(3));
            idle = (cpu_ticks(pid) - before) / 3.0; // percent of one core
            rss = rss_mb(pid);
            if let Some(path) = &level {
                let mut doc: Value = serde_json::from_str(
                    &std::fs::read_to_string(path).map_err(|e| e.to_string())?,
                )
                .map_err(|e| e.to_string())?;
                let n = doc["entities"].as_array().map_or(0, Vec::len);
                for i in 0..saves {
                    let k = (i * 7919) % n.max(1);
                    doc["entities"][k]["components"]["transform"]["position"][1] =
                        Value::from(0.001 * (i + 1) as f64);
                    let text = kiln_core::json_format::to_canonical_string(&doc);
                    let spawned = frames(&log).iter().map(|&(_, s)| s).max().unwrap_or(0);
                    let temp = path.with_extension("level.tmp~");
                    let t = Instant::now();
                    std::fs::write(&temp, &text).map_err(|e| e.to_string())?;
                    std::fs::rename(&temp, path).map_err(|e| e.to_string())?;
                    wait_for("a save's frame", Duration::from_secs(20), || {
                        frames(&log).iter().any(|&(_, s)| s > spawned)
                    })?;
                    latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("editor on {what}");
    println!("| measured | Kiln | peer |");
    println!("|---|---:|---:|");
    println!(
        "| launch -> window mapped, median | {:.0} ms | xmessage {:.0} ms |",
        median(&mut window),
        median(&mut peer)
    );
    println!(
        "| the same, beside a bare eframe window | | {:.0} ms |",
        median(&mut bare)
    );
    println!(
        "| launch -> first frame, median | {:.0} ms | |",
        median(&mut first_frame)
    );
    println!(
        "| launch -> first frame with the level, median | {:.0} ms | |",
        median(&mut level_frame)
    );
    println!(
        "| launch -> first frame with the scene drawn, median | {:.0} ms | |",
        median(&mut scene_frame)
    );
    println!("| resident memory, level open | {rss:.0} MB | bare eframe window {bare_rss:.0} MB |");
    println!("| CPU with nothing changing (2-5 s after the level) | {idle:.0}% | |");
    if !latencies.is_empty() {
        let mut l = latencies.clone();
        l.sort_by(f64::total_cmp);
        println!(
            "| save -> frame showing it, p50 / p99 | {:.1} / {:.1} ms | |",
            l[l.len() / 2],
            l[((l.len() - 1) as f64 * 0.99).round() as usize]
        );
        // In order, to tell a slow first save from a noisy machine.
        let each: Vec<String> = latencies.iter().map(|v| format!("{v:.0}")).collect();
        eprintln!("saves, in order (ms): {}", each.join(" "));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
