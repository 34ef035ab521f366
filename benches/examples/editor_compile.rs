//! Times the editor's own recompile of a generated 10,000-entity level after edits:
//! `editor_compile`.
// A measuring tool: a broken fixture is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use kiln::editor::{Action, Editor};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let dir = std::env::temp_dir().join("kiln-editor-compile");
    let _ = std::fs::remove_dir_all(&dir);
    kiln_benches::write_editor_project(&dir, 10_000).unwrap();
    // The demo's plugins are built and run (see kiln::trust).
    kiln::trust::trust_every_project_in_this_process();
    let mut editor = Editor::open(&dir).unwrap();
    editor.finish_opening();
    for k in 0..8 {
        let t = std::time::Instant::now();
        editor.apply(Action::Rename {
            entity: "e0".into(),
            name: format!("Renamed {k}"),
        });
        let total = t.elapsed().as_secs_f64() * 1e3;
        let timing = editor.preview().timing;
        println!(
            "edit: total {total:.1} ms, compile {:.1} ms, spawn {:.1} ms",
            timing.compile_ms, timing.spawn_ms
        );
    }
}
