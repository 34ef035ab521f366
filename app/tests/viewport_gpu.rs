//! The editor with eframe's wgpu renderer, headless (egui_kittest's wgpu renderer on
//! Mesa's software Vulkan): the viewport renders on the GPU, its picture is in the
//! window's image, and clicking selects what is visible under the pointer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use glam::Vec3;
use kiln::editor::KilnApp;
use kiln::editor::thumbnails::ThumbnailStats;
use support::demo_copy;
use support::ui::editor;

fn open_gpu(dir: &std::path::Path) -> Harness<'static, KilnApp> {
    let dir = dir.to_owned();
    kiln::trust::trust_every_project_in_this_process();
    let mut h = Harness::builder()
        .with_size([1600.0, 900.0])
        .wgpu()
        .build_eframe(move |cc| KilnApp::new(cc, Some(dir)));
    h.run_steps(6);
    h
}

/// Where a world point shows on screen in the viewport.
fn on_screen(h: &Harness<'_, KilnApp>, p: Vec3) -> egui::Pos2 {
    let panels = &h.state().panels;
    let rect = panels.viewport.rect.expect("the viewport was shown");
    let vp = panels.camera.view_projection(rect.width() / rect.height());
    let c = vp * p.extend(1.0);
    egui::pos2(
        rect.center().x + c.x / c.w * rect.width() * 0.5,
        rect.center().y - c.y / c.w * rect.height() * 0.5,
    )
}

fn click(h: &mut Harness<'_, KilnApp>, at: egui::Pos2) {
    h.hover_at(at);
    h.run_steps(1);
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos: at,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
        h.run_steps(1);
    }
    h.run_steps(2);
}

#[test]
fn the_viewport_renders_on_the_gpu_and_a_click_selects_what_is_visible() {
    let dir = demo_copy();
    let mut h = open_gpu(dir.path());
    assert!(
        h.state().panels.viewport.uses_gpu(),
        "the viewport uses the GPU renderer"
    );
    // The boulder (a sphere on the ground): frame it, then click its middle.
    h.state_mut()
        .apply_actions(vec![kiln::editor::Action::Select(vec!["boulder".into()])]);
    h.key_press(egui::Key::F);
    h.run_steps(4);
    let boulder = Vec3::from(editor(&h).world_pose("boulder").unwrap().translation);
    h.state_mut()
        .apply_actions(vec![kiln::editor::Action::Select(vec![])]);
    h.run_steps(2);
    let at = on_screen(&h, boulder);
    assert!(
        h.state()
            .panels
            .viewport
            .rect
            .is_some_and(|r| r.contains(at))
    );

    // The picture is rendered: the boulder's pixel is the stone material's grey, and
    // the ground around it is green.
    let image = h.render().expect("the harness renders with wgpu");
    let ppp = image.width() as f32 / 1600.0;
    let px = |p: egui::Pos2| image.get_pixel((p.x * ppp) as u32, (p.y * ppp) as u32).0;
    let stone = px(at);
    assert!(
        stone[0].abs_diff(stone[1]) < 40 && stone[1].abs_diff(stone[2]) < 40 && stone[0] > 40,
        "grey stone at the boulder: {stone:?}"
    );
    let rect = h
        .state()
        .panels
        .viewport
        .rect
        .expect("the viewport was shown");
    let below = egui::pos2(at.x, rect.bottom() - 20.0);
    let ground = px(below);
    assert!(
        ground[1] > ground[0] && ground[1] > ground[2],
        "green ground: {ground:?}"
    );

    click(&mut h, at);
    assert_eq!(editor(&h).selection(), ["boulder"]);
    // Clicking the sky selects nothing.
    click(&mut h, egui::pos2(rect.center().x, rect.top() + 40.0));
    assert!(
        editor(&h).selection().is_empty(),
        "{:?}",
        editor(&h).selection()
    );
}

/// Clicking an axis of the corner gizmo looks along that axis.
#[test]
fn the_orientation_gizmo_turns_the_camera_to_look_along_an_axis() {
    let dir = demo_copy();
    let mut h = open_gpu(dir.path());
    h.get_by_label("View along -Y").click();
    h.run_steps(3);
    let camera = h.state().panels.camera;
    let looking = (camera.target - camera.eye()).normalize();
    assert!(looking.dot(Vec3::NEG_Y) > 0.99, "{looking}");
    h.get_by_label("View along -X").click();
    h.run_steps(3);
    let camera = h.state().panels.camera;
    let looking = (camera.target - camera.eye()).normalize();
    assert!(looking.dot(Vec3::NEG_X) > 0.99, "{looking}");
}

/// A texture that cannot be decoded is in Problems, named, and the editor carries
/// on (the viewport shows the placeholder checker in its place).
#[test]
fn a_broken_texture_is_a_problem_not_a_crash() {
    let dir = demo_copy();
    std::fs::write(dir.path().join("textures/grass.png"), b"this is not a PNG").unwrap();
    let mut h = open_gpu(dir.path());
    for _ in 0..50 {
        h.run_steps(2);
        if !h.state().panels.viewport.asset_problems().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    h.get_by_label_contains("Problems (").click();
    h.run_steps(3);
    h.get_by_label_contains("cannot draw textures/grass.png: not an image");
    // Still drawing, still editing.
    h.state_mut()
        .apply_actions(vec![kiln::editor::Action::Select(vec!["boulder".into()])]);
    h.run_steps(2);
    assert_eq!(editor(&h).selection(), ["boulder"]);
}

/// A texture changed on disk is drawn again from the new file, and so is the glTF
/// model that uses it, without respawning the level.
#[test]
fn a_texture_changed_on_disk_is_reloaded_live_without_a_respawn() {
    let dir = demo_copy();
    let mut h = open_gpu(dir.path());
    let spawns = editor(&h).preview().spawns;
    let before = editor(&h)
        .preview_state()
        .asset_versions()
        .of("art/rock.gltf");
    let red = image::RgbImage::from_pixel(8, 8, image::Rgb([255, 0, 0]));
    red.save(dir.path().join("art/rock.png")).unwrap();
    let mut seen = false;
    for _ in 0..200 {
        h.run_steps(1);
        if editor(&h)
            .preview_state()
            .asset_versions()
            .of("art/rock.gltf")
            > before
        {
            seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(seen, "the model using the texture is read again");
    assert!(
        editor(&h)
            .preview_state()
            .asset_versions()
            .of("art/rock.png")
            > 0
    );
    assert_eq!(editor(&h).preview().spawns, spawns, "no respawn");
    // The boulder turns red once the new texture is in.
    h.state_mut()
        .apply_actions(vec![kiln::editor::Action::Select(vec!["boulder".into()])]);
    h.key_press(egui::Key::F);
    h.run_steps(2);
    h.state_mut()
        .apply_actions(vec![kiln::editor::Action::Select(vec![])]);
    let mut red_seen = false;
    for _ in 0..100 {
        h.run_steps(2);
        let boulder = Vec3::from(editor(&h).world_pose("boulder").unwrap().translation);
        let at = on_screen(&h, boulder);
        let image = h.render().unwrap();
        let ppp = image.width() as f32 / 1600.0;
        let p = image.get_pixel((at.x * ppp) as u32, (at.y * ppp) as u32).0;
        if p[0] > 2 * p[1].max(p[2]).max(10) {
            red_seen = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(red_seen, "the boulder is drawn with the new texture");
}

/// Sets every file's modification time an hour back, as in a project that was not
/// just copied: drawn thumbnails are only kept on disk from files that have settled.
fn age_files(dir: &std::path::Path) {
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let f = std::fs::File::options().write(true).open(&path).unwrap();
                f.set_modified(hour_ago).unwrap();
            }
        }
    }
}

fn filter_files(h: &mut Harness<'_, KilnApp>, text: &str) {
    h.get_by_label("Filter files").click();
    h.run_steps(1);
    h.get_by_label("Filter files").type_text(text);
    h.run_steps(3);
}

/// Runs frames until `done` holds (at most about ten seconds).
fn run_until(
    h: &mut Harness<'_, KilnApp>,
    what: &str,
    done: impl Fn(&Harness<'_, KilnApp>) -> bool,
) {
    for _ in 0..500 {
        h.run_steps(1);
        if done(h) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("timed out waiting: {what}");
}

fn thumbnail_shown(h: &Harness<'_, KilnApp>, file: &str) -> Option<egui::TextureId> {
    let thumbnails = h.state().panels.thumbnails.as_ref()?;
    thumbnails.shown(file).map(|t| t.id())
}

/// The average colour of the selected file's large thumbnail, as on screen.
fn preview_colour(h: &mut Harness<'_, KilnApp>, file: &str) -> [f32; 3] {
    // The picture is square, at the left of the row it is given.
    let row = h.get_by_label(&format!("Thumbnail of {file}")).rect();
    let rect = egui::Rect::from_min_size(row.min, egui::Vec2::splat(row.height()));
    let image = h.render().unwrap();
    let ppp = image.width() as f32 / 1600.0;
    let mut sum = [0.0f32; 3];
    let mut n = 0.0;
    // The middle of the picture, where the object is.
    let inner = rect.shrink(rect.width() * 0.35);
    for y in (inner.top() as u32)..(inner.bottom() as u32) {
        for x in (inner.left() as u32)..(inner.right() as u32) {
            let p = image
                .get_pixel((x as f32 * ppp) as u32, (y as f32 * ppp) as u32)
                .0;
            for c in 0..3 {
                sum[c] += f32::from(p[c]);
            }
            n += 1.0;
        }
    }
    sum.map(|s| s / n)
}

fn cached_thumbnails(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join(".kiln/thumbnails"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The asset browser shows thumbnails: materials and meshes drawn on the GPU,
/// textures decoded. They are kept under `.kiln/thumbnails/`, made again when a file
/// they draw from changes, and read back from disk when the project opens again.
#[test]
fn thumbnails_are_drawn_kept_on_disk_and_made_again_when_a_texture_changes() {
    let dir = demo_copy();
    age_files(dir.path());
    let mut h = open_gpu(dir.path());
    filter_files(&mut h, "grass");
    let files = ["materials/grass.material", "textures/grass.png"];
    run_until(
        &mut h,
        "thumbnails of the grass material and texture",
        |h| files.iter().all(|f| thumbnail_shown(h, f).is_some()),
    );
    // The row shows the thumbnail and keeps its name.
    h.get_by_label("🎨 grass.material").click();
    h.run_steps(2);
    let green = preview_colour(&mut h, "materials/grass.material");
    assert!(
        green[1] > green[0] * 1.2 && green[1] > green[2] * 1.2,
        "a green sphere: {green:?}"
    );
    let stats = h.state().panels.thumbnails.as_ref().unwrap().stats();
    assert_eq!((stats.drawn, stats.decoded), (1, 1), "{stats:?}");
    let kept = cached_thumbnails(dir.path());
    assert_eq!(kept.len(), 2, "both kept on disk: {kept:?}");

    // A red texture: the texture's thumbnail and the material wearing it change.
    let red = image::RgbImage::from_pixel(8, 8, image::Rgb([255, 0, 0]));
    red.save(dir.path().join("textures/grass.png")).unwrap();
    let old = thumbnail_shown(&h, "materials/grass.material");
    run_until(&mut h, "the material's thumbnail made again", |h| {
        h.state()
            .panels
            .thumbnails
            .as_ref()
            .is_some_and(|t| t.stats().drawn == 2)
    });
    h.run_steps(2);
    let reddish = preview_colour(&mut h, "materials/grass.material");
    assert!(
        reddish[0] > reddish[1] * 1.5,
        "the green tint over a red texture: {reddish:?}"
    );
    assert_eq!(
        thumbnail_shown(&h, "materials/grass.material"),
        old,
        "one texture, updated in place"
    );
    drop(h);

    // Opened again. The texture's thumbnail comes from disk. The material's was not
    // kept: its texture had changed a moment before it was drawn (the editor might
    // have drawn content older than the file's), so it is drawn again, now kept.
    age_files(dir.path());
    let stats = reopen_and_show(dir.path(), &files);
    assert_eq!((stats.from_cache, stats.decoded, stats.drawn), (1, 0, 1));
    // And the next time, every thumbnail comes from disk.
    let stats = reopen_and_show(dir.path(), &files);
    assert_eq!((stats.from_cache, stats.decoded, stats.drawn), (2, 0, 0));
    assert_eq!(
        cached_thumbnails(dir.path()).len(),
        2,
        "the old pictures were replaced: {:?}",
        cached_thumbnails(dir.path())
    );
}

/// Opens the project, shows `files` in the asset browser, and says how their
/// thumbnails were made.
fn reopen_and_show(dir: &std::path::Path, files: &[&str]) -> ThumbnailStats {
    let mut h = open_gpu(dir);
    filter_files(&mut h, "grass");
    run_until(&mut h, "the thumbnails", |h| {
        files.iter().all(|f| thumbnail_shown(h, f).is_some())
    });
    h.state().panels.thumbnails.as_ref().unwrap().stats()
}
