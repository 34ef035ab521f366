//! What a string of a file is: a reference typed by the registry's schemas or the
//! project's declared rules, a field known not to be one, a relative URI (glTF), or
//! an uncovered string kept as a generic candidate if it could name a file.

use kiln_core::{FieldKind, FieldSchema};

use super::rules::{Decision, DeclaredRules, PathSegment};
use super::scanner::{Scanner, Schema, Segment};
use super::store::FULL_PATH;
use super::store::{NO_TEXT, Naming, RefRecord};

/// What a string value at some path is.
enum Class<'r> {
    Typed(&'r str),
    NotReference,
    Generic,
    /// A relative URI (unless it has a scheme: then it names no file).
    Uri,
    /// A declared rule with conditions on sibling fields matches: decided once the
    /// whole file is read (see `decide_pending`).
    Pending,
}

/// Whether a file of an unregistered type whose content does not parse should be
/// reported: it is meant to be JSON (a `.json` file, a type the project declares
/// rules for, or content that opens like JSON), so its references are invisible.
pub(super) fn meant_as_json(rules: &DeclaredRules, ext: &str, bytes: &[u8]) -> bool {
    ext == "json"
        || rules.declares(ext)
        || (matches!(
            bytes.iter().find(|b| !b.is_ascii_whitespace()),
            Some(b'{' | b'[')
        ) && !opens_with_a_section_header(bytes))
}

/// Whether the first line is an INI or TOML section header (`[package]`,
/// `[[bin]]`, `[Section.sub]`): such files open like a JSON array but are not one
/// (`Cargo.toml`, a tool's `.ini`), and are no more broken JSON than a script.
fn opens_with_a_section_header(bytes: &[u8]) -> bool {
    let text = bytes.trim_ascii_start();
    let line = text
        .split(|&b| b == b'\n')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    let inner = line
        .strip_prefix(b"[[")
        .and_then(|l| l.strip_suffix(b"]]"))
        .or_else(|| line.strip_prefix(b"[").and_then(|l| l.strip_suffix(b"]")));
    inner.is_some_and(|name| {
        name.first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
            && name
                .iter()
                .all(|c| c.is_ascii_alphanumeric() || b"_-. ".contains(c))
    })
}

/// Whether `text` could be the path of a file in the index (or such a path without
/// its extension): relative, no empty, `.`, `..` or hidden segment, not inside a
/// folder that holds no resources. Only such strings can name a file, whatever
/// their spelling, so only they are kept as generic candidates.
pub fn could_name_a_file(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 4096
        && !kiln_core::fs::is_excluded(text)
        && text.split('/').all(|segment| !segment.is_empty())
}

impl<'a, 'r> Scanner<'a, 'r> {
    fn key(&self, i: usize) -> Option<&'a str> {
        match self.path.get(i)? {
            Segment::Key(key) => Some(key),
            // Escaped keys never name a schema field.
            _ => None,
        }
    }

    fn index(&self, i: usize) -> Option<u32> {
        match self.path.get(i)? {
            Segment::Index(n) => Some(*n),
            _ => None,
        }
    }

    fn classify_field(
        &self,
        fields: &'r [FieldSchema],
        field: Option<&str>,
        rest: usize,
    ) -> Class<'r> {
        let Some(f) = field.and_then(|name| fields.iter().find(|f| f.name == name)) else {
            return Class::Generic;
        };
        match (&f.kind, rest) {
            (FieldKind::ResourceRef { resource_type }, 0)
            | (FieldKind::ResourceList { resource_type }, 1) => Class::Typed(resource_type),
            _ => Class::NotReference,
        }
    }

    /// Classifies the string at the current path; also returns (entity index,
    /// component) context for levels. Where no built-in schema decides, the
    /// project's declared rules may make the string a typed reference.
    fn classify(&self) -> (Class<'r>, Option<u32>, Option<&'a str>) {
        let (class, entity, component) = self.classify_by_schema();
        match (class, self.rules) {
            (Class::Generic, Some(rules)) => {
                let decoded: Vec<Option<String>> = self
                    .path
                    .iter()
                    .map(|seg| match seg {
                        Segment::EscapedKey(s, e) => self.decode(*s as usize, *e as usize, true),
                        _ => None,
                    })
                    .collect();
                let path: Vec<PathSegment> = self
                    .path
                    .iter()
                    .zip(&decoded)
                    .map(|(seg, text)| match seg {
                        Segment::Key(k) => PathSegment::Key(k),
                        Segment::Index(n) => PathSegment::Index(*n),
                        Segment::EscapedKey(..) => PathSegment::Key(text.as_deref().unwrap_or("")),
                    })
                    .collect();
                let class = match rules.decide(self.ext, &path, None) {
                    Decision::Typed(ty) => Class::Typed(ty),
                    Decision::FullPath => Class::Typed(FULL_PATH),
                    Decision::NotReference => Class::NotReference,
                    Decision::NoRule => Class::Generic,
                    Decision::NeedsSiblings => Class::Pending,
                };
                (class, entity, component)
            }
            other => (other.0, entity, component),
        }
    }

    fn classify_by_schema(&self) -> (Class<'r>, Option<u32>, Option<&'a str>) {
        match self.schema {
            Schema::Generic => (Class::Generic, None, None),
            Schema::Gltf => {
                let uri = self.path.len() == 3
                    && matches!(self.key(0), Some("buffers" | "images"))
                    && self.index(1).is_some()
                    && self.key(2) == Some("uri");
                let class = if uri { Class::Uri } else { Class::NotReference };
                (class, None, None)
            }
            Schema::Fields(fields) => {
                let rest = self.path.len().saturating_sub(1);
                (self.classify_field(fields, self.key(0), rest), None, None)
            }
            Schema::Entities => {
                if self.key(0) != Some("entities") {
                    return (Class::Generic, None, None);
                }
                let Some(n) = self.index(1) else {
                    return (Class::Generic, None, None);
                };
                let class_in_component = |component_at: usize| -> (Class<'r>, Option<&'a str>) {
                    let Some(component) = self.key(component_at) else {
                        return (Class::Generic, None);
                    };
                    let Some(ty) = self.registry.component(component) else {
                        return (Class::Generic, Some(component));
                    };
                    // An array of instances for types that allow several.
                    let mut at = component_at + 1;
                    if self.index(at).is_some() {
                        at += 1;
                    }
                    let rest = self.path.len().saturating_sub(at + 1);
                    (
                        self.classify_field(&ty.fields, self.key(at), rest),
                        Some(component),
                    )
                };
                match (self.key(2), self.path.len()) {
                    (Some("prefab"), 3) => (Class::Typed("unit"), Some(n), None),
                    (Some("id" | "name" | "parent"), 3) => (Class::NotReference, Some(n), None),
                    (Some("components"), len) if len >= 5 => {
                        let (c, comp) = class_in_component(3);
                        (c, Some(n), comp)
                    }
                    (Some("overrides"), len) if len >= 6 => {
                        let (c, comp) = class_in_component(4);
                        (c, Some(n), comp)
                    }
                    _ => (Class::Generic, Some(n), None),
                }
            }
        }
    }

    pub(super) fn string_value(&mut self, start: usize, end: usize, escaped: bool) {
        // Keep the entity ids of levels and units for the references' context.
        if matches!(self.schema, Schema::Entities)
            && self.path.len() == 3
            && self.key(0) == Some("entities")
            && self.key(2) == Some("id")
            && let Some(n) = self.index(1)
        {
            let id = self.decode(start, end, escaped);
            let n = n as usize;
            if self.entity_ids.len() <= n {
                self.entity_ids.resize(n + 1, None);
            }
            self.entity_ids[n] = id;
            return;
        }
        if start == end {
            return;
        }
        let (class, entity, component) = self.classify();
        let pending = matches!(class, Class::Pending);
        let (expected_type, naming) = match class {
            Class::NotReference => return,
            Class::Typed(t) => (Some(t), Naming::ProjectPath),
            Class::Generic | Class::Pending => (None, Naming::ProjectPath),
            Class::Uri => (None, Naming::RelativeUri),
        };
        // Text: borrowed straight from the file unless it has escapes.
        let decoded;
        let text: &str = if escaped {
            match self.decode(start, end, true) {
                Some(t) => {
                    decoded = t;
                    &decoded
                }
                None => return,
            }
        } else {
            match self.text.get(start..end) {
                Some(t) => t,
                None => return,
            }
        };
        match naming {
            // `data:` embeds the bytes, `http:` and other schemes name no file here.
            Naming::RelativeUri if kiln_core::gltf::has_scheme(text) => return,
            Naming::RelativeUri => {}
            Naming::ProjectPath
                if !pending && expected_type.is_none() && !could_name_a_file(text) =>
            {
                return;
            }
            Naming::ProjectPath => {}
        }
        // The opening quote.
        let (line, column) = self.line_at(start - 1);
        let mut pointer = std::mem::take(&mut self.pointer_buf);
        self.write_pointer(&mut pointer);
        let text = self.scan.intern(text, &mut NO_TEXT.clone());
        let pointer_range = self.scan.intern(&pointer, &mut NO_TEXT.clone());
        self.pointer_buf = pointer;
        let expected_type = match expected_type {
            Some(t) => {
                let mut last = self.last_type;
                let r = self.scan.intern(t, &mut last);
                self.last_type = last;
                r
            }
            None => NO_TEXT,
        };
        let component = match component {
            Some(c) => {
                let mut last = self.last_component;
                let r = self.scan.intern(c, &mut last);
                self.last_component = last;
                r
            }
            None => NO_TEXT,
        };
        self.scan.records.push(RefRecord {
            text,
            span: (start as u32, end as u32),
            line,
            column,
            pointer: pointer_range,
            expected_type,
            entity: NO_TEXT,
            component,
            naming,
        });
        self.ref_entity.push(entity.unwrap_or(u32::MAX));
        if pending {
            self.pending.push(self.scan.records.len() - 1);
        }
    }
}

/// The object `pointer` (a JSON pointer to a string) sits in, directly or
/// through arrays: where a rule's conditions look for sibling fields.
fn enclosing_objects<'v>(
    root: &'v serde_json::Value,
    path: &[PathSegment],
) -> Vec<&'v serde_json::Map<String, serde_json::Value>> {
    let mut out = Vec::new();
    let Some(last_key) = path.iter().rposition(|s| matches!(s, PathSegment::Key(_))) else {
        return out;
    };
    let mut at = Some(root);
    for segment in &path[..last_key] {
        if let Some(object) = at.and_then(|v| v.as_object()) {
            out.push(object);
        }
        at = at.and_then(|v| match segment {
            PathSegment::Key(k) => v.get(*k),
            PathSegment::Index(n) => v.get(*n as usize),
        });
    }
    // The object holding the string's field: every condition needs it (an empty
    // one where it is not an object).
    match at.and_then(|v| v.as_object()) {
        Some(object) => out.push(object),
        None => return Vec::new(),
    }
    out.reverse();
    out
}

/// Decides the references a conditional rule left pending (`pending`: their
/// records' numbers), now that the whole of `bytes` is known to be JSON: each
/// becomes typed, a full path, no reference, or a generic candidate. Returns the
/// records to drop.
pub(super) fn decide_pending(
    scan: &mut super::store::FileScan,
    (rules, ext): (&DeclaredRules, &str),
    bytes: &[u8],
    pending: &[usize],
) -> Vec<usize> {
    let root: Option<serde_json::Value> = serde_json::from_slice(bytes).ok();
    let mut drop = Vec::new();
    for &i in pending {
        let Some(view) = scan.get(i) else { continue };
        let keys: Vec<String> = view
            .pointer
            .split('/')
            .skip(1)
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect();
        // Array indices are the segments that are numbers where the value is an
        // array: read them as the scanner did, from the document.
        let mut path: Vec<PathSegment> = Vec::with_capacity(keys.len());
        let mut at = root.as_ref();
        for key in &keys {
            let index = at
                .filter(|v| v.is_array())
                .and_then(|_| key.parse::<u32>().ok());
            path.push(match index {
                Some(n) => PathSegment::Index(n),
                None => PathSegment::Key(key),
            });
            at = at.and_then(|v| match index {
                Some(n) => v.get(n as usize),
                None => v.get(key.as_str()),
            });
        }
        let enclosing = root
            .as_ref()
            .map(|r| enclosing_objects(r, &path))
            .unwrap_or_default();
        let decision = rules.decide(ext, &path, Some(&enclosing));
        let text = view.text.to_owned();
        let ty = match decision {
            Decision::Typed(t) => Some(t),
            Decision::FullPath => Some(FULL_PATH),
            Decision::NoRule | Decision::NeedsSiblings if could_name_a_file(&text) => None,
            _ => {
                drop.push(i);
                continue;
            }
        };
        if let (Some(ty), Some(record)) = (ty, scan.records.get(i).copied()) {
            let range = scan.intern(ty, &mut NO_TEXT.clone());
            scan.records[i] = super::store::RefRecord {
                expected_type: range,
                ..record
            };
        }
    }
    drop
}
