//! Reference extraction from one file's bytes, without building a JSON tree.
//!
//! A small recursive-descent scanner walks the JSON once, keeping the path of keys and
//! indices to the current value. Each string value is classified by the registry's
//! schemas: a typed reference (`"material": "materials/bark"` in a mesh component means
//! a `.material`), a field known not to be a reference (an entity's `name`), or
//! uncovered (an unknown field, a third-party file) where any string that is a
//! canonical path is kept as a *generic* candidate, resolved later against the files
//! that exist. In glTF files (`.gltf`, and the JSON chunk of a `.glb`) the `uri` of
//! each buffer and image is a reference of its own kind, a relative URI (see
//! [`Naming`] and [`gltf`]). Every reference keeps the byte span of its text,
//! so a rename can patch exactly those bytes and leave the rest of the file untouched.

mod classify;
mod json;
mod resume;
pub mod rules;
mod scanner;
mod store;

use kiln_core::Registry;
use kiln_core::registry::ResourceFormat;

use classify::meant_as_json;
pub use resume::{LevelLayout, LevelScan, scan_level};
pub use rules::{DeclaredRules, PathSegment};
use scanner::{BOM, EntityMarks, Scanner, Schema};
use store::NO_TEXT;
pub use store::{FULL_PATH, FileScan, Naming, RawReference, RefView, ScanError};
pub(crate) use store::{LastStored, typed_name};

/// A fingerprint of everything that decides how files are scanned: the component
/// and resource schemas (names, fields, kinds) and the project's declared
/// reference rules. Scans made under another fingerprint classify references
/// otherwise: nothing of them is reused.
pub fn fingerprint(registry: &Registry, rules: &DeclaredRules) -> u64 {
    let mut text = rules.fingerprint().to_owned();
    for c in registry.components() {
        text.push_str(&format!("|{}:{}:{:?}", c.name, c.multiple, c.fields));
    }
    for r in registry.resource_types() {
        text.push_str(&format!("|{}:{:?}", r.extension, r.format));
    }
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

/// Extracts references from a file of type `ext` (its extension). Files of binary
/// types yield nothing; files of unregistered types are scanned generically (with
/// the project's declared `rules`) if they are JSON and ignored otherwise.
pub fn scan_file(registry: &Registry, rules: &DeclaredRules, ext: &str, bytes: &[u8]) -> FileScan {
    scan_file_with(&mut ScanScratch::default(), (registry, rules), ext, bytes)
}

/// The buffers a scan fills, kept from one file to the next by a thread that scans
/// many: grown afresh for every file, then shrunk, they were most of the kernel's
/// page clearing in a check with no cache (a fifth of its time at 20,000 files).
#[derive(Debug, Default)]
pub struct ScanScratch {
    /// The last file's scan, in the buffers it grew.
    scan: FileScan,
    ref_entity: Vec<u32>,
}

impl ScanScratch {
    /// Empties the last scan, keeping its buffers.
    fn clear(&mut self) -> &FileScan {
        self.scan.strings.clear();
        self.scan.records.clear();
        self.scan.error = None;
        &self.scan
    }
}

/// [`scan_file`], filling `scratch`'s buffers rather than fresh ones; the scan
/// keeps exact copies of what it found (every scan of a project may be kept, and
/// without the room left by growing, a check of 100,000 files peaked 7% lower).
pub fn scan_file_with(
    scratch: &mut ScanScratch,
    rules: (&Registry, &DeclaredRules),
    ext: &str,
    bytes: &[u8],
) -> FileScan {
    // A clone is exactly as long as what it copies.
    scan_file_in(scratch, rules, ext, bytes).clone()
}

/// [`scan_file`], the scan left in `scratch`'s buffers: for a caller that only reads
/// it (encodes it, say) before the next file.
pub fn scan_file_in<'s>(
    scratch: &'s mut ScanScratch,
    (registry, rules): (&Registry, &DeclaredRules),
    ext: &str,
    bytes: &[u8],
) -> &'s FileScan {
    let schema = match registry.resource_type(ext).map(|t| &t.format) {
        Some(ResourceFormat::Binary) => return scratch.clear(),
        Some(ResourceFormat::Gltf) if kiln_core::gltf::is_binary(ext, bytes) => {
            scan_glb(scratch, registry, rules, ext, bytes);
            return &scratch.scan;
        }
        Some(ResourceFormat::Gltf) => Schema::Gltf,
        Some(ResourceFormat::Entities) => Schema::Entities,
        Some(ResourceFormat::Json(fields)) => Schema::Fields(fields),
        None => Schema::Generic,
    };
    scan_json(scratch, (registry, rules), ext, schema, bytes);
    &scratch.scan
}

/// Scans a binary glTF file: its JSON chunk, with spans from the start of the file
/// (lines and columns are the JSON chunk's). A file whose layout is wrong is an
/// error without a line.
fn scan_glb(
    scratch: &mut ScanScratch,
    registry: &Registry,
    rules: &DeclaredRules,
    ext: &str,
    bytes: &[u8],
) {
    let layout = match kiln_core::gltf::glb_layout(bytes) {
        Ok(layout) => layout,
        Err(message) => {
            scratch.clear();
            scratch.scan.error = Some(ScanError {
                line: 0,
                column: 0,
                message: format!("not a valid binary glTF file: {message}"),
            });
            return;
        }
    };
    let json = &bytes[layout.json.clone()];
    scan_json(scratch, (registry, rules), ext, Schema::Gltf, json);
    let scan = &mut scratch.scan;
    // The chunk ends within the file, whose length fits a u32 (the header's).
    let shift = layout.json.start as u32;
    for r in &mut scan.records {
        r.span = (r.span.0 + shift, r.span.1 + shift);
    }
    if let Some(e) = &mut scan.error {
        e.message = format!("in the JSON chunk: {}", e.message);
    }
}

/// Scans JSON text under `schema`, into `scratch`'s scan.
fn scan_json(
    scratch: &mut ScanScratch,
    rules: (&Registry, &DeclaredRules),
    ext: &str,
    schema: Schema,
    bytes: &[u8],
) {
    scan_json_marking(scratch, rules, ext, schema, bytes, None);
}

/// [`scan_json`], marking where a level's entities end if `marks` is given:
/// returns them.
fn scan_json_marking(
    scratch: &mut ScanScratch,
    (registry, rules): (&Registry, &DeclaredRules),
    ext: &str,
    schema: Schema,
    bytes: &[u8],
    marks: Option<EntityMarks>,
) -> Option<EntityMarks> {
    let start = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    let applying = rules.applies_to(ext).then_some(rules);
    let mut s = Scanner::new(
        scratch,
        (registry, applying),
        (ext, schema),
        (bytes, "", start),
    );
    s.marks = marks;
    let result = s
        .check_utf8()
        .and_then(|_| s.skip_ws())
        .and_then(|_| s.value(0))
        .and_then(|_| s.skip_ws())
        .and_then(|_| {
            if s.pos < bytes.len() {
                Err(s.error("trailing characters after the JSON value"))
            } else {
                Ok(())
            }
        });
    let Scanner {
        mut scan,
        mut ref_entity,
        entity_ids,
        pending,
        marks,
        ..
    } = s;
    match result {
        Ok(()) => {
            if !pending.is_empty() {
                let dropped =
                    classify::decide_pending(&mut scan, (rules, ext), &bytes[start..], &pending);
                let mut k = 0;
                scan.records.retain(|_| {
                    k += 1;
                    dropped.binary_search(&(k - 1)).is_err()
                });
                let mut k = 0;
                ref_entity.retain(|_| {
                    k += 1;
                    dropped.binary_search(&(k - 1)).is_err()
                });
            }
            attach_entity_ids(&mut scan, &ref_entity, &entity_ids);
            // A merge left conflicts in it: an error (naming each) until they are
            // resolved; its references stay known, so moves still patch them.
            if let Ok(text) = std::str::from_utf8(&bytes[start..])
                && kiln_core::conflict::may_have_conflicts(text)
            {
                let found = kiln_core::conflict::find_conflicts(text, ext);
                if let Some((_, line, column)) = found.first() {
                    scan.error = Some(ScanError {
                        line: *line as u32,
                        column: *column as u32,
                        message: kiln_core::level::conflicts_message(&found),
                    });
                }
            }
        }
        // A third-party file that is not JSON (a script, a sound) has no references
        // we can see, and that is no problem.
        Err(_) if matches!(schema, Schema::Generic) && !meant_as_json(rules, ext, bytes) => {
            scan.strings.clear();
            scan.records.clear();
        }
        Err(error) => {
            scan.strings.clear();
            scan.records.clear();
            scan.error = Some(error);
        }
    }
    let marked = scan.error.is_none().then_some(marks).flatten();
    scratch.scan = scan;
    scratch.ref_entity = ref_entity;
    marked
}

/// Entity ids may come after the components in an entity object: they are
/// attached to the references (`ref_entity` holds each one's entity index) once
/// the entities are read.
fn attach_entity_ids(scan: &mut FileScan, ref_entity: &[u32], entity_ids: &[Option<String>]) {
    let mut last = NO_TEXT;
    for (k, &n) in ref_entity.iter().enumerate() {
        if let Some(Some(id)) = entity_ids.get(n as usize) {
            let range = scan.intern(id, &mut last);
            if let Some(record) = scan.records.get_mut(k) {
                record.entity = range;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use json::valid_number;

    fn scan(ext: &str, text: &str) -> FileScan {
        scan_file(
            &Registry::with_builtins(),
            &DeclaredRules::default(),
            ext,
            text.as_bytes(),
        )
    }

    #[test]
    fn one_scratch_for_many_files_scans_each_as_a_fresh_one_would() {
        let files = [
            (
                "level",
                r#"{"entities": [{"id": "a", "components": {"mesh": {"material": "materials/bark"}}}]}"#,
            ),
            (
                "json",
                r#"{"x": "textures/a.png", "y": ["units/b", "levels/c.level"]}"#,
            ),
            ("level", r#"{"entities": [{"id": "broken""#),
            ("json", "not json at all"),
            ("material", r#"{"texture": "textures/leaf"}"#),
            ("json", "[]"),
            (
                "level",
                r#"{"entities": [{"components": {"mesh": {"material": "m/x"}}, "id": "late"}]}"#,
            ),
        ];
        let (registry, rules) = (Registry::with_builtins(), DeclaredRules::default());
        let mut scratch = ScanScratch::default();
        for round in 0..2 {
            for (ext, text) in files {
                let reused =
                    scan_file_with(&mut scratch, (&registry, &rules), ext, text.as_bytes());
                let fresh = scan(ext, text);
                assert_eq!(reused, fresh, "round {round}: {text}");
                assert_eq!(reused.references(), fresh.references());
                // Kept exactly: no room left over from the scratch's growth.
                assert_eq!(reused.strings.capacity(), reused.strings.len());
                assert_eq!(reused.records.capacity(), reused.records.len());
            }
        }
    }

    #[test]
    fn ini_and_toml_files_are_not_broken_json() {
        let registry = Registry::with_builtins();
        let rules = DeclaredRules::default();
        for text in [
            "[package]\nname = \"wind\"\n",
            "\n[[bin]]\npath = \"x\"\n",
            "[Graphics.Quality]\nlevel=3\n",
        ] {
            let scan = scan_file(&registry, &rules, "toml", text.as_bytes());
            assert!(scan.error.is_none(), "{text:?}: {:?}", scan.error);
        }
        // Broken JSON that opens like an array is still reported.
        for text in ["[\"a\", ", "{\"a\": }", "[1, 2"] {
            let scan = scan_file(&registry, &rules, "data", text.as_bytes());
            assert!(scan.error.is_some(), "{text:?}");
        }
    }

    #[test]
    fn level_references_are_typed_and_located() {
        let text = r#"{
  "entities": [
    {
      "components": {
        "mesh": [{"mesh": "meshes/cube", "material": "materials/bark"}],
        "transform": {"position": [0, 1, 0]},
        "third_party": {"sound": "sounds/wind.wav"}
      },
      "id": "tree",
      "name": "textures/not_a_reference"
    },
    {"id": "lamp", "prefab": "units/lamp", "overrides": {"head/glass": {"mesh": {"material": "materials/red"}}}}
  ]
}"#;
        let scan = scan("level", text);
        assert_eq!(scan.error, None);
        let refs = scan.references();
        let got: Vec<_> = refs
            .iter()
            .map(|r| {
                (
                    r.text.as_str(),
                    r.expected_type.as_deref(),
                    r.line,
                    r.pointer.as_str(),
                    r.entity.as_deref(),
                    r.component.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "meshes/cube",
                    Some("mesh"),
                    5,
                    "/entities/0/components/mesh/0/mesh",
                    Some("tree"),
                    Some("mesh")
                ),
                (
                    "materials/bark",
                    Some("material"),
                    5,
                    "/entities/0/components/mesh/0/material",
                    Some("tree"),
                    Some("mesh")
                ),
                (
                    "sounds/wind.wav",
                    None,
                    7,
                    "/entities/0/components/third_party/sound",
                    Some("tree"),
                    Some("third_party")
                ),
                (
                    "units/lamp",
                    Some("unit"),
                    12,
                    "/entities/1/prefab",
                    Some("lamp"),
                    None
                ),
                (
                    "materials/red",
                    Some("material"),
                    12,
                    "/entities/1/overrides/head~1glass/mesh/material",
                    Some("lamp"),
                    Some("mesh")
                ),
            ]
        );
        for r in &scan.references() {
            assert_eq!(&text[r.span.0 as usize..r.span.1 as usize], r.text);
        }
    }

    #[test]
    fn json_resource_fields_and_lists() {
        let m = scan(
            "material",
            r#"{"color": [1, 0, 0, 1], "texture": "textures/bark", "notes": "docs/material_guide.txt"}"#,
        );
        let refs = m.references();
        let got: Vec<_> = refs
            .iter()
            .map(|r| (r.text.as_str(), r.expected_type.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("textures/bark", Some("png")),
                ("docs/material_guide.txt", None)
            ]
        );
        let p = scan(
            "project",
            r#"{"name": "demo", "boot_levels": ["levels/a", "levels/b"]}"#,
        );
        let refs = p.references();
        let got: Vec<_> = refs
            .iter()
            .map(|r| (r.text.as_str(), r.pointer.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("levels/a", "/boot_levels/0"),
                ("levels/b", "/boot_levels/1")
            ]
        );
    }

    #[test]
    fn unknown_files_are_generic_and_non_json_is_ignored() {
        let s = scan(
            "json",
            r#"{"tool": {"inputs": ["textures/bark.png", "Not A Path", "levels/forest"]}}"#,
        );
        let refs = s.references();
        let got: Vec<_> = refs.iter().map(|r| r.text.as_str()).collect();
        // Any string that could be a file's path is a candidate, whatever its spelling;
        // the graph keeps those that name a file.
        assert_eq!(
            got,
            vec!["textures/bark.png", "Not A Path", "levels/forest"]
        );
        assert_eq!(scan("txt", "hello { world"), FileScan::default());
        assert_eq!(scan("lua", "return {}"), FileScan::default());
        assert_eq!(scan("png", "\u{89}PNG"), FileScan::default());
    }

    #[test]
    fn strings_that_cannot_name_a_file_are_not_candidates() {
        let s = scan(
            "json",
            r#"["/etc/passwd", "../up", "a//b", "a/./b", ".git/config", ".kiln/index.bin", "build/x.bin", "a/.hidden", "", "ok/Path With Spaces.PNG", "textures\/bark.png"]"#,
        );
        let refs = s.references();
        let got: Vec<_> = refs.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(got, vec!["ok/Path With Spaces.PNG", "textures/bark.png"]);
    }

    #[test]
    fn third_party_json_that_does_not_parse_reports_where() {
        let s = scan("json", "{\n  \"a\": [1, 2,]\n}");
        let e = s.error.unwrap();
        assert_eq!((e.line, e.column), (2, 14));
        let s = scan("physics_config", "  [\"a\" \"b\"]");
        assert!(s.error.is_some());
        // JSON that serde_json rejects is rejected here too.
        for bad in ["[\"a\tb\"]", "[\"\\x\"]", "[\"\\ud800\"]", "{\"a\": tru}"] {
            assert!(scan("json", bad).error.is_some(), "{bad}");
        }
        let mut invalid_utf8 = b"[\"a".to_vec();
        invalid_utf8.extend([0xff, b'"', b']']);
        assert!(
            scan_file(
                &Registry::with_builtins(),
                &DeclaredRules::default(),
                "json",
                &invalid_utf8
            )
            .error
            .is_some()
        );
    }

    #[test]
    fn duplicate_keys_in_kilns_own_files_are_errors_with_their_place() {
        let s = scan(
            "level",
            "{\"entities\": [{\"id\": \"a\", \"components\": {\"transform\": {\n  \"position\": [0, 0, 0],\n  \"position\": [1, 1, 1]}}}]}",
        );
        let e = s.error.unwrap();
        assert_eq!((e.line, e.column), (3, 3));
        assert!(e.message.contains("duplicate key \"position\""), "{e:?}");
        // Same keys in different objects are fine; foreign data is read as it is.
        let ok = scan("level", r#"{"entities": [{"id": "a"}, {"id": "b"}]}"#);
        assert_eq!(ok.error, None);
        assert_eq!(scan("json", r#"{"a": "x", "a": "y"}"#).error, None);
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let s = scan("json", "\u{feff}{\"inputs\": [\"textures/bark.png\"]}");
        assert_eq!(s.error, None);
        let r = &s.references()[0];
        assert_eq!(r.text, "textures/bark.png");
        assert_eq!(r.span, (16, 33));
    }

    #[test]
    fn declared_rules_type_strings_where_no_schema_decides() {
        let rules = DeclaredRules::new(
            &serde_json::from_str(
                r#"{"unit": {"/components/*/data/mesh_resource": "mesh"}, "*": {"material": "material", "name": "material"}}"#,
            )
            .unwrap(),
        );
        let registry = Registry::with_builtins();
        let foreign = r#"{"components": {"c1": {"data": {"mesh_resource": "units/props/barrel", "material": "units/props/barrel", "other": "units/props/barrel"}}}}"#;
        // `unit` is Kiln's own prefab type; a foreign project's `.sunit` shows the rule.
        let rules_for_sunit = DeclaredRules::new(
            &serde_json::from_str(r#"{"sunit": {"/components/*/data/mesh_resource": "mesh"}, "*": {"material": "material", "name": "material"}}"#).unwrap(),
        );
        let s = scan_file(&registry, &rules_for_sunit, "sunit", foreign.as_bytes());
        let got: Vec<_> = s
            .references()
            .into_iter()
            .map(|r| (r.pointer, r.expected_type))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "/components/c1/data/mesh_resource".to_owned(),
                    Some("mesh".to_owned())
                ),
                (
                    "/components/c1/data/material".to_owned(),
                    Some("material".to_owned())
                ),
                ("/components/c1/data/other".to_owned(), None),
            ]
        );
        // In a level, a third-party component's field follows the rules; an entity's
        // name and a mesh component's fields keep their built-in meaning.
        let level = r#"{"entities": [{"id": "a", "name": "materials/x", "components": {"mesh": {"material": "materials/m"}, "fx": {"material": "materials/fx"}}}]}"#;
        let s = scan_file(&registry, &rules, "level", level.as_bytes());
        let got: Vec<_> = s
            .references()
            .into_iter()
            .map(|r| (r.text, r.expected_type))
            .collect();
        assert_eq!(
            got,
            vec![
                ("materials/m".to_owned(), Some("material".to_owned())),
                ("materials/fx".to_owned(), Some("material".to_owned())),
            ]
        );
    }

    /// Another engine's components, `{"_type": "actor", "data": {...}}`: the rule
    /// tests the type of the object around the field's (`../_type`), through a
    /// list in between too; a case without `when` is the catch-all.
    #[test]
    fn a_condition_on_the_enclosing_objects_type() {
        let rules = DeclaredRules::new(
            &serde_json::from_str(
                r#"{"sunit": {
                    "material": [
                        {"type": "material", "when": {"../_type": "actor"}},
                        {"type": "physics_material", "when": {"../../_type": "body"}},
                        {"type": null}
                    ]
                }}"#,
            )
            .unwrap(),
        );
        let registry = Registry::with_builtins();
        let foreign = r#"{
            "components": [
                {"_type": "actor", "data": {"material": "materials/bark"}},
                {"_type": "body", "data": {"shapes": [{"material": "physics/ice"}]}},
                {"_type": "light", "data": {"material": "materials/glow"}},
                {"_type": "actor", "material": "materials/outside"}
            ]
        }"#;
        let s = scan_file(&registry, &rules, "sunit", foreign.as_bytes());
        assert!(s.error.is_none(), "{:?}", s.error);
        let got: Vec<_> = s
            .references()
            .into_iter()
            .filter(|r| !r.pointer.ends_with("/_type"))
            .map(|r| (r.pointer, r.expected_type))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "/components/0/data/material".to_owned(),
                    Some("material".to_owned())
                ),
                (
                    "/components/1/data/shapes/0/material".to_owned(),
                    Some("physics_material".to_owned())
                ),
            ],
            "the light's and the field directly in an actor are left by the catch-all"
        );
    }

    /// One field, two meanings by a sibling that may come before or after it; a
    /// field declared not to be a reference; a field holding a full path.
    #[test]
    fn rules_with_conditions_exclusions_and_full_paths() {
        let rules = DeclaredRules::new(
            &serde_json::from_str(
                r#"{"sunit": {
                    "material": [
                        {"type": "material", "when": {"_type": "mesh_renderer"}},
                        {"type": "physics_material", "when": {"_type": ["collider", "rigid_body"]}}
                    ],
                    "/overrides/*/material": "material",
                    "debug_name": null,
                    "texture_path": "*"
                }}"#,
            )
            .unwrap(),
        );
        let registry = Registry::with_builtins();
        let foreign = r#"{
            "components": [
                {"_type": "mesh_renderer", "material": "materials/bark"},
                {"material": "physics/ice", "_type": "collider"},
                {"_type": "light", "material": "materials/glow"},
                {"_type": "decal", "material": "no file here!"}
            ],
            "overrides": {"o1": {"material": "materials/moss"}},
            "debug_name": "materials/bark",
            "texture_path": "textures/bark.png"
        }"#;
        let s = scan_file(&registry, &rules, "sunit", foreign.as_bytes());
        assert!(s.error.is_none(), "{:?}", s.error);
        let got: Vec<_> = s
            .references()
            .into_iter()
            // `_type` strings are generic candidates, as any string that could name
            // a file.
            .filter(|r| !r.pointer.ends_with("/_type"))
            .map(|r| (r.pointer, r.text, r.expected_type))
            .collect();
        let typed = |p: &str, t: &str, ty: Option<&str>| {
            (p.to_owned(), t.to_owned(), ty.map(str::to_owned))
        };
        assert_eq!(
            got,
            vec![
                typed("/components/0/material", "materials/bark", Some("material")),
                typed(
                    "/components/1/material",
                    "physics/ice",
                    Some("physics_material")
                ),
                // No case holds: a generic candidate, as without the rule.
                typed("/components/2/material", "materials/glow", None),
                typed("/components/3/material", "no file here!", None),
                typed("/overrides/o1/material", "materials/moss", Some("material")),
                typed("/texture_path", "textures/bark.png", Some(FULL_PATH)),
            ]
        );
        // The scan's spans still cover each string's text.
        for r in s.references() {
            assert_eq!(&foreign[r.span.0 as usize..r.span.1 as usize], r.text);
        }
    }

    #[test]
    fn malformed_known_files_report_line_and_column() {
        let s = scan("material", "{\n  \"color\": [1, 0, 0,]\n}");
        let e = s.error.unwrap();
        assert_eq!((e.line, e.column), (2, 21));
    }

    #[test]
    fn escaped_strings_are_decoded_and_spans_cover_the_raw_text() {
        let text = r#"{"texture": "textures\/bark"}"#;
        let s = scan("material", text);
        assert_eq!(s.references()[0].text, "textures/bark");
        assert_eq!(
            &text[s.references()[0].span.0 as usize..s.references()[0].span.1 as usize],
            r"textures\/bark"
        );
    }

    #[test]
    fn numbers_follow_the_json_grammar() {
        for ok in ["0", "-0", "12", "1.5", "-0.25e-3", "6E+2"] {
            assert!(valid_number(ok.as_bytes()), "{ok}");
        }
        for bad in ["", "-", "01", "1.", ".5", "1e", "1e+", "--1", "1.2.3", "+1"] {
            assert!(!valid_number(bad.as_bytes()), "{bad}");
        }
    }

    const GLTF: &str = r#"{
  "asset": {"version": "2.0", "generator": "textures/bark.png"},
  "buffers": [
    {"byteLength": 4, "uri": "tree.bin"},
    {"byteLength": 4, "uri": "data:application/octet-stream;base64,AAAAAA=="}
  ],
  "images": [
    {"name": "textures/bark.png", "uri": "../textures/my%20bark.png"},
    {"uri": "https://example.com/leaf.png"},
    {"bufferView": 0, "mimeType": "image/png"},
    {"uri": "..\/..\/outside.png"}
  ],
  "meshes": [{"uri": "not/a/reference.bin"}],
  "extras": {"uri": "textures/bark.png"}
}"#;

    #[test]
    fn gltf_uris_of_buffers_and_images_are_relative_references() {
        let s = scan("gltf", GLTF);
        assert_eq!(s.error, None);
        let got: Vec<_> = s
            .iter()
            .map(|r| {
                (
                    r.text,
                    r.pointer,
                    r.line,
                    r.column,
                    r.naming,
                    r.expected_type,
                )
            })
            .collect();
        // Names and other fields are not references; `data:` and `https:` URIs
        // name no file of the project.
        assert_eq!(
            got,
            vec![
                (
                    "tree.bin",
                    "/buffers/0/uri",
                    4,
                    30,
                    Naming::RelativeUri,
                    None
                ),
                (
                    "../textures/my%20bark.png",
                    "/images/0/uri",
                    8,
                    42,
                    Naming::RelativeUri,
                    None
                ),
                (
                    "../../outside.png",
                    "/images/3/uri",
                    11,
                    13,
                    Naming::RelativeUri,
                    None
                ),
            ]
        );
        // The span is the text as written (escapes included), the column its quote.
        let r = s.get(2).unwrap();
        assert_eq!(
            &GLTF[r.span.0 as usize..r.span.1 as usize],
            r"..\/..\/outside.png"
        );
        for r in s.iter() {
            let line = GLTF.lines().nth(r.line as usize - 1).unwrap();
            assert_eq!(line.as_bytes()[r.column as usize - 1], b'"');
            assert!(line[r.column as usize..].starts_with(&GLTF[r.span.0 as usize..][..3]));
        }
    }

    #[test]
    fn a_glb_files_json_chunk_is_scanned_with_spans_in_the_file() {
        let bin = [7u8; 16];
        let bytes = kiln_core::gltf::glb(GLTF, Some(&bin));
        let s = scan_file(
            &Registry::with_builtins(),
            &DeclaredRules::default(),
            "glb",
            &bytes,
        );
        assert_eq!(s.error, None);
        let json_scan = scan("gltf", GLTF);
        assert_eq!(s.len(), 3);
        for (r, j) in s.iter().zip(json_scan.iter()) {
            // Lines and columns are the JSON chunk's; spans count from the file's start.
            assert_eq!((r.text, r.line, r.column), (j.text, j.line, j.column));
            assert_eq!((r.span.0 - 20, r.span.1 - 20), j.span);
            assert_eq!(
                &bytes[r.span.0 as usize..r.span.1 as usize],
                &GLTF.as_bytes()[j.span.0 as usize..j.span.1 as usize]
            );
        }
        // The magic decides for a file of another glTF extension.
        let s = scan_file(
            &Registry::with_builtins(),
            &DeclaredRules::default(),
            "gltf",
            &bytes,
        );
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn a_broken_glb_is_an_error_without_a_line_never_a_panic() {
        let bytes = kiln_core::gltf::glb(GLTF, Some(&[1, 2, 3, 4]));
        let registry = Registry::with_builtins();
        let rules = DeclaredRules::default();
        for len in 0..bytes.len() {
            let s = scan_file(&registry, &rules, "glb", &bytes[..len]);
            assert!(s.is_empty());
            let e = s
                .error
                .unwrap_or_else(|| panic!("{len} bytes read as valid"));
            assert_eq!((e.line, e.column), (0, 0), "{len}: {e:?}");
            assert!(
                e.message.starts_with("not a valid binary glTF file: "),
                "{e:?}"
            );
        }
        // JSON that does not parse in a valid container: its line and column.
        let bad = kiln_core::gltf::glb("{\n  \"images\": [,]\n}", None);
        let e = scan_file(&registry, &rules, "glb", &bad).error.unwrap();
        assert_eq!((e.line, e.column), (2, 14));
        assert!(e.message.starts_with("in the JSON chunk: "), "{e:?}");
    }

    #[test]
    fn non_canonical_typed_references_are_kept_for_reporting() {
        let s = scan("material", r#"{"texture": "Textures\\Bark"}"#);
        assert_eq!(s.references()[0].text, "Textures\\Bark");
        assert_eq!(s.references()[0].expected_type.as_deref(), Some("png"));
    }

    #[test]
    fn a_string_that_does_not_parse_says_why_and_where() {
        for (text, message, column) in [
            ("{\"a\": \"x\ty\"}", "control character inside a string", 9),
            // After a backslash too: the escape does not hide it.
            (
                "{\"a\": \"x\\\u{1f}y\"}",
                "control character inside a string",
                10,
            ),
            // The first one, wherever the others are.
            (
                "{\"a\": \"\\q\u{1}\u{2}\"}",
                "control character inside a string",
                10,
            ),
            ("{\"a\": \"x\ny\"}", "line break inside a string", 9),
            ("{\"a\": \"x\\qy\"}", "invalid escape in a string", 7),
            ("{\"a\": \"x\\", "unterminated string", 10),
            ("{\"a\": \"x", "unterminated string", 9),
        ] {
            let e = scan("material", text)
                .error
                .unwrap_or_else(|| panic!("{text:?} read"));
            assert_eq!(
                (e.message.as_str(), e.line, e.column),
                (message, 1, column),
                "{text:?}"
            );
        }
    }

    /// A JSON value to print with chosen white space (see `printed`).
    #[derive(Debug, Clone)]
    enum Json {
        Scalar(&'static str),
        /// The bytes between the quotes, raw: escapes, and at times a control
        /// character or a line break that makes the file invalid.
        Str(String),
        Array(Vec<Json>),
        Object(Vec<(String, Json)>),
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Json> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            8 => "[a-z_]{1,6}",
            3 => Just("/".to_owned()),
            1 => Just(".".to_owned()),
            1 => Just("\\/".to_owned()),
            1 => Just("\\n".to_owned()),
            1 => Just("\\u00e9".to_owned()),
            1 => Just("é".to_owned()),
            // What a file that does not parse holds.
            1 => Just("\t".to_owned()),
            1 => Just("\n".to_owned()),
            1 => Just("\\\n".to_owned()),
            1 => Just("\\q".to_owned()),
            1 => Just("\u{1f}".to_owned()),
        ];
        let string = prop::collection::vec(piece, 0..5).prop_map(|p| p.concat());
        let leaf = prop_oneof![
            prop_oneof![Just("0"), Just("-1.5e3"), Just("true"), Just("null")]
                .prop_map(Json::Scalar),
            string.clone().prop_map(Json::Str),
        ];
        leaf.prop_recursive(4, 40, 5, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Json::Array),
                // Keys told apart by their place: Kiln's own files reject a key
                // given twice, which serde_json takes.
                prop::collection::vec(("[a-z]{1,5}", inner), 0..5).prop_map(|fields| {
                    let keyed = fields.into_iter().enumerate();
                    Json::Object(keyed.map(|(i, (k, v))| (format!("{k}{i}"), v)).collect())
                }),
            ]
        })
    }

    /// `value` as JSON text, with the white space between tokens taken in turn
    /// from `spaces`.
    fn printed(value: &Json, spaces: &[&str], at: &mut usize, out: &mut String) {
        let space = |out: &mut String, at: &mut usize| {
            if !spaces.is_empty() {
                out.push_str(spaces[*at % spaces.len()]);
                *at += 1;
            }
        };
        match value {
            Json::Scalar(s) => out.push_str(s),
            Json::Str(s) => {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    space(out, at);
                    printed(item, spaces, at, out);
                    space(out, at);
                }
                out.push(']');
            }
            Json::Object(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    space(out, at);
                    out.push_str(&format!("\"{k}\""));
                    space(out, at);
                    out.push(':');
                    space(out, at);
                    printed(v, spaces, at, out);
                    space(out, at);
                }
                out.push('}');
            }
        }
    }

    proptest::proptest! {
        /// On any JSON text, printed with any white space: the scan fails exactly
        /// where `serde_json` fails to parse, and each reference's line and column
        /// are its opening quote's, counted from the start of the file.
        #[test]
        fn lines_columns_and_validity_agree_with_a_plain_count_and_serde_json(
            value in json_value(),
            spaces in proptest::collection::vec(
                proptest::sample::select(vec!["", " ", "\n", "\r\n", "\t", "\n    ", " \n\n  "]),
                0..6,
            ),
            bom: bool,
        ) {
            let mut text = String::from(if bom { "\u{feff}" } else { "" });
            let (mut at, mut body) = (0, String::new());
            printed(&Json::Object(vec![("notes".into(), value)]), &spaces, &mut at, &mut body);
            text.push_str(&body);
            let s = scan("material", &text);
            let parses = serde_json::from_str::<serde::de::IgnoredAny>(&body).is_ok();
            proptest::prop_assert_eq!(s.error.is_none(), parses, "{:?}: {:?}", text, s.error);
            for r in s.references() {
                let quote = r.span.0 as usize - 1;
                let before = &text.as_bytes()[..quote];
                let line = before.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
                let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                let column = (quote - line_start) as u32 + 1;
                proptest::prop_assert_eq!((r.line, r.column), (line, column), "{:?} in {:?}", r.text, text);
            }
        }
    }
}
