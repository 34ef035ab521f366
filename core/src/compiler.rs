//! The entity compiler (seed part 4): a level with its prefabs flattened becomes one
//! binary blob in which each component type's instances are stored together.
//!
//! Steps: parse the level; expand every prefab instance recursively (units are read
//! through a [`ResourceSource`], cycles are errors naming the cycle); order entities
//! parents-first (depth first, siblings in file order); validate every component
//! against its schema; call each type's compile function; write the blob.
//!
//! Which compile to call (they all give the same blob for the same level):
//!
//! | you have | call |
//! |---|---|
//! | a level file of a project, to compile once | [`Project::compile`](crate::project::Project::compile) (it reads the file and its units) |
//! | a big level file, to compile in bounded memory | [`compile_streamed`] (`kiln compile`): entity by entity as it is read |
//! | a level's text and a [`ResourceSource`] for its units | [`compile_level`] (read lean: components stay text until compiled) |
//! | a parsed [`LevelDocument`] (the editor's) | [`compile_document`] |
//! | a level to compile again and again as it is saved | [`IncrementalLevel::compile`](crate::incremental::IncrementalLevel::compile), then `update` with each new text |
//! | the editor's document, whose fields change one by one | [`DocumentLayout::compile`](crate::incremental::DocumentLayout::compile), then `rewrite` |
//!
//! The `_with` forms take [`CompileOptions`].

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::blob::{ComponentBlock, NO_PARENT, write_blob};
use crate::flat_component::{ComponentValue, FlatComponent};
use crate::level::{EntityDocument, LevelDocument, SyntaxError, valid_authoring_id};
use crate::path::ResourcePath;
use crate::raw_level::{RawEntityDocument, RawLevelDocument};
use crate::registry::{ComponentType, Registry};
use crate::schema::FieldValues;

mod streamed;
pub use streamed::{StreamedLevel, compile_streamed};

/// Where each level entity's instances are in the blob, as the full compile laid
/// them out.
#[derive(Debug, Clone, Default)]
pub(crate) struct BlobLayout {
    /// For each entity of the level file (not the prefabs' entities), in file
    /// order: its instances, in blob order, as (component identifier, byte range
    /// of the instance's data in the blob).
    pub(crate) level_instances: Vec<Vec<(u32, std::ops::Range<usize>)>>,
    /// Each of those entities' index in the blob.
    pub(crate) level_blob_index: Vec<u32>,
}

/// How deeply prefabs may nest (a unit instancing a unit instancing a unit...). Real
/// nesting is a handful of levels; a chain thousands deep is a mistake or an attack,
/// and must end in an error, not a stack overflow.
pub const MAX_PREFAB_DEPTH: usize = 64;

/// How many entities a level may flatten to unless the project says otherwise
/// (`max_level_entities` in `kiln.project`): prefabs that instance each other twice
/// over, 40 deep, would otherwise allocate until the machine runs out of memory.
pub const DEFAULT_MAX_LEVEL_ENTITIES: usize = 1_000_000;

/// The most `max_level_entities` may be raised to. The bound exists so that no
/// project file can make a compile allocate without end: a prefab that instances
/// another twice over, 40 deep, flattens to a trillion entities, and a limit the
/// project raised that far would only be met when the machine ran out of memory
/// (the process aborts on a failed allocation; no error can be shown).
pub const MAX_LEVEL_ENTITIES_CEILING: usize = 4_000_000;

/// Where the compiler reads prefabs (`.unit` files) from.
pub trait ResourceSource {
    /// The text of the resource `path` of type `ext`. An error is a sentence
    /// (e.g. "no such file").
    fn read_text(&mut self, path: &ResourcePath, ext: &str) -> Result<String, String>;

    /// The most entities a level may flatten to.
    fn max_level_entities(&self) -> usize {
        DEFAULT_MAX_LEVEL_ENTITIES
    }

    /// The unit `unit_file` (`units/lamp.unit`) as another compile sharing this
    /// source parsed it, if it kept it ([`ResourceSource::keep_parsed_unit`]): a
    /// check compiling every level parses each unit once, not once per level.
    fn parsed_unit(&mut self, _unit_file: &str) -> Option<Arc<LevelDocument>> {
        None
    }

    /// Offers `unit`, just read with [`ResourceSource::read_text`] and parsed, to
    /// later compiles sharing this source.
    fn keep_parsed_unit(&mut self, _unit_file: &str, _unit: &Arc<LevelDocument>) {}
}

/// In-memory resources, keyed by file path (`units/lamp.unit`). Handy in tests and
/// for compiling unsaved edits.
impl ResourceSource for HashMap<String, String> {
    fn read_text(&mut self, path: &ResourcePath, ext: &str) -> Result<String, String> {
        self.get(&path.with_extension(ext))
            .cloned()
            .ok_or_else(|| "no such file".to_owned())
    }
}

/// Why a level did not compile. Each names the file and as much of the place
/// (line and column, or entity, component and field) as is known. Serialized (the
/// variant's name as a key) in `kiln check`'s record of which levels compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum CompileError {
    /// Not valid JSON, or not shaped like a level.
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    /// A field has the wrong type or is unknown.
    #[error("{file}: entity \"{entity}\", component \"{component}\", field \"{field}\": {message}")]
    Field {
        /// File the value was written in.
        file: String,
        /// Authoring id (prefab entities: `instance/entity`).
        entity: String,
        /// Component type name.
        component: String,
        /// Field name.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A component is unknown, malformed or rejected by its compile function.
    #[error("{file}: entity \"{entity}\", component \"{component}\": {message}")]
    Component {
        /// File the component was written in.
        file: String,
        /// Authoring id.
        entity: String,
        /// Component type name.
        component: String,
        /// What is wrong.
        message: String,
    },
    /// An entity is malformed: bad or duplicate id, unknown parent, parent cycle.
    #[error("{file}: entity \"{entity}\": {message}")]
    Entity {
        /// File the entity is in.
        file: String,
        /// Authoring id.
        entity: String,
        /// What is wrong.
        message: String,
    },
    /// An override names a part its prefab does not have (one branch removed
    /// the part while another overrode it, say).
    #[error(
        "{file}: entity \"{entity}\": overrides \"{key}\", which is not an entity of {unit} (a part the prefab no longer has?)"
    )]
    UnknownOverride {
        /// The level being compiled.
        file: String,
        /// The instance, as a path of authoring ids from the level
        /// (`lamp_2/head`).
        entity: String,
        /// The part it names, from that instance (`glass`).
        key: String,
        /// The prefab that lacks it.
        unit: String,
    },
    /// A prefab could not be read.
    #[error("{file}: entity \"{entity}\": prefab \"{prefab}\" cannot be read: {reason}")]
    MissingPrefab {
        /// File with the prefab instance.
        file: String,
        /// Authoring id of the instance.
        entity: String,
        /// The prefab path as written.
        prefab: String,
        /// Why.
        reason: String,
    },
    /// Prefabs that contain each other.
    #[error("prefab cycle: {}", cycle.join(" -> "))]
    PrefabCycle {
        /// The files of the cycle, the first repeated at the end.
        cycle: Vec<String>,
    },
    /// The level would exceed a limit (prefab nesting depth, flattened entity count).
    #[error("{file}: {message}")]
    Limit {
        /// The level.
        file: String,
        /// Which limit, where it was crossed, and how to raise it if it can be.
        message: String,
    },
}

impl CompileError {
    /// Whether it is an entity field that names no entity of the level (what
    /// `kiln check` reports of the compiler's errors, see `docs/commands.md`).
    pub fn is_unknown_entity(&self) -> bool {
        matches!(self, CompileError::Field { message, .. } if message.starts_with(NAMES_NO_ENTITY))
    }

    /// The project file the error is in.
    pub fn file(&self) -> &str {
        match self {
            CompileError::Syntax(e) => &e.file,
            CompileError::Field { file, .. }
            | CompileError::Component { file, .. }
            | CompileError::Entity { file, .. }
            | CompileError::UnknownOverride { file, .. }
            | CompileError::MissingPrefab { file, .. }
            | CompileError::Limit { file, .. } => file,
            CompileError::PrefabCycle { cycle } => cycle.first().map_or("", String::as_str),
        }
    }
}

/// The result of compiling a level.
#[derive(Debug, Clone)]
pub struct CompiledLevel {
    /// The blob (see `core/FORMAT.md`).
    pub blob: Vec<u8>,
    /// Number of entities after flattening prefabs.
    pub entity_count: usize,
    /// The `.unit` files the level includes, directly or through other units.
    pub units: BTreeSet<String>,
    /// Components left out of the blob because their type is not known (only with
    /// [`CompileOptions::skip_unknown_components`]), each as the error it would
    /// otherwise have been.
    pub left_out: Vec<CompileError>,
}

/// How a level is compiled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompileOptions {
    /// Leave out components whose type is not registered (a plugin that did not
    /// load) instead of failing, listing them in [`CompiledLevel::left_out`]: a
    /// preview draws the rest of the level, as the seed's runtime skips component
    /// types it does not know. The shipping compile (`kiln compile`) refuses them.
    pub skip_unknown_components: bool,
}

/// Compiles the text of the level `file` (a project path such as `levels/forest.level`).
///
/// The level is read lean: each component stays text until it is compiled (see
/// `raw_level.rs`). A level that does not compile is compiled a second time from a
/// [`LevelDocument`], reading its units from `source` again, so that the error is
/// the one [`compile_document`] reports.
pub fn compile_level(
    registry: &Registry,
    source: &mut dyn ResourceSource,
    file: &str,
    text: &str,
) -> Result<CompiledLevel, CompileError> {
    compile_level_with(registry, source, file, text, CompileOptions::default())
}

/// [`compile_level`] with `options`.
pub fn compile_level_with(
    registry: &Registry,
    source: &mut dyn ResourceSource,
    file: &str,
    text: &str,
    options: CompileOptions,
) -> Result<CompiledLevel, CompileError> {
    compile_level_layout(registry, source, file, text, (options, false))
        .map(|(compiled, _)| compiled)
}

/// [`compile_level_with`], also saying, with `layout`, where each of the level's
/// own entities' instances are in the blob (for [`crate::incremental`]; a
/// 100,000-entity level's layout is 14 MB that `kiln compile` does not need).
pub(crate) fn compile_level_layout(
    registry: &Registry,
    source: &mut dyn ResourceSource,
    file: &str,
    text: &str,
    (options, layout): (CompileOptions, bool),
) -> Result<(CompiledLevel, BlobLayout), CompileError> {
    let text = crate::json_format::without_bom(text);
    // Read lean (see raw_level.rs): each component stays text until it is compiled.
    // A file with merge conflicts is refused by the document's parse, naming them.
    if !crate::conflict::may_have_conflicts(text)
        && let Some(raw) = RawLevelDocument::parse(text)
        && let Ok(compiled) = compile_flattened_layout(
            registry,
            source,
            file,
            Source::Text(&raw),
            (options, layout),
        )
    {
        return Ok(compiled);
    }
    // A level that does not compile is compiled again from the editor's document, so
    // that the error reported is the one it reports (a syntax error before any other,
    // with its line and column; the first error in its order otherwise).
    let doc = LevelDocument::parse(text, file)?;
    compile_flattened_layout(
        registry,
        source,
        file,
        Source::Level(&doc),
        (options, layout),
    )
}

/// Compiles an already parsed level (e.g. the editor's in-memory document).
pub fn compile_document(
    registry: &Registry,
    source: &mut dyn ResourceSource,
    file: &str,
    doc: &LevelDocument,
) -> Result<CompiledLevel, CompileError> {
    compile_document_with(registry, source, file, doc, CompileOptions::default())
}

/// [`compile_document`] with `options`.
pub fn compile_document_with(
    registry: &Registry,
    source: &mut dyn ResourceSource,
    file: &str,
    doc: &LevelDocument,
    options: CompileOptions,
) -> Result<CompiledLevel, CompileError> {
    compile_flattened_with(registry, source, file, Source::Level(doc), options)
}

/// [`compile_document_with`], with the blob's layout of the document's own
/// entities (see [`crate::incremental::DocumentLayout`]).
pub(crate) fn compile_document_layout(
    registry: &Registry,
    source: &mut dyn ResourceSource,
    file: &str,
    doc: &LevelDocument,
    options: CompileOptions,
) -> Result<(CompiledLevel, BlobLayout), CompileError> {
    compile_flattened_layout(registry, source, file, Source::Level(doc), (options, true))
}

/// Flattens the level `level` and compiles what it places.
#[cfg(test)]
pub(crate) fn compile_flattened(
    registry: &Registry,
    source: &mut dyn ResourceSource,
    file: &str,
    level: Source<'_>,
) -> Result<CompiledLevel, CompileError> {
    compile_flattened_with(registry, source, file, level, CompileOptions::default())
}

/// Flattens the level `level` and compiles what it places, as `options` say.
pub(crate) fn compile_flattened_with(
    registry: &Registry,
    source: &mut dyn ResourceSource,
    file: &str,
    level: Source<'_>,
    options: CompileOptions,
) -> Result<CompiledLevel, CompileError> {
    compile_flattened_layout(registry, source, file, level, (options, false))
        .map(|(compiled, _)| compiled)
}

/// [`compile_flattened_with`], with the blob's layout of the level's own entities.
fn compile_flattened_layout(
    registry: &Registry,
    source: &mut dyn ResourceSource,
    file: &str,
    level: Source<'_>,
    (options, want_layout): (CompileOptions, bool),
) -> Result<(CompiledLevel, BlobLayout), CompileError> {
    let level_entities = match &level {
        Source::Level(doc) => doc.entities.len(),
        Source::Text(doc) => doc.entities.len(),
        Source::Unit(unit) => unit.entities.len(),
    };
    let max_entities = source.max_level_entities();
    let mut flat = Flattener {
        source,
        units: HashMap::new(),
        stack: vec![file.to_owned()],
        out: Vec::new(),
        first: 0,
        max_entities,
    };
    // Counted before anything is placed: a level whose prefabs multiply past the
    // limit took the limit's worth of memory (3.4 GB at 4,000,000) to be refused.
    let counted = match &level {
        Source::Level(doc) => flat.count(&doc.entities, &mut HashMap::new(), &mut Vec::new()),
        Source::Text(doc) => flat.count(&doc.entities, &mut HashMap::new(), &mut Vec::new()),
        Source::Unit(unit) => flat.count(&unit.entities, &mut HashMap::new(), &mut Vec::new()),
    };
    if let Some(counted) = counted.filter(|&n| n > max_entities) {
        return Err(CompileError::Limit {
            file: file.to_owned(),
            message: format!(
                "flattening prefabs makes more than {max_entities} entities ({counted} or more, counted before placing any); a prefab that instances another several times over can do this. Raise \"max_level_entities\" in kiln.project if the level is meant to be this big"
            ),
        });
    }
    flat.expand(level, file, "", None, &Map::new(), file)?;
    let units: BTreeSet<String> = flat.units.keys().cloned().collect();
    let entities = flat.out;
    let order = parents_first(&entities)?;
    let mut new_index = vec![0u32; entities.len()];
    for (k, &i) in order.iter().enumerate() {
        new_index[i] = k as u32;
    }
    let parent_index: Vec<u32> = order
        .iter()
        .map(|&i| entities[i].parent.map_or(NO_PARENT, |p| new_index[p]))
        .collect();

    let mut left_out = Vec::new();
    for e in &entities {
        for c in e.components.iter() {
            match registry.component(&c.name) {
                None => {
                    let error = e.component_error(c, unknown_component(registry, &c.name));
                    if !options.skip_unknown_components {
                        return Err(error);
                    }
                    left_out.push(error);
                }
                Some(ty) if ty.implicit => return Err(e.component_error(c, made_by_compiler())),
                Some(_) => {}
            }
        }
    }

    // Entity fields name entities by id: the level's index of each, made on the
    // first entity field met (most levels have none).
    let by_id: std::cell::OnceCell<HashMap<&str, u32>> = std::cell::OnceCell::new();
    let find = |scope: Option<&str>, id: &str| -> Option<u32> {
        let by_id = by_id.get_or_init(|| {
            (entities.iter().zip(&new_index))
                .map(|(e, &k)| (&*e.id, k))
                .collect()
        });
        scope
            .and_then(|scope| by_id.get(format!("{scope}{id}").as_str()))
            .or_else(|| by_id.get(id))
            .copied()
    };
    let mut blocks = Vec::new();
    // Each block's instances' ends in its data, for the layout.
    let mut block_ends: Vec<Vec<usize>> = Vec::new();
    for ty in registry.components() {
        let mut ends = Vec::new();
        let mut block = ComponentBlock {
            component_identifier: ty.id,
            ..Default::default()
        };
        for (k, &i) in order.iter().enumerate() {
            let e = &entities[i];
            let mut placed = |end: usize| {
                block.entity_index.push(k as u32);
                if want_layout {
                    ends.push(end);
                }
            };
            if ty.implicit {
                compile_implicit(ty, e, &mut block.data, &mut placed)?;
                continue;
            }
            for c in e.components.iter().filter(|c| c.name == ty.name) {
                compile_component(ty, (e, &find), c, &mut block.data, &mut placed)?;
            }
        }
        if !block.entity_index.is_empty() {
            blocks.push(block);
            block_ends.push(ends);
        }
    }
    let ids: Vec<&str> = order.iter().map(|&i| &*entities[i].id).collect();
    let blob = write_blob(&parent_index, &blocks, &ids);
    let layout = if !want_layout {
        BlobLayout::default()
    } else {
        blob_layout(
            &blob,
            &blocks,
            &block_ends,
            &new_index[..level_entities.min(new_index.len())],
        )
    };
    Ok((
        CompiledLevel {
            blob,
            entity_count: entities.len(),
            units,
            left_out,
        },
        layout,
    ))
}

/// Why component type `name` is not known, as an error says it.
fn unknown_component(registry: &Registry, name: &str) -> String {
    match registry.absent_component(name) {
        Some(why) => format!("its type comes from {why}"),
        None => {
            let known: Vec<&str> = registry
                .components()
                .iter()
                .filter(|t| !t.implicit)
                .map(|t| t.name.as_str())
                .collect();
            format!(
                "unknown component type; known types are: {}",
                known.join(", ")
            )
        }
    }
}

/// Why an implicit component type may not be written in a level.
fn made_by_compiler() -> String {
    "is made by the compiler; set the entity's \"name\" instead".into()
}

/// Compiles what the implicit type `ty` makes of entity `e` (its `debug_name`, from
/// its name) onto `data`, calling `placed` with the end of each instance.
fn compile_implicit(
    ty: &ComponentType,
    e: &FlatEntity,
    data: &mut Vec<u8>,
    placed: &mut dyn FnMut(usize),
) -> Result<(), CompileError> {
    if ty.name == "debug_name" && !e.name.is_empty() {
        let fields = Map::from_iter([("name".to_owned(), Value::String(e.name.to_string()))]);
        let values = FieldValues::validate(&ty.fields, &fields)
            .map_err(|(field, message)| e.field_error(&e.file, &ty.name, field, message))?;
        (ty.compile)(&values, data).map_err(|m| e.entity_error(m))?;
        placed(data.len());
    }
    Ok(())
}

/// How the error of an entity field that names no entity starts.
const NAMES_NO_ENTITY: &str = "names no entity";

/// Finds an entity of the level being compiled by id, for an entity field: its
/// index, tried first below the part's instance (its scope), then in the level.
pub(crate) type FindEntity<'a> = &'a dyn Fn(Option<&str>, &str) -> Option<u32>;

/// Compiles component `c` of entity `e`, of type `ty`, onto `data`: each of its
/// instances (several where the type allows an array), calling `placed` with the
/// end of each. Entity fields are found with `find`.
fn compile_component(
    ty: &ComponentType,
    (e, find): (&FlatEntity, FindEntity<'_>),
    c: &FlatComponent,
    data: &mut Vec<u8>,
    placed: &mut dyn FnMut(usize),
) -> Result<(), CompileError> {
    let value = c.value.parsed().map_err(|m| e.component_error(c, m))?;
    let items: Vec<&Value> = match &*value {
        Value::Object(_) => vec![&*value],
        Value::Array(items) if ty.multiple => items.iter().collect(),
        Value::Array(_) => {
            return Err(e.component_error(
                c,
                "an entity has at most one; write an object, not an array".into(),
            ));
        }
        other => {
            return Err(e.component_error(
                c,
                format!(
                    "expected an object of fields, found {}",
                    crate::schema::short(other)
                ),
            ));
        }
    };
    for item in items {
        let Some(fields) = item.as_object() else {
            return Err(e.component_error(c, "each instance must be an object of fields".into()));
        };
        let values = FieldValues::validate(&ty.fields, fields)
            .map_err(|(field, message)| e.field_error(e.file_of(c), &ty.name, field, message))?;
        let scope = e.scope.as_deref();
        if let Some((field, id)) = values
            .entity_references()
            .find(|(_, id)| find(scope, id).is_none())
        {
            let message = match scope {
                Some(scope) => format!(
                    "{NAMES_NO_ENTITY} \"{id}\": neither a part of its instance ({scope}{id}) nor an entity of the level"
                ),
                None => format!("{NAMES_NO_ENTITY} \"{id}\" of the level"),
            };
            return Err(e.field_error(e.file_of(c), &ty.name, field.to_owned(), message));
        }
        let lookup = |id: &str| find(scope, id);
        let values = values.with_entities(&lookup);
        (ty.compile)(&values, data).map_err(|m| e.component_error(c, m))?;
        placed(data.len());
    }
    Ok(())
}

/// Where the instances of the level's own entities (`level_blob_index`: each
/// one's index in the blob) are in `blob`, written from `blocks` whose instances
/// end at `block_ends` in their data. Empty if the blob does not read back (it
/// always does: it was just written).
fn blob_layout(
    blob: &[u8],
    blocks: &[ComponentBlock],
    block_ends: &[Vec<usize>],
    level_blob_index: &[u32],
) -> BlobLayout {
    let Ok(parsed) = crate::blob::LevelBlob::parse(blob) else {
        return BlobLayout::default();
    };
    // Blob entity -> its level entity, for the level's own.
    let mut level_of = vec![u32::MAX; parsed.parent_index.len()];
    for (k, &b) in level_blob_index.iter().enumerate() {
        if let Some(slot) = level_of.get_mut(b as usize) {
            *slot = k as u32;
        }
    }
    let mut level_instances = vec![Vec::new(); level_blob_index.len()];
    for ((section, block), ends) in parsed.components.iter().zip(blocks).zip(block_ends) {
        let data_at = section.data.as_ptr() as usize - blob.as_ptr() as usize;
        let mut start = 0;
        for (&owner, &end) in block.entity_index.iter().zip(ends) {
            if let Some(&k) = level_of.get(owner as usize)
                && k != u32::MAX
            {
                level_instances[k as usize]
                    .push((block.component_identifier, data_at + start..data_at + end));
            }
            start = end;
        }
    }
    BlobLayout {
        level_instances,
        level_blob_index: level_blob_index.to_vec(),
    }
}

struct FlatEntity<'d> {
    id: Cow<'d, str>,
    /// For a prefab's part, its instance's id and `/`: what an entity field written
    /// in the prefab is relative to (`None` for the level's own entities).
    scope: Option<Rc<str>>,
    name: Cow<'d, str>,
    parent: Option<usize>,
    /// Borrowed as they are from a level read to be compiled (no copy per entity);
    /// made for each entity of a parsed document or a unit.
    components: Cow<'d, [FlatComponent<'d>]>,
    file: Rc<str>,
}

impl<'d> FlatEntity<'d> {
    /// The entity `e` of a document the compile borrows (the level itself).
    fn borrowed(e: &'d EntityDocument, file: &Rc<str>) -> Self {
        FlatEntity {
            id: Cow::Borrowed(&e.id),
            scope: None,
            name: Cow::Borrowed(&e.name),
            parent: None,
            components: e
                .components
                .iter()
                .map(|(name, value)| FlatComponent {
                    name: Cow::Borrowed(name),
                    value: ComponentValue::Borrowed(value),
                    file: None,
                })
                .collect(),
            file: Rc::clone(file),
        }
    }

    /// The entity `e` of a level read to be compiled, its components left as text.
    fn read(e: &'d RawEntityDocument<'d>, file: &Rc<str>) -> Self {
        FlatEntity {
            id: Cow::Borrowed(&e.id),
            scope: None,
            name: Cow::Borrowed(&e.name),
            parent: None,
            components: Cow::Borrowed(&e.components.0),
            file: Rc::clone(file),
        }
    }

    /// The entity `k` of a prefab unit, its id under `prefix`: its values shared
    /// with the unit (see [`ComponentValue::Unit`]).
    fn copied(unit: &Arc<LevelDocument>, k: usize, prefix: &Rc<str>, file: &Rc<str>) -> Self {
        let e = &unit.entities[k];
        FlatEntity {
            id: Cow::Owned(format!("{prefix}{}", e.id)),
            scope: Some(Rc::clone(prefix)),
            name: Cow::Owned(e.name.clone()),
            parent: None,
            components: e
                .components
                .iter()
                .enumerate()
                .map(|(c, (name, value))| FlatComponent {
                    name: Cow::Owned(name.clone()),
                    value: match (u32::try_from(k), u16::try_from(c)) {
                        (Ok(k), Ok(c)) => ComponentValue::Unit(Arc::clone(unit), k, c),
                        _ => ComponentValue::Owned(Box::new(value.clone())),
                    },
                    file: None,
                })
                .collect(),
            file: Rc::clone(file),
        }
    }

    /// The file component `c` was last written in.
    fn file_of<'c>(&'c self, c: &'c FlatComponent) -> &'c str {
        c.file.as_deref().unwrap_or(&self.file)
    }

    fn entity_error(&self, message: String) -> CompileError {
        CompileError::Entity {
            file: self.file.to_string(),
            entity: self.id.to_string(),
            message,
        }
    }
    fn component_error(&self, c: &FlatComponent, message: String) -> CompileError {
        CompileError::Component {
            file: self.file_of(c).to_owned(),
            entity: self.id.to_string(),
            component: c.name.to_string(),
            message,
        }
    }
    fn field_error(
        &self,
        file: &str,
        component: &str,
        field: String,
        message: String,
    ) -> CompileError {
        CompileError::Field {
            file: file.to_owned(),
            entity: self.id.to_string(),
            component: component.to_owned(),
            field,
            message,
        }
    }

    /// Applies a patch object `{component: fields | null}` field by field.
    fn apply_patch(&mut self, patch: &Value, file: &str) -> Result<(), CompileError> {
        let Some(patch) = patch.as_object() else {
            return Err(self.entity_error("an override must be an object of components".into()));
        };
        for (name, value) in patch {
            let existing = self.components.iter().position(|c| c.name == name.as_str());
            let file: Option<Rc<str>> = Some(Rc::from(file));
            match (existing, value) {
                (Some(i), Value::Null) => {
                    self.components.to_mut().remove(i);
                }
                (None, Value::Null) => {}
                (Some(i), Value::Object(fields)) if self.components[i].value.is_object() => {
                    let base = match self.components.to_mut()[i].value.to_mut() {
                        Ok(base) => base,
                        Err(message) => {
                            return Err(self.component_error(&self.components[i], message));
                        }
                    };
                    if let Value::Object(base) = base {
                        for (k, v) in fields {
                            base.insert(k.clone(), v.clone());
                        }
                    }
                    self.components.to_mut()[i].file = file;
                }
                (Some(i), v) => {
                    self.components.to_mut()[i] = FlatComponent {
                        name: Cow::Owned(name.clone()),
                        value: ComponentValue::Owned(Box::new(v.clone())),
                        file,
                    };
                }
                (None, v) => {
                    self.components.to_mut().push(FlatComponent {
                        name: Cow::Owned(name.clone()),
                        value: ComponentValue::Owned(Box::new(v.clone())),
                        file,
                    });
                }
            }
        }
        Ok(())
    }
}

/// The document `expand` places: the level, borrowed for the whole compile (the
/// editor's document, or text read to be compiled), or a prefab unit, shared with
/// the cache of units.
pub(crate) enum Source<'d> {
    Level(&'d LevelDocument),
    Text(&'d RawLevelDocument<'d>),
    Unit(Arc<LevelDocument>),
}

/// What flattening reads of an entity, whichever way its document was read.
trait AuthoredEntity {
    fn id(&self) -> &str;
    fn parent(&self) -> Option<&str>;
    fn prefab(&self) -> Option<&str>;
    fn overrides(&self) -> &Map<String, Value>;
}

impl AuthoredEntity for EntityDocument {
    fn id(&self) -> &str {
        &self.id
    }
    fn parent(&self) -> Option<&str> {
        self.parent.as_deref()
    }
    fn prefab(&self) -> Option<&str> {
        self.prefab.as_deref()
    }
    fn overrides(&self) -> &Map<String, Value> {
        &self.overrides
    }
}

impl AuthoredEntity for RawEntityDocument<'_> {
    fn id(&self) -> &str {
        &self.id
    }
    fn parent(&self) -> Option<&str> {
        self.parent.as_ref().map(|p| &*p.0)
    }
    fn prefab(&self) -> Option<&str> {
        self.prefab.as_deref()
    }
    fn overrides(&self) -> &Map<String, Value> {
        static NONE: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
        self.overrides.as_deref().unwrap_or(&NONE)
    }
}

/// Where `expand` places a document's entities.
struct Placement<'a> {
    file: &'a str,
    /// Prepended to the ids of a unit's entities (`lamp_01/`); empty for the level.
    prefix: &'a str,
    /// The prefab instance a unit's root entities hang under.
    root_parent: Option<usize>,
    /// Patches for the entities placed here, by id, from the files that include them.
    overrides: &'a Map<String, Value>,
    /// The file those patches were written in.
    overrides_file: &'a str,
}

/// A prefab instance being expanded.
#[derive(Clone, Copy)]
struct Instance<'a> {
    /// Its flat index.
    index: usize,
    /// Its full id (`lamp_01/bulb` inside a unit placed as `lamp_01`).
    id: &'a str,
    /// Its id in its own file (`bulb`).
    local_id: &'a str,
    /// The file it is placed from.
    file: &'a str,
}

/// Why a prefab file could not be had.
enum UnitError {
    /// It could not be read (the source's sentence).
    Read(String),
    /// It is not a valid prefab.
    Parse(SyntaxError),
}

struct Flattener<'s, 'd> {
    source: &'s mut dyn ResourceSource,
    units: HashMap<String, Arc<LevelDocument>>,
    /// Files being expanded, outermost first, for cycle detection.
    stack: Vec<String>,
    out: Vec<FlatEntity<'d>>,
    /// The flat index of `out[0]`: entities placed before, and kept elsewhere (a
    /// level compiled as it is read keeps only its own entities' ids).
    first: usize,
    /// The most entities the level may flatten to.
    max_entities: usize,
}

impl<'d> Flattener<'_, 'd> {
    /// How many entities `entities` flatten to, each prefab instance counted with
    /// its prefab's parts (each prefab file counted once, `memo`), stopping as soon
    /// as the count passes the limit. `None` where a prefab cannot be read, or
    /// nests in a cycle or too deep (`visiting`): flattening then says why.
    fn count<E: AuthoredEntity>(
        &mut self,
        entities: &[E],
        memo: &mut HashMap<String, usize>,
        visiting: &mut Vec<String>,
    ) -> Option<usize> {
        let mut total = entities.len();
        for e in entities {
            if total > self.max_entities {
                break;
            }
            let Some(prefab) = e.prefab() else { continue };
            let path = ResourcePath::parse(prefab).ok()?;
            let unit_file = path.with_extension("unit");
            let parts = match memo.get(&unit_file) {
                Some(&n) => n,
                None => {
                    if visiting.contains(&unit_file) || visiting.len() >= MAX_PREFAB_DEPTH {
                        return None;
                    }
                    let unit = self.unit(&path, &unit_file).ok()?;
                    visiting.push(unit_file.clone());
                    let n = self.count(&unit.entities, memo, visiting)?;
                    visiting.pop();
                    memo.insert(unit_file, n);
                    n
                }
            };
            total = total.saturating_add(parts);
        }
        Some(total)
    }

    /// The prefab file `unit_file` (at `path`), read and parsed once per compile.
    fn unit(
        &mut self,
        path: &ResourcePath,
        unit_file: &str,
    ) -> Result<Arc<LevelDocument>, UnitError> {
        if let Some(unit) = self.units.get(unit_file) {
            return Ok(Arc::clone(unit));
        }
        if let Some(unit) = self.source.parsed_unit(unit_file) {
            self.units.insert(unit_file.to_owned(), Arc::clone(&unit));
            return Ok(unit);
        }
        let text = self
            .source
            .read_text(path, "unit")
            .map_err(UnitError::Read)?;
        let unit = Arc::new(LevelDocument::parse(&text, unit_file).map_err(UnitError::Parse)?);
        self.source.keep_parsed_unit(unit_file, &unit);
        self.units.insert(unit_file.to_owned(), Arc::clone(&unit));
        Ok(unit)
    }

    fn expand(
        &mut self,
        source: Source<'d>,
        file: &str,
        prefix: &str,
        root_parent: Option<usize>,
        overrides: &Map<String, Value>,
        overrides_file: &str,
    ) -> Result<(), CompileError> {
        let file_name: Rc<str> = Rc::from(file);
        let at = Placement {
            file,
            prefix,
            root_parent,
            overrides,
            overrides_file,
        };
        match source {
            Source::Level(doc) => self.place(
                &doc.entities,
                |_, e| FlatEntity::borrowed(e, &file_name),
                &at,
            ),
            Source::Text(doc) => {
                self.place(&doc.entities, |_, e| FlatEntity::read(e, &file_name), &at)
            }
            Source::Unit(unit) => {
                let scope: Rc<str> = Rc::from(prefix);
                self.place(
                    &unit.entities,
                    |k, _| FlatEntity::copied(&unit, k, &scope, &file_name),
                    &at,
                )
            }
        }
    }

    /// Places `entities` (made into flat entities by `flat`), then expands their
    /// prefabs.
    fn place<'x, E: AuthoredEntity>(
        &mut self,
        entities: &'x [E],
        flat: impl Fn(usize, &'x E) -> FlatEntity<'d>,
        at: &Placement,
    ) -> Result<(), CompileError> {
        let Placement {
            file,
            prefix,
            root_parent,
            overrides,
            overrides_file,
        } = *at;
        let base = self.first + self.out.len();
        // Checked before anything of this file is allocated.
        if base + entities.len() > self.max_entities {
            let level = self.stack.first().cloned().unwrap_or_default();
            return Err(CompileError::Limit {
                file: level,
                message: format!(
                    "flattening prefabs makes more than {} entities (crossed while placing {file}); a prefab that instances another several times over can do this. Raise \"max_level_entities\" in kiln.project if the level is meant to be this big",
                    self.max_entities
                ),
            });
        }
        self.out.reserve(entities.len());
        let mut local: HashMap<&str, usize> = HashMap::with_capacity(entities.len());
        for (k, e) in entities.iter().enumerate() {
            let err = |message: String| CompileError::Entity {
                file: file.to_owned(),
                entity: format!("{prefix}{}", e.id()),
                message,
            };
            if !valid_authoring_id(e.id()) {
                return Err(err("ids are 1 to 64 letters, digits, '_' or '-'".into()));
            }
            if local.insert(e.id(), base + k).is_some() {
                return Err(err("another entity in this file has the same id".into()));
            }
            if e.prefab().is_none() && !e.overrides().is_empty() {
                return Err(err("has \"overrides\" but no \"prefab\"".into()));
            }
            let mut placed = flat(k, e);
            placed.parent = root_parent;
            if let Some(patch) = overrides.get(e.id()) {
                placed.apply_patch(patch, overrides_file)?;
            }
            self.out.push(placed);
        }
        // Overrides arriving for this file's entities (from the files that include
        // it) must each name one: an override whose part a prefab no longer has
        // (removed on one branch while another overrode it) would otherwise be
        // dropped without a word.
        if let Some(unknown) = overrides
            .keys()
            .find(|k| !local.contains_key(k.split('/').next().unwrap_or("")))
        {
            // Named from the level: the override may come from any file between.
            return Err(CompileError::UnknownOverride {
                file: self
                    .stack
                    .first()
                    .cloned()
                    .unwrap_or_else(|| overrides_file.to_owned()),
                entity: prefix.trim_end_matches('/').to_owned(),
                key: unknown.clone(),
                unit: file.to_owned(),
            });
        }
        for (k, e) in entities.iter().enumerate() {
            if let Some(parent) = e.parent() {
                match local.get(parent) {
                    Some(&p) => self.out[base + k - self.first].parent = Some(p),
                    None => {
                        return Err(self.out[base + k - self.first].entity_error(format!(
                            "parent \"{parent}\" is not an entity of this file"
                        )));
                    }
                }
            }
        }
        for (k, e) in entities.iter().enumerate() {
            let Some(prefab) = e.prefab() else { continue };
            let instance_id = self.out[base + k - self.first].id.to_string();
            let own = e.overrides();
            let placed = Instance {
                index: base + k,
                id: &instance_id,
                local_id: e.id(),
                file,
            };
            self.expand_instance(placed, prefab, own, overrides)?;
        }
        Ok(())
    }

    /// Places the prefab `prefab` under entity `instance`, patched by the instance's
    /// `own` overrides and by those `outer` files (the ones including the instance's
    /// file) give for entities below it.
    fn expand_instance(
        &mut self,
        instance: Instance,
        prefab: &str,
        own: &Map<String, Value>,
        outer: &Map<String, Value>,
    ) -> Result<(), CompileError> {
        let Instance {
            index,
            id: instance_id,
            local_id,
            file,
        } = instance;
        let instance_error = |message: String| CompileError::Entity {
            file: file.to_owned(),
            entity: instance_id.to_owned(),
            message,
        };
        let path =
            ResourcePath::parse(prefab).map_err(|err| instance_error(format!("prefab: {err}")))?;
        let unit_file = path.with_extension("unit");
        if let Some(start) = self.stack.iter().position(|f| f == &unit_file) {
            let mut cycle = self.stack[start..].to_vec();
            cycle.push(unit_file);
            return Err(CompileError::PrefabCycle { cycle });
        }
        let unit = match self.unit(&path, &unit_file) {
            Ok(unit) => unit,
            Err(UnitError::Read(reason)) => {
                return Err(CompileError::MissingPrefab {
                    file: file.to_owned(),
                    entity: instance_id.to_owned(),
                    prefab: prefab.to_owned(),
                    reason,
                });
            }
            Err(UnitError::Parse(e)) => return Err(e.into()),
        };
        // The instance's own overrides, then those arriving from outer levels for
        // entities below this instance (outer files win).
        let mut nested = own.clone();
        let own_prefix = format!("{local_id}/");
        for (key, patch) in outer {
            if let Some(inner) = key.strip_prefix(&own_prefix) {
                match (nested.get_mut(inner), patch) {
                    (Some(Value::Object(into)), Value::Object(from)) => {
                        for (component, fields) in from {
                            match (into.get_mut(component), fields) {
                                (Some(Value::Object(a)), Value::Object(b)) => {
                                    a.extend(b.iter().map(|(k, v)| (k.clone(), v.clone())));
                                }
                                _ => {
                                    into.insert(component.clone(), fields.clone());
                                }
                            }
                        }
                    }
                    _ => {
                        nested.insert(inner.to_owned(), patch.clone());
                    }
                }
            }
        }
        let unit_ids: Vec<&str> = unit.entities.iter().map(|u| u.id.as_str()).collect();
        if let Some(unknown) = own.keys().find(|k| {
            let head = k.split('/').next().unwrap_or("");
            !unit_ids.contains(&head)
        }) {
            return Err(instance_error(format!(
                "overrides \"{unknown}\", which is not an entity of {unit_file}"
            )));
        }
        if self.stack.len() > MAX_PREFAB_DEPTH {
            return Err(CompileError::Limit {
                file: self.stack[0].clone(),
                message: format!(
                    "prefabs nest more than {MAX_PREFAB_DEPTH} deep: {} -> {} -> ... -> {unit_file}",
                    self.stack[0],
                    self.stack.get(1).map_or("", String::as_str)
                ),
            });
        }
        self.stack.push(unit_file.clone());
        self.expand(
            Source::Unit(unit),
            &unit_file,
            &format!("{instance_id}/"),
            Some(index),
            &nested,
            file,
        )?;
        self.stack.pop();
        Ok(())
    }
}

/// Depth-first order from the roots, siblings in file order. Entities that cannot be
/// reached are in a parent cycle.
fn parents_first(entities: &[FlatEntity]) -> Result<Vec<usize>, CompileError> {
    let order = depth_first(entities.len(), |i| entities[i].parent);
    if order.len() != entities.len() {
        let mut reached = vec![false; entities.len()];
        for &i in &order {
            reached[i] = true;
        }
        if let Some(start) = (0..entities.len()).find(|&i| !reached[i]) {
            // Walk up from an unreached entity until a node repeats: that is the cycle.
            let mut seen = vec![start];
            let mut node = start;
            while let Some(p) = entities[node].parent {
                if let Some(pos) = seen.iter().position(|&s| s == p) {
                    let mut names: Vec<&str> =
                        seen[pos..].iter().map(|&s| &*entities[s].id).collect();
                    names.push(&entities[p].id);
                    return Err(
                        entities[p].entity_error(format!("parent cycle: {}", names.join(" -> ")))
                    );
                }
                seen.push(p);
                node = p;
            }
        }
    }
    Ok(order)
}

/// The `count` entities whose parents `parent_of` gives, depth first from the
/// roots, siblings in index order; those in a parent cycle are left out.
fn depth_first(count: usize, parent_of: impl Fn(usize) -> Option<usize>) -> Vec<usize> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); count];
    let mut roots = Vec::new();
    for i in 0..count {
        match parent_of(i) {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let mut order = Vec::with_capacity(count);
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(children[i].iter().rev());
    }
    order
}
