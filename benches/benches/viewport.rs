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
use kiln::render::thumbnail::{self, ThumbnailKind, ThumbnailScene};

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
        if let Some(editor) = app.editor.as_mut() {
            editor.finish_opening();
        }
        let editor = app.editor.as_ref().expect("project opens");
        assert_eq!(editor.preview().entities.len(), n);
        let world = &editor.preview().world;
        let resources = editor.preview_state().resources();
        let versions = editor.preview_state().asset_versions();
        let mut assets = AssetCache::new(editor.files().project().clone(), None);
        let mut renderer = SceneRenderer::new(&gpu.device, &gpu.queue);
        let camera = Camera {
            distance: 120.0,
            ..Camera::default()
        };
        let view = View {
            view_projection: camera.view_projection(1.6),
            eye: camera.eye(),
            grid: true,
            grid_fade: 300.0,
            shadows: false,
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

/// Whole frames on the headless device, the GPU's work included: on a machine
/// without a GPU this is Mesa's software rasterizer, a CPU emulating a GPU, recorded
/// for reference. The demo project and a 10,000-entity level at 1280 x 720, the
/// size of the viewport in a 1920 x 1080 window; and one thumbnail (drawn and read
/// back).
fn bench_software_frames(c: &mut Criterion) {
    let gpu = HeadlessGpu::new().expect("a GPU adapter (apt-get install mesa-vulkan-drivers)");
    let mut g = c.benchmark_group("viewport frame, GPU work included");
    g.sample_size(10);
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../projects/demo");
    let big = std::env::temp_dir().join("kiln-bench-viewport-frames-10000");
    let _ = std::fs::remove_dir_all(&big);
    kiln_benches::write_editor_project(&big, 10_000).expect("write project");
    for (name, dir) in [
        ("demo project", demo.as_path()),
        ("10000 entities", big.as_path()),
    ] {
        let mut app = KilnApp::with_settings(Settings::default());
        app.open_project(dir);
        if let Some(editor) = app.editor.as_mut() {
            editor.finish_opening();
        }
        let editor = app.editor.as_ref().expect("project opens");
        let world = &editor.preview().world;
        let resources = editor.preview_state().resources();
        let versions = editor.preview_state().asset_versions();
        let mut assets = AssetCache::new(editor.files().project().clone(), None);
        let mut renderer = SceneRenderer::new(&gpu.device, &gpu.queue);
        let camera = Camera {
            distance: if name == "demo project" { 25.0 } else { 120.0 },
            ..Camera::default()
        };
        let view = View {
            view_projection: camera.view_projection(1280.0 / 720.0),
            eye: camera.eye(),
            grid: true,
            grid_fade: 300.0,
            shadows: false,
        };
        let list = DrawList::build(world, &HashSet::new(), |m| {
            resources.meshes.get(&m).map(|l| l.size)
        });
        let size = [1280, 720];
        renderer.render(size, &view, &list, true, resources, &mut assets, versions);
        assets.wait(Duration::from_secs(20));
        renderer.render(size, &view, &list, true, resources, &mut assets, versions);
        gpu.wait().expect("the GPU finishes");
        g.bench_function(format!("{name}, 1280x720"), |b| {
            b.iter(|| {
                renderer.render(size, &view, &list, false, resources, &mut assets, versions);
                gpu.wait().expect("the GPU finishes");
            })
        });
        if name == "demo project" {
            let scene = ThumbnailScene::of(
                ThumbnailKind::Material,
                "materials/grass.material",
                resources,
            )
            .expect("the demo has a grass material");
            let mut thumbnails = SceneRenderer::new(&gpu.device, &gpu.queue);
            g.bench_function("one material thumbnail, drawn and read back", |b| {
                b.iter(|| {
                    let drawn = thumbnail::draw(&mut thumbnails, &scene, &mut assets, versions);
                    assert!(matches!(drawn, thumbnail::Drawn::Image(_)));
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench, bench_software_frames);
criterion_main!(benches);
