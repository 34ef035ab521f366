//! Core's one lean level reader: a level read without building the editor's
//! document. Two readings, one grammar:
//!
//! - [`EntityTexts`] and [`EntityHead`]: the entity list as the texts the file
//!   holds, and an entity's id and parent, for what decides before it parses (a
//!   merge, a diff, the incremental compile's entity spans);
//! - `RawLevelDocument`: a level read only to be compiled: its entities' ids and
//!   names borrowed from the text, and each component kept as the text of its JSON
//!   value until it is compiled.
//!
//! [`LevelDocument`](crate::level::LevelDocument) holds every component as a tree of
//! `serde_json` maps: what the editor edits, and about 3 KB per entity of two
//! components. A compile reads each component once, so building that tree only to
//! walk it cost a million-entity level (181 MB of text) 3 GB of memory, half of its
//! time spent by the kernel clearing the fresh pages. Read this way, a component is
//! parsed when the compiler reaches it and dropped once it is compiled.
//!
//! This reader accepts exactly what
//! [`LevelDocument::parse`](crate::level::LevelDocument::parse) accepts. Both first walk the
//! whole text for repeated keys, which also checks every value as `serde_json` parses
//! it (a number too large for an `f64` included); then their fields are the same, in
//! the same order, with the same defaults, each taking the same JSON types (a string,
//! a map, any value). A compile that fails on this path is still run again on the
//! editor's document, so that the error reported is the one it reports (see
//! `compile_level`).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::flat_component::{ComponentValue, FlatComponent};

/// A level's (or unit's) entity list as the texts the file holds, in file order,
/// nothing of each parsed: the top level is `{"entities": [...]}` and nothing else,
/// as for every other reading of a level.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityTexts<'a> {
    /// Each entity's text, as written.
    #[serde(default, borrow)]
    pub entities: Vec<&'a RawValue>,
}

impl<'a> EntityTexts<'a> {
    /// The entity texts of the level `text` (without its byte-order mark).
    pub fn read(text: &'a str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// What is read of an entity to place it: its id and its parent's, borrowed where
/// the text has no escapes.
#[derive(Debug, Deserialize)]
pub struct EntityHead<'a> {
    /// Its authoring id.
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    /// Its parent's authoring id, if it has one.
    #[serde(default, borrow)]
    pub parent: Option<Cow<'a, str>>,
}

impl<'a> EntityHead<'a> {
    /// The head of the entity whose text is `entity`.
    pub fn read(entity: &'a RawValue) -> Result<Self, serde_json::Error> {
        serde_json::from_str(entity.get())
    }
}

/// A `.level` file, read to be compiled (see the module docs).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLevelDocument<'a> {
    /// Every entity, in file order.
    #[serde(default, borrow)]
    pub entities: Vec<RawEntityDocument<'a>>,
}

/// One entity of a [`RawLevelDocument`]: the fields of
/// [`EntityDocument`](crate::level::EntityDocument), its strings borrowed where the
/// text has no escapes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawEntityDocument<'a> {
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    #[serde(default, borrow)]
    pub name: Cow<'a, str>,
    #[serde(default, borrow)]
    pub parent: Option<Text<'a>>,
    #[serde(default)]
    pub prefab: Option<String>,
    #[serde(default, borrow)]
    pub components: RawComponents<'a>,
    /// Rare and small (only on prefab instances): parsed as the editor's document
    /// parses them, and boxed (an empty map is 72 bytes; most entities have none).
    #[serde(default, deserialize_with = "boxed_map")]
    pub overrides: Option<Box<Map<String, Value>>>,
}

/// A map, boxed: `null` is an error here as it is for the editor's document.
fn boxed_map<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Box<Map<String, Value>>>, D::Error> {
    Map::deserialize(deserializer).map(|map| Some(Box::new(map)))
}

/// A string of the text, borrowed unless it holds escapes. (`Option<Cow<str>>` would
/// always copy: serde borrows only a `Cow` it deserializes directly.)
#[derive(Deserialize)]
pub(crate) struct Text<'a>(#[serde(borrow)] pub Cow<'a, str>);

/// An entity's components in file order, their values left as text.
#[derive(Default)]
pub(crate) struct RawComponents<'a>(pub Vec<FlatComponent<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for RawComponents<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ComponentsVisitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for ComponentsVisitor<'a> {
            type Value = RawComponents<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(Text(name)) = map.next_key::<Text<'de>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    out.push(FlatComponent {
                        name,
                        value: ComponentValue::Text(value),
                        file: None,
                    });
                }
                Ok(RawComponents(out))
            }
        }
        deserializer.deserialize_map(ComponentsVisitor(PhantomData))
    }
}

impl<'a> RawLevelDocument<'a> {
    /// The level in `text`, or `None` where [`LevelDocument::parse`] would report
    /// an error (or might: the caller asks it for the error).
    ///
    /// [`LevelDocument::parse`]: crate::level::LevelDocument::parse
    pub fn parse(text: &'a str) -> Option<Self> {
        crate::json_format::reject_duplicate_keys(text).ok()?;
        serde_json::from_str(text).ok()
    }
}

#[cfg(test)]
mod differential_tests;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::collections::HashMap;

    use super::*;

    /// The entity texts are the document's entities, in its order, and their heads
    /// its ids and parents: a merge or a diff reading them sees the level the
    /// editor and the compile see.
    #[test]
    fn the_entity_texts_and_heads_are_the_documents() {
        let text = r#"{"entities": [
            {"id": "a", "name": "A \"quoted\" }]"},
            {"id": "b", "parent": "a", "components": {"mesh": {"mesh": "meshes/x", "material": "]}"}}},
            {"id": "c", "prefab": "units/lamp", "overrides": {"head": {"debug_name": {"name": "{"}}}}
        ]}"#;
        let doc = LevelDocument::parse(text, "t.level").unwrap();
        let texts = EntityTexts::read(text).unwrap();
        assert_eq!(texts.entities.len(), doc.entities.len());
        for (raw, entity) in texts.entities.iter().zip(&doc.entities) {
            let head = EntityHead::read(raw).unwrap();
            assert_eq!(head.id, entity.id);
            assert_eq!(head.parent.as_deref(), entity.parent.as_deref());
            let again: crate::level::EntityDocument = serde_json::from_str(raw.get()).unwrap();
            assert_eq!(&again, entity, "the text is the whole entity");
        }
        // The same grammar: other top-level keys are not a level.
        assert!(LevelDocument::parse(r#"{"entities": [], "other": 1}"#, "t.level").is_err());
        assert!(EntityTexts::read(r#"{"entities": [], "other": 1}"#).is_err());
        assert!(EntityTexts::read("{}").unwrap().entities.is_empty());
    }
    use crate::compiler::{Source, compile_flattened};
    use crate::flat_component::is_object;
    use crate::level::LevelDocument;
    use crate::registry::Registry;

    /// The lean reading must serve the levels it is for, not fall back to the
    /// editor's document on every one (which would compile the same, only slower
    /// and in sixteen times the memory): escapes in ids, names, parents and
    /// component names, several instances of a type, a prefab with overrides.
    #[test]
    fn a_level_compiles_from_its_text_as_from_the_editors_document() {
        let text = r#"{"entities": [
            {"id": "r\u006fot", "name": "The \"root\" \u00e9", "components": {
                "tr\u0061nsform": {"position": [1, 2, 3]},
                "mesh": [{"mesh": "meshes/a"}, {"mesh": "meshes/b", "material": "materials/m"}]}},
            {"id": "child", "parent": "ro\u006ft", "components": {"rotator": {"speed": 2.5}}},
            {"id": "lamp", "parent": "root", "prefab": "units/lamp",
             "overrides": {"bulb": {"transform": {"position": [0, 4, 0]}}}}
        ]}"#;
        let units = HashMap::from([(
            "units/lamp.unit".to_owned(),
            r#"{"entities": [{"id": "bulb", "components": {"transform": {"scale": [2, 2, 2]}}}]}"#
                .to_owned(),
        )]);
        let raw = RawLevelDocument::parse(text).unwrap();
        assert_eq!(raw.entities.len(), 3);
        assert_eq!(raw.entities[0].id, "root");
        assert_eq!(raw.entities[1].parent.as_ref().map(|p| &*p.0), Some("root"));
        assert!(
            matches!(raw.entities[1].id, Cow::Borrowed(_)),
            "copied although it has no escapes"
        );
        let registry = Registry::with_builtins();
        let from_text = compile_flattened(
            &registry,
            &mut units.clone(),
            "levels/a.level",
            Source::Text(&raw),
        )
        .unwrap();
        let doc = LevelDocument::parse(text, "levels/a.level").unwrap();
        let from_doc = compile_flattened(
            &registry,
            &mut units.clone(),
            "levels/a.level",
            Source::Level(&doc),
        )
        .unwrap();
        assert_eq!(from_text.blob, from_doc.blob);
        assert_eq!(from_text.entity_count, 4);
        assert_eq!(from_text.units, from_doc.units);
    }

    #[test]
    fn what_the_lean_reading_leaves_to_the_editors_document() {
        // Duplicate keys, unknown fields, JSON errors, and (as the duplicate-key
        // pass parses every value) a number no f64 holds: no lean document.
        for text in [
            r#"{"entities": [{"id": "a", "id": "b"}]}"#,
            r#"{"entities": [{"id": "a", "colour": 1}]}"#,
            r#"{"entities": [{"id": "a", "components": null}]}"#,
            r#"{"entities": [{"id": "a", "overrides": null}]}"#,
            r#"{"entities": [{"id": "a""#,
            r#"{"entities": [{"id": "a", "components": {"transform": {"position": [1e400, 0, 0]}}}]}"#,
        ] {
            assert!(RawLevelDocument::parse(text).is_none(), "{text}");
            assert!(LevelDocument::parse(text, "l.level").is_err(), "{text}");
        }
        let text = r#"{"entities": [{"id": "a", "components": {"transform": {"position": [1, 0, 0]}, "mesh": []}}]}"#;
        let raw = RawLevelDocument::parse(text).unwrap();
        let kinds: Vec<bool> = raw.entities[0]
            .components
            .0
            .iter()
            .map(|c| match c.value {
                ComponentValue::Text(value) => is_object(value),
                _ => panic!("a component read as text"),
            })
            .collect();
        assert_eq!(kinds, [true, false]);
    }
}
