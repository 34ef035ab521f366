//! From a file's atomic rename to the respawned world, for a 10,000-entity level, over
//! 60 edits: p50 and p99 latency with the share of detection (debounce and indexing),
//! compile and spawn; restarting the level from its blob; and the editor's own
//! field edits (frames of a drag) beside undoing one (the whole document compiled). Prints a table (not
//! criterion: the question is the latency distribution of a real file-system event).
// Benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::time::{Duration, Instant};

use kiln::editor::{Action, Editor, UiCommand};

// The same allocator as the `kiln` binary, so the benchmark measures what ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let dir = std::env::temp_dir().join("kiln-bench-live");
    let _ = fs::remove_dir_all(&dir);
    let level = kiln_benches::write_editor_project(&dir, 10_000).expect("project");
    let path = dir.join(&level);
    // The demo's plugins are built and run (see kiln::trust).
    kiln::trust::trust_every_project_in_this_process();
    let mut editor = Editor::open(&dir).expect("opens");
    editor.finish_opening();
    assert_eq!(
        editor.preview().entities.len(),
        10_000,
        "{:?}",
        editor.preview_state().compile_error()
    );
    let text = fs::read_to_string(&path).unwrap();

    let edits = 60;
    let (mut total, mut detect, mut compile, mut spawn) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for k in 1..=edits {
        // Move entity e0 to x = k: one value changes, the whole level recompiles.
        let edited = text.replacen("\"id\": \"e0\", \"name\": \"Entity 0\", \"components\": {\"transform\": {\"position\": [0, 0, 0]}", &format!("\"id\": \"e0\", \"name\": \"Entity 0\", \"components\": {{\"transform\": {{\"position\": [{k}, 0, 0]}}"), 1);
        assert_ne!(edited, text, "the benchmark's edit must apply");
        let temp = dir.join("levels/.big.level.tmp");
        fs::write(&temp, &edited).unwrap();
        let start = Instant::now();
        fs::rename(&temp, &path).unwrap();
        loop {
            editor.poll_changes();
            if editor
                .world_pose("e0")
                .is_some_and(|p| (p.translation.x - k as f32).abs() < 1e-4)
            {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "edit {k} never arrived: {:?}",
                editor.log().last()
            );
            std::thread::sleep(Duration::from_micros(200));
        }
        total.push(start.elapsed().as_secs_f64() * 1000.0);
        let r = editor.disk().last_reload().expect("timed");
        detect.push(r.detect_ms);
        compile.push(r.compile_ms);
        spawn.push(r.spawn_ms);
        std::thread::sleep(Duration::from_millis(30));
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let mut sorted = total.clone();
    sorted.sort_by(f64::total_cmp);
    println!("atomic rename -> respawned world, 10,000 entities, {edits} edits:");
    println!(
        "  p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.99),
        sorted[sorted.len() - 1]
    );
    let (d, c, s) = (mean(&detect), mean(&compile), mean(&spawn));
    let sum = d + c + s;
    println!(
        "  mean split: detect (debounce + indexing) {d:.1} ms ({:.0}%), compile {c:.1} ms ({:.0}%), spawn {s:.1} ms ({:.0}%)",
        d / sum * 100.0,
        c / sum * 100.0,
        s / sum * 100.0
    );

    let mut restarts = Vec::new();
    for _ in 0..200 {
        let start = Instant::now();
        editor.apply(Action::Run(UiCommand::Restart));
        restarts.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    restarts.sort_by(f64::total_cmp);
    println!(
        "restart (respawn from the compiled blob), 10,000 entities, 200 runs: median {:.3} ms, p99 {:.3} ms",
        percentile(&restarts, 0.5),
        percentile(&restarts, 0.99)
    );

    // The editor's own edits: frames of a drag of ten entities (written into the
    // running world), beside undoing a drag (the whole document compiled and
    // spawned, what each drag frame cost before), alternated.
    let (mut drags, mut undos) = (Vec::new(), Vec::new());
    for round in 0..20 {
        for frame in 0..10 {
            let values = (0..10)
                .map(|i| {
                    let x = (round * 10 + frame) as f64 * 0.01 + i as f64;
                    (format!("e{}", i * 10), serde_json::json!([x, 0, 0]))
                })
                .collect();
            let start = Instant::now();
            editor.apply(Action::SetFieldEach {
                component: "transform".into(),
                field: "position".into(),
                values,
                continuing: frame > 0,
            });
            drags.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        editor.apply(Action::EndGesture);
        assert!(editor.preview_state().compile_error().is_none());
        let start = Instant::now();
        editor.apply(Action::Run(UiCommand::Undo));
        undos.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    drags.sort_by(f64::total_cmp);
    undos.sort_by(f64::total_cmp);
    println!(
        "a drag frame of ten entities, 10,000 entities, 200 frames: median {:.2} ms, p99 {:.2} ms (the first of each drag compiles the level once)",
        percentile(&drags, 0.5),
        percentile(&drags, 0.99)
    );
    println!(
        "undoing a drag (the whole document compiled and spawned), 20 runs: median {:.2} ms, p99 {:.2} ms",
        percentile(&undos, 0.5),
        percentile(&undos, 0.99)
    );

    // Structural edits: an entity duplicated, then deleted. The document is
    // compiled whole; the world spawns (or destroys) only that entity.
    let (mut edits, mut steps, mut whole) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..20 {
        editor.apply(Action::Select(vec![format!("e{}", round * 100 + 1)]));
        for command in [UiCommand::Duplicate, UiCommand::Delete] {
            let start = Instant::now();
            editor.apply(Action::Run(command));
            edits.push(start.elapsed().as_secs_f64() * 1000.0);
            let timing = editor.preview().timing;
            assert!(
                timing.respawned.is_some(),
                "{command:?} spawned the level whole"
            );
            steps.push(timing.spawn_ms);
        }
        // The peer: the same world spawned whole from its blob.
        let start = Instant::now();
        editor.apply(Action::Run(UiCommand::Restart));
        whole.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    for v in [&mut edits, &mut steps, &mut whole] {
        v.sort_by(f64::total_cmp);
    }
    println!(
        "an entity duplicated or deleted, 10,000 entities, 40 edits: median {:.2} ms, p99 {:.2} ms; the world's step (only that entity spawned or destroyed) median {:.3} ms, beside spawning the level whole {:.3} ms",
        percentile(&edits, 0.5),
        percentile(&edits, 0.99),
        percentile(&steps, 0.5),
        percentile(&whole, 0.5),
    );
}
