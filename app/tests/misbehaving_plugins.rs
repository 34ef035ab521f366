//! Plugins that misbehave in the editor's Play: one that hangs is stopped after the
//! frame budget, named, and the window carries on with the level spawned again;
//! one that aborts takes the process with it (nothing in a process survives
//! `abort`), and the unsaved edits come back when the editor opens again.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use kiln::editor::{Editor, KilnApp};
use support::ui::{editor, open, until};

/// A C plugin component `misbehave` whose `simulate` does `BODY` on its third call
/// and every call after.
fn plugin_source(body: &str) -> String {
    format!(
        r#"
#include <stdlib.h>
#include <unistd.h>
#include "kiln_plugin.h"
#define STR(s) {{ (const uint8_t *)(s), sizeof(s) - 1 }}
static int calls;
static KilnResult create(void *u, const KilnEntity *e, size_t n, const uint8_t *d, size_t r) {{
    (void)u; (void)e; (void)n; (void)d; (void)r; return 0;
}}
static void destroy(void *u, KilnEntity e) {{ (void)u; (void)e; }}
static void gc(void *u, KilnAliveFn a, void *c) {{ (void)u; (void)a; (void)c; }}
static void simulate(void *u, float dt, const KilnWorldApiV0 *w) {{
    (void)u; (void)dt; (void)w;
    if (++calls >= 3) {{ {body} }}
}}
static KilnResult init(KilnGetApi get) {{
    const KilnRegistryApiV0 *registry = get(KILN_REGISTRY_API_ID, 0);
    if (!registry) return 1;
    KilnComponentDeclV0 decl = {{
        STR("misbehave"), 50, STR("Misbehaves."), NULL, 0, NULL, create, destroy, gc, simulate,
    }};
    return registry->register_component(registry->ctx, &decl);
}}
static void shutdown(void) {{}}
static const KilnPluginApiV0 api = {{ STR("misbehaving"), init, shutdown, NULL }};
const void *kiln_get_plugin_api(uint32_t api_id, uint32_t version) {{
    return api_id == KILN_PLUGIN_API_ID && version == 0 ? &api : NULL;
}}
"#
    )
}

/// A project whose one level has an entity `a` (moved by nothing) and an entity `m`
/// with the plugin's component.
fn project(root: &Path, body: &str) {
    std::fs::write(
        root.join("kiln.project"),
        r#"{"plugins": ["plugins/misbehaving"]}"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join("plugins/misbehaving")).unwrap();
    std::fs::write(
        root.join("plugins/misbehaving/misbehaving.c"),
        plugin_source(body),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("levels")).unwrap();
    std::fs::write(
        root.join("levels/a.level"),
        r#"{"entities": [
  {"id": "a", "name": "A", "components": {"transform": {"position": [1, 2, 3]}}},
  {"id": "m", "name": "M", "components": {"transform": {}, "misbehave": {}}}
]}
"#,
    )
    .unwrap();
}

fn log_lines_with(editor: &Editor, needle: &str) -> usize {
    editor
        .log()
        .iter()
        .filter(|l| l.text.contains(needle))
        .count()
}

#[test]
fn a_plugin_that_hangs_in_play_is_stopped_and_the_editor_carries_on() {
    let dir = tempfile::tempdir().unwrap();
    // Each call from the third on sleeps 3 s: far past the budget, yet the test's
    // process is not left with a thread spinning for ever.
    project(dir.path(), "sleep(3);");
    let mut h = open(dir.path());
    h.state_mut().settings.frame_budget = 0.3;
    until(&mut h, "the plugin loads", 120, |e| {
        e.plugins().loaded().len() == 1 && e.entity("m").is_some()
    });
    assert!(!editor(&h).plugins().loaded()[0].stopped());

    h.get_by_label("▶ Play").click();
    h.run_steps(1);
    assert!(editor(&h).preview().playing);
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    until(&mut h, "Play pauses", 30, |e| !e.preview().playing);
    // The frames before and after the hung one; none waited much past the budget.
    for _ in 0..3 {
        let frame = Instant::now();
        h.run_steps(1);
        slowest = slowest.max(frame.elapsed());
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the window waited for the plugin ({:?})",
        started.elapsed()
    );
    let e = editor(&h);
    assert_eq!(
        log_lines_with(
            e,
            "a frame ran past the frame budget of 0.3 s: component \"misbehave\" (plugin misbehaving) did not return from simulate"
        ),
        1,
        "{:#?}",
        e.log()
    );
    assert!(e.plugins().loaded()[0].stopped());
    // The level is there again, as authored.
    let a = e.world_pose("a").expect("a is spawned again");
    assert_eq!(
        glam::Vec3::from(a.translation),
        glam::Vec3::new(1.0, 2.0, 3.0)
    );
    assert!(e.world_pose("m").is_some());

    // Played on, the stopped plugin is not called: no frame hangs again.
    h.get_by_label("▶ Play").click();
    h.run_steps(1);
    for _ in 0..10 {
        let frame = Instant::now();
        h.run_steps(1);
        slowest = slowest.max(frame.elapsed());
    }
    assert!(editor(&h).preview().playing);
    assert!(slowest < Duration::from_secs(2), "a frame took {slowest:?}");
    assert_eq!(
        log_lines_with(editor(&h), "frame budget"),
        1,
        "{:#?}",
        editor(&h).log()
    );

    // Reload plugins loads a fresh copy, which runs again.
    h.get_by_label("⏸ Pause").click();
    h.run_steps(1);
    h.state_mut()
        .editor
        .as_mut()
        .unwrap()
        .apply(kiln::editor::Action::Run(
            kiln::editor::UiCommand::ReloadPlugins,
        ));
    until(&mut h, "the plugin loads again", 120, |e| {
        e.plugins().loaded().len() == 1 && !e.plugins().loaded()[0].stopped()
    });
}

/// The child process of the next test: the editor with an unsaved edit plays a
/// level whose plugin aborts. Does nothing unless the parent test started it.
#[test]
fn child_editor_that_a_plugin_aborts() {
    let Some(dir) = std::env::var_os("KILN_TEST_ABORTING_EDITOR") else {
        return;
    };
    let mut h = open(Path::new(&dir));
    until(&mut h, "the plugin loads", 120, |e| {
        e.plugins().loaded().len() == 1 && e.entity("a").is_some()
    });
    let rename = |h: &mut Harness<'_, KilnApp>, name: &str| {
        h.state_mut()
            .editor
            .as_mut()
            .unwrap()
            .apply(kiln::editor::Action::Rename {
                entity: "a".into(),
                name: name.into(),
            });
    };
    // The first edit is kept by the recovery file's timer (every 3 s) ...
    rename(&mut h, "First");
    h.run_steps(2);
    // ... the second, a moment before Play, only because Play keeps it: the third
    // frame aborts the process.
    rename(&mut h, "Renamed before the crash");
    h.get_by_label("▶ Play").click();
    for _ in 0..200 {
        h.run_steps(1);
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the plugin did not abort");
}

#[test]
fn unsaved_edits_come_back_after_a_plugin_aborts_the_editor() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "abort();");
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_editor_that_a_plugin_aborts",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("KILN_TEST_ABORTING_EDITOR", dir.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&child.stderr);
    assert_eq!(
        kiln_core::os::ended_by_signal(&child.status),
        Some(6),
        "the child ended otherwise ({:?}): {said}",
        child.status
    );
    let on_disk = std::fs::read_to_string(dir.path().join("levels/a.level")).unwrap();
    assert!(!on_disk.contains("Renamed"), "nothing was saved: {on_disk}");

    let mut h = open(dir.path());
    until(&mut h, "the level opens", 60, |e| e.level().is_some());
    assert!(
        editor(&h).level().unwrap().recovery().is_some(),
        "the edits are offered back"
    );
    h.get_by_label("Restore").click();
    h.run_steps(3);
    assert_eq!(
        editor(&h).entity("a").unwrap().name,
        "Renamed before the crash"
    );
}
