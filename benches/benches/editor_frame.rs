//! Headless frame time of the editor (egui `Context::run_ui` plus tessellation, no
//! GPU, so the viewport is the flat view) with a large level open, the tree fully
//! expanded, one entity selected and the camera framing it, as when a designer works
//! on one thing (the viewport still culls every entity each frame): 10,000, 100,000 and 1,000,000 entities. The time
//! to open, compile and spawn each level, and the vertices a frame hands to the
//! renderer (proof that the viewport drew), are printed before the timings.
// Benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use kiln::editor::{Action, KilnApp, Settings};

fn frame(ctx: &egui::Context, app: &mut KilnApp) -> usize {
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(1600.0, 900.0),
        )),
        ..Default::default()
    };
    let output = ctx.run_ui(input, |ui| app.show(ui));
    let jobs = ctx.tessellate(output.shapes, output.pixels_per_point);
    jobs.iter()
        .map(|j| match &j.primitive {
            egui::epaint::Primitive::Mesh(m) => m.vertices.len(),
            egui::epaint::Primitive::Callback(_) => 0,
        })
        .sum()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("editor_frame");
    g.sample_size(20);
    for n in [10_000usize, 100_000, 1_000_000] {
        let dir = std::env::temp_dir().join(format!("kiln-bench-editor-{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        kiln_benches::write_editor_project(&dir, n).expect("write project");
        let mut app = KilnApp::with_settings(Settings::default());
        let opened = std::time::Instant::now();
        app.open_project(&dir);
        if let Some(editor) = app.editor.as_mut() {
            editor.finish_opening();
        }
        let opened = opened.elapsed();
        let editor = app.editor.as_mut().expect("project opens");
        assert_eq!(
            editor.preview().entities.len(),
            n,
            "{:?}",
            editor.preview_state().compile_error()
        );
        editor.apply(Action::Select(vec!["e10".into()]));
        let ctx = egui::Context::default();
        // Models load on a worker thread: frames until the viewport draws them all
        // (the vertex count stops growing), as a designer's editor would show them.
        let mut vertices = 0;
        let mut steady = 0;
        for _ in 0..2_000 {
            let now = frame(&ctx, &mut app);
            steady = if now == vertices { steady + 1 } else { 0 };
            vertices = now;
            if steady == 20 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        eprintln!(
            "{n} entities: opened, compiled and spawned in {opened:.2?}; {vertices} vertices per frame"
        );
        g.bench_function(format!("{n} entities"), |b| {
            b.iter(|| frame(&ctx, &mut app))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
