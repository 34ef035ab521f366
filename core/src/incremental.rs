//! Incremental compilation of one level: what a live preview (`kiln watch`, the
//! editor) keeps between saves, so that a save which changed a few entities'
//! fields costs what those entities cost, not what the level costs.
//!
//! A save rewrites the whole file, but an editor (Kiln's included) writes the
//! same bytes for what did not change. So the last text is kept with the byte
//! span of each entity, and a new text is compared with it from both ends: what
//! lies between the first and the last differing byte is all that changed. When
//! that lies inside entities of the level, only those entities are read. Each one
//! whose fields alone changed (same id, name, parent, prefab and components, in
//! the same order) has the changed components validated and compiled again, and
//! their instance bytes written over the old ones in the blob. Anything else (an
//! entity added, removed, moved or renamed, a prefab instance, a component added
//! or removed, an instance whose size changed, an error) compiles the whole level,
//! as a fresh `kiln compile` does: the fast path never decides an error.
//!
//! ```
//! use std::collections::HashMap;
//! use kiln_core::incremental::{IncrementalLevel, Update};
//! use kiln_core::{CompileOptions, Registry};
//!
//! let registry = Registry::with_builtins();
//! let mut units: HashMap<String, String> = HashMap::new();
//! let text = r#"{"entities": [{"id": "a", "components": {"transform": {"position": [1, 0, 0]}}}]}"#;
//! let (mut level, _) =
//!     IncrementalLevel::compile(&registry, &mut units, "l.level", text, CompileOptions::default())
//!         .unwrap();
//! let moved = text.replace("[1, 0, 0]", "[2, 0, 0]");
//! let update = level.update(&registry, &mut units, &moved).unwrap();
//! assert!(matches!(update, Update::Patched { .. }));
//! let fresh = kiln_core::compiler::compile_level(&registry, &mut units, "l.level", &moved).unwrap();
//! assert_eq!(level.blob(), &fresh.blob[..]);
//! ```

use std::ops::Range;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::compiler::{
    BlobLayout, CompileError, CompileOptions, CompiledLevel, ResourceSource, compile_level_layout,
};
use crate::flat_component::ComponentValue;
use crate::raw_level::RawEntityDocument;
use crate::registry::Registry;
use crate::schema::FieldValues;
use crate::spawn::PatchedInstances;

/// From this size on, a preview prepares a level it is about to watch for its
/// first save (see [`IncrementalLevel::prepare_updates`]); below it, the first
/// save finds the entities in a few milliseconds.
pub const PREPARED_FROM: usize = 256 * 1024;

/// How the last update reached its blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// The text is the one compiled last: nothing to do.
    Unchanged,
    /// Only fields of these entities (authoring ids) changed; their instances were
    /// compiled again and written over the old ones.
    Patched {
        /// The entities whose instances changed (authoring ids).
        entities: Vec<String>,
        /// Their places among the level's entities, in file order (see
        /// [`IncrementalLevel::entity_text`]).
        positions: Vec<usize>,
        /// The instances written over, for [`crate::spawn::SpawnedLevel::patch`] to
        /// write into a running world.
        instances: Vec<PatchedInstances>,
    },
    /// The whole level was compiled again, for this reason.
    Full {
        /// Why the fast path did not apply (shown in a status line).
        reason: String,
    },
}

impl Update {
    /// A short name of the path taken, for a log or status line.
    pub fn path(&self) -> &'static str {
        match self {
            Update::Unchanged => "unchanged",
            Update::Patched { .. } => "incremental",
            Update::Full { .. } => "full",
        }
    }
}

/// One level, compiled, with what updating it incrementally needs.
#[derive(Debug, Clone)]
pub struct IncrementalLevel {
    file: String,
    options: CompileOptions,
    text: String,
    /// Byte span of each entity object of the level in `text`, in file order.
    /// Found on the first update, not at the first build: every level `kiln watch`
    /// builds is not saved, and finding them is a second pass over the text.
    spans: Option<Vec<Range<usize>>>,
    compiled: CompiledLevel,
    layout: BlobLayout,
}

/// The byte spans of the level's entity objects in `text`, or `None` if the
/// text is not an object with an `entities` array (the compile has reported
/// that).
fn entity_spans(text: &str) -> Option<Vec<Range<usize>>> {
    let top = crate::raw_level::EntityTexts::read(text).ok()?;
    top.entities
        .iter()
        .map(|e| offset_in(text, e.get()))
        .collect()
}

/// Bytes compared at once when looking for where two texts differ: a byte at a
/// time, the comparison was a fifth of a 100,000-entity save (28 MB each way);
/// a block at a time it is `memcmp`'s.
const COMPARED_AT_ONCE: usize = 4096;

/// How many bytes `a` and `b` start with in common.
pub(crate) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let blocks = (a.chunks(COMPARED_AT_ONCE).zip(b.chunks(COMPARED_AT_ONCE)))
        .take_while(|(x, y)| x == y)
        .count();
    let at = (blocks * COMPARED_AT_ONCE).min(a.len()).min(b.len());
    at + (a[at..].iter().zip(&b[at..]))
        .take_while(|(x, y)| x == y)
        .count()
}

/// How many bytes `a` and `b` end with in common.
pub(crate) fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let blocks = (a.rchunks(COMPARED_AT_ONCE).zip(b.rchunks(COMPARED_AT_ONCE)))
        .take_while(|(x, y)| x == y)
        .count();
    let at = (blocks * COMPARED_AT_ONCE).min(a.len()).min(b.len());
    let (a, b) = (&a[..a.len() - at], &b[..b.len() - at]);
    at + (a.iter().rev().zip(b.iter().rev()))
        .take_while(|(x, y)| x == y)
        .count()
}

/// The range `part` (a slice of `whole`) covers in `whole`.
fn offset_in(whole: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    (start + part.len() <= whole.len()).then(|| start..start + part.len())
}

/// What must stay the same for an entity to be patched in place.
fn same_structure(a: &RawEntityDocument, b: &RawEntityDocument) -> bool {
    a.id == b.id
        && a.name == b.name
        && a.parent.as_ref().map(|p| &p.0) == b.parent.as_ref().map(|p| &p.0)
        && a.prefab.is_none()
        && b.prefab.is_none()
        && a.overrides.is_none()
        && b.overrides.is_none()
        && a.components.0.len() == b.components.0.len()
        && a.components
            .0
            .iter()
            .zip(&b.components.0)
            .all(|(x, y)| x.name == y.name)
}

/// The instance bytes of one component value of type `name`, as the full compile
/// makes them, or `None` where it would report an error or lay the instances out
/// otherwise (the caller then compiles the whole level).
fn compile_instances(registry: &Registry, name: &str, value: &RawValue) -> Option<Vec<Vec<u8>>> {
    let value: Value = serde_json::from_str(value.get()).ok()?;
    compile_value(registry, name, &value)
}

/// [`compile_instances`] of a parsed value.
fn compile_value(registry: &Registry, name: &str, value: &Value) -> Option<Vec<Vec<u8>>> {
    let ty = registry.component(name)?;
    // An entity field compiles to an index in the whole level: not patched alone.
    if ty.implicit || ty.refers_to_entities() {
        return None;
    }
    let items: Vec<&Value> = match value {
        Value::Object(_) => vec![value],
        Value::Array(items) if ty.multiple => items.iter().collect(),
        _ => return None,
    };
    items
        .into_iter()
        .map(|item| {
            let values = FieldValues::validate(&ty.fields, item.as_object()?).ok()?;
            let mut out = Vec::new();
            (ty.compile)(&values, &mut out).ok()?;
            Some(out)
        })
        .collect()
}

/// Where a compiled document's own entities' instances are in its blob: what an
/// editor needs to write a field it changed over the instances it compiles to,
/// instead of compiling the level again.
///
/// ```
/// use std::collections::HashMap;
/// use kiln_core::incremental::DocumentLayout;
/// use kiln_core::{CompileOptions, LevelDocument, Registry};
///
/// let registry = Registry::with_builtins();
/// let mut units: HashMap<String, String> = HashMap::new();
/// let text = r#"{"entities": [{"id": "a", "components": {"transform": {"position": [1, 0, 0]}}}]}"#;
/// let mut doc = LevelDocument::parse(text, "l.level").unwrap();
/// let (compiled, layout) =
///     DocumentLayout::compile(&registry, &mut units, "l.level", &doc, CompileOptions::default())
///         .unwrap();
/// let mut blob = compiled.blob;
/// doc.entities[0].components["transform"]["position"][0] = 2.into();
/// let value = &doc.entities[0].components["transform"];
/// let (patch, bytes) = layout.rewrite(&registry, 0, "transform", value).unwrap();
/// for (range, bytes) in patch.ranges.iter().zip(bytes) {
///     blob[range.clone()].copy_from_slice(&bytes);
/// }
/// let fresh = kiln_core::compile_document(&registry, &mut units, "l.level", &doc).unwrap();
/// assert_eq!(blob, fresh.blob);
/// ```
#[derive(Debug, Clone, Default)]
pub struct DocumentLayout(BlobLayout);

impl DocumentLayout {
    /// Compiles `doc` (the level `file`), saying where its entities' instances are.
    pub fn compile(
        registry: &Registry,
        source: &mut dyn ResourceSource,
        file: &str,
        doc: &crate::level::LevelDocument,
        options: CompileOptions,
    ) -> Result<(CompiledLevel, DocumentLayout), CompileError> {
        crate::compiler::compile_document_layout(registry, source, file, doc, options)
            .map(|(compiled, layout)| (compiled, DocumentLayout(layout)))
    }

    /// The instances entity `k` (its place in the document) has of type
    /// `component` once its value is `value`: where they are in the blob and
    /// their new bytes. `None` where the whole level must be compiled: a type not
    /// registered or made by the compiler, a value the compile refuses, or
    /// instances of another number or size than the blob holds.
    pub fn rewrite(
        &self,
        registry: &Registry,
        k: usize,
        component: &str,
        value: &Value,
    ) -> Option<(PatchedInstances, Vec<Vec<u8>>)> {
        let ty = registry.component(component)?;
        let slots = self.0.level_instances.get(k)?;
        let ranges: Vec<Range<usize>> = (slots.iter())
            .filter(|(id, _)| *id == ty.id)
            .map(|(_, range)| range.clone())
            .collect();
        let compiled = compile_value(registry, component, value)?;
        if compiled.len() != ranges.len()
            || ranges.is_empty()
            || (ranges.iter().zip(&compiled)).any(|(r, bytes)| r.len() != bytes.len())
        {
            return None;
        }
        let patch = PatchedInstances {
            entity: *self.0.level_blob_index.get(k)?,
            component_identifier: ty.id,
            ranges,
        };
        Some((patch, compiled))
    }
}

impl IncrementalLevel {
    /// Compiles `text`, the level `file`, in full, keeping what later updates need.
    pub fn compile(
        registry: &Registry,
        source: &mut dyn ResourceSource,
        file: &str,
        text: &str,
        options: CompileOptions,
    ) -> Result<(Self, Update), CompileError> {
        let (compiled, layout) =
            compile_level_layout(registry, source, file, text, (options, true))?;
        let text = crate::json_format::without_bom(text).to_owned();
        let level = IncrementalLevel {
            file: file.to_owned(),
            options,
            text,
            spans: None,
            compiled,
            layout,
        };
        Ok((
            level,
            Update::Full {
                reason: "first build".into(),
            },
        ))
    }

    /// The size of the text as of the last update, in bytes.
    pub fn text_len(&self) -> usize {
        self.text.len()
    }

    /// The compiled level as of the last update.
    pub fn compiled(&self) -> &CompiledLevel {
        &self.compiled
    }

    /// Finds where each entity is in the text now, which the first update
    /// would: for a big level a preview is about to watch (a pass over 28 MB at
    /// 100,000 entities, which its first save would otherwise wait for).
    pub fn prepare_updates(&mut self) {
        if self.spans.is_none() {
            self.spans = Some(entity_spans(&self.text).unwrap_or_default());
        }
    }

    /// The blob as of the last update.
    pub fn blob(&self) -> &[u8] {
        &self.compiled.blob
    }

    /// Brings the level to `text`: patched in place where only fields of
    /// entities changed, compiled in full otherwise. On an error, the level stays
    /// as it was (the last good blob), and the error is the full compile's.
    pub fn update(
        &mut self,
        registry: &Registry,
        source: &mut dyn ResourceSource,
        text: &str,
    ) -> Result<Update, CompileError> {
        let text = crate::json_format::without_bom(text);
        if text == self.text {
            return Ok(Update::Unchanged);
        }
        let reason = match self.patch(registry, text) {
            Ok(patched) => return Ok(patched),
            Err(reason) => reason,
        };
        let (level, _) = Self::compile(registry, source, &self.file, text, self.options)?;
        *self = level;
        Ok(Update::Full { reason })
    }

    /// The fast path: `Ok` with [`Update::Patched`], or `Err` with why it does
    /// not apply (nothing is changed then).
    fn patch(&mut self, registry: &Registry, text: &str) -> Result<Update, String> {
        let spans = self
            .spans
            .get_or_insert_with(|| entity_spans(&self.text).unwrap_or_default());
        // One span for each of the level's entities the layout places, or the
        // fast path has nothing to go by (the level was compiled from another
        // reading than the one the spans come from).
        if spans.len() != self.layout.level_instances.len() {
            return Err("the level's layout is not kept".into());
        }
        let spans: &[Range<usize>] = spans;
        if crate::conflict::may_have_conflicts(text) {
            return Err("the file may hold merge conflicts".into());
        }
        let (old, new) = (self.text.as_bytes(), text.as_bytes());
        let prefix = common_prefix(old, new);
        let most_suffix = old.len().min(new.len()) - prefix;
        let suffix = common_suffix(&old[prefix..], &new[prefix..]).min(most_suffix);
        let (old_end, new_end) = (old.len() - suffix, new.len() - suffix);
        // The entities the change touches: the first ending after its start, to the
        // last starting before its end.
        let first = spans.partition_point(|s| s.end <= prefix);
        let last = spans
            .partition_point(|s| s.start < old_end.max(prefix + 1))
            .checked_sub(1)
            .ok_or("the change is outside the entities")?;
        let (Some(a), Some(b)) = (spans.get(first), spans.get(last)) else {
            return Err("the change is outside the entities".into());
        };
        if first > last || prefix < a.start || old_end > b.end {
            return Err("the change is outside the entities".into());
        }
        let delta = new_end as isize - old_end as isize;
        let new_range = a.start..(b.end as isize + delta) as usize;
        let new_part = text
            .get(new_range.clone())
            .ok_or("the change splits a character")?;
        // The changed entities, read as the elements of an array.
        let array = format!("[{new_part}]");
        crate::json_format::reject_duplicate_keys(&array)
            .map_err(|_| "a changed entity has a repeated key or bad JSON".to_owned())?;
        let new_values: Vec<&RawValue> = serde_json::from_str(&array)
            .map_err(|_| "the changed entities do not read".to_owned())?;
        if new_values.len() != last - first + 1 {
            return Err("entities were added or removed".into());
        }
        let mut writes: Vec<(Range<usize>, Vec<u8>)> = Vec::new();
        let mut patched = Vec::new();
        let mut positions = Vec::new();
        let mut instances = Vec::new();
        let mut new_spans = Vec::with_capacity(new_values.len());
        for (k, new_value) in new_values.iter().enumerate() {
            let m = first + k;
            let in_array = offset_in(&array, new_value.get()).ok_or("bad span")?;
            // Positions in `text`: the array adds one byte before the part.
            new_spans
                .push(new_range.start + in_array.start - 1..new_range.start + in_array.end - 1);
            let old_text = &self.text[spans[m].clone()];
            if old_text == new_value.get() {
                continue;
            }
            let old_entity: RawEntityDocument =
                serde_json::from_str(old_text).map_err(|_| "the old entity does not read")?;
            let new_entity: RawEntityDocument = serde_json::from_str(new_value.get())
                .map_err(|_| "a changed entity does not read".to_owned())?;
            if !same_structure(&old_entity, &new_entity) {
                return Err(format!(
                    "entity \"{}\" changed more than its fields",
                    new_entity.id
                ));
            }
            let slots = &self.layout.level_instances[m];
            for (old_c, new_c) in old_entity.components.0.iter().zip(&new_entity.components.0) {
                let (ComponentValue::Text(old_v), ComponentValue::Text(new_v)) =
                    (&old_c.value, &new_c.value)
                else {
                    return Err("a component was not read as text".into());
                };
                if old_v.get() == new_v.get() {
                    continue;
                }
                let needs_full = || {
                    format!(
                        "entity \"{}\", component \"{}\" needs the full compile",
                        new_entity.id, new_c.name
                    )
                };
                let ty = registry.component(&new_c.name).ok_or_else(needs_full)?;
                // An entity holds one value of each type (its keys are unique): its
                // instances of the type are those of this component, in order.
                let mine: Vec<&Range<usize>> = (slots.iter())
                    .filter(|(id, _)| *id == ty.id)
                    .map(|(_, range)| range)
                    .collect();
                let compiled =
                    compile_instances(registry, &new_c.name, new_v).ok_or_else(needs_full)?;
                if compiled.len() != mine.len() {
                    return Err("the number of instances changed".into());
                }
                let entity = *self
                    .layout
                    .level_blob_index
                    .get(m)
                    .ok_or("the level's layout is not kept")?;
                instances.push(PatchedInstances {
                    entity,
                    component_identifier: ty.id,
                    ranges: mine.iter().map(|&r| r.clone()).collect(),
                });
                for (range, bytes) in mine.into_iter().zip(compiled) {
                    if bytes.len() != range.len() {
                        return Err("an instance changed size".into());
                    }
                    writes.push((range.clone(), bytes));
                }
            }
            patched.push(new_entity.id.to_string());
            positions.push(m);
        }
        // Everything is decided: write.
        for (range, bytes) in writes {
            self.compiled.blob[range].copy_from_slice(&bytes);
        }
        if let Some(spans) = &mut self.spans {
            for span in &mut spans[last + 1..] {
                *span =
                    (span.start as isize + delta) as usize..(span.end as isize + delta) as usize;
            }
            spans.splice(first..=last, new_spans);
        }
        self.text.clear();
        self.text.push_str(text);
        Ok(Update::Patched {
            entities: patched,
            positions,
            instances,
        })
    }

    /// The text of the level's `k`-th entity (file order) as of the last update:
    /// what the editor reads into its document for an entity a patch changed.
    pub fn entity_text(&self, k: usize) -> Option<&str> {
        self.text.get(self.spans.as_ref()?.get(k)?.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The blockwise comparisons agree with a byte at a time.
        #[test]
        fn common_ends_are_found_as_a_byte_at_a_time(
            shared_head in proptest::collection::vec(any::<u8>(), 0..9000),
            a_mid in proptest::collection::vec(0..3u8, 0..50),
            b_mid in proptest::collection::vec(0..3u8, 0..50),
            shared_tail in proptest::collection::vec(0..3u8, 0..9000),
        ) {
            let a = [&shared_head[..], &a_mid, &shared_tail].concat();
            let b = [&shared_head[..], &b_mid, &shared_tail].concat();
            let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
            prop_assert_eq!(common_prefix(&a, &b), prefix);
            let suffix = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
            prop_assert_eq!(common_suffix(&a, &b), suffix);
        }
    }
}
