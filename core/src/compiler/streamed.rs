//! A level compiled as it is read: `kiln compile` of a level file whose size is
//! the limit, where the rest of the compiler holds the text, the lean document and
//! the blob at once (a 100,000-entity level of 17.8 MB peaked at 105 MB).
//!
//! The file is read in pieces, and split into its entities' texts. Each entity's text is
//! checked as the whole text would be (repeated keys, merge conflicts), and its
//! components are compiled at once into their type's instances, in file order. What
//! is kept of an entity is its id, its parent's id and, for a prefab instance, the
//! prefab and its overrides. Once the file is read, parents are resolved, prefabs
//! are placed (as the rest of the compiler places them), and the blob is written
//! section by section, each type's instances put parents-first as they are written.
//! The peak is then the compiled instances and the ids, never the text.
//!
//! This path only ever succeeds with the blob [`compile_level_with`] writes: it
//! gives up (`None`) on anything it does not take or that is an error, and the
//! caller then compiles the level the usual way, which reports the error the
//! editor's document would. A differential property test holds it to that.
//!
//! [`compile_level_with`]: super::compile_level_with

use std::collections::{BTreeSet, HashMap};
use std::io::{self, Read, Write};
use std::rc::Rc;

use serde_json::{Map, Value};

use super::{
    CompileError, CompileOptions, FlatEntity, Flattener, Instance, ResourceSource,
    compile_component, compile_implicit, depth_first, unknown_component,
};
use crate::blob::{FORMAT_VERSION, HEADER_SIZE, MAGIC, NO_PARENT};
use crate::level::valid_authoring_id;
use crate::raw_level::RawEntityDocument;
use crate::registry::{ComponentType, Registry};

/// The most brackets an entity's text may hold to be compiled as it is read (see
/// `Reading::entity`).
const MAX_ENTITY_BRACKETS: usize = 120;

/// A level compiled as it was read, ready to be written as a blob.
#[derive(Debug)]
pub struct StreamedLevel {
    /// Number of entities after flattening prefabs.
    pub entity_count: usize,
    /// The `.unit` files the level includes, directly or through other units.
    pub units: BTreeSet<String>,
    /// Components left out because their type is not known (see
    /// [`CompileOptions::skip_unknown_components`]).
    pub left_out: Vec<CompileError>,
    /// Parent of each entity, in blob order.
    parent_index: Vec<u32>,
    /// Blob position -> flat index.
    order: Vec<u32>,
    /// Every entity's id, in flat order, and where each ends.
    id_text: String,
    id_ends: Vec<u32>,
    /// The component types that have instances, in spawn order.
    sections: Vec<Section>,
}

/// One component type's instances: their bytes in file order, and where each is,
/// in blob order.
#[derive(Debug)]
struct Section {
    component_identifier: u32,
    data: Vec<u8>,
    spans: Vec<Span>,
}

/// Where an instance is in its [`Section`]'s data, and its owner's blob index.
#[derive(Debug)]
struct Span {
    owner: u32,
    start: u32,
    end: u32,
}

/// One component type's instances as they are compiled, in flat order of their
/// owners.
struct Block {
    component_identifier: u32,
    data: Vec<u8>,
    instances: Vec<Placed>,
}

/// One instance in a [`Block`]: its owner's flat index and where its bytes end in
/// the block's data.
#[derive(Clone, Copy)]
struct Placed {
    owner: u32,
    end: u32,
}

/// A prefab instance of the level, placed once the whole file is read.
struct PendingPrefab {
    index: usize,
    prefab: String,
    overrides: Option<Box<Map<String, Value>>>,
}

/// Compiles the level `file` read from `reader`, as [`super::compile_level_with`]
/// would, or `None` where that reports an error (or might: the caller asks it).
pub fn compile_streamed(
    registry: &Registry,
    source: &mut dyn ResourceSource,
    file: &str,
    reader: impl Read,
    options: CompileOptions,
) -> Option<StreamedLevel> {
    let mut texts = EntityTexts::open(reader).ok()?;
    let mut reading = Reading {
        registry,
        options,
        file: Rc::from(file),
        max_entities: source.max_level_entities(),
        blocks: registry
            .components()
            .iter()
            .map(|ty| Block {
                component_identifier: ty.id,
                data: Vec::new(),
                instances: Vec::new(),
            })
            .collect(),
        id_text: String::new(),
        id_ends: Vec::new(),
        parents: Vec::new(),
        parent_text: String::new(),
        prefabs: Vec::new(),
        left_out: Vec::new(),
    };
    while let Some(text) = texts.next().ok()? {
        reading.entity(text)?;
    }
    reading.finish(source, file)
}

/// What is kept of the level while it is read.
struct Reading<'r> {
    registry: &'r Registry,
    options: CompileOptions,
    file: Rc<str>,
    max_entities: usize,
    /// One per registered type, in the registry's order.
    blocks: Vec<Block>,
    id_text: String,
    id_ends: Vec<u32>,
    /// Entities with a parent: (flat index, end of the parent's id in
    /// `parent_text`).
    parents: Vec<(u32, u32)>,
    parent_text: String,
    prefabs: Vec<PendingPrefab>,
    left_out: Vec<CompileError>,
}

impl Reading<'_> {
    /// Takes in the level's next entity, written as `text`. `None` gives up.
    fn entity(&mut self, text: &str) -> Option<()> {
        // serde_json refuses values nested 128 deep; the whole text nests each
        // entity two deeper than its own text does. Brackets in strings count too:
        // giving up is always safe.
        let brackets = text.bytes().filter(|&b| b == b'[' || b == b'{').count();
        if brackets > MAX_ENTITY_BRACKETS || crate::conflict::may_have_conflicts(text) {
            return None;
        }
        crate::json_format::reject_duplicate_keys(text).ok()?;
        let e: RawEntityDocument = serde_json::from_str(text).ok()?;
        let index = self.id_ends.len();
        if !valid_authoring_id(&e.id)
            || index + 1 > self.max_entities
            || (e.prefab.is_none() && e.overrides.as_ref().is_some_and(|o| !o.is_empty()))
        {
            return None;
        }
        self.id_text.push_str(&e.id);
        self.id_ends.push(u32::try_from(self.id_text.len()).ok()?);
        if let Some(parent) = &e.parent {
            self.parent_text.push_str(&parent.0);
            let end = u32::try_from(self.parent_text.len()).ok()?;
            self.parents.push((index as u32, end));
        }
        let flat = FlatEntity::read(&e, &self.file);
        self.compile(&flat, index).ok()?;
        if let Some(prefab) = e.prefab {
            self.prefabs.push(PendingPrefab {
                index,
                prefab,
                overrides: e.overrides,
            });
        }
        Some(())
    }

    /// Compiles entity `e`, flat index `index`, into the blocks, in the order the
    /// whole compile checks the level's components.
    fn compile(&mut self, e: &FlatEntity, index: usize) -> Result<(), ()> {
        for c in e.components.iter() {
            match self.registry.component_index(&c.name) {
                None => {
                    if !self.options.skip_unknown_components {
                        return Err(());
                    }
                    let message = unknown_component(self.registry, &c.name);
                    self.left_out.push(e.component_error(c, message));
                }
                Some(ty) if self.registry.components()[ty].implicit => return Err(()),
                // Entity fields are found among all the level's entities, which
                // are not all read yet: the level is compiled the usual way.
                Some(ty) if self.registry.components()[ty].refers_to_entities() => {
                    return Err(());
                }
                Some(ty) => {
                    let block = &mut self.blocks[ty];
                    let mut placed = placer(&mut block.instances, index);
                    let ty: &ComponentType = &self.registry.components()[ty];
                    let find = |_: Option<&str>, _: &str| None;
                    compile_component(ty, (e, &find), c, &mut block.data, &mut placed)
                        .map_err(|_| ())?;
                }
            }
        }
        for (ty, block) in self.registry.components().iter().zip(&mut self.blocks) {
            if ty.implicit {
                let mut placed = placer(&mut block.instances, index);
                compile_implicit(ty, e, &mut block.data, &mut placed).map_err(|_| ())?;
            }
        }
        Ok(())
    }

    /// Places the prefabs, orders the entities parents-first, and sorts each
    /// type's instances into that order.
    fn finish(mut self, source: &mut dyn ResourceSource, file: &str) -> Option<StreamedLevel> {
        let level_entities = self.id_ends.len();
        let mut parent: Vec<u32> = vec![NO_PARENT; level_entities];
        {
            let ids = IdTable::new(&self.id_text, &self.id_ends)?;
            let mut start = 0;
            for &(child, end) in &self.parents {
                let name = &self.parent_text[start..end as usize];
                start = end as usize;
                parent[child as usize] = *ids.index.get(name)? as u32;
            }
        }
        self.parents = Vec::new();
        self.parent_text = String::new();

        let mut flat = Flattener {
            source,
            units: HashMap::new(),
            stack: vec![file.to_owned()],
            out: Vec::new(),
            first: level_entities,
            max_entities: self.max_entities,
        };
        let none = Map::new();
        let prefabs = std::mem::take(&mut self.prefabs);
        for pending in &prefabs {
            let id = self.id(pending.index).to_owned();
            let instance = Instance {
                index: pending.index,
                id: &id,
                local_id: &id,
                file,
            };
            let own = pending.overrides.as_deref().unwrap_or(&none);
            flat.expand_instance(instance, &pending.prefab, own, &none)
                .ok()?;
        }
        let units: BTreeSet<String> = flat.units.keys().cloned().collect();
        let placed = std::mem::take(&mut flat.out);
        drop(flat);
        for (k, e) in placed.iter().enumerate() {
            let index = level_entities + k;
            self.id_text.push_str(&e.id);
            self.id_ends.push(u32::try_from(self.id_text.len()).ok()?);
            parent.push(e.parent.map_or(NO_PARENT, |p| p as u32));
            self.compile(e, index).ok()?;
        }
        drop(placed);

        let count = parent.len();
        let order = depth_first(count, |i| {
            (parent[i] != NO_PARENT).then_some(parent[i] as usize)
        });
        if order.len() != count {
            return None;
        }
        let mut blob_index = vec![0u32; count];
        for (k, &i) in order.iter().enumerate() {
            blob_index[i] = k as u32;
        }
        let parent_index: Vec<u32> = order
            .iter()
            .map(|&i| match parent[i] {
                NO_PARENT => NO_PARENT,
                p => blob_index[p as usize],
            })
            .collect();
        let mut sections = Vec::new();
        for block in self.blocks {
            if block.instances.is_empty() {
                continue;
            }
            u32::try_from(block.data.len()).ok()?;
            // The whole compile writes a type's instances in blob order of their
            // owners, an entity's several in its own order: a stable sort.
            let mut start = 0;
            let mut spans: Vec<Span> = block
                .instances
                .iter()
                .map(|p| {
                    let span = Span {
                        owner: blob_index[p.owner as usize],
                        start,
                        end: p.end,
                    };
                    start = p.end;
                    span
                })
                .collect();
            spans.sort_by_key(|span| span.owner);
            sections.push(Section {
                component_identifier: block.component_identifier,
                data: block.data,
                spans,
            });
        }
        Some(StreamedLevel {
            entity_count: count,
            units,
            left_out: self.left_out,
            parent_index,
            order: order.into_iter().map(|i| i as u32).collect(),
            id_text: self.id_text,
            id_ends: self.id_ends,
            sections,
        })
    }

    /// The id of the level's entity `index`.
    fn id(&self, index: usize) -> &str {
        let start = index.checked_sub(1).map_or(0, |i| self.id_ends[i] as usize);
        &self.id_text[start..self.id_ends[index] as usize]
    }
}

/// Calls back with the end of each instance compiled for entity `index`.
fn placer(instances: &mut Vec<Placed>, index: usize) -> impl FnMut(usize) + '_ {
    move |end| {
        instances.push(Placed {
            owner: index as u32,
            end: end as u32,
        })
    }
}

/// The level's entities by id; `None` where two share one.
struct IdTable<'t> {
    index: HashMap<&'t str, usize>,
}

impl<'t> IdTable<'t> {
    fn new(text: &'t str, ends: &[u32]) -> Option<Self> {
        let mut index = HashMap::with_capacity(ends.len());
        let mut start = 0;
        for (k, &end) in ends.iter().enumerate() {
            if index.insert(&text[start..end as usize], k).is_some() {
                return None;
            }
            start = end as usize;
        }
        Some(IdTable { index })
    }
}

impl StreamedLevel {
    /// The size of the blob [`StreamedLevel::write_blob`] writes.
    pub fn blob_len(&self) -> usize {
        let (body, ids) = self.section_lens();
        HEADER_SIZE + body + ids
    }

    fn section_lens(&self) -> (usize, usize) {
        let body = 8
            + 4 * self.parent_index.len()
            + self
                .sections
                .iter()
                .map(|b| (12 + 4 * b.spans.len() + b.data.len()).next_multiple_of(4))
                .sum::<usize>();
        let ids = if self.parent_index.is_empty() {
            0
        } else {
            (8 + 4 * self.parent_index.len() + self.id_text.len()).next_multiple_of(4)
        };
        (body, ids)
    }

    /// Writes the blob (see `core/FORMAT.md`) to `out`, byte for byte the one
    /// [`crate::blob::write_blob`] makes of the same level.
    pub fn write_blob(&self, out: &mut dyn Write) -> io::Result<()> {
        let put = |out: &mut dyn Write, v: u32| out.write_all(&v.to_le_bytes());
        let (body, ids) = self.section_lens();
        let count = self.parent_index.len();
        out.write_all(&MAGIC)?;
        put(out, FORMAT_VERSION)?;
        put(out, HEADER_SIZE as u32)?;
        put(out, body as u32)?;
        put(
            out,
            if ids == 0 {
                0
            } else {
                (HEADER_SIZE + body) as u32
            },
        )?;
        put(out, ids as u32)?;
        put(out, count as u32)?;
        put(out, self.sections.len() as u32)?;
        for &p in &self.parent_index {
            put(out, p)?;
        }
        for section in &self.sections {
            put(out, section.component_identifier)?;
            put(out, section.spans.len() as u32)?;
            put(out, section.data.len() as u32)?;
            for span in &section.spans {
                put(out, span.owner)?;
            }
            for span in &section.spans {
                out.write_all(&section.data[span.start as usize..span.end as usize])?;
            }
            pad(out, section.data.len())?;
        }
        if ids != 0 {
            put(out, count as u32)?;
            put(out, 0)?;
            let mut offset = 0u32;
            for &i in &self.order {
                offset += self.flat_id(i as usize).len() as u32;
                put(out, offset)?;
            }
            for &i in &self.order {
                out.write_all(self.flat_id(i as usize).as_bytes())?;
            }
            pad(out, offset as usize)?;
        }
        Ok(())
    }

    /// The blob, in memory (for tests and small levels).
    pub fn blob(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.blob_len());
        // Writing to a Vec never fails.
        let _ = self.write_blob(&mut out);
        out
    }

    fn flat_id(&self, index: usize) -> &str {
        let start = index.checked_sub(1).map_or(0, |i| self.id_ends[i] as usize);
        &self.id_text[start..self.id_ends[index] as usize]
    }
}

/// Zero bytes after `len` bytes, up to a multiple of four.
fn pad(out: &mut dyn Write, len: usize) -> io::Result<()> {
    out.write_all(&[0; 3][..len.next_multiple_of(4) - len])
}

/// Splits a level's text, read in pieces, into its entities' texts.
///
/// Hand-written rather than serde_json's reader: that one parses byte by byte
/// through `io::Read` and copies each entity out to hand it over, which made a
/// 100,000-entity compile 1.45x slower. This one only finds where each entity ends
/// (strings skipped with `memchr`); serde_json then parses each entity's text, so
/// anything the splitter mistook for an entity is refused there. It takes only the
/// shape Kiln writes and people do: `{"entities": [{...}, ...]}` with any JSON
/// whitespace, or `{}`; anything else is given up (the whole compile decides).
struct EntityTexts<R> {
    reader: R,
    buf: Vec<u8>,
    /// Where reading has got to in `buf`.
    pos: usize,
    /// Whether the next entity is the array's first.
    first: bool,
    /// Whether the array has ended.
    ended: bool,
}

/// A piece of the text the splitter does not take.
struct GiveUp;

impl From<io::Error> for GiveUp {
    fn from(_: io::Error) -> Self {
        GiveUp
    }
}

/// JSON's whitespace (and nothing else: a form feed is an error).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl<R: Read> EntityTexts<R> {
    /// Reads up to the first entity (or the end of an empty level).
    fn open(reader: R) -> Result<Self, GiveUp> {
        let mut texts = EntityTexts {
            reader,
            buf: Vec::new(),
            pos: 0,
            first: true,
            ended: false,
        };
        // The byte-order mark some editors write (see `json_format::without_bom`).
        while texts.buf.len() < 3 && texts.fill()? {}
        if texts.buf.starts_with(crate::json_format::BOM) {
            texts.pos = crate::json_format::BOM.len();
        }
        texts.expect(b'{')?;
        if texts.peek()? == Some(b'}') {
            texts.pos += 1;
            texts.ended = true;
            return texts.end().map(|()| texts);
        }
        for &b in b"\"entities\"" {
            if texts.next_byte()? != Some(b) {
                return Err(GiveUp);
            }
        }
        texts.expect(b':')?;
        texts.expect(b'[')?;
        if texts.peek()? == Some(b']') {
            texts.pos += 1;
            texts.close()?;
        }
        Ok(texts)
    }

    /// The text of the next entity, or `None` after the last.
    fn next(&mut self) -> Result<Option<&str>, GiveUp> {
        if self.ended {
            return Ok(None);
        }
        // What is read is dropped between entities, so the buffer holds about one
        // piece of the file.
        if self.pos >= 1 << 16 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        if !self.first {
            match self.peek()? {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    self.close()?;
                    return Ok(None);
                }
                _ => return Err(GiveUp),
            }
        }
        self.first = false;
        if self.peek()? != Some(b'{') {
            return Err(GiveUp);
        }
        let start = self.pos;
        let end = self.value_end(start)?;
        self.pos = end;
        std::str::from_utf8(&self.buf[start..end])
            .map(Some)
            .map_err(|_| GiveUp)
    }

    /// After the array: `}` and nothing but whitespace.
    fn close(&mut self) -> Result<(), GiveUp> {
        self.ended = true;
        self.expect(b'}')?;
        self.end()
    }

    /// Nothing but whitespace to the end of the file.
    fn end(&mut self) -> Result<(), GiveUp> {
        match self.peek()? {
            None => Ok(()),
            Some(_) => Err(GiveUp),
        }
    }

    /// The end of the object starting at `start`. Only braces and strings are
    /// looked at (`memchr` skips the rest): a bracket cannot end an object in valid
    /// JSON, and serde_json refuses the text if it is not.
    fn value_end(&mut self, start: usize) -> Result<usize, GiveUp> {
        let mut depth = 0usize;
        let mut at = start;
        loop {
            let Some(k) = memchr::memchr3(b'{', b'}', b'"', &self.buf[at..]) else {
                at = self.buf.len();
                if !self.fill()? {
                    return Err(GiveUp);
                }
                continue;
            };
            at += k;
            match self.buf[at] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(at + 1);
                    }
                }
                _ => {
                    // To the closing quote, past escapes; more text is read where
                    // the string goes on past what is read.
                    loop {
                        match memchr::memchr2(b'"', b'\\', &self.buf[at + 1..]) {
                            Some(k) if self.buf[at + 1 + k] == b'"' => {
                                at += 1 + k;
                                break;
                            }
                            Some(k) if at + 2 + k < self.buf.len() => at += 2 + k,
                            _ => {
                                if !self.fill()? {
                                    return Err(GiveUp);
                                }
                            }
                        }
                    }
                }
            }
            at += 1;
        }
    }

    /// Skips whitespace, then takes the byte `b`.
    fn expect(&mut self, b: u8) -> Result<(), GiveUp> {
        match self.peek()? {
            Some(found) if found == b => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(GiveUp),
        }
    }

    /// The next byte, whitespace skipped, left unread; `None` at the end.
    fn peek(&mut self) -> Result<Option<u8>, GiveUp> {
        loop {
            while let Some(&b) = self.buf.get(self.pos) {
                if !is_space(b) {
                    return Ok(Some(b));
                }
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// The next byte, as it is.
    fn next_byte(&mut self) -> Result<Option<u8>, GiveUp> {
        while self.pos >= self.buf.len() {
            if !self.fill()? {
                return Ok(None);
            }
        }
        self.pos += 1;
        Ok(Some(self.buf[self.pos - 1]))
    }

    /// Reads more of the file onto the buffer; `false` at its end.
    fn fill(&mut self) -> io::Result<bool> {
        let old = self.buf.len();
        // At least as much again as is held, so that an entity bigger than a piece
        // is scanned a bounded number of times.
        self.buf.resize(old + old.max(1 << 16), 0);
        let read = loop {
            match self.reader.read(&mut self.buf[old..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        self.buf.truncate(old + *read.as_ref().unwrap_or(&0));
        Ok(read? > 0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::collections::HashMap;

    use super::*;

    fn streamed(text: &str) -> Option<StreamedLevel> {
        let registry = Registry::with_builtins();
        let mut units: HashMap<String, String> = HashMap::new();
        compile_streamed(
            &registry,
            &mut units,
            "levels/a.level",
            text.as_bytes(),
            CompileOptions::default(),
        )
    }

    fn whole(text: &str) -> Result<Vec<u8>, CompileError> {
        let registry = Registry::with_builtins();
        let mut units: HashMap<String, String> = HashMap::new();
        crate::compiler::compile_level(&registry, &mut units, "levels/a.level", text)
            .map(|c| c.blob)
    }

    /// A positive control, then what only the whole text shows: each is given up
    /// (the whole compile then reports it), never compiled.
    #[test]
    fn what_the_whole_text_refuses_is_given_up() {
        let one = r#"{"id": "a", "components": {"transform": {}}}"#;
        let good = format!(r#"{{"entities": [{one}]}}"#);
        assert_eq!(
            streamed(&good).map(|s| s.blob()),
            Some(whole(&good).unwrap())
        );
        assert_eq!(streamed("{}").map(|s| s.blob()), Some(whole("{}").unwrap()));
        let deep = format!(
            r#"{{"entities": [{{"id": "a", "name": "x", "components": {{"physics": {}1{}}}}}]}}"#,
            "[".repeat(125),
            "]".repeat(125)
        );
        for bad in [
            format!(r#"{{"entities": [{one}], "entities": []}}"#),
            format!(r#"{{"entities": [{one}], "colour": 1}}"#),
            format!(r#"{{"entities": [{one}]}} x"#),
            format!(r#"{{"entities": [{one}, {one}]}}"#),
            r#"{"entities": [{"id": "a", "parent": "b"}]}"#.to_owned(),
            r#"{"entities": [{"id": "a", "parent": "b"}, {"id": "b", "parent": "a"}]}"#.to_owned(),
            r#"{"entities": [{"id": "a", "name": "kiln:conflict"}]}"#.to_owned(),
            r#"{"entities": null}"#.to_owned(),
            "[]".to_owned(),
            deep,
        ] {
            assert!(streamed(&bad).is_none(), "streamed: {bad}");
        }
    }

    /// Braces, brackets and escaped quotes inside strings, and JSON's whitespace
    /// between everything, do not end an entity; the entity is compiled.
    #[test]
    fn strings_and_whitespace_do_not_end_an_entity() {
        let text = "\u{feff} \r\n{\t\"entities\" :\n[ {\"id\": \"a\", \"name\": \"}{\\\"]\\\\\"},\r\n\t{\"id\": \"b\", \"parent\": \"a\", \"name\": \"[{\\\\\"} ] \n} \n";
        let level = streamed(text).unwrap();
        assert_eq!(level.entity_count, 2);
        assert_eq!(level.blob(), whole(text).unwrap());
    }

    /// The blob is written with each type's instances parents-first, whatever
    /// order the file lists entities in: a child before its parent, two instances
    /// of one type on one entity.
    #[test]
    fn instances_are_written_parents_first() {
        let text = r#"{"entities": [
            {"id": "child", "parent": "root", "name": "C", "components": {"transform": {"position": [1, 0, 0]},
                "mesh": [{"mesh": "meshes/a"}, {"mesh": "meshes/b"}]}},
            {"id": "root", "name": "R", "components": {"transform": {}, "mesh": {"mesh": "meshes/c"}}}
        ]}"#;
        let blob = streamed(text).unwrap().blob();
        assert_eq!(blob, whole(text).unwrap());
        let parsed = crate::blob::LevelBlob::parse(&blob).unwrap();
        assert_eq!(parsed.ids().collect::<Vec<_>>(), ["root", "child"]);
        assert_eq!(&*parsed.parent_index, &[NO_PARENT, 0]);
    }
}
