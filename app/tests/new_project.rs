//! Starting a project from nothing: `kiln new` (the real binary) and File > New
//! project in the real editor make projects that open, check clean and compile.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use egui::Key;
use egui_kittest::kittest::Queryable;
use support::kiln;
use support::ui::{editor, open};

#[test]
fn kiln_new_makes_projects_that_check_clean_and_compile_from_either_template() {
    let tmp = tempfile::tempdir().unwrap();
    for (template, levels) in [("empty", 1), ("demo", 2)] {
        let dir = tmp.path().join(format!("{template} game"));
        let (code, out, err) = kiln(
            &["new", dir.to_str().unwrap(), "--template", template],
            tmp.path(),
        );
        assert_eq!(code, 0, "{out}{err}");
        assert!(
            out.contains(&format!("created \"{template} game\"")),
            "{out}"
        );
        assert!(out.contains("kiln edit '"), "the path is quoted: {out}");
        let config = std::fs::read_to_string(dir.join("kiln.project")).unwrap();
        assert!(
            config.contains(&format!("\"name\": \"{template} game\"")),
            "{config}"
        );
        let ignore = std::fs::read_to_string(dir.join(".gitignore")).unwrap();
        assert!(
            ignore.contains(".kiln/") && ignore.contains("build/"),
            "{ignore}"
        );
        for folder in kiln::new_project::FOLDERS {
            assert!(dir.join(folder).is_dir(), "{folder}");
        }
        let (code, out, err) = kiln(&["check"], &dir);
        assert_eq!(code, 0, "{out}{err}");
        assert!(
            out.starts_with("0 findings (0 errors, 0 warnings)"),
            "{out}"
        );
        let (code, out, err) = kiln(&["compile"], &dir);
        assert_eq!(code, 0, "{out}{err}");
        assert!(
            out.contains(&format!("{levels} compiled, 0 failed")),
            "{out}"
        );
        // It opens in the editor with its level on screen.
        let editor = support::open_editor(&dir).unwrap();
        assert!(editor.level().is_some());
        assert_eq!(editor.preview_state().compile_error(), None);
        assert!(editor.preview().level.as_ref().unwrap().entities.len() >= 2);
    }
    // A folder that holds something is refused, and left alone.
    let taken = tmp.path().join("empty game");
    let before = support::snapshot(&taken);
    let (code, _, err) = kiln(&["new", taken.to_str().unwrap()], tmp.path());
    assert_eq!(code, 2);
    assert!(err.contains("is not empty"), "{err}");
    assert_eq!(support::snapshot(&taken), before);
}

#[test]
fn the_empty_templates_files_are_canonical() {
    // What the editor would write for them is what they are: a first save changes
    // nothing.
    let tmp = tempfile::tempdir().unwrap();
    let made = kiln::new_project::create(
        &tmp.path().join("g"),
        kiln::new_project::Template::Empty,
        None,
    )
    .unwrap();
    let registry = kiln_core::Registry::with_builtins();
    let level = std::fs::read_to_string(made.root.join("levels/main.level")).unwrap();
    let doc = kiln_core::LevelDocument::parse(&level, "levels/main.level").unwrap();
    assert_eq!(doc.to_canonical_json(&registry), level);
    for file in [
        "materials/ground.material",
        "meshes/cube.mesh",
        "kiln.project",
    ] {
        let text = std::fs::read_to_string(made.root.join(file)).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut canonical = kiln_core::json_format::to_canonical_string(&value);
        if !canonical.ends_with('\n') {
            canonical.push('\n');
        }
        assert_eq!(canonical, text, "{file}");
    }
}

/// Types the new project's location and name over what the dialog proposed.
fn fill(
    h: &mut egui_kittest::Harness<'_, kiln::editor::KilnApp>,
    location: &std::path::Path,
    name: &str,
) {
    for (field, text) in [("Location", location.to_str().unwrap()), ("Name", name)] {
        h.get_by_label(field).focus();
        h.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
        h.get_by_label(field).type_text(text);
    }
}

#[test]
fn file_new_project_makes_one_from_the_demo_and_opens_it() {
    let dir = support::demo_copy();
    let tmp = tempfile::tempdir().unwrap();
    let mut h = open(dir.path());
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label_contains("New project…").click();
    h.run_steps(3);
    fill(&mut h, tmp.path(), "forest_game");
    h.get_by_label("Demo").click();
    h.run_steps(2);
    h.get_by_label("Create").click();
    h.run_steps(6);
    let made = std::fs::canonicalize(tmp.path().join("forest_game")).unwrap();
    assert_eq!(editor(&h).files().project().root(), made);
    assert_eq!(editor(&h).files().project().name(), "forest_game");
    assert!(made.join("levels/forest.level").is_file());
    assert!(editor(&h).level().is_some());
    assert!(h.query_by_label("Create").is_none(), "the dialog closed");

    // Again in the same place: refused in the dialog, which stays open.
    h.key_press_modifiers(egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, Key::N);
    h.run_steps(3);
    fill(&mut h, tmp.path(), "forest_game");
    h.get_by_label("Create").click();
    h.run_steps(4);
    h.get_by_label_contains("is not empty");
    h.get_by_label("Cancel").click();
    h.run_steps(3);
    assert!(h.query_by_label("Create").is_none());
    assert_eq!(editor(&h).files().project().root(), made);
}

/// The window with no project to open (Kiln's first start, from the menu).
fn start_page(
    settings: kiln::editor::Settings,
) -> egui_kittest::Harness<'static, kiln::editor::KilnApp> {
    let mut h = egui_kittest::Harness::builder()
        .with_size([1600.0, 900.0])
        .build_eframe(move |cc| {
            let mut app = kiln::editor::KilnApp::new(cc, None);
            app.settings = settings;
            app
        });
    h.run_steps(3);
    h
}

/// With no project given and none opened before, Kiln shows its start page and
/// opens nothing; Try the demo makes a copy of the demo where the user says.
#[test]
fn the_start_page_opens_nothing_by_itself_and_tries_the_demo_in_a_new_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let mut h = start_page(kiln::editor::Settings::default());
    assert!(h.state().editor.is_none(), "no project was chosen");
    h.get_by_label("New project…");
    h.get_by_label("Open project…");
    h.get_by_label_contains("Projects you open are listed here");
    h.get_by_label("Try the demo…").click();
    h.run_steps(3);
    fill(&mut h, tmp.path(), "look_around");
    h.get_by_label("Create").click();
    h.run_steps(6);
    let made = std::fs::canonicalize(tmp.path().join("look_around")).unwrap();
    assert!(
        made.join("levels/workshop.level").is_file(),
        "the demo's files"
    );
    assert_eq!(editor(&h).files().project().root(), made);
}

/// The start page lists the projects opened before; one that is gone says so, and
/// a click on another opens it.
#[test]
fn the_start_page_lists_recent_projects_and_opens_one() {
    let dir = support::demo_copy();
    let gone = dir.path().join("gone");
    let settings = kiln::editor::Settings {
        recent_projects: vec![gone.clone(), dir.path().to_owned()],
        ..Default::default()
    };
    let mut h = start_page(settings);
    // KilnApp::new opened nothing: the settings were given after it started.
    assert!(h.state().editor.is_none());
    h.get_by_label(&format!("{} (not found)", gone.display()));
    h.get_by_label(&dir.path().display().to_string()).click();
    h.run_steps(6);
    assert_eq!(
        editor(&h).files().project().root(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
}
