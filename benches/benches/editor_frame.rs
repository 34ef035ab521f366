//! Headless frame time of the editor (egui `Context::run_ui` plus tessellation, no
//! GPU) with a large level open, the tree fully expanded, one entity selected and the
//! viewport drawing every entity: 10,000 and 100,000 entities.
// Benchmark helpers may panic on broken fixtures: that is a failed run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use kiln::editor::{Action, KilnApp, Settings};

fn frame(ctx: &egui::Context, app: &mut KilnApp) {
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(1600.0, 900.0),
        )),
        ..Default::default()
    };
    let output = ctx.run_ui(input, |ui| app.show(ui));
    std::hint::black_box(ctx.tessellate(output.shapes, output.pixels_per_point));
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("editor_frame");
    g.sample_size(20);
    for n in [10_000usize, 100_000] {
        let dir = std::env::temp_dir().join(format!("kiln-bench-editor-{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        kiln_benches::write_editor_project(&dir, n).expect("write project");
        let mut app = KilnApp::with_settings(Settings::default());
        app.open_project(&dir);
        let editor = app.editor.as_mut().expect("project opens");
        assert_eq!(
            editor.preview().entities.len(),
            n,
            "{:?}",
            editor.compile_error()
        );
        editor.apply(Action::Select(vec!["e10".into()]));
        let ctx = egui::Context::default();
        for _ in 0..3 {
            frame(&ctx, &mut app);
        }
        g.bench_function(format!("{n} entities"), |b| {
            b.iter(|| frame(&ctx, &mut app))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
