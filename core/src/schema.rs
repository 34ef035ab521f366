//! Field schemas: what a component type (or a JSON resource type) may contain.
//!
//! The compiler validates authored JSON against them, the editor's inspector builds its
//! widgets from them, and the dependency checker reads them to know which strings are
//! resource references and of which resource type.

use glam::{EulerRot, Quat, Vec3, Vec4};
use serde_json::Value;

use crate::path::{ResourceId, ResourcePath};

/// The type of one field.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// `true` / `false`.
    Bool,
    /// A whole number within a range.
    Int {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// A number within a range, stored as `f32`.
    Float {
        /// Smallest allowed value.
        min: f32,
        /// Largest allowed value.
        max: f32,
    },
    /// `[x, y, z]`.
    Vec3,
    /// Euler angles in degrees, `[x, y, z]`, applied in X, Y, Z order.
    Angles,
    /// `[r, g, b]` or `[r, g, b, a]`, each 0..=1.
    Color,
    /// Free text.
    Text,
    /// One of a fixed set of strings.
    Enum(Vec<String>),
    /// A canonical resource path without extension; the type is `resource_type`
    /// (the file extension). An empty string means "none".
    ResourceRef {
        /// The referenced resource's type, e.g. `"material"`.
        resource_type: String,
    },
    /// A list of resource references of one type.
    ResourceList {
        /// The referenced resources' type.
        resource_type: String,
    },
    /// Another entity of the same level, by its authoring id; `""` means none. In a
    /// prefab it names a part of the same instance. Compiled to the entity's index in
    /// the level, and made a runtime handle when the level spawns.
    Entity,
}

impl FieldKind {
    /// A short name for messages and the inspector: `number`, `vec3`, `material`...
    pub fn describe(&self) -> String {
        match self {
            FieldKind::Bool => "a boolean".into(),
            FieldKind::Int { min, max } => format!("a whole number in {min}..={max}"),
            FieldKind::Float { min, max } => format!("a number in {min}..={max}"),
            FieldKind::Vec3 => "an array of 3 numbers [x, y, z]".into(),
            FieldKind::Angles => "an array of 3 angles in degrees [x, y, z]".into(),
            FieldKind::Color => "a colour [r, g, b] or [r, g, b, a] with each in 0..=1".into(),
            FieldKind::Text => "a string".into(),
            FieldKind::Enum(options) => format!("one of {}", options.join(", ")),
            FieldKind::ResourceRef { resource_type } => {
                format!("a path to a .{resource_type} resource (without extension), or \"\"")
            }
            FieldKind::ResourceList { resource_type } => {
                format!("a list of paths to .{resource_type} resources")
            }
            FieldKind::Entity => "the id of an entity of the level, or \"\"".into(),
        }
    }
}

/// One field of a component or resource type.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSchema {
    /// The JSON key.
    pub name: String,
    /// Its type.
    pub kind: FieldKind,
    /// The value used when the field is left out.
    pub default: Value,
    /// One line for the inspector's tooltip.
    pub doc: String,
    /// For a vector, angles or a colour: the range each of its numbers must be in
    /// (a plugin's field declares one), beside what the kind itself requires.
    pub each_in: Option<(f64, f64)>,
}

impl FieldSchema {
    fn new(name: &str, kind: FieldKind, default: Value) -> Self {
        FieldSchema {
            name: name.into(),
            kind,
            default,
            doc: String::new(),
            each_in: None,
        }
    }
    /// Requires each number of a vector, angles or colour field to be in
    /// `min..=max`.
    pub fn each_in(mut self, min: f64, max: f64) -> Self {
        self.each_in = Some((min, max));
        self
    }
    /// A boolean field.
    pub fn bool(name: &str, default: bool) -> Self {
        Self::new(name, FieldKind::Bool, Value::Bool(default))
    }
    /// A whole-number field.
    pub fn int(name: &str, default: i64, min: i64, max: i64) -> Self {
        Self::new(name, FieldKind::Int { min, max }, default.into())
    }
    /// A number field.
    pub fn float(name: &str, default: f32, min: f32, max: f32) -> Self {
        Self::new(name, FieldKind::Float { min, max }, json_f32(default))
    }
    /// A vector field.
    pub fn vec3(name: &str, default: [f32; 3]) -> Self {
        Self::new(name, FieldKind::Vec3, json_f32s(&default))
    }
    /// An Euler-angles field, in degrees.
    pub fn angles(name: &str, default: [f32; 3]) -> Self {
        Self::new(name, FieldKind::Angles, json_f32s(&default))
    }
    /// A colour field.
    pub fn color(name: &str, default: [f32; 4]) -> Self {
        Self::new(name, FieldKind::Color, json_f32s(&default))
    }
    /// A text field.
    pub fn text(name: &str, default: &str) -> Self {
        Self::new(name, FieldKind::Text, default.into())
    }
    /// An enumeration field.
    pub fn enumeration(name: &str, options: &[&str], default: &str) -> Self {
        Self::new(
            name,
            FieldKind::Enum(options.iter().map(|s| s.to_string()).collect()),
            default.into(),
        )
    }
    /// A resource reference (empty by default).
    pub fn resource(name: &str, resource_type: &str) -> Self {
        Self::new(
            name,
            FieldKind::ResourceRef {
                resource_type: resource_type.into(),
            },
            "".into(),
        )
    }
    /// A list of resource references (empty by default).
    pub fn resource_list(name: &str, resource_type: &str) -> Self {
        Self::new(
            name,
            FieldKind::ResourceList {
                resource_type: resource_type.into(),
            },
            Value::Array(vec![]),
        )
    }
    /// A reference to another entity of the level (none by default).
    pub fn entity(name: &str) -> Self {
        Self::new(name, FieldKind::Entity, "".into())
    }
    /// Sets the tooltip.
    pub fn doc(mut self, doc: &str) -> Self {
        self.doc = doc.into();
        self
    }

    /// The resource type this field references, if it is a reference or a list of them.
    pub fn referenced_type(&self) -> Option<&str> {
        match &self.kind {
            FieldKind::ResourceRef { resource_type }
            | FieldKind::ResourceList { resource_type } => Some(resource_type),
            _ => None,
        }
    }

    /// Checks `value` against this field; returns a sentence saying what is wrong.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        self.check_kind(value)?;
        if let Some((min, max)) = self.each_in
            && matches!(
                self.kind,
                FieldKind::Vec3 | FieldKind::Angles | FieldKind::Color
            )
            && let Some(n) = numbers(value)
            && !n.iter().all(|v| (min..=max).contains(v))
        {
            return Err(format!(
                "expected {} with each number in {min}..={max}, found {}",
                self.kind.describe(),
                short(value)
            ));
        }
        Ok(())
    }

    /// [`FieldSchema::check`] of what the kind alone requires.
    fn check_kind(&self, value: &Value) -> Result<(), String> {
        let wrong = || {
            Err(format!(
                "expected {}, found {}",
                self.kind.describe(),
                short(value)
            ))
        };
        // Numbers are stored as 32-bit floats: a value beyond their range would
        // become infinity at spawn, so it is refused here, with the range.
        let too_big = |v: &Value| {
            v.as_f64()
                .is_some_and(|f| f.is_finite() && f.abs() > f32::MAX as f64)
        };
        let oversized = match value {
            Value::Array(items) => items.iter().find(|v| too_big(v)),
            v if too_big(v) => Some(v),
            _ => None,
        };
        if let Some(v) = oversized
            && !matches!(self.kind, FieldKind::Int { .. })
        {
            return Err(format!(
                "{} is outside the range of a 32-bit float (-3.4e38 to 3.4e38)",
                short(v)
            ));
        }
        match &self.kind {
            FieldKind::Bool => {
                if value.is_boolean() {
                    Ok(())
                } else {
                    wrong()
                }
            }
            FieldKind::Int { min, max } => match value.as_i64() {
                Some(v) if (*min..=*max).contains(&v) => Ok(()),
                _ => wrong(),
            },
            FieldKind::Float { min, max } => match value.as_f64() {
                Some(v) if v.is_finite() && (*min as f64..=*max as f64).contains(&v) => Ok(()),
                _ => wrong(),
            },
            FieldKind::Vec3 | FieldKind::Angles => match numbers(value) {
                Some(n) if n.len() == 3 => Ok(()),
                _ => wrong(),
            },
            FieldKind::Color => match numbers(value) {
                Some(n)
                    if (n.len() == 3 || n.len() == 4)
                        && n.iter().all(|c| (0.0..=1.0).contains(c)) =>
                {
                    Ok(())
                }
                _ => wrong(),
            },
            FieldKind::Text | FieldKind::Entity => {
                if value.is_string() {
                    Ok(())
                } else {
                    wrong()
                }
            }
            FieldKind::Enum(options) => match value.as_str() {
                Some(s) if options.iter().any(|o| o == s) => Ok(()),
                _ => wrong(),
            },
            FieldKind::ResourceRef { .. } => match value.as_str() {
                Some("") => Ok(()),
                Some(s) => ResourcePath::parse(s)
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                None => wrong(),
            },
            FieldKind::ResourceList { .. } => match value.as_array() {
                Some(items) => items.iter().try_for_each(|item| match item.as_str() {
                    Some(s) => ResourcePath::parse(s)
                        .map(|_| ())
                        .map_err(|e| e.to_string()),
                    None => wrong(),
                }),
                None => wrong(),
            },
        }
    }
}

fn numbers(value: &Value) -> Option<Vec<f64>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_f64().filter(|f| f.is_finite()))
        .collect()
}

/// A value in an error message, shortened.
pub(crate) fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 40 {
        format!("{}...", &text[..text.floor_char_boundary(37)])
    } else {
        text
    }
}

/// An `f32` as a JSON number that prints as the shortest decimal (0.1, not 0.10000000149).
pub fn json_f32(v: f32) -> Value {
    // -0.0 (a rotation dragged back through zero) is saved as 0: saves stay stable
    // and diffs minimal.
    let v = if v == 0.0 { 0.0 } else { v };
    // A whole number is written as one (`0`, not `0.0`), as people write them and as
    // the canonical writer prints every number: one form in a file, whoever wrote it.
    if let Some(whole) = crate::json_format::whole_number(f64::from(v)) {
        return Value::Number(whole.into());
    }
    let shortest: f64 = v.to_string().parse().unwrap_or(v as f64);
    serde_json::Number::from_f64(shortest).map_or(Value::Null, Value::Number)
}

/// Several `f32` as a JSON array.
pub fn json_f32s(vs: &[f32]) -> Value {
    Value::Array(vs.iter().map(|&v| json_f32(v)).collect())
}

/// The validated fields of one component instance, defaults filled in, in schema
/// order. Getters cannot fail for fields of the right kind; a wrong name or kind is a
/// bug in the component's compile function and yields a zero value.
#[derive(Clone)]
pub struct FieldValues<'a> {
    schema: &'a [FieldSchema],
    values: Vec<Value>,
    /// Finds the level index of the entity an entity field names.
    entities: Option<EntityLookup<'a>>,
}

impl std::fmt::Debug for FieldValues<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FieldValues")
            .field("values", &self.values)
            .finish_non_exhaustive()
    }
}

/// Finds the index in the level being compiled of the entity an id names.
pub type EntityLookup<'a> = &'a dyn Fn(&str) -> Option<u32>;

/// What an entity field compiles to when it names no entity.
pub const NO_ENTITY_INDEX: u32 = u32::MAX;

impl<'a> FieldValues<'a> {
    /// Validates `object` against `schema`: every key must be a known field of the
    /// right type. On error returns the field name and the reason.
    pub fn validate(
        schema: &'a [FieldSchema],
        object: &serde_json::Map<String, Value>,
    ) -> Result<Self, (String, String)> {
        for (key, value) in object {
            match schema.iter().find(|f| &f.name == key) {
                Some(field) => field.check(value).map_err(|e| (key.clone(), e))?,
                None => {
                    let known: Vec<&str> = schema.iter().map(|f| f.name.as_str()).collect();
                    return Err((
                        key.clone(),
                        format!("unknown field; known fields are: {}", known.join(", ")),
                    ));
                }
            }
        }
        let values = schema
            .iter()
            .map(|f| {
                object
                    .get(&f.name)
                    .cloned()
                    .unwrap_or_else(|| f.default.clone())
            })
            .collect();
        Ok(FieldValues {
            schema,
            values,
            entities: None,
        })
    }

    /// The values, with entity fields found by `lookup` (the compiler's: id -> the
    /// entity's index in the level being compiled).
    pub fn with_entities(mut self, lookup: EntityLookup<'a>) -> Self {
        self.entities = Some(lookup);
        self
    }

    /// An entity field as the index in the level of the entity it names, or
    /// [`NO_ENTITY_INDEX`] when it names none (the compiler refuses a name that is
    /// not an entity of the level before this is called). The spawner makes it a
    /// runtime handle: [`crate::SpawnContext::entity`].
    pub fn entity_index(&self, name: &str) -> u32 {
        let id = self.text(name);
        if id.is_empty() {
            return NO_ENTITY_INDEX;
        }
        (self.entities)
            .and_then(|lookup| lookup(id))
            .unwrap_or(NO_ENTITY_INDEX)
    }

    /// The names and values of the entity fields that name an entity (not `""`).
    pub fn entity_references(&self) -> impl Iterator<Item = (&str, &str)> {
        (self.schema.iter().zip(&self.values))
            .filter(|(f, _)| f.kind == FieldKind::Entity)
            .filter_map(|(f, v)| Some((f.name.as_str(), v.as_str()?)))
            .filter(|(_, v)| !v.is_empty())
    }

    fn get(&self, name: &str) -> Option<(&FieldSchema, &Value)> {
        let i = self.schema.iter().position(|f| f.name == name)?;
        Some((&self.schema[i], &self.values[i]))
    }

    /// A number field.
    pub fn f32(&self, name: &str) -> f32 {
        self.get(name).and_then(|(_, v)| v.as_f64()).unwrap_or(0.0) as f32
    }
    /// A whole-number field.
    pub fn i64(&self, name: &str) -> i64 {
        self.get(name).and_then(|(_, v)| v.as_i64()).unwrap_or(0)
    }
    /// A boolean field.
    pub fn bool(&self, name: &str) -> bool {
        self.get(name)
            .and_then(|(_, v)| v.as_bool())
            .unwrap_or(false)
    }
    /// A text or enum field.
    pub fn text(&self, name: &str) -> &str {
        self.get(name).and_then(|(_, v)| v.as_str()).unwrap_or("")
    }
    /// The index of an enum field's value among its options.
    pub fn enum_index(&self, name: &str) -> u32 {
        match self.get(name) {
            Some((
                FieldSchema {
                    kind: FieldKind::Enum(options),
                    ..
                },
                Value::String(s),
            )) => options.iter().position(|o| o == s).unwrap_or(0) as u32,
            _ => 0,
        }
    }
    /// A vector field.
    pub fn vec3(&self, name: &str) -> Vec3 {
        let n = self
            .get(name)
            .and_then(|(_, v)| numbers(v))
            .unwrap_or_default();
        Vec3::new(
            n.first().copied().unwrap_or(0.0) as f32,
            n.get(1).copied().unwrap_or(0.0) as f32,
            n.get(2).copied().unwrap_or(0.0) as f32,
        )
    }
    /// An angles field as a rotation.
    pub fn rotation(&self, name: &str) -> Quat {
        let d = self.vec3(name);
        Quat::from_euler(
            EulerRot::XYZ,
            d.x.to_radians(),
            d.y.to_radians(),
            d.z.to_radians(),
        )
    }
    /// A colour field; alpha defaults to 1.
    pub fn color(&self, name: &str) -> Vec4 {
        let n = self
            .get(name)
            .and_then(|(_, v)| numbers(v))
            .unwrap_or_default();
        let c = |i: usize, d: f64| n.get(i).copied().unwrap_or(d) as f32;
        Vec4::new(c(0, 0.0), c(1, 0.0), c(2, 0.0), c(3, 1.0))
    }
    /// A reference field's path, `None` when empty.
    pub fn resource(&self, name: &str) -> Option<ResourcePath> {
        let s = self.get(name)?.1.as_str()?;
        ResourcePath::parse(s).ok()
    }
    /// A reference field as the runtime id of path + the schema's resource type.
    pub fn resource_id(&self, name: &str) -> ResourceId {
        match self.get(name) {
            Some((field, Value::String(s))) => {
                match (field.referenced_type(), ResourcePath::parse(s)) {
                    (Some(ty), Ok(path)) => ResourceId::of(&path, ty),
                    _ => ResourceId::NONE,
                }
            }
            _ => ResourceId::NONE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Vec<FieldSchema> {
        vec![
            FieldSchema::float("mass", 1.0, 0.0, 100.0),
            FieldSchema::vec3("velocity", [0.0; 3]),
            FieldSchema::resource("material", "material"),
            FieldSchema::enumeration("shape", &["cube", "sphere"], "cube"),
        ]
    }

    #[test]
    fn defaults_fill_missing_fields() {
        let s = schema();
        let obj = json!({"velocity": [1, 2, 3], "shape": "sphere"});
        let v = FieldValues::validate(&s, obj.as_object().unwrap()).unwrap();
        assert_eq!(v.f32("mass"), 1.0);
        assert_eq!(v.vec3("velocity"), Vec3::new(1.0, 2.0, 3.0));
        assert_eq!(v.enum_index("shape"), 1);
        assert_eq!(v.resource_id("material"), ResourceId::NONE);
    }

    #[test]
    fn bad_fields_are_named() {
        let s = schema();
        for (obj, field, needle) in [
            (json!({"mass": "heavy"}), "mass", "expected a number"),
            (json!({"mass": 1000}), "mass", "0..=100"),
            (json!({"velocity": [1, 2]}), "velocity", "3 numbers"),
            (json!({"colour": 1}), "colour", "unknown field"),
            (
                json!({"material": "Materials/Bark"}),
                "material",
                "materials/bark",
            ),
            (json!({"shape": "blob"}), "shape", "one of cube, sphere"),
        ] {
            let (f, reason) = FieldValues::validate(&s, obj.as_object().unwrap()).unwrap_err();
            assert_eq!(f, field);
            assert!(reason.contains(needle), "{reason}");
        }
    }

    #[test]
    fn json_f32_prints_shortest() {
        assert_eq!(json_f32(0.1).to_string(), "0.1");
        assert_eq!(json_f32(2.0).to_string(), "2");
    }
}
