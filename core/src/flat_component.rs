//! A component of a flattened entity, as the compiler reads it: from the editor's
//! document, from a prefab unit, or from the text of a level read to be compiled
//! (`raw_level.rs`). Below both the compiler and the raw reading, which each
//! make or take these.

use std::borrow::Cow;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::level::LevelDocument;

/// A component of a flattened entity. The level's own entities borrow their names
/// and values from its document; entities placed from prefab units own copies (a unit
/// document lives only as long as the flattening). A level of a million entities
/// is then not copied whole before it is compiled.
#[derive(Clone)]
pub(crate) struct FlatComponent<'d> {
    pub name: Cow<'d, str>,
    pub value: ComponentValue<'d>,
    /// The file this value was last written in (a unit, or the level that overrode
    /// it) where that is not its entity's own file.
    pub file: Option<Rc<str>>,
}

/// A component's value: a parsed value borrowed from the editor's document or owned
/// (a prefab unit's, an override's), or the text of a level read to be compiled,
/// parsed when it is compiled. (Boxed: a `Value` is 72 bytes, and a million-entity
/// level holds two million of these.)
#[derive(Clone)]
pub(crate) enum ComponentValue<'d> {
    Borrowed(&'d Value),
    Owned(Box<Value>),
    Text(&'d RawValue),
    /// Component `2` of entity `1` of a prefab unit, shared with every instance of
    /// it (copied only when an override patches it): copying each unit's values
    /// for each instance was a sixth of compiling a level of prefabs.
    Unit(Arc<LevelDocument>, u32, u16),
}

/// What a missing value reads as (a [`ComponentValue::Unit`] always names one).
static NULL: Value = Value::Null;

/// The value of component `c` of entity `e` of `unit`.
fn unit_value(unit: &LevelDocument, e: u32, c: u16) -> &Value {
    (unit.entities.get(e as usize))
        .and_then(|e| e.components.values().nth(usize::from(c)))
        .unwrap_or(&NULL)
}

impl ComponentValue<'_> {
    /// The value, parsed if it is text. An error is a sentence.
    pub(crate) fn parsed(&self) -> Result<Cow<'_, Value>, String> {
        match self {
            ComponentValue::Borrowed(value) => Ok(Cow::Borrowed(value)),
            ComponentValue::Owned(value) => Ok(Cow::Borrowed(value)),
            ComponentValue::Text(text) => serde_json::from_str(text.get())
                .map(Cow::Owned)
                .map_err(|e| e.to_string()),
            ComponentValue::Unit(unit, e, c) => Ok(Cow::Borrowed(unit_value(unit, *e, *c))),
        }
    }

    // `is_object` and `to_mut` serve overrides, which patch a prefab unit's entities
    // (values owned); a level's own entities, the only ones read as text, are never
    // patched. Text is handled all the same, so that no path depends on that.
    pub(crate) fn is_object(&self) -> bool {
        match self {
            ComponentValue::Borrowed(value) => value.is_object(),
            ComponentValue::Owned(value) => value.is_object(),
            ComponentValue::Text(text) => is_object(text),
            ComponentValue::Unit(unit, e, c) => unit_value(unit, *e, *c).is_object(),
        }
    }

    /// The value to patch in place, copied or parsed first unless it is owned.
    pub(crate) fn to_mut(&mut self) -> Result<&mut Value, String> {
        let owned = match self {
            ComponentValue::Owned(value) => return Ok(value),
            ComponentValue::Borrowed(value) => Value::clone(value),
            ComponentValue::Unit(unit, e, c) => unit_value(unit, *e, *c).clone(),
            ComponentValue::Text(text) => {
                serde_json::from_str(text.get()).map_err(|e| e.to_string())?
            }
        };
        *self = ComponentValue::Owned(Box::new(owned));
        self.to_mut()
    }
}

/// Whether the JSON text `raw` is an object (the check
/// [`Value::is_object`] makes of a parsed value).
pub(crate) fn is_object(raw: &RawValue) -> bool {
    raw.get().trim_start().starts_with('{')
}
