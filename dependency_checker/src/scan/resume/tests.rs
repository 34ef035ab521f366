//! A scan resumed from the last version's equals a whole scan of the new
//! version, on random levels and random edits, chained (each edit resumes from
//! the layout the last resumed scan left).

use proptest::prelude::*;

use super::*;
use crate::scan::scan_file;

/// One entity, as random as the scanner cares: typed, generic and non-reference
/// strings, escapes, numbers, several lines or one, and a length that varies.
#[derive(Debug, Clone)]
struct Entity {
    id: u32,
    material: u8,
    generic: Option<u8>,
    escaped: bool,
    prefab: bool,
    padding: u8,
}

fn entity() -> impl Strategy<Value = Entity> {
    (
        0..10_000u32,
        0..6u8,
        proptest::option::of(0..4u8),
        any::<bool>(),
        any::<bool>(),
        0..120u8,
    )
        .prop_map(|(id, material, generic, escaped, prefab, padding)| Entity {
            id,
            material,
            generic,
            escaped,
            prefab,
            padding,
        })
}

/// How the entities are laid out: pretty (one key a line), one entity a line, or
/// the whole list on one line (the rejoin's columns move then).
#[derive(Debug, Clone, Copy)]
enum Layout {
    Pretty,
    Lines,
    OneLine,
}

fn entity_text(e: &Entity, layout: Layout) -> String {
    let material = if e.escaped {
        format!("materials\\/m{}", e.material)
    } else {
        format!("materials/m{}", e.material)
    };
    let generic = e.generic.map_or(String::new(), |g| {
        format!(r#", "third_party": {{"sound": "sounds/s{g}.wav"}}"#)
    });
    let prefab = if e.prefab {
        r#""prefab": "units/tree", "#
    } else {
        ""
    };
    let text = format!(
        r#"{{"id": "e{}", "name": "{}", {prefab}"components": {{"mesh": {{"mesh": "meshes/cube", "material": "{material}"}}, "transform": {{"position": [1.5, -2, 3e1]}}{generic}}}}}"#,
        e.id,
        "x".repeat(e.padding as usize),
    );
    match layout {
        Layout::Pretty => {
            let value: serde_json::Value = serde_json::from_str(&text).expect("test text is JSON");
            // Pretty-printing drops the escape: keep one in by hand.
            let pretty = serde_json::to_string_pretty(&value).expect("a value prints");
            if e.escaped {
                pretty.replacen("materials/", "materials\\/", 1)
            } else {
                pretty
            }
        }
        Layout::Lines | Layout::OneLine => text,
    }
}

fn level_text(header: &str, entities: &[Entity], layout: Layout) -> String {
    let separator = match layout {
        Layout::Pretty | Layout::Lines => ",\n  ",
        Layout::OneLine => ", ",
    };
    let list: Vec<String> = entities.iter().map(|e| entity_text(e, layout)).collect();
    format!(
        "{{\n  \"notes\": \"{header}\",\n  \"entities\": [\n  {}\n  ],\n  \"after\": \"textures/late.png\"\n}}\n",
        list.join(separator)
    )
}

#[derive(Debug, Clone)]
enum Edit {
    /// Changes the entity at this position (modulo the count).
    Change(usize, Entity),
    Insert(usize, Entity),
    Remove(usize),
    /// Moves an entity to another position.
    Move(usize, usize),
    /// Changes the header before the list (the whole file is scanned).
    Header(u8),
    /// Writes random bytes over a range of the text (the text may not scan).
    Bytes(usize, Vec<u8>),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (any::<usize>(), entity()).prop_map(|(i, e)| Edit::Change(i, e)),
        2 => (any::<usize>(), entity()).prop_map(|(i, e)| Edit::Insert(i, e)),
        2 => any::<usize>().prop_map(Edit::Remove),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Move(a, b)),
        1 => any::<u8>().prop_map(Edit::Header),
        1 => (any::<usize>(), proptest::collection::vec(
            prop_oneof![Just(b'{'), Just(b'"'), Just(b','), Just(b'\n'), Just(b'x'), Just(b']')], 1..4
        )).prop_map(|(at, bytes)| Edit::Bytes(at, bytes)),
    ]
}

fn whole(text: &[u8]) -> (FileScan, Option<LevelLayout>) {
    let (scan, layout, how) = scan_level(
        &mut ScanScratch::default(),
        (&Registry::with_builtins(), &DeclaredRules::default()),
        "level",
        (text, xxhash_rust::xxh3::xxh3_64(text)),
        None,
    );
    assert_eq!(how, LevelScan::Whole);
    // A level's scan is the plain scan, whatever it keeps besides.
    let plain = scan_file(
        &Registry::with_builtins(),
        &DeclaredRules::default(),
        "level",
        text,
    );
    assert_eq!(scan, plain);
    (scan, layout)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_resumed_scan_equals_a_whole_one(
        start in proptest::collection::vec(entity(), 0..120),
        edits in proptest::collection::vec(edit(), 1..8),
        layout in prop_oneof![Just(Layout::Pretty), Just(Layout::Lines), Just(Layout::OneLine)],
    ) {
        let registry = Registry::with_builtins();
        let rules = DeclaredRules::default();
        let mut scratch = ScanScratch::default();
        let mut entities = start;
        let mut header = 0u8;
        let mut text = level_text("h0", &entities, layout).into_bytes();
        let (mut scan, mut kept) = whole(&text);
        for edit in edits {
            let n = entities.len().max(1);
            let mut raw = false;
            match edit {
                Edit::Change(i, e) if !entities.is_empty() => entities[i % n] = e,
                Edit::Insert(i, e) => entities.insert(i % (entities.len() + 1), e),
                Edit::Remove(i) if !entities.is_empty() => {
                    entities.remove(i % n);
                }
                Edit::Move(a, b) if !entities.is_empty() => {
                    let e = entities.remove(a % n);
                    entities.insert(b % n.max(1).min(entities.len() + 1), e);
                }
                Edit::Header(h) => header = h,
                Edit::Bytes(at, bytes) => {
                    let at = at % text.len();
                    let end = (at + bytes.len()).min(text.len());
                    text.splice(at..end, bytes);
                    raw = true;
                }
                _ => {}
            }
            let old_text = text.clone();
            if !raw {
                text = level_text(&format!("h{header}"), &entities, layout).into_bytes();
            }
            let hash = xxhash_rust::xxh3::xxh3_64(&text);
            let previous = kept.as_ref().map(|layout| (&scan, layout));
            let (resumed, layout, how) =
                scan_level(&mut scratch, (&registry, &rules), "level", (&text, hash), previous);
            let (fresh, fresh_layout) = whole(&text);
            prop_assert_eq!(&resumed, &fresh);
            prop_assert_eq!(&layout, &fresh_layout);
            // The positive control: an edit of the entities alone, of a level
            // that scanned, is resumed (wherever in the list it is).
            // (A raw edit before may have left the text around the list changed.)
            let header = |t: &[u8]| t.split(|&b| b == b'[').next().map(<[u8]>::to_vec);
            let trailer = |t: &[u8]| t.rsplit(|&b| b == b']').next().map(<[u8]>::to_vec);
            let around_same =
                header(&old_text) == header(&text) && trailer(&old_text) == trailer(&text);
            if !raw && kept.is_some() && around_same {
                prop_assert_eq!(how, LevelScan::Resumed);
            }
            scan = resumed;
            kept = layout;
        }
    }
}

#[test]
fn renumbered_moves_only_an_entity_index() {
    let mut out = String::new();
    assert!(renumbered(
        "/entities/12/components/mesh/material",
        3,
        &mut out
    ));
    assert_eq!(out, "/entities/15/components/mesh/material");
    assert!(renumbered("/entities/12", -12, &mut out));
    assert_eq!(out, "/entities/0");
    assert!(!renumbered("/after", 1, &mut out));
    assert!(!renumbered("/entities/x/y", 1, &mut out));
}

#[test]
fn one_changed_entity_of_many_is_scanned_alone_and_located() {
    let entities: Vec<Entity> = (0..400)
        .map(|id| Entity {
            id,
            material: (id % 6) as u8,
            generic: None,
            escaped: false,
            prefab: false,
            padding: 10,
        })
        .collect();
    let text = level_text("h", &entities, Layout::Pretty);
    let (scan, layout) = whole(text.as_bytes());
    let layout = layout.expect("a level that scans has a layout");
    assert_eq!(layout.entities(), 400);
    // Entity 300's material, well past the first block.
    let at = text.find("\"e300\"").expect("entity 300 is written");
    let material = at + text[at..].find("materials/").expect("it has a material");
    let edited = format!(
        "{}materials/changed{}",
        &text[..material],
        &text[material + "materials/m0".len()..]
    );
    let (resumed_one, _, how) = scan_level(
        &mut ScanScratch::default(),
        (&Registry::with_builtins(), &DeclaredRules::default()),
        "level",
        (
            edited.as_bytes(),
            xxhash_rust::xxh3::xxh3_64(edited.as_bytes()),
        ),
        Some((&scan, &layout)),
    );
    assert_eq!(how, LevelScan::Resumed);
    let changed: Vec<_> = resumed_one
        .iter()
        .filter(|r| r.text == "materials/changed")
        .map(|r| (r.entity, r.pointer.to_owned(), r.line))
        .collect();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0].0, Some("e300"));
    assert_eq!(changed[0].1, "/entities/300/components/mesh/material");
}

/// A second key after the list that decodes to `entities` (written with an
/// escape, so not a repeat of the first byte for byte) names other entities:
/// its pointers stay as a whole scan writes them when entities come and go.
#[test]
fn only_the_list_s_own_pointers_are_renumbered() {
    let entities: Vec<Entity> = (0..300)
        .map(|id| Entity {
            id,
            material: 1,
            generic: None,
            escaped: false,
            prefab: false,
            padding: 10,
        })
        .collect();
    let text = |entities: &[Entity]| {
        level_text("h", entities, Layout::Pretty).replace(
            "\"after\": \"textures/late.png\"",
            "\"entit\\u0069es\": [{\"x\": \"sounds/a.wav\"}]",
        )
    };
    let before = text(&entities);
    assert!(before.contains("entit\\u0069es"));
    let (scan, layout) = whole(before.as_bytes());
    let mut fewer = entities.clone();
    fewer.remove(150);
    let after = text(&fewer);
    let (resumed, _, how) = scan_level(
        &mut ScanScratch::default(),
        (&Registry::with_builtins(), &DeclaredRules::default()),
        "level",
        (
            after.as_bytes(),
            xxhash_rust::xxh3::xxh3_64(after.as_bytes()),
        ),
        Some((&scan, &layout.expect("it scans"))),
    );
    assert_eq!(how, LevelScan::Resumed);
    assert_eq!(resumed, whole(after.as_bytes()).0);
}
