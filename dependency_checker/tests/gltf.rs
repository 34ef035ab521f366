//! glTF files' `uri` references: indexed, reported, and patched on moves, in both
//! `.gltf` (JSON) and `.glb` (binary) files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod project_fixture;

use std::fs;
use std::path::Path;

use dependency_checker::CheckerError;
use dependency_checker::check::{Finding, Place};
use dependency_checker::ops::{
    Change, FileEdit, MovePlan, MoveRequest, apply, plan, plan_redirect_fixes,
};
use dependency_checker::resolve::Target;
use project_fixture::{check_as_loaded_from_cache, open, snapshot, write_project};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------
// Binary glTF, written and read here independently of the checker.

const JSON_CHUNK: u32 = 0x4E4F_534A;
const BIN_CHUNK: u32 = 0x004E_4942;

/// A `.glb` file: header, the JSON chunk padded with spaces, an optional BIN chunk.
fn glb(json: &str, bin: Option<&[u8]>) -> Vec<u8> {
    let mut json = json.as_bytes().to_vec();
    json.resize(json.len().next_multiple_of(4), b' ');
    let mut out = b"glTF".to_vec();
    out.extend(2u32.to_le_bytes());
    out.extend(0u32.to_le_bytes());
    out.extend((json.len() as u32).to_le_bytes());
    out.extend(JSON_CHUNK.to_le_bytes());
    out.extend(&json);
    if let Some(bin) = bin {
        out.extend((bin.len() as u32).to_le_bytes());
        out.extend(BIN_CHUNK.to_le_bytes());
        out.extend(bin);
    }
    let total = out.len() as u32;
    out[8..12].copy_from_slice(&total.to_le_bytes());
    out
}

/// Reads a `.glb` file back, checking its layout: the JSON chunk's text (without
/// trailing spaces: its padding) and the BIN chunk's bytes.
fn parse_glb(bytes: &[u8]) -> (String, Option<Vec<u8>>) {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!(&bytes[..4], b"glTF");
    assert_eq!(u32_at(4), 2);
    assert_eq!(u32_at(8) as usize, bytes.len(), "the header's total length");
    let json_len = u32_at(12) as usize;
    assert_eq!(json_len % 4, 0, "the JSON chunk is padded to 4 bytes");
    assert_eq!(u32_at(16), JSON_CHUNK);
    let json = std::str::from_utf8(&bytes[20..20 + json_len]).unwrap();
    let unpadded = json.trim_end_matches(' ');
    serde_json::from_str::<serde_json::Value>(json).expect("the JSON chunk parses");
    let rest = &bytes[20 + json_len..];
    let bin = (!rest.is_empty()).then(|| {
        let len = u32::from_le_bytes(rest[..4].try_into().unwrap()) as usize;
        assert_eq!(
            u32::from_le_bytes(rest[4..8].try_into().unwrap()),
            BIN_CHUNK
        );
        assert_eq!(rest.len(), 8 + len, "the BIN chunk ends the file");
        rest[8..].to_vec()
    });
    (unpadded.to_owned(), bin)
}

/// Percent-encodes a path for a URI as the glTF spec asks, independently of Kiln:
/// unreserved characters and `/` as they are, every other byte as `%XX`.
fn encode(path: &str, lower_hex: bool) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else if lower_hex {
            out.push_str(&format!("%{b:02x}"));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

// ---------------------------------------------------------------------------------
// The project.

const BARK: &str = "art/Bark Wood ü/bark.png";

/// A model with a buffer, two images and an embedded one; its texture is in a
/// folder whose name needs percent-encoding.
const TREE: &str = r#"{
  "asset": {"version": "2.0", "generator": "a tool that mentions art/bark.png"},
  "buffers": [{"byteLength": 16, "uri": "tree.bin"}],
  "images": [
    {"name": "bark", "uri": "../art/Bark%20Wood%20%C3%BC/bark.png"},
    {"uri": "leaf.png"},
    {"uri": "data:image/png;base64,iVBORw0KGgo="}
  ]
}
"#;

/// Another model using the same texture, written with lowercase escapes and `\/`.
const ROCK: &str = r#"{"asset":{"version":"2.0"},"images":[{"uri":"..\/art\/Bark%20Wood%20%c3%bc\/bark.png"},{"uri":"pebble.png"}]}"#;

/// The JSON of a binary model with its buffer in the BIN chunk.
const CRATE_JSON: &str = r#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":8}],"images":[{"uri":"../art/Bark%20Wood%20%C3%BC/bark.png"}]}"#;
const CRATE_BIN: &[u8] = &[0, 1, 2, 3, 0xFF, b' ', b'"', 0];

fn files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("kiln.project", br#"{"boot_levels": ["levels/forest"]}"#.to_vec()),
        (
            "levels/forest.level",
            br#"{"entities": [{"id": "tree", "components": {"mesh": {"mesh": "meshes/tree"}}}, {"id": "box", "components": {"mesh": {"mesh": "meshes/crate"}}}]}"#.to_vec(),
        ),
        ("meshes/tree.mesh", br#"{"shape": "cube", "gltf": "models/tree"}"#.to_vec()),
        ("meshes/crate.mesh", br#"{"shape": "cube", "glb": "props/crate"}"#.to_vec()),
        ("models/tree.gltf", TREE.as_bytes().to_vec()),
        ("models/tree.bin", vec![0; 16]),
        ("models/leaf.png", b"\x89PNG leaf".to_vec()),
        (BARK, b"\x89PNG bark".to_vec()),
        ("props/rock.gltf", ROCK.as_bytes().to_vec()),
        ("props/pebble.png", b"\x89PNG pebble".to_vec()),
        ("props/crate.glb", glb(CRATE_JSON, Some(CRATE_BIN))),
    ]
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), &files());
    dir
}

fn write_files(dir: &Path, files: &[(&str, Vec<u8>)]) {
    for (path, content) in files {
        let full = dir.join(path);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        fs::write(full, content).unwrap();
    }
}

fn read(dir: &Path, file: &str) -> Vec<u8> {
    fs::read(dir.join(file)).unwrap()
}

fn text(dir: &Path, file: &str) -> String {
    String::from_utf8(read(dir, file)).unwrap()
}

// ---------------------------------------------------------------------------------
// Indexing and reporting.

#[test]
fn gltf_uris_are_references_in_refs_and_deps() {
    let dir = project();
    let checker = open(dir.path());
    let refs: Vec<String> = checker
        .references_to(BARK)
        .iter()
        .map(|r| format!("{} \"{}\"", r.place, r.text))
        .collect();
    assert_eq!(
        refs,
        vec![
            "models/tree.gltf:5:29 (/images/0/uri) \"../art/Bark%20Wood%20%C3%BC/bark.png\"",
            // In a .glb file, the line and column of its JSON chunk.
            "props/crate.glb:1:74 (/images/0/uri) \"../art/Bark%20Wood%20%C3%BC/bark.png\"",
            "props/rock.gltf:1:45 (/images/0/uri) \"../art/Bark%20Wood%20%c3%bc/bark.png\"",
        ]
    );
    let deps: Vec<(String, String, Target)> = checker
        .dependencies_of("models/tree.gltf")
        .into_iter()
        .map(|r| (r.place.pointer, r.text, r.target))
        .collect();
    // The embedded image and the generator's text are not references.
    assert_eq!(
        deps,
        vec![
            (
                "/buffers/0/uri".into(),
                "tree.bin".into(),
                Target::Resolved("models/tree.bin".into())
            ),
            (
                "/images/0/uri".into(),
                "../art/Bark%20Wood%20%C3%BC/bark.png".into(),
                Target::Resolved(BARK.into())
            ),
            (
                "/images/1/uri".into(),
                "leaf.png".into(),
                Target::Resolved("models/leaf.png".into())
            ),
        ]
    );
    assert_eq!(
        checker.dependencies_of("props/crate.glb")[0].target,
        Target::Resolved(BARK.into())
    );
}

#[test]
fn files_only_a_reachable_gltf_uses_are_used() {
    let dir = project();
    let findings = open(dir.path()).findings();
    let unused: Vec<&str> = findings
        .iter()
        .filter_map(|f| match f {
            Finding::Unused { file } => Some(file.as_str()),
            _ => None,
        })
        .collect();
    // The level reaches meshes/tree.mesh -> models/tree.gltf -> its buffer and
    // images, and meshes/crate.mesh -> props/crate.glb; nothing reaches the rock
    // model, so neither it nor the pebble only it uses is used.
    assert_eq!(unused, vec!["props/pebble.png", "props/rock.gltf"]);
    assert!(
        findings.iter().all(|f| !f.is_error()),
        "no broken references: {findings:#?}"
    );
}

#[test]
fn uris_leaving_the_project_or_naming_nothing_are_broken_and_never_read() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("project");
    // What the URIs lead to outside the project: a FIFO, which would hang a read.
    kiln_core::os::make_fifo(&outer.path().join("secret.png")).unwrap();
    write_project(
        &root,
        &[
            ("kiln.project", "{}".into()),
            (
                "models/x.gltf",
                concat!(
                    "{\"images\": [\n",
                    "  {\"uri\": \"../../secret.png\"},\n",
                    "  {\"uri\": \"%2E%2E/sub/%2e%2e/../../secret.png\"},\n",
                    "  {\"uri\": \"/etc/passwd\"},\n",
                    "  {\"uri\": \"gone%20away.png\"}\n",
                    "]}\n"
                )
                .into(),
            ),
        ],
    );
    // If anything opened the FIFO, this would never answer.
    let (send, receive) = std::sync::mpsc::channel();
    let dir = root.clone();
    std::thread::spawn(move || {
        let checker = open(&dir);
        let _ = send.send((checker.findings(), checker.dependencies_of("models/x.gltf")));
    });
    let (findings, deps) = receive
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("indexing read the FIFO outside the project");
    let broken: Vec<String> = findings
        .iter()
        .filter(|f| f.is_error())
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        broken,
        vec![
            "models/x.gltf:2:11 (/images/0/uri): invalid URI: \"../../secret.png\" leads outside the project",
            "models/x.gltf:3:11 (/images/1/uri): invalid URI: \"%2E%2E/sub/%2e%2e/../../secret.png\" leads outside the project",
            "models/x.gltf:4:11 (/images/2/uri): invalid URI: \"/etc/passwd\" is an absolute path; a glTF URI is relative to the glTF file's folder",
            "models/x.gltf:5:11 (/images/3/uri): missing: models/gone away.png does not exist",
        ]
    );
    assert!(matches!(
        &findings.iter().find(|f| f.is_error()).unwrap(),
        Finding::InvalidUri { place, .. } if &*place.file == "models/x.gltf" && place.line == 2 && place.column == 11
    ));
    assert!(matches!(deps[3].target, Target::Missing(ref p) if &**p == "models/gone away.png"));
}

/// The same URI text names a different file from each folder: a check of an index
/// read from the cache, which resolves each spelling of a project path once,
/// resolves each URI from its own file's folder.
#[test]
fn the_same_uri_in_two_folders_names_two_files_when_checked_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let gltf = || "{\"images\": [{\"uri\": \"bark.png\"}]}".to_owned();
    write_project(
        dir.path(),
        &[
            ("kiln.project", "{}".into()),
            ("forest/tree.gltf", gltf()),
            ("forest/bark.png", "png".into()),
            ("town/house.gltf", gltf()),
            ("village/barn.gltf", gltf()),
            ("village/bark.png", "png".into()),
        ],
    );
    let checker = open(dir.path());
    let findings = check_as_loaded_from_cache(&checker);
    let missing: Vec<String> = findings.iter().map(ToString::to_string).collect();
    assert_eq!(
        missing,
        vec!["town/house.gltf:1:21 (/images/0/uri): missing: town/bark.png does not exist"]
    );
    assert_eq!(findings, checker.findings());
}

#[test]
fn a_truncated_or_garbled_glb_is_a_finding_not_a_panic() {
    let dir = project();
    let good = read(dir.path(), "props/crate.glb");
    let mut garbled = good.clone();
    garbled[12..16].copy_from_slice(&10_000u32.to_le_bytes());
    write_files(
        dir.path(),
        &[
            ("props/cut.glb", good[..good.len() - 3].to_vec()),
            ("props/garbled.glb", garbled),
            ("props/empty.glb", Vec::new()),
        ],
    );
    let findings = open(dir.path()).findings();
    let malformed: Vec<String> = findings
        .iter()
        .filter(|f| matches!(f, Finding::MalformedBinary { .. }))
        .map(|f| format!("{}: {f}", f.severity()))
        .collect();
    assert_eq!(
        malformed,
        vec![
            format!(
                "error: props/cut.glb: not a valid binary glTF file: the header says the file has {} bytes, it has {} (truncated, or data after its end); its references cannot be seen",
                good.len(),
                good.len() - 3
            ),
            "error: props/empty.glb: not a valid binary glTF file: truncated: 0 bytes, shorter than the 12-byte header; its references cannot be seen".to_owned(),
            format!(
                "error: props/garbled.glb: not a valid binary glTF file: truncated: the JSON chunk says it has 10000 bytes, {} follow; its references cannot be seen",
                good.len() - 20
            ),
        ]
    );
}

/// A patch aimed at a .glb whose layout is broken (a hand-made plan: a move never
/// plans one, since such a file has no references) is refused with the file named,
/// and nothing changes.
#[test]
fn patching_a_broken_glb_is_refused_and_changes_nothing() {
    let dir = project();
    let cut = read(dir.path(), "props/crate.glb")[..40].to_vec();
    write_files(dir.path(), &[("props/cut.glb", cut.clone())]);
    let mut checker = open(dir.path());
    let before = snapshot(dir.path());
    let edit = FileEdit {
        file: "props/cut.glb".into(),
        expected_hash: checker.index().file("props/cut.glb").unwrap().hash,
        changes: vec![Change {
            place: Place {
                file: "props/cut.glb".into(),
                line: 1,
                column: 1,
                pointer: "/asset".into(),
                entity: None,
                component: None,
            },
            span: (22, 27),
            old_text: "asset".into(),
            new_text: "other".into(),
        }],
    };
    match apply(&mut checker, &MovePlan::patches(vec![edit])) {
        Err(CheckerError::Malformed { file, message }) => {
            assert_eq!(file, "props/cut.glb");
            assert!(message.contains("the header says"), "{message}");
        }
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(snapshot(dir.path()), before);
}

// ---------------------------------------------------------------------------------
// Moves.

#[test]
fn renaming_a_texture_patches_every_gltf_that_uses_it() {
    let dir = project();
    let mut checker = open(dir.path());
    let before = snapshot(dir.path());
    let new = "art/Bark Wood ü/oak.png";
    let p = plan(&checker, &MoveRequest::new(BARK, new)).unwrap();
    let changes: Vec<(String, String, String)> = p
        .edits
        .iter()
        .flat_map(|e| &e.changes)
        .map(|c| {
            (
                c.place.file.to_string(),
                c.old_text.to_string(),
                c.new_text.to_string(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        vec![
            (
                "models/tree.gltf".into(),
                "../art/Bark%20Wood%20%C3%BC/bark.png".into(),
                "../art/Bark%20Wood%20%C3%BC/oak.png".into()
            ),
            (
                "props/crate.glb".into(),
                "../art/Bark%20Wood%20%C3%BC/bark.png".into(),
                "../art/Bark%20Wood%20%C3%BC/oak.png".into()
            ),
            (
                "props/rock.gltf".into(),
                "../art/Bark%20Wood%20%c3%bc/bark.png".into(),
                "../art/Bark%20Wood%20%C3%BC/oak.png".into()
            ),
        ]
    );
    let undo = apply(&mut checker, &p).unwrap();

    // Whole files, byte for byte: only the URIs changed (`\/` kept where written).
    assert_eq!(
        text(dir.path(), "models/tree.gltf"),
        TREE.replace(
            "../art/Bark%20Wood%20%C3%BC/bark.png",
            "../art/Bark%20Wood%20%C3%BC/oak.png"
        )
    );
    assert_eq!(
        text(dir.path(), "props/rock.gltf"),
        ROCK.replace(
            r"..\/art\/Bark%20Wood%20%c3%bc\/bark.png",
            r"..\/art\/Bark%20Wood%20%C3%BC\/oak.png"
        )
    );
    // The .glb: its JSON chunk rewritten and padded, both lengths right, the BIN
    // chunk the same bytes.
    let expected_json = CRATE_JSON.replace("/bark.png", "/oak.png");
    let patched = read(dir.path(), "props/crate.glb");
    assert_eq!(
        parse_glb(&patched),
        (expected_json.clone(), Some(CRATE_BIN.to_vec()))
    );
    assert_eq!(patched, glb(&expected_json, Some(CRATE_BIN)));
    assert_eq!(checker.references_to(new).len(), 3);
    assert!(checker.findings().iter().all(|f| !f.is_error()));

    // Undoing puts every byte back.
    let undo = undo.plan(&checker).unwrap();
    apply(&mut checker, &undo).unwrap();
    let after: Vec<_> = snapshot(dir.path())
        .into_iter()
        .filter(|(f, _)| f != "kiln.redirects")
        .collect();
    assert_eq!(after, before);
}

#[test]
fn moving_a_gltf_alone_rewrites_its_relative_uris() {
    let dir = project();
    let mut checker = open(dir.path());
    let p = plan(
        &checker,
        &MoveRequest::new("models/tree.gltf", "models/lod/high/tree.gltf"),
    )
    .unwrap();
    apply(&mut checker, &p).unwrap();
    // Its buffer and images stayed behind: the URIs climb to them; the embedded one
    // and everything else is as it was.
    assert_eq!(
        text(dir.path(), "models/lod/high/tree.gltf"),
        TREE.replace("\"tree.bin\"", "\"../../tree.bin\"")
            .replace(
                "\"../art/Bark%20Wood%20%C3%BC/bark.png\"",
                "\"../../../art/Bark%20Wood%20%C3%BC/bark.png\""
            )
            .replace("\"leaf.png\"", "\"../../leaf.png\"")
    );
    // The mesh's typed reference followed it too.
    assert_eq!(
        text(dir.path(), "meshes/tree.mesh"),
        r#"{"shape": "cube", "gltf": "models/lod/high/tree"}"#
    );
    let deps = checker.dependencies_of("models/lod/high/tree.gltf");
    let targets: Vec<&Target> = deps.iter().map(|r| &r.target).collect();
    assert_eq!(
        targets,
        vec![
            &Target::Resolved("models/tree.bin".into()),
            &Target::Resolved(BARK.into()),
            &Target::Resolved("models/leaf.png".into()),
        ]
    );

    // A .glb alone, to the project root: its JSON chunk is rewritten.
    let p = plan(&checker, &MoveRequest::new("props/crate.glb", "crate.glb")).unwrap();
    apply(&mut checker, &p).unwrap();
    let expected_json = CRATE_JSON.replace("../art/", "art/");
    assert_eq!(
        parse_glb(&read(dir.path(), "crate.glb")),
        (expected_json, Some(CRATE_BIN.to_vec()))
    );
    assert!(checker.findings().iter().all(|f| !f.is_error()));
}

#[test]
fn moving_a_gltf_and_a_texture_it_uses_at_once() {
    let dir = project();
    let mut checker = open(dir.path());
    let before = snapshot(dir.path());
    let request = MoveRequest {
        pairs: vec![
            ("props/rock.gltf".into(), "rock.gltf".into()),
            ("props/pebble.png".into(), "stones/pebble.png".into()),
        ],
        undoes: None,
    };
    let p = plan(&checker, &request).unwrap();
    let undo = apply(&mut checker, &p).unwrap();
    assert_eq!(
        text(dir.path(), "rock.gltf"),
        ROCK.replace(
            r"..\/art\/Bark%20Wood%20%c3%bc\/bark.png",
            r"art\/Bark%20Wood%20%C3%BC\/bark.png"
        )
        // Each string keeps its own spelling of `/`.
        .replace("\"pebble.png\"", "\"stones/pebble.png\"")
    );
    // Undoing gives back the URIs as they were written (lowercase escapes too).
    let undo = undo.plan(&checker).unwrap();
    apply(&mut checker, &undo).unwrap();
    let after: Vec<_> = snapshot(dir.path())
        .into_iter()
        .filter(|(f, _)| f != "kiln.redirects")
        .collect();
    assert_eq!(after, before);
}

#[test]
fn moving_the_folder_with_a_gltf_and_everything_it_uses_patches_nothing() {
    let dir = project();
    let kit = [
        (
            "kit/crate.gltf",
            br#"{"buffers": [{"uri": "crate.bin"}], "images": [{"uri": "tex/crate%20diffuse.png"}, {"uri": "./tex/../tex/normal.png"}]}"#.to_vec(),
        ),
        ("kit/crate.bin", vec![1; 8]),
        ("kit/tex/crate diffuse.png", b"png".to_vec()),
        ("kit/tex/normal.png", b"png".to_vec()),
        (
            "kit/crate.glb",
            glb(r#"{"buffers": [{"uri": "crate.bin"}]}"#, Some(&[9; 12])),
        ),
    ];
    write_files(dir.path(), &kit);
    let mut checker = open(dir.path());
    let before = snapshot(dir.path());
    let p = plan(&checker, &MoveRequest::new("kit", "assets/kits/kit")).unwrap();
    assert_eq!(p.moves.len(), 5);
    assert!(p.edits.is_empty(), "nothing to patch: {:#?}", p.edits);
    apply(&mut checker, &p).unwrap();
    // Every file as it was, under its new path.
    let moved = |f: &str| match f.strip_prefix("kit/") {
        Some(rest) => format!("assets/kits/kit/{rest}"),
        None => f.to_owned(),
    };
    let expected: Vec<(String, Vec<u8>)> = {
        let mut v: Vec<_> = before
            .into_iter()
            .filter(|(f, _)| f != "kiln.redirects")
            .map(|(f, b)| (moved(&f), b))
            .collect();
        v.sort();
        v
    };
    let after: Vec<_> = snapshot(dir.path())
        .into_iter()
        .filter(|(f, _)| f != "kiln.redirects")
        .collect();
    assert_eq!(after, expected);
    for model in ["assets/kits/kit/crate.gltf", "assets/kits/kit/crate.glb"] {
        let deps = checker.dependencies_of(model);
        assert!(!deps.is_empty());
        assert!(
            deps.iter().all(
                |r| matches!(&r.target, Target::Resolved(t) if t.starts_with("assets/kits/kit/"))
            ),
            "{deps:#?}"
        );
    }
}

#[test]
fn a_uri_to_a_moved_texture_arriving_later_is_fixed_by_check_fix() {
    let dir = project();
    let mut checker = open(dir.path());
    let p = plan(&checker, &MoveRequest::new(BARK, "textures/bark.png")).unwrap();
    apply(&mut checker, &p).unwrap();
    // A model from another branch, still naming the texture where it was.
    let late = r#"{"images": [{"uri": "../art/Bark%20Wood%20%C3%BC/bark.png"}]}"#;
    write_files(
        dir.path(),
        &[("models/late.gltf", late.as_bytes().to_vec())],
    );
    checker.rescan().unwrap();
    let findings = checker.findings();
    let stale: Vec<&Finding> = findings
        .iter()
        .filter(|f| matches!(f, Finding::StaleRedirect { .. }))
        .collect();
    assert!(
        matches!(stale.as_slice(), [Finding::StaleRedirect { replacement, .. }] if replacement == "../textures/bark.png"),
        "{stale:#?}"
    );
    let fixes = plan_redirect_fixes(&checker);
    apply(&mut checker, &fixes).unwrap();
    assert_eq!(
        text(dir.path(), "models/late.gltf"),
        late.replace(
            "../art/Bark%20Wood%20%C3%BC/bark.png",
            "../textures/bark.png"
        )
    );
    assert!(checker.findings().iter().all(|f| !f.is_error()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever the formatting, the folder names and the URIs' spelling, renaming a
    /// texture changes exactly the URI that names it, in a `.gltf` and in a `.glb`;
    /// every other byte stays (the `.glb` is the same JSON, re-padded, with its BIN
    /// chunk), and undoing the rename gives back both files byte for byte.
    #[test]
    fn patching_a_gltf_leaves_every_other_byte_identical(
        folder in "[a-zA-Z0-9 %#?é_~-][a-zA-Z0-9 .%#?é_~-]{0,7}",
        gap in "[ \n\t]{0,3}",
        tail in "[ \n]{0,6}",
        lower_hex in any::<bool>(),
        escaped_slash in any::<bool>(),
        other in "[a-z]{1,8}",
        bin in prop::collection::vec(any::<u8>(), 0..12),
        new_name in "[a-z0-9_]{1,12}",
    ) {
        // Renaming to the same name is no move.
        prop_assume!(new_name != "t");
        // A folder named as editors name their backups (`a~`, `#a#`) is not the
        // project's (see `kiln_core::fs::is_scratch_name`).
        prop_assume!(!kiln_core::fs::is_scratch_name(&folder));
        let dir = tempfile::tempdir().unwrap();
        let texture = format!("art/{folder}/t.png");
        let uri_in = |path: &str| {
            let uri = encode(path, lower_hex);
            if escaped_slash { uri.replace('/', "\\/") } else { uri }
        };
        let template = format!(
            "{{{gap}\"images\":{gap}[{{\"name\": \"../art/{other}/t.png\", \"uri\":{gap}\"@\"}},{gap}{{\"uri\": \"{other}.png\"}}],{gap}\"buffers\": [{{\"uri\": \"data:,{other}\"}}]{gap}}}{tail}"
        );
        let gltf = template.replace('@', &uri_in(&format!("../{texture}")));
        let bin_chunk = (!bin.is_empty()).then(|| {
            let mut b = bin.clone();
            b.resize(b.len().next_multiple_of(4), 0);
            b
        });
        write_files(dir.path(), &[
            ("kiln.project", b"{}".to_vec()),
            (&texture, b"png".to_vec()),
            ("models/m.gltf", gltf.clone().into_bytes()),
            ("models/m.glb", glb(&gltf, bin_chunk.as_deref())),
        ]);
        let mut checker = open(dir.path());
        let before = snapshot(dir.path());
        prop_assert_eq!(checker.references_to(&texture).len(), 2);
        let new = format!("art/{folder}/{new_name}.png");
        let p = plan(&checker, &MoveRequest::new(&texture, &new)).unwrap();
        let undo = apply(&mut checker, &p).unwrap();
        // Kiln writes uppercase escapes.
        let expected = template.replace('@', &{
            let uri = encode(&format!("../{new}"), false);
            if escaped_slash { uri.replace('/', "\\/") } else { uri }
        });
        prop_assert_eq!(text(dir.path(), "models/m.gltf"), expected.clone());
        let patched = read(dir.path(), "models/m.glb");
        let (json, bin_after) = parse_glb(&patched);
        prop_assert_eq!(bin_after, bin_chunk.clone());
        prop_assert_eq!(json.trim_end_matches(' '), expected.trim_end_matches(' '));
        if !expected.ends_with(' ') {
            // The minimal padding, as the glTF writer made it.
            prop_assert_eq!(patched, glb(&expected, bin_chunk.as_deref()));
        }
        prop_assert_eq!(checker.references_to(&new).len(), 2);
        let undo = undo.plan(&checker).unwrap();
        apply(&mut checker, &undo).unwrap();
        let restored: Vec<_> = snapshot(dir.path())
            .into_iter()
            .filter(|(f, _)| f != "kiln.redirects")
            .collect();
        prop_assert_eq!(restored, before);
    }
}
