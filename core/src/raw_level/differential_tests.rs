//! Differential: compiling a level from its text (which reads it lean, each
//! component left as text until it is compiled) gives exactly what compiling the
//! editor's document of the same text gives, blob or error, on random levels with
//! escapes, prefabs, overrides, children listed before their parents and, in one
//! level of three, mistakes. A level without mistakes must compile on the lean path
//! itself, not through the fallback.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;

use proptest::prelude::*;

use super::RawLevelDocument;
use crate::compiler::{CompileError, compile_document, compile_level};
use crate::compiler::{Source, compile_flattened};
use crate::level::LevelDocument;
use crate::registry::Registry;

/// `s` as a JSON string, each character written as an escape where `escape` says.
fn string(s: &str, escape: &[bool]) -> String {
    let mut out = String::from("\"");
    for (k, c) in s.chars().enumerate() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if escape.get(k).copied().unwrap_or(false) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A number, or where `faults`, sometimes a mistake.
fn number(faults: bool) -> BoxedStrategy<String> {
    let number = (-50i32..50).prop_map(|n| format!("{}", n as f32 / 4.0));
    if !faults {
        return number.boxed();
    }
    prop_oneof![
        20 => number,
        1 => Just("1e400".to_owned()),
        1 => Just("\"up\"".to_owned()),
    ]
    .boxed()
}

fn vector(faults: bool) -> impl Strategy<Value = String> {
    prop::collection::vec(number(faults), 3).prop_map(|v| format!("[{}]", v.join(", ")))
}

/// An entity's components, as `"name": value` each, in a random order; where
/// `faults`, sometimes a mistake among them.
fn components(faults: bool) -> impl Strategy<Value = Vec<String>> {
    let escape = prop::collection::vec(prop::bool::weighted(0.1), 16);
    let transform = (vector(faults), escape)
        .prop_map(|(v, e)| format!("{}: {{\"position\": {v}}}", string("transform", &e)));
    let mesh = (0u8..3, prop::bool::ANY).prop_map(|(m, several)| {
        let one = format!("{{\"mesh\": \"meshes/cube\", \"material\": \"materials/m{m}\"}}");
        if several {
            format!("\"mesh\": [{one}, {{\"mesh\": \"meshes/ball\"}}]")
        } else {
            format!("\"mesh\": {one}")
        }
    });
    let rotator = number(faults).prop_map(|n| format!("\"rotator\": {{\"speed\": {n}}}"));
    let mistake = prop::option::weighted(
        0.05,
        prop_oneof![
            Just("\"debug_name\": {\"name\": \"x\"}".to_owned()),
            Just("\"physics\": {}".to_owned()),
            Just("\"point_mass\": 5".to_owned()),
        ],
    );
    let mistake = if faults {
        mistake.boxed()
    } else {
        Just(None).boxed()
    };
    (
        prop::option::weighted(0.7, transform),
        prop::option::weighted(0.4, mesh),
        prop::option::weighted(0.3, rotator),
        mistake,
    )
        .prop_map(|(t, m, r, x)| [t, m, r, x].into_iter().flatten().collect::<Vec<_>>())
        .prop_shuffle()
}

/// Entity `k` of a level, as text, its parent among `e0` .. `e{k-1}` (the level lists
/// them in any order); where `faults`, sometimes with a mistake.
fn entity(k: usize, faults: bool) -> impl Strategy<Value = String> {
    let escape = prop::collection::vec(prop::bool::weighted(0.15), 16);
    (
        escape.clone(),
        prop::option::weighted(0.6, (0..k.max(1), escape.clone())),
        prop::option::weighted(0.7, ("[A-Za-z \"\\\\é]{0,10}", escape)),
        components(faults),
        prop::option::weighted(
            0.15,
            prop_oneof![
                16 => Just("\"prefab\": \"units/u0\", \"overrides\": {\"b\": {\"transform\": {\"position\": [1, 2, 3]}}}"),
                8 => Just("\"prefab\": \"units/u1\", \"overrides\": {\"i/c\": {\"mesh\": null}}"),
                4 => Just("\"prefab\": \"units/u1\""),
                if faults { 1 } else { 0 } => Just("\"prefab\": \"units/u0\", \"overrides\": {\"zz\": {}}"),
                if faults { 1 } else { 0 } => Just("\"prefab\": \"units/missing\""),
            ],
        ),
        if faults { 0u8..60 } else { 10u8..60 },
    )
        .prop_map(move |(id_escape, parent, name, components, prefab, oddity)| {
            let id = match oddity {
                0 => "bad id!".to_owned(),
                1 => "e0".to_owned(),
                _ => format!("e{k}"),
            };
            if oddity == 8 {
                // An entity written as an array: both readers take it field by field.
                return format!("[{}, \"Entity\"]", string(&id, &id_escape));
            }
            let mut fields = vec![format!("\"id\": {}", string(&id, &id_escape))];
            if let Some((p, e)) = parent.filter(|_| k > 0) {
                fields.push(format!("\"parent\": {}", string(&format!("e{p}"), &e)));
            }
            if let Some((name, e)) = name {
                fields.push(format!("\"name\": {}", string(&name, &e)));
            }
            if !components.is_empty() {
                fields.push(format!("\"components\": {{{}}}", components.join(", ")));
            }
            if let Some(prefab) = prefab {
                fields.push(prefab.to_owned());
            }
            let odd = match oddity {
                2 => "\"colour\": 1",
                3 => "\"parent\": null",
                4 => "\"components\": null",
                5 => "\"name\": null",
                6 => "\"prefab\": null",
                7 => "\"components\": []",
                9 => "\"overrides\": []",
                _ => "",
            };
            if !odd.is_empty() {
                fields.push(odd.to_owned());
            }
            if oddity == 10 {
                fields.reverse();
            }
            format!("{{{}}}", fields.join(", "))
        })
}

/// A level of 1 to 11 entities, listed in any order (a parent is always another
/// entity, never in a cycle); one in three may hold mistakes (`true`).
fn level() -> impl Strategy<Value = (String, bool)> {
    (1usize..12, prop::bool::weighted(0.35)).prop_flat_map(|(n, faults)| {
        let entities = (0..n).map(|k| entity(k, faults)).collect::<Vec<_>>();
        (entities.prop_shuffle(), Just(faults)).prop_map(|(entities, faults)| {
            let text = format!("{{\"entities\": [\n  {}\n]}}", entities.join(",\n  "));
            (text, faults)
        })
    })
}

fn units() -> HashMap<String, String> {
    HashMap::from([
        (
            "units/u0.unit".to_owned(),
            r#"{"entities": [{"id": "b", "components": {"transform": {"scale": [2, 2, 2]}}},
                {"id": "c", "parent": "b", "components": {"mesh": {"mesh": "meshes/cube"}}}]}"#
                .to_owned(),
        ),
        (
            "units/u1.unit".to_owned(),
            r#"{"entities": [{"id": "i", "prefab": "units/u0"}]}"#.to_owned(),
        ),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_level_compiles_from_its_text_as_from_its_document((text, faults) in level()) {
        let registry = Registry::with_builtins();
        let file = "levels/random.level";
        if !faults {
            let raw = RawLevelDocument::parse(&text);
            prop_assert!(raw.is_some(), "not read lean: {}", text);
            let lean = raw.map(|raw| {
                compile_flattened(&registry, &mut units(), file, Source::Text(&raw)).map(|_| ())
            });
            prop_assert_eq!(lean, Some(Ok(())), "{}", text);
        }
        let from_text = compile_level(&registry, &mut units(), file, &text);
        let from_doc = LevelDocument::parse(&text, file)
            .map_err(CompileError::from)
            .and_then(|doc| compile_document(&registry, &mut units(), file, &doc));
        match (from_text, from_doc) {
            (Ok(a), Ok(b)) => {
                prop_assert_eq!(a.blob, b.blob, "{}", text);
                prop_assert_eq!(a.entity_count, b.entity_count);
                prop_assert_eq!(a.units, b.units);
            }
            (Err(a), Err(b)) => prop_assert_eq!(a, b, "{}", text),
            (a, b) => prop_assert!(false, "{text}\nfrom text: {:?}\nfrom the document: {:?}",
                a.map(|c| c.entity_count), b.map(|c| c.entity_count)),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `kiln compile`'s streamed compile (read entity by entity, each type's
    /// instances put parents-first as the blob is written) writes exactly the blob
    /// of the whole compile, or gives up where that reports an error; a level
    /// without mistakes is never left to the whole compile. Read in pieces of any
    /// size, with and without a byte-order mark, skipping unknown components or
    /// not.
    #[test]
    fn a_streamed_compile_writes_the_blob_of_the_whole_compile(
        (text, faults) in level(),
        buffer in 1usize..200,
        bom in prop::bool::weighted(0.2),
        skip_unknown_components in prop::bool::ANY,
    ) {
        let registry = Registry::with_builtins();
        let file = "levels/random.level";
        let options = crate::compiler::CompileOptions { skip_unknown_components };
        let text = if bom { format!("\u{feff}{text}") } else { text };
        let reader = Trickle { bytes: text.as_bytes(), piece: buffer };
        let streamed = crate::compiler::compile_streamed(&registry, &mut units(), file, reader, options);
        let whole = crate::compiler::compile_level_with(&registry, &mut units(), file, &text, options);
        match (streamed, whole) {
            (Some(s), Ok(w)) => {
                prop_assert_eq!(s.blob(), w.blob.clone(), "{}", text);
                prop_assert_eq!(s.blob_len(), w.blob.len());
                prop_assert_eq!(s.entity_count, w.entity_count);
                prop_assert_eq!(s.units, w.units);
                prop_assert_eq!(s.left_out, w.left_out);
            }
            (Some(_), Err(e)) => prop_assert!(false, "streamed, but the whole compile says {e}\n{text}"),
            (None, whole) => prop_assert!(faults, "not streamed: {:?}\n{}", whole.map(|w| w.entity_count), text),
        }
    }
}

/// A reader that gives at most `piece` bytes at a time, as a pipe or a slow disk may.
struct Trickle<'a> {
    bytes: &'a [u8],
    piece: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.piece.min(out.len()).min(self.bytes.len());
        out[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}
