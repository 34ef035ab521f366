//! Plugins in the real editor: a Rust plugin crate Kiln builds with cargo, edited
//! while the editor runs, is rebuilt and swapped in (hot reload) with the selection,
//! play state and level data kept and its new field in the inspector; the demo's
//! plugins load, are edited in the inspector and simulate; a plugin that fails to
//! build is in Problems and the editor carries on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable;
use glam::Vec3;
use kiln::editor::Editor;
use support::ui::{editor, open, until};

fn x_of(editor: &Editor, id: &str) -> Vec3 {
    editor
        .world_pose(id)
        .map(|p| Vec3::from(p.translation))
        .unwrap_or(Vec3::NAN)
}

/// A plugin crate outside Kiln's workspace, as a game team's would be, depending on
/// the SDK by path. `extra` adds a field, as an edit to the plugin does.
fn plugin_crate(dir: &Path, extra: bool) {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/sdk");
    fs::create_dir_all(dir.join("src")).unwrap();
    fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"sway\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [lib]\ncrate-type = [\"cdylib\"]\n\n\
             [dependencies]\nkiln_plugin = {{ path = {:?} }}\n\n[workspace]\n",
            sdk.canonicalize().unwrap()
        ),
    )
    .unwrap();
    let (field, lift) = if extra {
        (
            r#"Field::float("lift", "1", 0.0, 10.0).doc("Metres up while it plays."),"#,
            "r.float()",
        )
    } else {
        ("", "0.0")
    };
    fs::write(
        dir.join("src/lib.rs"),
        format!(
            r#"
use kiln_plugin::{{Component, Engine, EntityId, Field, Plugin, Record, World}};

#[derive(Default)]
struct Sway {{ entities: Vec<EntityId>, amount: Vec<f32>, lift: Vec<f32> }}

impl Component for Sway {{
    const NAME: &'static str = "sway";
    const SPAWN_ORDER: i32 = 50;
    const DOC: &'static str = "Moves its entity along x while the level plays.";
    const FIELDS: &'static [Field] = &[
        Field::float("amount", "1", 0.0, 10.0).doc("Metres along x."),
        {field}
    ];
    fn new() -> Self {{ Sway::default() }}
    fn create(&mut self, entities: &[EntityId], records: Vec<Record<'_>>) {{
        for (e, mut r) in entities.iter().zip(records) {{
            self.entities.push(*e);
            self.amount.push(r.float());
            self.lift.push({lift});
        }}
    }}
    fn destroy(&mut self, entity: EntityId) {{
        if let Some(i) = self.entities.iter().position(|e| *e == entity) {{
            self.entities.swap_remove(i);
            self.amount.swap_remove(i);
            self.lift.swap_remove(i);
        }}
    }}
    fn gc(&mut self, alive: &dyn Fn(EntityId) -> bool) {{
        let mut i = 0;
        while i < self.entities.len() {{
            if alive(self.entities[i]) {{ i += 1 }} else {{ self.destroy(self.entities[i]) }}
        }}
    }}
    fn simulate(&mut self, _dt: f32, world: &World<'_>) {{
        for i in 0..self.entities.len() {{
            world.set_local_translation(self.entities[i], [self.amount[i], self.lift[i], 0.0]);
        }}
    }}
}}

struct SwayPlugin;
impl Plugin for SwayPlugin {{
    const NAME: &'static str = "sway";
    fn init(engine: &Engine) -> Result<Self, String> {{
        engine.register::<Sway>()?;
        Ok(SwayPlugin)
    }}
}}
kiln_plugin::export_plugin!(SwayPlugin);
"#
        ),
    )
    .unwrap();
}

#[test]
fn a_rust_plugin_edited_while_the_editor_runs_is_rebuilt_and_swapped_in() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    fs::write(
        root.join("kiln.project"),
        r#"{"plugins": ["plugins/sway"]}"#,
    )
    .unwrap();
    fs::create_dir_all(root.join("levels")).unwrap();
    fs::write(
        root.join("levels/main.level"),
        r#"{"entities": [
  {"id": "flag", "name": "Flag", "components": {"transform": {}, "sway": {"amount": 2}}},
  {"id": "post", "name": "Post", "components": {"transform": {"position": [5, 0, 0]}}}
]}"#,
    )
    .unwrap();
    plugin_crate(&root.join("plugins/sway"), false);

    // The first build runs in the background; the window is up meanwhile.
    let mut h = open(root);
    until(&mut h, "the first build", 300, |e| {
        e.plugins().building().is_empty()
    });
    h.run_steps(2);
    assert_eq!(editor(&h).plugins().errors(), [] as [String; 0]);
    assert_eq!(editor(&h).plugins().loaded()[0].name, "sway");
    assert_eq!(
        editor(&h).preview_state().compile_error(),
        None,
        "{:#?}",
        editor(&h).log()
    );

    h.get_by_label("Flag").click();
    h.run_steps(3);
    h.get_by_label("sway");
    h.get_by_label("amount");
    assert!(h.query_by_label("lift").is_none());
    h.key_press(egui::Key::F5);
    h.run_steps(3);
    assert!(editor(&h).preview().playing);
    assert_eq!(x_of(editor(&h), "flag"), Vec3::new(2.0, 0.0, 0.0));

    // The plugin's author adds a field and saves; Kiln sees the source change,
    // rebuilds with cargo, and swaps the plugin in.
    std::thread::sleep(Duration::from_millis(20));
    plugin_crate(&root.join("plugins/sway"), true);
    until(&mut h, "the rebuilt plugin", 300, |e| {
        e.files()
            .registry()
            .component("sway")
            .is_some_and(|t| t.fields.iter().any(|f| f.name == "lift"))
    });
    h.run_steps(3);
    let e = editor(&h);
    assert!(e.plugins().last_swap().is_some());
    assert_eq!(e.selection(), ["flag"], "the selection is kept");
    assert!(e.preview().playing, "the play state is kept");
    assert_eq!(
        e.entity("flag").unwrap().components["sway"]["amount"],
        serde_json::json!(2),
        "the level's data is kept"
    );
    assert_eq!(e.preview_state().compile_error(), None);
    // The new code runs: the new field's default lifts it.
    assert_eq!(x_of(e, "flag"), Vec3::new(2.0, 1.0, 0.0));
    h.get_by_label("lift");
    assert!(
        e.log()
            .iter()
            .any(|l| l.text.contains("plugins reloaded (sway)")),
        "{:#?}",
        e.log()
    );
}

#[test]
fn the_demo_plugins_load_edit_compile_and_simulate_in_the_editor() {
    let dir = support::demo_copy();
    let mut h = open(dir.path());
    let names: Vec<&str> = editor(&h)
        .plugins()
        .loaded()
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(names, ["wind", "blink"]);
    assert_eq!(editor(&h).plugins().errors(), [] as [String; 0]);
    assert_eq!(editor(&h).preview_state().compile_error(), None);
    // Their component types are in Add component, with their schemas.
    h.get_by_label("Boulder").click();
    h.run_steps(3);
    h.get_by_label("Add component").click();
    h.run_steps(2);
    h.get_by_label("blink").click();
    h.run_steps(4);
    let blink = editor(&h).entity("boulder").unwrap().components["blink"].clone();
    assert!(blink.is_object(), "{blink}");
    h.get_by_label("off_scale");
    h.get_by_label("glow");
    // Play: the blinking boulder shrinks and grows.
    h.key_press(egui::Key::F5);
    let scale = |e: &Editor| e.world_pose("boulder").unwrap().matrix3.x_axis.length();
    let on = scale(editor(&h));
    let deadline = Instant::now() + Duration::from_secs(20);
    while (scale(editor(&h)) - on).abs() < 1e-3 {
        assert!(Instant::now() < deadline, "the boulder never blinked");
        std::thread::sleep(Duration::from_millis(30));
        h.run_steps(1);
    }
}

#[test]
fn a_plugin_that_does_not_build_is_in_problems_and_the_editor_carries_on() {
    let dir = support::demo_copy();
    let blink = dir.path().join("plugins/blink/blink.c");
    let mut h = open(dir.path());
    assert_eq!(editor(&h).plugins().loaded().len(), 2);
    std::thread::sleep(Duration::from_millis(20));
    let source = fs::read_to_string(&blink).unwrap();
    fs::write(
        &blink,
        source.replace("static void shutdown", "static void shutdown("),
    )
    .unwrap();
    until(&mut h, "the failed build", 60, |e| {
        !e.plugins().errors().is_empty()
    });
    h.run_steps(2);
    let e = editor(&h);
    assert!(e.plugins().errors()[0].contains("plugin folder plugins/blink: the build failed"));
    assert!(
        e.plugins().errors()[0].contains("blink.c:"),
        "{}",
        e.plugins().errors()[0]
    );
    // The last good plugin stays: the level still compiles and shows.
    assert_eq!(e.plugins().loaded().len(), 2);
    assert_eq!(e.preview_state().compile_error(), None);
    h.get_by_label_contains("the build failed");
    // Fixed: built and swapped in, and the problem is gone.
    fs::write(&blink, source).unwrap();
    until(&mut h, "the fixed build", 60, |e| {
        e.plugins().errors().is_empty()
    });
    assert_eq!(editor(&h).plugins().loaded().len(), 2);
}
