//! CPU time of the GPU viewport per frame (issue 12): building the draw list and
//! encoding and submitting the frame (instances uploaded only when they changed),
//! with the GPU's own work excluded (each frame is waited for outside the timing).
//! Levels of 10,000 and 100,000 entities from `write_editor_project`, drawn on the
//! headless device (Mesa's software Vulkan where there is no GPU).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use kiln::editor::{Camera, KilnApp, Settings};
use kiln::render::assets::AssetCache;
use kiln::render::gpu::{SceneRenderer, View};
use kiln::render::headless::HeadlessGpu;
use kiln::render::scene::{DrawList, SceneKey};

fn bench(c: &mut Criterion) {
    let gpu = HeadlessGpu::new().expect("a GPU adapter (apt-get install mesa-vulkan-drivers)");
    eprintln!("adapter: {}", gpu.adapter);
    let mut g = c.benchmark_group("viewport");
    g.sample_size(20);
    for n in [10_000usize, 100_000] {
        let dir = std::env::temp_dir().join(format!("kiln-bench-viewport-{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        kiln_benches::write_editor_project(&dir, n).expect("write project");
        let mut app = KilnApp::with_settings(Settings::default());
        app.open_project(&dir);
        let editor = app.editor.as_ref().expect("project opens");
        assert_eq!(editor.preview().entities.len(), n);
        let world = &editor.preview().world;
        let resources = editor.resources();
        let versions = editor.asset_versions();
        let mut assets = AssetCache::new(editor.project().clone(), None);
        let mut renderer = SceneRenderer::new(&gpu.device, &gpu.queue);
        let camera = Camera {
            distance: 120.0,
            ..Camera::default()
        };
        let view = View {
            view_projection: camera.view_projection(1.6, false),
            eye: camera.eye(false),
            grid: true,
            grid_fade: 300.0,
        };
        // A small target: the software rasterizer's work is not what is measured.
        let size = [320, 200];
        let selected = HashSet::new();
        let build = || {
            DrawList::build(world, &selected, |m| {
                resources.meshes.get(&m).map(|l| l.size)
            })
        };
        let wait = |gpu: &HeadlessGpu| gpu.wait().expect("the GPU finishes");
        let mut list = build();
        renderer.render(size, &view, &list, true, resources, &mut assets, versions);
        assets.wait(Duration::from_secs(10));
        wait(&gpu);
        let key = SceneKey::of(world, 1, &selected, resources.generation);

        g.bench_function(format!("{n} entities, nothing moved"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    let changed = SceneKey::of(world, 1, &selected, resources.generation) != key;
                    renderer.render(
                        size,
                        &view,
                        &list,
                        changed,
                        resources,
                        &mut assets,
                        versions,
                    );
                    total += start.elapsed();
                    wait(&gpu);
                }
                total
            })
        });
        g.bench_function(format!("{n} entities, everything moved"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for k in 0..iters {
                    // A different list each time, so every instance is uploaded.
                    let start = Instant::now();
                    list = build();
                    for i in &mut list.instances {
                        i.model[3][1] += (k % 2) as f32 * 0.01;
                    }
                    renderer.render(size, &view, &list, true, resources, &mut assets, versions);
                    total += start.elapsed();
                    wait(&gpu);
                }
                total
            })
        });
        g.bench_function(format!("{n} entities, draw list build"), |b| {
            b.iter(|| std::hint::black_box(build()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
