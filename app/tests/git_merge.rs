//! Two designers, one level, with the real `git`: a repository of the demo with
//! `kiln setup-git`, two branches edited with the editor's own code or `kiln mv`,
//! merged with `git merge` both ways, and the result compared by meaning.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::fs;
use std::path::Path;
use std::process::Command;

use kiln::editor::{Action, Editor, UiCommand};
use serde_json::{Value, json};

/// Runs git in `dir`; its status and output (stdout then stderr).
fn git(dir: &Path, args: &[&str]) -> (bool, String) {
    git_with(dir, args, &[])
}

/// [`git`] with environment variables set (for the hooks it runs).
fn git_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let out = Command::new("git")
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Designer")
        .env("GIT_AUTHOR_EMAIL", "designer@example.com")
        .env("GIT_COMMITTER_NAME", "Designer")
        .env("GIT_COMMITTER_EMAIL", "designer@example.com")
        .output()
        .expect("git runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn git_ok(dir: &Path, args: &[&str]) -> String {
    let (ok, text) = git(dir, args);
    assert!(ok, "git {args:?}: {text}");
    text
}

/// A repository holding a copy of the demo, set up for Kiln, on branch `main`, with
/// branches `a` and `b` made from it.
fn repository() -> tempfile::TempDir {
    let dir = demo_repo();
    git_ok(dir.path(), &["branch", "a"]);
    git_ok(dir.path(), &["branch", "b"]);
    dir
}

fn demo_repo() -> tempfile::TempDir {
    let dir = support::demo_copy();
    let root = dir.path();
    git_ok(root, &["init", "-q", "-b", "main"]);
    fs::write(root.join(".gitignore"), ".kiln/\nbuild/\n").unwrap();
    let (code, out, err) = support::kiln(&["setup-git"], root);
    assert_eq!(code, 0, "{out}{err}");
    git_ok(root, &["add", "-A"]);
    git_ok(root, &["commit", "-q", "-m", "The demo"]);
    dir
}

/// Edits the open level on branch `branch` with the editor's own code, saves and
/// commits.
fn on_branch(dir: &Path, branch: &str, level: &str, actions: Vec<Action>) {
    edit_on_branch(dir, branch, level, |editor| {
        for a in actions {
            editor.apply(a);
        }
    });
}

/// [`on_branch`], with the editor at hand.
fn edit_on_branch(dir: &Path, branch: &str, level: &str, edit: impl FnOnce(&mut Editor)) {
    git_ok(dir, &["checkout", "-q", branch]);
    let mut editor = support::open_editor(dir).unwrap();
    editor.apply(Action::OpenLevel(level.into()));
    edit(&mut editor);
    editor.apply(Action::Run(UiCommand::Save));
    assert!(!editor.is_dirty(), "{:?}", editor.log());
    drop(editor);
    git_ok(dir, &["add", "-A"]);
    git_ok(
        dir,
        &["commit", "-q", "-m", &format!("{branch} edits {level}")],
    );
}

/// Runs `kiln` on branch `branch` and commits what it changed.
fn kiln_on_branch(dir: &Path, branch: &str, args: &[&str]) {
    git_ok(dir, &["checkout", "-q", branch]);
    let (code, out, err) = support::kiln(args, dir);
    assert_eq!(code, 0, "{out}{err}");
    git_ok(dir, &["add", "-A"]);
    git_ok(
        dir,
        &[
            "commit",
            "-q",
            "-m",
            &format!("{branch}: kiln {}", args.join(" ")),
        ],
    );
}

/// Merges `from` into `into` (checked out); whether it merged clean, and what git
/// and the hooks said.
fn merge(dir: &Path, into: &str, from: &str) -> (bool, String) {
    git_ok(dir, &["checkout", "-q", into]);
    git(dir, &["merge", "--no-edit", from])
}

fn level(dir: &Path, file: &str) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join(file)).unwrap()).unwrap()
}

fn entity(doc: &Value, id: &str) -> Option<Value> {
    doc["entities"]
        .as_array()?
        .iter()
        .find(|e| e["id"] == id)
        .cloned()
}

fn new_entity(position: [f32; 3]) -> Action {
    Action::CreateEntity { position }
}

fn set(entity: &str, component: &str, field: &str, value: Value) -> Action {
    Action::SetField {
        entities: vec![entity.into()],
        component: component.into(),
        instance: None,
        field: field.into(),
        value,
        continuing: false,
    }
}

/// Both directions of a merge of branches `a` and `b`, each from a fresh copy of
/// the repository made by `make`.
fn both_ways(make: impl Fn() -> tempfile::TempDir, check: impl Fn(&Path, bool, &str)) {
    for (into, from) in [("a", "b"), ("b", "a")] {
        let dir = make();
        let (clean, said) = merge(dir.path(), into, from);
        check(dir.path(), clean, &said);
    }
}

#[test]
fn setup_git_says_what_it_did_and_a_second_run_changes_nothing() {
    let dir = demo_repo();
    let attributes = fs::read_to_string(dir.path().join(".gitattributes")).unwrap();
    assert!(
        attributes.contains("*.level merge=kiln diff=kiln"),
        "{attributes}"
    );
    assert!(
        attributes.contains("kiln.redirects merge=kiln"),
        "{attributes}"
    );
    let driver = git_ok(dir.path(), &["config", "--get", "merge.kiln.driver"]);
    assert!(driver.contains(" merge %O %A %B --path %P"), "{driver}");
    assert!(dir.path().join(".git/hooks/post-merge").is_file());
    let (code, out, _) = support::kiln(&["setup-git"], dir.path());
    assert_eq!(code, 0);
    assert!(out.contains("already set up: nothing changed"), "{out}");
    assert_eq!(git_ok(dir.path(), &["status", "--porcelain"]), "");
}

#[cfg(unix)]
#[test]
fn setup_git_refuses_a_gitattributes_that_links_outside_the_project() {
    let dir = support::demo_copy();
    let root = dir.path();
    git_ok(root, &["init", "-q", "-b", "main"]);
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("attributes");
    fs::write(&target, "theirs\n").unwrap();
    kiln_core::os::symlink(&target, root.join(".gitattributes")).unwrap();
    let (code, out, err) = support::kiln(&["setup-git"], root);
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        err.contains(".gitattributes") && err.contains("symbolic link"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "theirs\n");
}

/// `core.hooksPath` pointing outside the repository (set in a crafted
/// `.git/config`, or by the user for other hooks): Kiln writes no hook there,
/// makes no folder there, and says what to add instead; a hook planted as a link
/// in the repository's own folder is not written through either.
#[cfg(unix)]
#[test]
fn setup_git_writes_hooks_only_inside_the_repositorys_own_git_folder() {
    let dir = support::demo_copy();
    let root = dir.path();
    git_ok(root, &["init", "-q", "-b", "main"]);
    let outside = tempfile::tempdir().unwrap();
    let elsewhere = outside.path().join("team-hooks/deep");
    let elsewhere_text = elsewhere.to_str().unwrap();
    git_ok(root, &["config", "core.hooksPath", elsewhere_text]);
    let (code, out, err) = support::kiln(&["setup-git"], root);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(elsewhere_text) && out.contains("post-merge"),
        "{out}"
    );
    assert_eq!(
        fs::read_dir(outside.path()).unwrap().count(),
        0,
        "something was made outside the repository"
    );
    let (code, out, _) = support::kiln(&["setup-git", "--check"], root);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("core.hooksPath"), "{out}");
    // Without it, the hooks go to .git/hooks; a hook planted there as a link to
    // a file outside is refused, the file untouched.
    git_ok(root, &["config", "--unset", "core.hooksPath"]);
    let target = outside.path().join("victim");
    fs::write(&target, "theirs\n").unwrap();
    fs::create_dir_all(root.join(".git/hooks")).unwrap();
    let _ = fs::remove_file(root.join(".git/hooks/post-merge"));
    kiln_core::os::symlink(&target, root.join(".git/hooks/post-merge")).unwrap();
    let (code, out, err) = support::kiln(&["setup-git"], root);
    assert_ne!(code, 0, "{out}{err}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "theirs\n");
    fs::remove_file(root.join(".git/hooks/post-merge")).unwrap();
    let (code, out, err) = support::kiln(&["setup-git"], root);
    assert_eq!(code, 0, "{out}{err}");
    assert!(root.join(".git/hooks/post-merge").is_file());
}

#[test]
fn entities_both_sides_added_at_the_end_merge_clean() {
    let make = || {
        forest_branches(
            vec![new_entity([1.0, 0.0, 0.0])],
            vec![new_entity([2.0, 0.0, 0.0]), new_entity([3.0, 0.0, 0.0])],
        )
    };
    both_ways(make, |dir, clean, said| {
        assert!(clean, "{said}");
        let doc = level(dir, "levels/forest.level");
        let added: Vec<&Value> = doc["entities"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["id"].as_str().unwrap().starts_with("entity_"))
            .collect();
        assert_eq!(added.len(), 3, "{doc}");
        let (code, out, err) = support::kiln(&["check"], dir);
        assert_eq!(code, 0, "{out}{err}");
    });
}

/// A repository of the demo whose branches `a` and `b` each ran their actions on
/// the forest level.
fn forest_branches(a: Vec<Action>, b: Vec<Action>) -> tempfile::TempDir {
    let dir = repository();
    on_branch(dir.path(), "a", "levels/forest.level", a);
    on_branch(dir.path(), "b", "levels/forest.level", b);
    dir
}

/// Branches `a` and `b` off main, each adding a different component to the boulder.
fn a_rotator_on_a_and_an_oscillator_on_b(dir: &Path) {
    for (branch, component) in [("a", "rotator"), ("b", "oscillator")] {
        on_branch(
            dir,
            branch,
            "levels/forest.level",
            vec![Action::AddComponent {
                entity: "boulder".into(),
                component: component.into(),
            }],
        );
    }
}

#[test]
fn each_side_adding_a_component_to_one_entity_merges_clean() {
    let make = || {
        let dir = repository();
        a_rotator_on_a_and_an_oscillator_on_b(dir.path());
        dir
    };
    both_ways(make, |dir, clean, said| {
        assert!(clean, "{said}");
        let boulder = entity(&level(dir, "levels/forest.level"), "boulder").unwrap();
        assert!(boulder["components"].get("rotator").is_some(), "{boulder}");
        assert!(
            boulder["components"].get("oscillator").is_some(),
            "{boulder}"
        );
        let (code, out, err) = support::kiln(&["check"], dir);
        assert_eq!(code, 0, "{out}{err}");
    });
}

#[test]
fn overrides_of_different_fields_of_one_instance_merge_clean() {
    let make = || {
        forest_branches(
            vec![set(
                "lamp_1/pole",
                "mesh",
                "material",
                json!("materials/wood"),
            )],
            vec![set(
                "lamp_1/head/glass",
                "mesh",
                "material",
                json!("materials/red_glow"),
            )],
        )
    };
    both_ways(make, |dir, clean, said| {
        assert!(clean, "{said}");
        let lamp = entity(&level(dir, "levels/forest.level"), "lamp_1").unwrap();
        assert_eq!(
            lamp["overrides"]["pole"]["mesh"]["material"], "materials/wood",
            "{lamp}"
        );
        assert_eq!(
            lamp["overrides"]["head/glass"]["mesh"]["material"], "materials/red_glow",
            "{lamp}"
        );
    });
}

#[test]
fn parts_both_sides_added_to_a_prefab_merge_clean() {
    let make = || {
        let dir = repository();
        on_branch(
            dir.path(),
            "a",
            "units/crate.unit",
            vec![new_entity([0.0, 1.0, 0.0])],
        );
        on_branch(
            dir.path(),
            "b",
            "units/crate.unit",
            vec![
                Action::Rename {
                    entity: "box".into(),
                    name: "Crate box".into(),
                },
                new_entity([0.0, 2.0, 0.0]),
            ],
        );
        dir
    };
    both_ways(make, |dir, clean, said| {
        assert!(clean, "{said}");
        let unit = level(dir, "units/crate.unit");
        assert_eq!(entity(&unit, "box").unwrap()["name"], "Crate box");
        let parts = unit["entities"].as_array().unwrap().len();
        assert_eq!(parts, 3, "the box and a part from each side: {unit}");
    });
}

#[test]
fn both_sides_moving_assets_keep_both_moves_in_the_redirect_log() {
    let make = || {
        let dir = repository();
        kiln_on_branch(
            dir.path(),
            "a",
            &[
                "mv",
                "materials/bark.material",
                "materials/trees/bark.material",
            ],
        );
        kiln_on_branch(
            dir.path(),
            "b",
            &[
                "mv",
                "materials/stone.material",
                "materials/rocks/stone.material",
            ],
        );
        dir
    };
    both_ways(make, |dir, clean, said| {
        assert!(clean, "{said}");
        let log = fs::read_to_string(dir.join("kiln.redirects")).unwrap();
        assert!(
            log.contains("materials/bark.material -> materials/trees/bark.material"),
            "{log}"
        );
        assert!(
            log.contains("materials/stone.material -> materials/rocks/stone.material"),
            "{log}"
        );
        let (code, out, err) = support::kiln(&["check"], dir);
        assert_eq!(code, 0, "{out}{err}");
    });
}

#[test]
fn a_moved_material_is_followed_by_what_the_other_branch_added() {
    let make = || {
        let dir = repository();
        kiln_on_branch(
            dir.path(),
            "a",
            &[
                "mv",
                "materials/metal.material",
                "materials/props/metal.material",
            ],
        );
        edit_on_branch(dir.path(), "b", "levels/forest.level", |editor| {
            editor.apply(Action::Select(Vec::new()));
            editor.apply(new_entity([5.0, 0.0, 5.0]));
            let id = editor.selection()[0].clone();
            editor.apply(Action::Rename {
                entity: id.clone(),
                name: "Signpost".into(),
            });
            editor.apply(Action::AddComponent {
                entity: id.clone(),
                component: "mesh".into(),
            });
            editor.apply(set(&id, "mesh", "material", json!("materials/metal")));
        });
        dir
    };
    both_ways(make, |dir, clean, said| {
        // The hook followed the move in what the other side added, said so, and
        // stopped before the commit so that the merge holds the mended files.
        assert!(!clean && merging(dir), "{said}");
        assert!(
            said.contains("now name") && said.contains("finish the merge with git commit"),
            "{said}"
        );
        git_ok(dir, &["commit", "-q", "--no-edit"]);
        let doc = level(dir, "levels/forest.level");
        let added = doc["entities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "Signpost")
            .cloned()
            .unwrap();
        assert_eq!(
            added["components"]["mesh"]["material"], "materials/props/metal",
            "{added}"
        );
        let (code, out, err) = support::kiln(&["check"], dir);
        assert_eq!(code, 0, "nothing neither branch had: {out}{err}");
        // Mended before the merge commit, and committed with it.
        assert_eq!(git_ok(dir, &["status", "--porcelain"]), "");
    });
}

#[test]
fn a_group_deleted_on_one_side_while_the_other_adds_a_child_stops_the_merge() {
    let make = || {
        forest_branches(
            vec![
                Action::Select(vec!["path_lights".into()]),
                Action::Run(UiCommand::Delete),
            ],
            vec![
                Action::Select(vec!["path_lights".into()]),
                new_entity([0.0, 0.0, 0.0]),
            ],
        )
    };
    both_ways(make, |dir, clean, said| {
        assert!(!clean, "a real conflict: {said}");
        assert!(said.contains("entity \"path_lights\""), "{said}");
        // check and compile refuse the file, naming the conflict.
        let (code, out, _) = support::kiln(&["compile", "levels/forest"], dir);
        assert_eq!(code, 1);
        assert!(
            out.contains("unresolved merge conflict") && out.contains("entity \"path_lights\""),
            "{out}"
        );
        let (code, out, _) = support::kiln(&["check"], dir);
        assert_eq!(code, 1, "{out}");
        assert!(out.contains("merge conflict"), "{out}");
    });
}

#[test]
fn one_field_changed_differently_is_a_conflict_and_git_diff_reads_it() {
    let make = || {
        forest_branches(
            vec![set("boulder", "transform", "position", json!([1, 0, 0]))],
            vec![set("boulder", "transform", "position", json!([2, 0, 0]))],
        )
    };
    both_ways(make, |dir, clean, said| {
        assert!(!clean, "{said}");
        assert!(
            said.contains("entity \"boulder\", component \"transform\", field \"position\""),
            "{said}"
        );
        let text = fs::read_to_string(dir.join("levels/forest.level")).unwrap();
        assert!(text.contains("\"kiln:conflict\""), "{text}");
        // The rest of the file is canonical and readable.
        assert!(kiln_core::conflict::find_conflicts(&text, "level").len() == 1);
    });
}

#[test]
fn an_entity_edited_on_one_side_and_deleted_on_the_other_is_a_conflict() {
    let make = || {
        forest_branches(
            vec![
                Action::Select(vec!["boulder".into()]),
                Action::Run(UiCommand::Delete),
            ],
            vec![Action::Rename {
                entity: "boulder".into(),
                name: "Big boulder".into(),
            }],
        )
    };
    both_ways(make, |dir, clean, said| {
        assert!(!clean, "{said}");
        assert!(
            said.contains("entity \"boulder\": ") && said.contains("deleted it"),
            "{said}"
        );
        let found = kiln_core::conflict::find_conflicts(
            &fs::read_to_string(dir.join("levels/forest.level")).unwrap(),
            "level",
        );
        assert_eq!(found.len(), 1);
        assert!(found[0].0.path.is_empty(), "the entity as a whole");
    });
}

#[test]
fn two_different_entities_added_with_one_id_are_a_conflict() {
    let make = || {
        let dir = repository();
        for (branch, name) in [("a", "Signpost"), ("b", "Milestone")] {
            edit_on_branch(dir.path(), branch, "levels/forest.level", |editor| {
                editor.apply(Action::Select(Vec::new()));
                editor.apply(new_entity([0.0, 0.0, 0.0]));
                let id = editor.selection()[0].clone();
                editor.apply(Action::Rename {
                    entity: id,
                    name: name.into(),
                });
            });
            // One id on both sides, as a copy from one place pasted on two branches
            // would give.
            let path = dir.path().join("levels/forest.level");
            let mut doc = level(dir.path(), "levels/forest.level");
            for e in doc["entities"].as_array_mut().unwrap() {
                if e["name"] == name {
                    e["id"] = json!("marker");
                }
            }
            fs::write(&path, kiln_core::json_format::to_canonical_string(&doc)).unwrap();
            git_ok(dir.path(), &["commit", "-qam", "one id"]);
        }
        dir
    };
    both_ways(make, |_, clean, said| {
        assert!(!clean, "{said}");
        assert!(
            said.contains("entity \"marker\": both sides added an entity with this id"),
            "{said}"
        );
    });
}

#[test]
fn a_materials_keys_merge_one_by_one_and_kiln_project_too() {
    let make = || {
        let dir = repository();
        let edit = |dir: &Path, branch: &str, file: &str, from: &str, to: &str| {
            git_ok(dir, &["checkout", "-q", branch]);
            let path = dir.join(file);
            let text = fs::read_to_string(&path).unwrap();
            assert!(text.contains(from), "{text}");
            fs::write(&path, text.replace(from, to)).unwrap();
            git_ok(dir, &["commit", "-qam", &format!("{branch} edits {file}")]);
        };
        edit(
            dir.path(),
            "a",
            "materials/bark.material",
            "\"roughness\": 0.9",
            "\"roughness\": 0.4",
        );
        edit(
            dir.path(),
            "a",
            "kiln.project",
            "\"name\": \"Demo\"",
            "\"name\": \"Forest game\"",
        );
        edit(
            dir.path(),
            "b",
            "materials/bark.material",
            "\"texture\": \"textures/bark\"",
            "\"texture\": \"textures/planks\"",
        );
        edit(
            dir.path(),
            "b",
            "kiln.project",
            "\"plugins\": [\"plugins/wind\", \"plugins/blink\"]",
            "\"plugins\": [\"plugins/wind\"]",
        );
        dir
    };
    both_ways(make, |dir, clean, said| {
        assert!(clean, "{said}");
        let bark = level(dir, "materials/bark.material");
        assert_eq!(
            (bark["roughness"].as_f64(), bark["texture"].as_str()),
            (Some(0.4), Some("textures/planks")),
            "{bark}"
        );
        let project = level(dir, "kiln.project");
        assert_eq!(project["name"], "Forest game");
        assert_eq!(project["plugins"], json!(["plugins/wind"]));
    });
}

#[test]
fn a_rebase_and_a_cherry_pick_merge_through_kiln_too() {
    let dir = repository();
    a_rotator_on_a_and_an_oscillator_on_b(dir.path());
    git_ok(dir.path(), &["checkout", "-q", "b"]);
    let (ok, said) = git(dir.path(), &["rebase", "a"]);
    assert!(ok, "{said}");
    let boulder = entity(&level(dir.path(), "levels/forest.level"), "boulder").unwrap();
    assert!(
        boulder["components"].get("rotator").is_some()
            && boulder["components"].get("oscillator").is_some(),
        "{boulder}"
    );

    // The same change picked onto main, where a made it already: no conflict.
    git_ok(dir.path(), &["checkout", "-q", "main"]);
    on_branch(
        dir.path(),
        "main",
        "levels/forest.level",
        vec![Action::Rename {
            entity: "firefly".into(),
            name: "Glow worm".into(),
        }],
    );
    let a_tip = git_ok(dir.path(), &["rev-parse", "a"]);
    let (ok, said) = git(dir.path(), &["cherry-pick", a_tip.trim()]);
    assert!(ok, "{said}");
    let doc = level(dir.path(), "levels/forest.level");
    assert_eq!(entity(&doc, "firefly").unwrap()["name"], "Glow worm");
    assert!(
        entity(&doc, "boulder").unwrap()["components"]
            .get("rotator")
            .is_some()
    );
}

#[test]
fn a_side_that_does_not_parse_goes_to_gits_line_merge_and_says_so() {
    let dir = repository();
    git_ok(dir.path(), &["checkout", "-q", "a"]);
    let file = dir.path().join("materials/bark.material");
    fs::write(&file, "{ \"color\": [1, 0, 0, 1], \n  broken\n").unwrap();
    git_ok(dir.path(), &["commit", "-qam", "a breaks bark"]);
    git_ok(dir.path(), &["checkout", "-q", "b"]);
    let text = fs::read_to_string(&file).unwrap().replace("0.9", "0.8");
    fs::write(&file, text).unwrap();
    git_ok(dir.path(), &["commit", "-qam", "b tunes bark"]);
    let (_, said) = merge(dir.path(), "b", "a");
    assert!(said.contains("git's line merge takes it"), "{said}");
}

#[test]
fn kiln_diff_and_git_diff_say_what_changed_by_meaning() {
    let dir = repository();
    on_branch(
        dir.path(),
        "a",
        "levels/forest.level",
        vec![
            set("boulder", "transform", "position", json!([1, 2, 3])),
            Action::Rename {
                entity: "firefly".into(),
                name: "Glow worm".into(),
            },
        ],
    );
    let said = git_ok(
        dir.path(),
        &["diff", "main", "a", "--", "levels/forest.level"],
    );
    assert!(said.contains("kiln diff levels/forest.level"), "{said}");
    assert!(said.contains("~ entity \"boulder\""), "{said}");
    assert!(said.contains("transform.position:"), "{said}");
    assert!(
        said.contains("name: \"Firefly\" -> \"Glow worm\""),
        "{said}"
    );
    // Formatting alone is no change.
    let old = dir.path().join("old.material");
    let new = dir.path().join("new.material");
    fs::write(&old, "{\"roughness\": 0.5, \"color\": [1, 1, 1, 1]}").unwrap();
    fs::write(
        &new,
        "{\n  \"color\": [1.0, 1, 1, 1],\n  \"roughness\": 0.5\n}\n",
    )
    .unwrap();
    let (code, out, _) = support::kiln(&["diff", "old.material", "new.material"], dir.path());
    assert_eq!((code, out.as_str()), (0, ""));
}

mod conflicts_in_the_editor {
    use super::*;
    use egui::Key;
    use egui_kittest::kittest::Queryable;
    use support::ui::{editor, open};

    /// A repository merged with conflicts: boulder moved to two places, and the path
    /// lights deleted on `a` while `b` put an entity under them.
    fn conflicted() -> tempfile::TempDir {
        let dir = repository();
        on_branch(
            dir.path(),
            "a",
            "levels/forest.level",
            vec![
                set("boulder", "transform", "position", json!([1, 0, 0])),
                Action::Select(vec!["path_lights".into()]),
                Action::Run(UiCommand::Delete),
            ],
        );
        on_branch(
            dir.path(),
            "b",
            "levels/forest.level",
            vec![
                set("boulder", "transform", "position", json!([2, 0, 0])),
                Action::Select(vec!["path_lights".into()]),
                new_entity([0.0, 0.0, 0.0]),
            ],
        );
        let (clean, said) = merge(dir.path(), "a", "b");
        assert!(!clean, "{said}");
        dir
    }

    #[test]
    fn the_conflicts_tab_takes_a_side_per_conflict_with_undo_and_saving_resolves_the_file() {
        let dir = conflicted();
        let mut h = open(dir.path());
        assert_eq!(editor(&h).conflicts().len(), 2);
        // It opened on the Conflicts tab, with ours in place: the level draws.
        h.get_by_label("Conflicts (2)");
        let at = |h: &egui_kittest::Harness<'_, kiln::editor::KilnApp>| {
            editor(h).world_pose("boulder").unwrap().translation.x
        };
        assert!((at(&h) - 1.0).abs() < 1e-4, "ours drawn");
        let place = "entity \"boulder\", component \"transform\", field \"position\"";
        h.get_by_label(&format!("Theirs: {place}")).click();
        h.run_steps(3);
        assert!((at(&h) - 2.0).abs() < 1e-4, "theirs drawn");
        assert_eq!(editor(&h).conflicts().len(), 1);
        h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
        h.run_steps(3);
        assert_eq!(
            editor(&h).conflicts().len(),
            2,
            "undo brings the conflict back"
        );
        assert!((at(&h) - 1.0).abs() < 1e-4);
        h.get_by_label(&format!("Theirs: {place}")).click();
        h.run_steps(3);
        // The deleted group: keep it, with what theirs put under it.
        h.get_by_label("Theirs: entity \"path_lights\"").click();
        h.run_steps(3);
        let e = editor(&h);
        assert!(e.conflicts().is_empty());
        assert!(
            e.log()
                .iter()
                .any(|l| l.text.contains("git add levels/forest.level")),
            "the last one says how to tell git: {:?}",
            e.log()
        );
        assert!(e.entity("path_lights").is_some());
        assert!(
            e.level()
                .unwrap()
                .doc
                .entities
                .iter()
                .any(|x| x.parent.as_deref() == Some("path_lights"))
        );
        h.key_press_modifiers(egui::Modifiers::COMMAND, Key::S);
        h.run_steps(3);
        let text = fs::read_to_string(dir.path().join("levels/forest.level")).unwrap();
        assert!(!text.contains("kiln:conflict"), "{text}");
        let (code, out, err) = support::kiln(&["check"], dir.path());
        assert_eq!(code, 0, "{out}{err}");
        let (code, out, err) = support::kiln(&["compile", "levels/forest"], dir.path());
        assert_eq!(code, 0, "{out}{err}");
        git_ok(
            dir.path(),
            &["commit", "-qam", "Merged, conflicts resolved in Kiln"],
        );
    }

    #[test]
    fn a_conflict_across_files_is_listed_and_keep_puts_the_deleted_material_back() {
        let dir = repository();
        glass_deleted_on_a_and_used_on_b(dir.path());
        let (clean, said) = merge(dir.path(), "a", "b");
        assert!(!clean && merging(dir.path()), "{said}");
        let glass = dir.path().join("materials/glass.material");
        assert!(!glass.exists());

        // The editor opens on the Conflicts tab, which lists it.
        let mut h = open(dir.path());
        assert_eq!(editor(&h).cross_file_conflicts().len(), 1);
        h.get_by_label("Keep materials/glass.material").click();
        h.run_steps(5);
        assert!(glass.is_file(), "{:?}", editor(&h).log());
        assert!(editor(&h).cross_file_conflicts().is_empty());
        assert!(
            editor(&h)
                .log()
                .iter()
                .any(|l| l.text.contains("git add the files and git commit")),
            "{:?}",
            editor(&h).log()
        );
        // One undo step: the file goes again, and the conflict is back.
        h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Z);
        h.run_steps(5);
        assert!(!glass.exists());
        assert_eq!(editor(&h).cross_file_conflicts().len(), 1);
        h.get_by_label("Keep materials/glass.material").click();
        h.run_steps(5);
        assert!(glass.is_file());
        drop(h);
        git_ok(dir.path(), &["add", "-A"]);
        git_ok(dir.path(), &["commit", "-q", "--no-edit"]);
        let (code, out, err) = support::kiln(&["check"], dir.path());
        assert_eq!(code, 0, "{out}{err}");
    }

    #[test]
    fn an_override_of_a_removed_part_is_listed_and_dropped_from_the_conflicts_tab() {
        let dir = repository();
        glass_part_removed_on_a_and_overridden_on_b(dir.path());
        let (clean, said) = merge(dir.path(), "a", "b");
        assert!(!clean && merging(dir.path()), "{said}");

        let mut h = open(dir.path());
        h.get_by_label("Conflicts (1)").click();
        h.run_steps(3);
        // The other resolution is offered too: the bulb as theirs has it.
        h.get_by_label("Take units/bulb.unit from theirs");
        h.get_by_label("Drop the override of head/glass").click();
        h.run_steps(5);
        let workshop = level(dir.path(), "levels/workshop.level");
        assert_eq!(entity(&workshop, "lamp_b").unwrap().get("overrides"), None);
        assert!(editor(&h).cross_file_conflicts().is_empty());
        drop(h);
        let (code, out, err) = support::kiln(&["compile", "levels/workshop"], dir.path());
        assert!(
            !out.contains("overrides") && !err.contains("overrides \"glass\""),
            "{code} {out}{err}"
        );
        git_ok(
            dir.path(),
            &["commit", "-q", "-am", "Merged without the override"],
        );
        assert!(!merging(dir.path()));
    }

    #[test]
    fn all_ours_resolves_every_conflict_and_a_deletion_takes_what_is_under_it() {
        let dir = conflicted();
        let mut h = open(dir.path());
        h.get_by_label("All ours").click();
        h.run_steps(3);
        let e = editor(&h);
        assert!(e.conflicts().is_empty());
        assert!(e.entity("path_lights").is_none());
        assert!(
            !e.level()
                .unwrap()
                .doc
                .entities
                .iter()
                .any(|x| x.parent.as_deref() == Some("path_lights"))
        );
        assert!((e.world_pose("boulder").unwrap().translation.x - 1.0).abs() < 1e-4);
        assert_eq!(e.preview_state().compile_error(), None);
    }
}

/// Edits the JSON file `file` on branch `branch` by hand (as a text editor or
/// another tool would), writes it canonically and commits.
fn json_on_branch(dir: &Path, branch: &str, file: &str, edit: impl FnOnce(&mut Value)) {
    git_ok(dir, &["checkout", "-q", branch]);
    let path = dir.join(file);
    let mut value: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut value);
    fs::write(&path, kiln_core::json_format::to_canonical_string(&value)).unwrap();
    git_ok(dir, &["add", "-A"]);
    git_ok(
        dir,
        &["commit", "-q", "-m", &format!("{branch} edits {file}")],
    );
}

/// Branch `a` deletes `materials/glass.material`; branch `b` starts using it in the
/// lamp prefab. Each alone is sound.
fn glass_deleted_on_a_and_used_on_b(dir: &Path) {
    git_ok(dir, &["checkout", "-q", "a"]);
    git_ok(dir, &["rm", "-q", "materials/glass.material"]);
    git_ok(dir, &["commit", "-q", "-m", "a deletes glass"]);
    json_on_branch(dir, "b", "units/lamp.unit", |unit| {
        unit["entities"][0]["components"]["mesh"]["material"] = json!("materials/glass");
    });
}

/// Branch `a` removes the glass part from the bulb prefab (and its own override
/// of it); branch `b` adds a lamp to the workshop that overrides the glass.
fn glass_part_removed_on_a_and_overridden_on_b(dir: &Path) {
    json_on_branch(dir, "a", "units/bulb.unit", |unit| {
        let entities = unit["entities"].as_array_mut().unwrap();
        entities.retain(|e| e["id"] != "glass");
        entities.push(json!({"id": "filament", "name": "Filament"}));
    });
    json_on_branch(dir, "a", "levels/forest.level", |level| {
        for e in level["entities"].as_array_mut().unwrap() {
            if let Some(o) = e.get_mut("overrides").and_then(Value::as_object_mut) {
                o.shift_remove("head/glass");
                if o.is_empty() {
                    e.as_object_mut().unwrap().shift_remove("overrides");
                }
            }
        }
    });
    json_on_branch(dir, "b", "levels/workshop.level", |level| {
        level["entities"].as_array_mut().unwrap().push(json!({
            "id": "lamp_b",
            "name": "Lamp B",
            "prefab": "units/lamp",
            "overrides": {"head/glass": {"mesh": {"material": "materials/red_glow"}}}
        }));
    });
}

/// Whether a merge is in progress (stopped before its commit).
fn merging(dir: &Path) -> bool {
    git(dir, &["rev-parse", "-q", "--verify", "MERGE_HEAD"]).0
}

#[test]
fn a_material_one_side_deletes_while_the_other_starts_using_it_stops_the_merge() {
    let make = || {
        let dir = repository();
        glass_deleted_on_a_and_used_on_b(dir.path());
        dir
    };
    both_ways(make, |dir, clean, said| {
        // Each side alone is sound: git merged every file clean, and Kiln's
        // pre-merge-commit hook stopped the commit.
        assert!(!clean, "{said}");
        assert!(merging(dir), "the merge stays in progress: {said}");
        assert!(said.contains("conflict across files"), "{said}");
        let into_a = git_ok(dir, &["rev-parse", "--abbrev-ref", "HEAD"]).trim() == "a";
        let (glass, lamp) = if into_a {
            (
                "ours deleted, theirs unchanged",
                "ours unchanged, theirs changed",
            )
        } else {
            (
                "ours unchanged, theirs deleted",
                "ours changed, theirs unchanged",
            )
        };
        assert!(
            said.contains(&format!("materials/glass.material: {glass}"))
                && said.contains(&format!("units/lamp.unit: {lamp}")),
            "{said}"
        );
        let (code, out, _) = support::kiln(&["check"], dir);
        assert_eq!(code, 1, "{out}");
        assert!(out.contains("conflict across files"), "{out}");
        let (code, out, _) = support::kiln(&["check", "--json"], dir);
        assert_eq!(code, 1, "{out}");
        let report: Value = serde_json::from_str(&out).unwrap();
        let files = &report["merge_conflicts"][0]["files"];
        assert!(
            files
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["path"] == "materials/glass.material"),
            "{report}"
        );
        // Keep the material (from the side that has it), then finish the merge
        // with git commit as after any conflict.
        let keeper = if into_a { "MERGE_HEAD" } else { "HEAD" };
        git_ok(dir, &["checkout", keeper, "--", "materials/glass.material"]);
        git_ok(dir, &["commit", "-q", "--no-edit"]);
        assert!(!merging(dir));
        let (code, out, err) = support::kiln(&["check"], dir);
        assert_eq!(code, 0, "{out}{err}");
        assert!(!dir.join(".kiln/merge-conflicts.json").exists());
    });
}

#[test]
fn a_part_one_side_removes_from_a_prefab_while_the_other_overrides_it_stops_the_merge() {
    let make = || {
        let dir = repository();
        glass_part_removed_on_a_and_overridden_on_b(dir.path());
        dir
    };
    both_ways(make, |dir, clean, said| {
        assert!(!clean && merging(dir), "{said}");
        assert!(
            said.contains("levels/workshop.level: entity \"lamp_b/head\": overrides \"glass\", which is not an entity of units/bulb.unit"),
            "{said}"
        );
        // Drop the override, and the merge commits.
        let path = dir.join("levels/workshop.level");
        let mut doc = level(dir, "levels/workshop.level");
        for e in doc["entities"].as_array_mut().unwrap() {
            if e["id"] == "lamp_b" {
                e.as_object_mut().unwrap().shift_remove("overrides");
            }
        }
        fs::write(&path, kiln_core::json_format::to_canonical_string(&doc)).unwrap();
        let (code, out, _) = support::kiln(&["check"], dir);
        assert!(!out.contains("conflict across files"), "{code} {out}");
        git_ok(
            dir,
            &["commit", "-q", "-am", "Merge, without the glass override"],
        );
    });
}

#[test]
fn a_cherry_pick_follows_a_move_made_on_this_branch() {
    let dir = repository();
    kiln_on_branch(
        dir.path(),
        "main",
        &[
            "mv",
            "materials/stone.material",
            "materials/rocks/stone.material",
        ],
    );
    json_on_branch(dir.path(), "a", "levels/forest.level", |level| {
        level["entities"].as_array_mut().unwrap().push(json!({
            "id": "cairn",
            "name": "Cairn",
            "components": {"mesh": {"mesh": "meshes/cube", "material": "materials/stone"}}
        }));
    });
    git_ok(dir.path(), &["checkout", "-q", "main"]);
    let (ok, said) = git(dir.path(), &["cherry-pick", "a"]);
    assert!(ok, "{said}");
    assert!(said.contains("now name"), "{said}");
    let cairn = entity(&level(dir.path(), "levels/forest.level"), "cairn").unwrap();
    assert_eq!(
        cairn["components"]["mesh"]["material"], "materials/rocks/stone",
        "{cairn}"
    );
    let (code, out, err) = support::kiln(&["check"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_reorder_on_one_side_survives_a_delete_on_the_other() {
    let make = || {
        let dir = repository();
        let roots = |level: &Value| -> Vec<String> {
            level["entities"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e.get("parent").is_none())
                .map(|e| e["id"].as_str().unwrap().to_owned())
                .collect()
        };
        let base_roots = roots(&level(dir.path(), "levels/forest.level"));
        let (gone, moved) = (
            base_roots[1].clone(),
            base_roots[base_roots.len() - 1].clone(),
        );
        json_on_branch(dir.path(), "a", "levels/forest.level", |level| {
            let list = level["entities"].as_array_mut().unwrap();
            // The entity and everything below it, as the editor deletes.
            let mut doomed = vec![gone.clone()];
            loop {
                let more: Vec<String> = list
                    .iter()
                    .filter(|e| {
                        e["parent"]
                            .as_str()
                            .is_some_and(|p| doomed.iter().any(|d| d == p))
                            && !doomed.iter().any(|d| e["id"] == d.as_str())
                    })
                    .map(|e| e["id"].as_str().unwrap().to_owned())
                    .collect();
                if more.is_empty() {
                    break;
                }
                doomed.extend(more);
            }
            list.retain(|e| !doomed.iter().any(|d| e["id"] == d.as_str()));
        });
        json_on_branch(dir.path(), "b", "levels/forest.level", |level| {
            let list = level["entities"].as_array_mut().unwrap();
            let at = list.iter().position(|e| e["id"] == moved.as_str()).unwrap();
            let e = list.remove(at);
            list.insert(1, e);
        });
        (dir, gone, moved)
    };
    for (into, from) in [("a", "b"), ("b", "a")] {
        let (dir, gone, moved) = make();
        let (clean, said) = merge(dir.path(), into, from);
        assert!(clean, "{said}");
        let doc = level(dir.path(), "levels/forest.level");
        let ids: Vec<&str> = doc["entities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        assert!(!ids.contains(&gone.as_str()), "{ids:?}");
        assert_eq!(ids[1], moved, "the move kept: {ids:?}");
    }
}

#[test]
fn an_empty_side_goes_to_gits_line_merge_and_no_entity_is_lost() {
    let dir = repository();
    git_ok(dir.path(), &["checkout", "-q", "a"]);
    fs::write(dir.path().join("levels/workshop.level"), "").unwrap();
    git_ok(dir.path(), &["commit", "-qam", "a empties the workshop"]);
    on_branch(
        dir.path(),
        "b",
        "levels/workshop.level",
        vec![new_entity([1.0, 0.0, 1.0])],
    );
    let (clean, said) = merge(dir.path(), "b", "a");
    assert!(!clean, "{said}");
    assert!(
        said.contains("levels/workshop.level: theirs is empty; git's line merge takes it"),
        "{said}"
    );
    // Ours' text is all there, inside git's conflict markers.
    let text = fs::read_to_string(dir.path().join("levels/workshop.level")).unwrap();
    assert!(
        text.contains("<<<<<<<") && text.contains("\"entities\""),
        "{text}"
    );
}

#[test]
fn one_inserted_entity_is_one_line_of_diff_and_an_unreadable_version_gets_gits_text_diff() {
    let dir = repository();
    let path = dir.path().join("levels/forest.level");
    let mut doc = level(dir.path(), "levels/forest.level");
    doc["entities"]
        .as_array_mut()
        .unwrap()
        .insert(0, json!({"id": "newcomer", "name": "Newcomer"}));
    fs::write(&path, kiln_core::json_format::to_canonical_string(&doc)).unwrap();
    let (_, out) = git(dir.path(), &["diff"]);
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("kiln diff "))
        .collect();
    assert_eq!(
        lines,
        ["  + entity \"newcomer\" (Newcomer), at the root"],
        "{out}"
    );
    fs::write(&path, "{ \"entities\": [ broken\n").unwrap();
    let (_, out) = git(dir.path(), &["diff"]);
    assert!(out.contains("git's text diff follows"), "{out}");
    assert!(out.contains("+{ \"entities\": [ broken"), "{out}");
}

#[test]
fn setup_git_keeps_the_users_hook_lines_and_check_says_what_is_missing() {
    let dir = support::demo_copy();
    let root = dir.path();
    git_ok(root, &["init", "-q", "-b", "main"]);
    let hook = root.join(".git/hooks/post-merge");
    fs::create_dir_all(hook.parent().unwrap()).unwrap();
    fs::write(&hook, "#!/bin/sh\necho mine before\nexit 0\n").unwrap();
    let (code, out, err) = support::kiln(&["setup-git", "--check"], root);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("MISSING .git/hooks/pre-merge-commit"), "{out}");
    let (code, out, err) = support::kiln(&["setup-git"], root);
    assert_eq!(code, 0, "{out}{err}");
    let text = fs::read_to_string(&hook).unwrap();
    // Kiln's block runs before the user's exit; the user's lines are all there.
    let block = text.find("after-merge").unwrap();
    assert!(text.starts_with("#!/bin/sh\n"), "{text}");
    assert!(block < text.find("exit 0").unwrap(), "{text}");
    fs::write(&hook, format!("{text}echo mine after\n")).unwrap();
    let (code, out, _) = support::kiln(&["setup-git"], root);
    assert_eq!(code, 0);
    assert!(out.contains("already set up: nothing changed"), "{out}");
    let again = fs::read_to_string(&hook).unwrap();
    assert!(
        again.contains("echo mine before") && again.ends_with("echo mine after\n"),
        "{again}"
    );
    let (code, out, err) = support::kiln(&["setup-git", "--check"], root);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("MISSING"), "{out}");
}

#[cfg(unix)]
#[test]
fn the_driver_finds_kiln_on_path_after_a_move_and_falls_back_to_git_without_it() {
    let make = || {
        let dir = repository();
        // Kiln "moved": the path setup-git recorded is gone.
        let driver = git_ok(dir.path(), &["config", "--get", "merge.kiln.driver"]);
        let exe = env!("CARGO_BIN_EXE_kiln");
        assert!(driver.contains(exe), "{driver}");
        git_ok(
            dir.path(),
            &[
                "config",
                "merge.kiln.driver",
                &driver.trim().replace(exe, "/nonexistent/kiln"),
            ],
        );
        // Both add entities at the end: git's line merge conflicts, Kiln's does not.
        on_branch(
            dir.path(),
            "a",
            "levels/workshop.level",
            vec![new_entity([1.0, 0.0, 0.0])],
        );
        on_branch(
            dir.path(),
            "b",
            "levels/workshop.level",
            vec![new_entity([2.0, 0.0, 0.0])],
        );
        git_ok(dir.path(), &["checkout", "-q", "a"]);
        dir
    };
    let run = |dir: &Path, path: &str| {
        let out = Command::new("git")
            .args(["merge", "--no-edit", "b"])
            .current_dir(dir)
            .env("PATH", path)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Designer")
            .env("GIT_AUTHOR_EMAIL", "designer@example.com")
            .env("GIT_COMMITTER_NAME", "Designer")
            .env("GIT_COMMITTER_EMAIL", "designer@example.com")
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), said)
    };
    let system_path = "/usr/local/bin:/usr/bin:/bin";
    let dir = make();
    let (clean, said) = run(dir.path(), system_path);
    assert!(!clean, "{said}");
    assert!(said.contains("Kiln is not installed here"), "{said}");
    assert!(
        said.contains("git merges levels/workshop.level line by line"),
        "{said}"
    );
    // Installed elsewhere, on PATH: found.
    let dir = make();
    let bin = tempfile::tempdir().unwrap();
    kiln_core::os::symlink(env!("CARGO_BIN_EXE_kiln"), bin.path().join("kiln")).unwrap();
    let (clean, said) = run(
        dir.path(),
        &format!("{}:{system_path}", bin.path().display()),
    );
    assert!(clean, "{said}");
}

#[test]
fn a_rebase_that_breaks_the_project_across_files_says_so() {
    let dir = repository();
    glass_deleted_on_a_and_used_on_b(dir.path());
    // Positive control: b alone is sound.
    let (code, out, err) = support::kiln(&["check"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
    let (ok, said) = git(dir.path(), &["rebase", "a"]);
    assert!(ok, "git cannot be stopped after a rebase: {said}");
    assert!(
        said.contains("the rebase broke what neither side had broken")
            && said.contains("materials/glass.material: ours deleted, theirs unchanged"),
        "{said}"
    );
    let (code, out, _) = support::kiln(&["check"], dir.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("conflict across files"), "{out}");
}

#[cfg(unix)]
#[test]
fn a_scratch_folder_planted_as_a_link_stops_the_merge_and_nothing_is_written_outside() {
    let dir = repository();
    glass_deleted_on_a_and_used_on_b(dir.path());
    git_ok(dir.path(), &["checkout", "-q", "a"]);
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join(".kiln")).unwrap();
    kiln_core::os::symlink(outside.path(), dir.path().join(".kiln/merge-check")).unwrap();
    let (clean, said) = git(dir.path(), &["merge", "--no-edit", "b"]);
    assert!(!clean, "{said}");
    assert!(said.contains("goes through a link"), "{said}");
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
}

/// Branch `a` deletes the workshop's pressure plate in the editor (which clears the
/// sliding door's `switch`, in the same step); branch `b` adds a second door whose
/// entity field names the plate. Each side alone is sound; git merges the level
/// clean, with a door naming no entity: the merge is stopped, naming the field.
#[test]
fn a_switch_one_side_deletes_while_the_other_adds_a_door_naming_it_stops_the_merge() {
    let make = || {
        let dir = repository();
        let root = dir.path();
        on_branch(
            root,
            "a",
            "levels/workshop.level",
            vec![
                Action::Select(vec!["pressure_plate".into()]),
                Action::Run(UiCommand::Delete),
            ],
        );
        let on_a = level(root, "levels/workshop.level");
        assert!(entity(&on_a, "pressure_plate").is_none());
        assert_eq!(
            entity(&on_a, "sliding_door").unwrap()["components"]["door"]["switch"],
            ""
        );
        json_on_branch(root, "b", "levels/workshop.level", |level| {
            level["entities"].as_array_mut().unwrap().push(json!({
                "id": "back_door",
                "name": "Back door",
                "components": {"door": {"switch": "pressure_plate"}, "transform": {}}
            }));
        });
        dir
    };
    // The designer trusts the project (its plugins declare which fields name
    // entities): the hooks git runs load them, as every command does.
    for (into, from) in [("a", "b"), ("b", "a")] {
        let dir = make();
        let dir = dir.path();
        git_ok(dir, &["checkout", "-q", into]);
        let (clean, said) = git_with(dir, &["merge", "--no-edit", from], &[("KILN_TRUST", "1")]);
        assert!(!clean, "{said}");
        assert!(merging(dir), "the merge stays in progress: {said}");
        assert!(
            said.contains(
                "entity \"back_door\", component \"door\", field \"switch\": names no entity \"pressure_plate\""
            ),
            "{said}"
        );
        let (code, out, _) = support::kiln(&["check"], dir);
        assert_eq!(code, 1, "{out}");
        assert!(out.contains("names no entity \"pressure_plate\""), "{out}");
    }
}
