//! Indexing a project on disk and what `check`, `refs` and `deps` see.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod project_fixture;

use std::fs;

use dependency_checker::check::Finding;
use dependency_checker::resolve::Target;
use project_fixture::*;

#[test]
fn references_are_found_with_their_places() {
    let dir = project();
    let checker = open(dir.path());
    let refs = checker.references_to("materials/bark.material");
    let places: Vec<String> = refs
        .iter()
        .map(|r| format!("{}:{} {}", r.place.file, r.place.line, r.place.pointer))
        .collect();
    assert_eq!(
        places,
        vec![
            "levels/forest.level:8 /entities/0/components/mesh/material",
            "tools/export.json:1 /inputs/0",
            "units/tree.unit:1 /entities/0/components/mesh/material",
        ]
    );
    assert_eq!(refs[0].place.entity.as_deref(), Some("tree"));
    assert_eq!(refs[0].place.component.as_deref(), Some("mesh"));
    // A folder's references are those of every file under it.
    assert_eq!(checker.references_to("materials").len(), 4);
    let deps: Vec<(String, Target)> = checker
        .dependencies_of("levels/forest.level")
        .into_iter()
        .map(|r| (r.text, r.target))
        .collect();
    assert_eq!(
        deps[0],
        (
            "units/tree".into(),
            Target::Resolved("units/tree.unit".into())
        )
    );
    assert_eq!(deps.len(), 5);
}

#[test]
fn a_project_whose_references_all_resolve_reports_only_what_no_boot_level_reaches() {
    let dir = project();
    let findings = open(dir.path()).findings();
    // The export tool's file is the project's only loose end: no level reaches it.
    assert_eq!(
        findings,
        vec![Finding::Unused {
            file: "tools/export.json".into()
        }],
        "{findings:#?}"
    );
}

#[test]
fn findings_cover_every_kind() {
    let dir = project();
    let mut files = files();
    files.extend([
        (
            "levels/broken.level",
            "{\n  \"entities\": [\n    {\"id\": }\n  ]\n}".to_owned(),
        ),
        ("materials/orphan.material", "{}".to_owned()),
        ("Textures/Big.png", "png".to_owned()),
        (
            "units/a.unit",
            r#"{"entities": [{"id": "x", "prefab": "units/b"}]}"#.to_owned(),
        ),
        (
            "units/b.unit",
            r#"{"entities": [{"id": "y", "prefab": "units/a"}]}"#.to_owned(),
        ),
        ("meshes/rock.json", "{}".to_owned()),
        (
            "levels/forest.level",
            LEVEL
                .replace("materials/stone", "materials/granite")
                .replace("meshes/trunk", "Meshes\\\\Trunk"),
        ),
        (
            "kiln.project",
            r#"{"boot_levels": ["levels/forest", "levels/broken"]}"#.to_owned(),
        ),
    ]);
    write_project(dir.path(), &files);
    let findings = open(dir.path()).findings();
    let text: Vec<String> = findings.iter().map(ToString::to_string).collect();
    let has = |needle: &str| {
        assert!(
            text.iter().any(|t| t.contains(needle)),
            "no {needle:?} in {text:#?}"
        )
    };
    has("levels/broken.level:3:12: expected a value");
    has(
        "levels/forest.level:12:80 (entity \"rock\", component \"mesh\", /entities/1/components/mesh/0/material): missing: materials/granite.material does not exist",
    );
    has(
        "invalid reference: \"Meshes\\Trunk\" is not a canonical resource path: it contains a backslash (use /) (did you mean \"meshes/trunk\"?)",
    );
    has("materials/orphan.material: unused");
    has(
        "Textures/Big.png: non-canonical name: it has uppercase letters (rename it to textures/big.png)",
    );
    has("prefab cycle: units/a.unit -> units/b.unit -> units/a.unit");
    has(
        "tools/export.json:1:40 (/inputs/1): ambiguous: \"meshes/rock\" could be meshes/rock.json or meshes/rock.mesh",
    );
    assert!(
        findings
            .iter()
            .any(|f| matches!(f, Finding::Unused { file } if file == "materials/stone.material"))
    );
}

/// Moves `materials/bark.material` into `materials/wood/` outside Kiln and records
/// the move in the redirect log, as a merged branch would.
fn move_bark_and_log_it(root: &std::path::Path) {
    fs::create_dir_all(root.join("materials/wood")).unwrap();
    fs::rename(
        root.join("materials/bark.material"),
        root.join("materials/wood/bark.material"),
    )
    .unwrap();
    fs::write(
        root.join("kiln.redirects"),
        "materials/bark.material -> materials/wood/bark.material\n",
    )
    .unwrap();
}

#[test]
fn stale_paths_from_the_redirect_log_are_reported() {
    let dir = project();
    move_bark_and_log_it(dir.path());
    let findings = open(dir.path()).findings();
    let stale: Vec<(&str, &str)> = findings
        .iter()
        .filter_map(|f| match f {
            Finding::StaleRedirect {
                place, replacement, ..
            } => Some((&*place.file, replacement.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        stale,
        vec![
            ("levels/forest.level", "materials/wood/bark"),
            ("tools/export.json", "materials/wood/bark.material"),
            ("units/tree.unit", "materials/wood/bark"),
        ]
    );
}

/// The stale paths a check finds in an index loaded from the cache, whose files
/// stay encoded and are decoded only if they mention a path the log moved, are
/// those it finds in the same index decoded.
#[test]
fn stale_paths_are_found_in_files_still_encoded_in_the_cache() {
    let dir = project();
    // Generic strings naming the moved file by its path, by its path without
    // extension, and a file that names nothing the log moved.
    fs::write(
        dir.path().join("tools/notes.json"),
        r#"{"see": ["materials/bark", "materials/bark.material", "levels/forest.level"]}"#,
    )
    .unwrap();
    fs::write(
        dir.path().join("tools/other.json"),
        r#"{"see": "units/tree.unit"}"#,
    )
    .unwrap();
    move_bark_and_log_it(dir.path());
    let checker = open(dir.path());
    let from_cache = check_as_loaded_from_cache(&checker);
    let stale = |findings: &[Finding]| -> Vec<(String, String)> {
        findings
            .iter()
            .filter_map(|f| match f {
                Finding::StaleRedirect {
                    place, replacement, ..
                } => Some((
                    format!("{}{}", place.file, place.pointer),
                    replacement.clone(),
                )),
                _ => None,
            })
            .collect()
    };
    assert_eq!(
        stale(&from_cache),
        vec![
            (
                "levels/forest.level/entities/0/components/mesh/material".into(),
                "materials/wood/bark".into()
            ),
            (
                "tools/export.json/inputs/0".into(),
                "materials/wood/bark.material".into()
            ),
            (
                "tools/notes.json/see/0".into(),
                "materials/wood/bark".into()
            ),
            (
                "tools/notes.json/see/1".into(),
                "materials/wood/bark.material".into()
            ),
            (
                "units/tree.unit/entities/0/components/mesh/material".into(),
                "materials/wood/bark".into()
            ),
        ]
    );
    assert_eq!(from_cache, checker.findings());
}

#[test]
fn the_redirect_log_is_read_again_when_it_changes_and_not_on_other_changes() {
    let dir = project();
    let mut checker = open(dir.path());
    let stale = |checker: &dependency_checker::Checker| {
        checker
            .findings()
            .iter()
            .filter(|f| matches!(f, Finding::StaleRedirect { .. }))
            .count()
    };
    move_bark_and_log_it(dir.path());
    // A batch without the log (its own event comes in a later batch): the log grows
    // with the project's history, and is not read again for other files' changes.
    checker
        .refresh(&[
            "materials/bark.material".into(),
            "materials/wood/bark.material".into(),
        ])
        .unwrap();
    assert_eq!(checker.redirects().follow("materials/bark.material"), None);
    assert_eq!(stale(&checker), 0);
    checker.refresh(&["kiln.redirects".into()]).unwrap();
    assert_eq!(
        checker
            .redirects()
            .follow("materials/bark.material")
            .as_deref(),
        Some("materials/wood/bark.material")
    );
    assert_eq!(stale(&checker), 3);
}

#[test]
fn symbolic_links_leaving_the_project_are_not_followed() {
    let dir = project();
    let outside = tempfile::tempdir().unwrap();
    fs::write(
        outside.path().join("secret.material"),
        r#"{"texture": "textures/bark"}"#,
    )
    .unwrap();
    kiln_core::os::symlink(outside.path(), dir.path().join("linked")).unwrap();
    let checker = open(dir.path());
    assert!(
        checker
            .index()
            .files()
            .all(|f| !f.path.starts_with("linked"))
    );
    assert!(
        checker
            .findings()
            .iter()
            .any(|f| matches!(f, Finding::LinkOutside { file } if file == "linked"))
    );
}

#[test]
fn refresh_sees_changes_without_a_full_rebuild() {
    let dir = project();
    let mut checker = open(dir.path());
    fs::write(
        dir.path().join("materials/stone.material"),
        r#"{"texture": "textures/bark"}"#,
    )
    .unwrap();
    fs::remove_file(dir.path().join("tools/export.json")).unwrap();
    let changed = checker
        .refresh(&[
            "materials/stone.material".into(),
            "tools/export.json".into(),
        ])
        .unwrap();
    assert_eq!(changed.len(), 2);
    assert_eq!(checker.references_to("textures/bark.png").len(), 2);
    assert!(checker.index().file("tools/export.json").is_none());
}

/// New reference rules in `kiln.project` (saved while the project is open, as the
/// watcher reports it) change how every file is read: the index is rebuilt.
#[test]
fn changed_reference_rules_reindex_the_project() {
    let dir = project();
    write_project(
        dir.path(),
        &[
            (
                "props/barrel.sunit",
                r#"{"mesh": "meshes/rock"}"#.to_owned(),
            ),
            ("meshes/rock.json", "{}".to_owned()),
        ],
    );
    let mut checker = open(dir.path());
    let deps = checker.dependencies_of("props/barrel.sunit");
    assert!(matches!(deps[0].target, Target::Ambiguous(_)), "{deps:?}");
    fs::write(
        dir.path().join("kiln.project"),
        r#"{"boot_levels": ["levels/forest"], "references": {"sunit": {"mesh": "mesh"}}}"#,
    )
    .unwrap();
    let changed = checker.refresh(&["kiln.project".into()]).unwrap();
    assert!(
        changed.contains(&"props/barrel.sunit".to_owned()),
        "{changed:?}"
    );
    let deps = checker.dependencies_of("props/barrel.sunit");
    assert_eq!(
        deps[0].target,
        Target::Resolved("meshes/rock.mesh".into()),
        "{deps:?}"
    );
    assert_eq!(deps[0].expected_type.as_deref(), Some("mesh"));
}

#[test]
fn files_kiln_wrote_are_taken_from_their_bytes_unless_someone_wrote_them_since() {
    use dependency_checker::Written;
    use std::time::UNIX_EPOCH;
    let dir = project();
    let mut checker = open(dir.path());
    let mtime = |p: &str| {
        fs::metadata(dir.path().join(p))
            .unwrap()
            .modified()
            .unwrap()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
    };
    let before = checker.references_to("textures/bark.png").len();
    // Written by Kiln: the index takes these bytes as they are.
    let ours = br#"{"texture": "textures/bark"}"#;
    fs::write(dir.path().join("materials/new.material"), ours).unwrap();
    let written = [Written {
        path: "materials/new.material",
        size: ours.len() as u64,
        mtime_ns: mtime("materials/new.material"),
        scanned: checker
            .index()
            .scan_for_write("materials/new.material", ours),
    }];
    let changed = checker.refresh_written(&[], &written).unwrap();
    assert_eq!(changed, vec!["materials/new.material".to_owned()]);
    assert_eq!(checker.references_to("textures/bark.png").len(), before + 1);
    // Another program wrote the same path since (same size, other content, other
    // time): the index reads the file instead of trusting the bytes it was given,
    // or their scan made ahead.
    let theirs = br#"{"texture": "textures/barn"}"#;
    assert_eq!(ours.len(), theirs.len());
    std::thread::sleep(std::time::Duration::from_millis(20));
    fs::write(dir.path().join("materials/new.material"), theirs).unwrap();
    let stale = [Written {
        path: "materials/new.material",
        size: ours.len() as u64,
        mtime_ns: written[0].mtime_ns,
        scanned: checker
            .index()
            .scan_for_write("materials/new.material", ours),
    }];
    checker.refresh_written(&[], &stale).unwrap();
    let entry = checker.index().file("materials/new.material").unwrap();
    assert_eq!(entry.hash, xxhash_rust::xxh3::xxh3_64(theirs));
    assert_eq!(checker.references_to("textures/bark.png").len(), before);
}

/// A reference another engine's file type holds (typed by a rule of
/// `kiln.project`), spelled otherwise than canonically, that names an existing
/// file: a non-canonical warning, as the docs say, since Kiln's compiler never
/// reads it; `deps` resolves it and a move patches it. The same spelling in a field
/// Kiln compiles (a mesh component's) stays an error. Before, both were "invalid
/// reference" errors, false ones on that engine's data.
#[test]
fn a_non_canonical_reference_of_another_engines_type_is_a_warning() {
    let dir = project();
    write_project(
        dir.path(),
        &[
            (
                "kiln.project",
                r#"{"boot_levels": ["levels/forest"], "references": {"sunit": {"mesh": "mesh"}}}"#
                    .to_owned(),
            ),
            (
                "props/barrel.sunit",
                r#"{"mesh": "meshes/Rock"}"#.to_owned(),
            ),
            ("meshes/Rock.mesh", "{}".to_owned()),
            (
                "levels/rocks.level",
                r#"{"entities": [{"id": "r", "components": {"mesh": {"mesh": "meshes/Rock"}}}]}"#
                    .to_owned(),
            ),
        ],
    );
    let checker = open(dir.path());
    let deps = checker.dependencies_of("props/barrel.sunit");
    assert_eq!(deps[0].target, Target::Resolved("meshes/Rock.mesh".into()));
    let findings = checker.findings();
    let about = |file: &str| -> Vec<&Finding> {
        findings
            .iter()
            .filter(|f| f.to_string().starts_with(file))
            .filter(|f| !matches!(f, Finding::Unused { .. }))
            .collect()
    };
    let foreign = about("props/barrel.sunit");
    assert!(
        matches!(foreign[..], [Finding::NonCanonicalReference { .. }]),
        "{foreign:?}"
    );
    assert!(!foreign[0].is_error());
    let own = about("levels/rocks.level");
    assert!(
        own.iter()
            .any(|f| matches!(f, Finding::InvalidReference { .. }) && f.is_error()),
        "{own:?}"
    );
}

/// A stale reference without extension whose old text named several files that
/// moved together (`sfx/a` for `sfx/a.sound` and `sfx/a.wav`, both moved to
/// `audio/`): every candidate gives the same new text, so it is reported as stale
/// with that text, and `check --fix` writes it. Files that moved apart leave it
/// alone: no one text names them all. Before, such a reference, held by a branch
/// made before the move, stayed broken with nothing said.
#[test]
fn a_stale_reference_to_files_that_moved_together_is_reported_and_fixed() {
    let dir = project();
    write_project(
        dir.path(),
        &[
            ("audio/a.sound", "{}".to_owned()),
            ("audio/a.wav", "RIFF".to_owned()),
            ("apart/b.sound", "{}".to_owned()),
            ("elsewhere/b.wav", "RIFF".to_owned()),
            (
                "kiln.redirects",
                "sfx/a.sound -> audio/a.sound\nsfx/a.wav -> audio/a.wav\nsfx/b.sound -> apart/b.sound\nsfx/b.wav -> elsewhere/b.wav\n"
                    .to_owned(),
            ),
            (
                "scripts/cues.json",
                r#"{"on_open": "sfx/a", "on_close": "sfx/b"}"#.to_owned(),
            ),
        ],
    );
    let checker = open(dir.path());
    let stale: Vec<(String, String)> = checker
        .findings()
        .into_iter()
        .filter_map(|f| match f {
            Finding::StaleRedirect {
                place, replacement, ..
            } if &*place.file == "scripts/cues.json" => {
                Some((place.pointer.to_string(), replacement))
            }
            _ => None,
        })
        .collect();
    assert_eq!(stale, [("/on_open".to_owned(), "audio/a".to_owned())]);
    let mut checker = checker;
    let plan = dependency_checker::ops::plan_redirect_fixes(&checker);
    dependency_checker::ops::apply_without_undo(&mut checker, &plan).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("scripts/cues.json")).unwrap(),
        r#"{"on_open": "audio/a", "on_close": "sfx/b"}"#
    );
}

/// What another engine's data needs from rules, through the whole checker: one
/// field whose type depends on a sibling `_type`, a field declared not to be a
/// reference, a field holding the full path with its extension, and a rule that
/// matches nothing, reported.
#[test]
fn conditional_excluding_and_full_path_rules_resolve_check_and_move() {
    let dir = project();
    write_project(
        dir.path(),
        &[
            (
                "kiln.project",
                r#"{"boot_levels": ["levels/forest"], "references": {"sunit": {
                    "material": [
                        {"type": "material", "when": {"_type": "mesh_renderer"}},
                        {"type": "physics", "when": {"_type": "collider"}}
                    ],
                    "label": null,
                    "texture_path": "*",
                    "/no/such/field": "mesh",
                    "/shared/set/only": {"type": "mesh", "optional": true},
                    "decal_material": {"type": "material", "when": {"_type": "decal"}}
                }}}"#
                    .to_owned(),
            ),
            (
                "props/barrel.sunit",
                r#"{"components": [
                    {"material": "surfaces/wood", "_type": "mesh_renderer"},
                    {"_type": "collider", "material": "surfaces/wood"}
                ],
                "label": "surfaces/wood",
                "texture_path": "textures/bark.png",
                "icon_path": "textures/gone.png"}"#
                    .to_owned(),
            ),
            ("surfaces/wood.material", "{}".to_owned()),
            ("surfaces/wood.physics", "{}".to_owned()),
            (
                "props/broken.sunit",
                r#"{"texture_path": "textures/missing.png"}"#.to_owned(),
            ),
            (
                "props/decal.sunit",
                r#"{"_type": "sticker", "decal_material": "decals/moss"}"#.to_owned(),
            ),
        ],
    );
    let mut checker = open(dir.path());
    let deps = checker.dependencies_of("props/barrel.sunit");
    let targets: Vec<(String, Target)> = deps
        .iter()
        .filter(|d| !d.place.pointer.ends_with("_type") && d.place.pointer != "/icon_path")
        .map(|d| (d.place.pointer.clone(), d.target.clone()))
        .collect();
    assert_eq!(
        targets,
        vec![
            (
                "/components/0/material".to_owned(),
                Target::Resolved("surfaces/wood.material".into())
            ),
            (
                "/components/1/material".to_owned(),
                Target::Resolved("surfaces/wood.physics".into())
            ),
            (
                "/texture_path".to_owned(),
                Target::Resolved("textures/bark.png".into())
            ),
        ],
        "{deps:?}"
    );
    let findings = checker.findings();
    let lines: Vec<String> = findings
        .iter()
        .filter(|f| !matches!(f, Finding::Unused { .. }))
        .map(|f| format!("{}: {f}", f.severity()))
        .collect();
    // `label` names two files by its text, but is declared no reference: not
    // ambiguous. A missing full path is an error; an undeclared one is no
    // reference at all.
    assert!(!lines.iter().any(|l| l.contains("ambiguous")), "{lines:#?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("error: props/broken.sunit")
                && l.contains("missing: textures/missing.png")),
        "{lines:#?}"
    );
    assert!(!lines.iter().any(|l| l.contains("gone.png")), "{lines:#?}");
    let unused: Vec<&Finding> = findings
        .iter()
        .filter(|f| matches!(f, Finding::UnusedRule { .. }))
        .collect();
    // One rule whose pattern matches nothing, one whose pattern matched but whose
    // condition never held: each says which.
    assert!(
        matches!(&unused[..], [
            Finding::UnusedRule { pattern: a, matched: 0, .. },
            Finding::UnusedRule { pattern: b, matched: 1, .. },
        ] if a == "/no/such/field" && b == "decal_material")
            || matches!(&unused[..], [
            Finding::UnusedRule { pattern: b, matched: 1, .. },
            Finding::UnusedRule { pattern: a, matched: 0, .. },
        ] if a == "/no/such/field" && b == "decal_material"),
        "{unused:?}"
    );
    let said: Vec<String> = unused.iter().map(|f| f.to_string()).collect();
    assert!(
        said.iter()
            .any(|s| s.contains("the pattern matches no field")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|s| s.contains("matches 1 string, but no case's condition held")),
        "{said:?}"
    );
    assert!(!unused[0].is_error());
    // The rule marked optional types nothing either, and is not reported.

    // A move patches the full path with its new full path, and the conditional
    // references with the path without extension.
    let plan = dependency_checker::ops::plan(
        &checker,
        &dependency_checker::ops::MoveRequest::new("textures/bark.png", "art/bark.png"),
    )
    .unwrap();
    dependency_checker::ops::apply(&mut checker, &plan).unwrap();
    let plan = dependency_checker::ops::plan(
        &checker,
        &dependency_checker::ops::MoveRequest::new("surfaces/wood.physics", "physics/wood.physics"),
    )
    .unwrap();
    dependency_checker::ops::apply(&mut checker, &plan).unwrap();
    let text = fs::read_to_string(dir.path().join("props/barrel.sunit")).unwrap();
    assert!(text.contains(r#""texture_path": "art/bark.png""#), "{text}");
    assert!(
        text.contains(r#"{"_type": "collider", "material": "physics/wood"}"#),
        "{text}"
    );
    assert!(
        text.contains(r#"{"material": "surfaces/wood", "_type": "mesh_renderer"}"#),
        "{text}"
    );
    assert!(text.contains(r#""label": "surfaces/wood""#), "{text}");
}
