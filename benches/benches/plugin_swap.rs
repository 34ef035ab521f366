//! Plugin hot reload on a 10,000-entity level whose every entity has the plugin's
//! component (the demo's C plugin `blink`): from the rebuilt library to the respawned
//! level, build time excluded, split into the swap itself (despawn, shutdown, unload,
//! copy, load, register) and recompiling and respawning the level; beside it, in the
//! same run, restarting the same level from its blob (the floor: a respawn with no
//! plugin work). Prints a table; the target is under 100 ms.
// Benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::fs;
use std::time::{Duration, Instant};

use kiln::editor::{Action, Editor, UiCommand};

// The same allocator as the `kiln` binary, so the benchmark measures what ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let dir = std::env::temp_dir().join("kiln-bench-plugin-swap");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("levels")).unwrap();
    fs::create_dir_all(dir.join("plugins/blink")).unwrap();
    fs::write(
        dir.join("kiln.project"),
        r#"{"plugins": ["plugins/blink"]}"#,
    )
    .unwrap();
    let demo = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../projects/demo/plugins/blink/blink.c"
    );
    fs::copy(demo, dir.join("plugins/blink/blink.c")).unwrap();
    let mut level = String::from("{\"entities\": [\n");
    for i in 0..10_000 {
        let comma = if i + 1 < 10_000 { "," } else { "" };
        writeln!(
            level,
            "{{\"id\": \"e{i}\", \"components\": {{\"transform\": {{\"position\": [{}, 0, {}]}}, \"blink\": {{\"period\": {}}}}}}}{comma}",
            i % 100,
            i / 100,
            1.0 + (i % 7) as f32 * 0.1
        )
        .unwrap();
    }
    level.push_str("]}\n");
    fs::write(dir.join("levels/big.level"), level).unwrap();

    // The demo's plugins are built and run (see kiln::trust).
    kiln::trust::trust_every_project_in_this_process();
    let mut editor = Editor::open(&dir).expect("opens");
    editor.finish_opening();
    assert!(editor.wait_for_plugin_builds(Duration::from_secs(120)));
    assert_eq!(
        editor.preview().entities.len(),
        10_000,
        "{:?} {:?}",
        editor.preview_state().compile_error(),
        editor.plugins().errors()
    );
    let runs = 30;
    let (mut total, mut swap, mut respawn, mut restart) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let start = Instant::now();
        editor.reload_plugins();
        total.push(start.elapsed().as_secs_f64() * 1000.0);
        let t = editor.plugins().last_swap().unwrap();
        swap.push(t.swap_ms);
        respawn.push(t.respawn_ms);
        assert_eq!(editor.preview().entities.len(), 10_000);
        assert_eq!(editor.plugins().loaded().len(), 1);
        let start = Instant::now();
        editor.apply(Action::Run(UiCommand::Restart));
        restart.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    println!("plugin swap, 10,000 entities with the plugin's component, {runs} runs (medians):");
    println!(
        "  reload_plugins, whole call (incl. re-indexing): {:7.2} ms",
        median(total)
    );
    println!(
        "    swap (despawn, shutdown, unload, load, register): {:7.2} ms",
        median(swap.clone())
    );
    println!(
        "    recompile and respawn the level:               {:7.2} ms",
        median(respawn.clone())
    );
    let to_respawned: Vec<f64> = swap.iter().zip(&respawn).map(|(a, b)| a + b).collect();
    println!(
        "  library change -> respawned level:              {:7.2} ms (target < 100)",
        median(to_respawned)
    );
    println!(
        "  peer: restart the same level from its blob:     {:7.2} ms",
        median(restart)
    );
}
