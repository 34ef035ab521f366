//! Save -> preview latency of `kiln watch`, by the user's clock, beside its peer.
//!
//! `save-latency KILN ENTITIES [compact|canonical] [SAVES]` generates the editor
//! benchmark's level of ENTITIES entities (compact: one entity per line, as
//! `gen-level` writes it; canonical: as the editor saves it), starts
//! `KILN watch --out OUT` on it, and SAVES times (default 40) moves one entity
//! and saves the level as an editor does (a temporary file, then a rename). Each
//! latency runs from the start of the save to the moment the level's blob on
//! disk is a new file. The peer, in the same run: a fresh `KILN compile` process
//! of the same level, whole process. Prints p50, p99 and max of both, their
//! ratio, and the watch's CPU time per save.
//!
//! Hand-written rather than `hyperfine`: the time wanted ends when another
//! process has written a file, which a command-line timer cannot see.
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let k = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[k.min(sorted.len() - 1)]
}

/// The blob's identity on disk: a new file after every rewrite.
fn identity(path: &Path) -> Option<kiln_core::fs::FileIdentity> {
    let (parent, name) = (path.parent()?, path.file_name()?.to_str()?);
    kiln_core::fs::FolderCursor::default()
        .identity(parent, name)
        .ok()
}

/// The CPU seconds (user + system) process `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line: 11 and 12 after ')'.
    (ticks(11) + ticks(12)) / 100.0
}

fn summary(name: &str, mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    let p50 = percentile(&ms, 0.5);
    println!(
        "| {name} | {p50:.1} | {:.1} | {:.1} | {} |",
        percentile(&ms, 0.99),
        ms.last().copied().unwrap_or(0.0),
        ms.len()
    );
    p50
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(kiln), Some(n)) = (args.first(), args.get(1).and_then(|n| n.parse().ok())) else {
        eprintln!("usage: save-latency KILN ENTITIES [compact|canonical] [SAVES]");
        return ExitCode::from(2);
    };
    let canonical = args.get(2).map(String::as_str) == Some("canonical");
    let saves: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(40);
    match run(Path::new(kiln), n, canonical, saves) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(kiln: &Path, n: usize, canonical: bool, saves: usize) -> Result<(), String> {
    let scratch = std::env::temp_dir().join(format!("kiln-save-latency-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let root = scratch.join("project");
    let out_dir = scratch.join("out");
    std::fs::create_dir_all(&out_dir).map_err(|e| e.to_string())?;
    let level = kiln_benches::write_editor_project(&root, n).map_err(|e| e.to_string())?;
    let level_path = root.join(&level);
    let text = std::fs::read_to_string(&level_path).map_err(|e| e.to_string())?;
    let mut doc: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let write_doc = |doc: &Value| -> String {
        if canonical {
            kiln_core::json_format::to_canonical_string(doc)
        } else {
            // One entity per line, as `gen-level` writes it.
            let mut s = String::from("{\"entities\": [\n");
            let entities = doc["entities"].as_array().map_or(&[][..], |e| &e[..]);
            for (i, e) in entities.iter().enumerate() {
                s.push_str(&e.to_string());
                s.push_str(if i + 1 < entities.len() { ",\n" } else { "\n" });
            }
            s.push_str("]}\n");
            s
        }
    };
    std::fs::write(&level_path, write_doc(&doc)).map_err(|e| e.to_string())?;
    let size = std::fs::metadata(&level_path).map_or(0, |m| m.len());
    let blob: PathBuf = out_dir.join("build").join(format!("{level}.bin"));

    let mut watch = Command::new(kiln)
        .args(["watch", "--out"])
        .arg(&out_dir)
        .current_dir(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", kiln.display()))?;
    let stdout = watch.stdout.take().ok_or("no stdout")?;
    let (tx, lines) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                return;
            }
        }
    });
    let started = Instant::now();
    loop {
        match lines.recv_timeout(Duration::from_secs(120)) {
            Ok(l) if l.starts_with("watching") => break,
            Ok(_) => {}
            Err(_) => {
                return Err(format!(
                    "kiln watch did not start in {:?}",
                    started.elapsed()
                ));
            }
        }
    }
    let pid = watch.id();
    let mut latencies = Vec::new();
    let mut cpu = Vec::new();
    let mut last_line = String::new();
    for i in 0..saves {
        // Move one entity, a different one each time.
        let k = (i * 7919) % n;
        doc["entities"][k]["components"]["transform"]["position"][1] =
            Value::from(0.001 * (i + 1) as f64);
        let bytes = write_doc(&doc);
        let before = identity(&blob);
        let cpu_before = cpu_seconds(pid);
        let temp = level_path.with_extension("level.tmp~");
        let t0 = Instant::now();
        std::fs::write(&temp, &bytes).map_err(|e| e.to_string())?;
        std::fs::rename(&temp, &level_path).map_err(|e| e.to_string())?;
        loop {
            if identity(&blob) != before {
                break;
            }
            if t0.elapsed() > Duration::from_secs(10) {
                return Err(format!("save {i}: no new blob after 10 s"));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        latencies.push(t0.elapsed().as_secs_f64() * 1000.0);
        // Let it finish the batch (its line, the index) before the next save.
        std::thread::sleep(Duration::from_millis(150));
        while let Ok(l) = lines.try_recv() {
            last_line = l;
        }
        cpu.push((cpu_seconds(pid) - cpu_before) * 1000.0);
    }
    let _ = watch.kill();
    let _ = watch.wait();

    // The peer: a fresh process compiling the same level, whole.
    let mut fresh = Vec::new();
    for _ in 0..saves.min(20) {
        let t0 = Instant::now();
        let status = Command::new(kiln)
            .args(["compile", "--out"])
            .arg(&out_dir)
            .arg(&level)
            .current_dir(&root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err("kiln compile failed".into());
        }
        fresh.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    println!(
        "{n} entities, {} format, {:.1} MB; last watch line: {last_line}",
        if canonical { "canonical" } else { "compact" },
        size as f64 / 1e6
    );
    println!("| measured (ms) | p50 | p99 | max | runs |");
    println!("|---|---:|---:|---:|---:|");
    let watch_p50 = summary("save -> new blob, kiln watch", latencies);
    let fresh_p50 = summary("fresh kiln compile process", fresh);
    summary("kiln watch CPU per save", cpu);
    println!("ratio watch / fresh (p50): {:.2}", watch_p50 / fresh_p50);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
