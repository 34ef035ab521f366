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
//! [`Naming`] and [`crate::gltf`]). Every reference keeps the byte span of its text,
//! so a rename can patch exactly those bytes and leave the rest of the file untouched.

use kiln_core::registry::ResourceFormat;
use kiln_core::{FieldKind, FieldSchema, Registry};

use crate::rules::{DeclaredRules, PathSegment};

/// How a reference's text names its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Naming {
    /// A path from the project root: written without extension when typed (the
    /// field gives the type), with or without it when generic.
    #[default]
    ProjectPath,
    /// A URI reference (RFC 3986) relative to the folder of the file it is written
    /// in, percent-encoded, with its extension: a glTF buffer's or image's `uri`.
    /// The text is kept as written (`../textures/my%20bark.png`).
    RelativeUri,
}

impl Naming {
    pub(crate) fn code(self) -> u32 {
        match self {
            Naming::ProjectPath => 0,
            Naming::RelativeUri => 1,
        }
    }

    pub(crate) fn from_code(code: u32) -> Option<Self> {
        match code {
            0 => Some(Naming::ProjectPath),
            1 => Some(Naming::RelativeUri),
            _ => None,
        }
    }
}

/// One reference found in a file, owned (see [`RefView`] for the borrowed form the
/// index stores).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawReference {
    /// The string's decoded text, e.g. `materials/bark`.
    pub text: String,
    /// Byte range of the string's content (inside the quotes) in the file.
    pub span: (u32, u32),
    /// 1-based line of the string.
    pub line: u32,
    /// 1-based column (in bytes) of the string's opening quote.
    pub column: u32,
    /// JSON pointer to the value, e.g. `/entities/3/components/mesh/material`.
    pub pointer: String,
    /// The resource type its field declares; `None` for a generic candidate (and for
    /// a relative URI, whose extension is its type).
    pub expected_type: Option<String>,
    /// How the text names its file.
    pub naming: Naming,
    /// For levels and units: the authoring id of the entity it is in.
    pub entity: Option<String>,
    /// For levels and units: the component type it is in.
    pub component: Option<String>,
}

/// One reference of a [`FileScan`], borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefView<'a> {
    /// The string's decoded text, e.g. `materials/bark`.
    pub text: &'a str,
    /// Byte range of the string's content (inside the quotes) in the file.
    pub span: (u32, u32),
    /// 1-based line of the string.
    pub line: u32,
    /// 1-based column (in bytes) of the string's opening quote.
    pub column: u32,
    /// JSON pointer to the value.
    pub pointer: &'a str,
    /// The resource type its field declares; `None` for a generic candidate (and for
    /// a relative URI, whose extension is its type).
    pub expected_type: Option<&'a str>,
    /// How the text names its file.
    pub naming: Naming,
    /// For levels and units: the authoring id of the entity it is in.
    pub entity: Option<&'a str>,
    /// For levels and units: the component type it is in.
    pub component: Option<&'a str>,
}

impl RefView<'_> {
    /// An owned copy.
    pub fn to_owned(&self) -> RawReference {
        RawReference {
            text: self.text.to_owned(),
            span: self.span,
            line: self.line,
            column: self.column,
            pointer: self.pointer.to_owned(),
            expected_type: self.expected_type.map(str::to_owned),
            naming: self.naming,
            entity: self.entity.map(str::to_owned),
            component: self.component.map(str::to_owned),
        }
    }
}

/// A file that is not valid JSON (or, for a binary glTF file, whose layout is wrong).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    /// 1-based line; 0 when the problem is in a binary file's layout, which has no
    /// lines (then `column` is 0 too). In a `.glb` file, the line of its JSON chunk.
    pub line: u32,
    /// 1-based column (in bytes).
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

/// The strings [`FileScan::push`] stored last, to store a repeat once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LastStored {
    ty: TextRange,
    entity: TextRange,
    component: TextRange,
}

impl Default for LastStored {
    fn default() -> Self {
        LastStored {
            ty: NO_TEXT,
            entity: NO_TEXT,
            component: NO_TEXT,
        }
    }
}

/// A string stored in a [`FileScan`]'s text: start and end, `NO_TEXT` for none.
type TextRange = (u32, u32);
const NO_TEXT: TextRange = (u32::MAX, u32::MAX);

/// One reference's fixed-size record; its strings live in the scan's shared text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RefRecord {
    pub(crate) text: TextRange,
    pub(crate) span: (u32, u32),
    pub(crate) line: u32,
    pub(crate) column: u32,
    pub(crate) pointer: TextRange,
    pub(crate) expected_type: TextRange,
    pub(crate) entity: TextRange,
    pub(crate) component: TextRange,
    pub(crate) naming: Naming,
}

/// What scanning a file produced: its references and candidates, in file order.
///
/// All of a file's strings share one buffer and each reference is a fixed-size
/// record, so an index of 200,000 references is 40,000 allocations, not a million,
/// and loading it from the cache is mostly copying.
#[derive(Debug, Clone, Default)]
pub struct FileScan {
    pub(crate) strings: String,
    pub(crate) records: Vec<RefRecord>,
    /// Set when a file of a JSON resource type does not parse, or a binary glTF
    /// file's layout is wrong.
    pub error: Option<ScanError>,
}

/// Two scans are equal when they hold the same references and error, however their
/// strings are laid out (a scan decoded from the cache stores them in its own order).
impl PartialEq for FileScan {
    fn eq(&self, other: &Self) -> bool {
        self.error == other.error && self.iter().eq(other.iter())
    }
}

impl Eq for FileScan {}

impl FileScan {
    /// Number of references.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    fn text(&self, r: TextRange) -> Option<&str> {
        (r != NO_TEXT)
            .then(|| self.strings.get(r.0 as usize..r.1 as usize))
            .flatten()
    }

    /// The `i`-th reference.
    pub fn get(&self, i: usize) -> Option<RefView<'_>> {
        let r = self.records.get(i)?;
        Some(RefView {
            text: self.text(r.text).unwrap_or(""),
            span: r.span,
            line: r.line,
            column: r.column,
            pointer: self.text(r.pointer).unwrap_or(""),
            expected_type: self.text(r.expected_type),
            naming: r.naming,
            entity: self.text(r.entity),
            component: self.text(r.component),
        })
    }

    /// Every reference, in file order.
    pub fn iter(&self) -> impl Iterator<Item = RefView<'_>> + '_ {
        (0..self.records.len()).filter_map(|i| self.get(i))
    }

    /// Stores `s`, reusing an identical earlier string of the same kind when it is the
    /// last one stored (entity ids and component names repeat in runs).
    fn intern(&mut self, s: &str, last: &mut TextRange) -> TextRange {
        if *last != NO_TEXT && self.text(*last) == Some(s) {
            return *last;
        }
        let start = self.strings.len() as u32;
        self.strings.push_str(s);
        *last = (start, self.strings.len() as u32);
        *last
    }

    /// Builds a scan from owned references (tests, and tools that make scans by hand).
    pub fn from_references(references: &[RawReference], error: Option<ScanError>) -> Self {
        let mut scan = FileScan {
            error,
            ..Default::default()
        };
        let mut last = Default::default();
        for r in references {
            scan.push(
                &RefView {
                    text: &r.text,
                    span: r.span,
                    line: r.line,
                    column: r.column,
                    pointer: &r.pointer,
                    expected_type: r.expected_type.as_deref(),
                    naming: r.naming,
                    entity: r.entity.as_deref(),
                    component: r.component.as_deref(),
                },
                &mut last,
            );
        }
        scan
    }

    /// Appends a copy of `r`; `last` remembers the type, entity and component stored
    /// last, which repeat in runs.
    pub(crate) fn push(&mut self, r: &RefView, last: &mut LastStored) {
        let text = self.intern(r.text, &mut NO_TEXT.clone());
        let pointer = self.intern(r.pointer, &mut NO_TEXT.clone());
        let expected_type = r
            .expected_type
            .map_or(NO_TEXT, |s| self.intern(s, &mut last.ty));
        let entity = r
            .entity
            .map_or(NO_TEXT, |s| self.intern(s, &mut last.entity));
        let component = r
            .component
            .map_or(NO_TEXT, |s| self.intern(s, &mut last.component));
        self.records.push(RefRecord {
            text,
            span: r.span,
            line: r.line,
            column: r.column,
            pointer,
            expected_type,
            entity,
            component,
            naming: r.naming,
        });
    }

    /// Owned copies of every reference.
    pub fn references(&self) -> Vec<RawReference> {
        self.iter().map(|r| r.to_owned()).collect()
    }
}

/// How a file's content is interpreted.
#[derive(Debug, Clone, Copy)]
enum Schema<'r> {
    /// `.level` / `.unit`: component schemas apply.
    Entities,
    /// A JSON resource type with these top-level fields.
    Fields(&'r [FieldSchema]),
    /// No schema: every canonical-path string is a generic candidate.
    Generic,
    /// glTF 2.0: the `uri` of each buffer and image is a relative URI; nothing else
    /// is a reference.
    Gltf,
}

/// What a string value at some path is.
enum Class<'r> {
    Typed(&'r str),
    NotReference,
    Generic,
    /// A relative URI (unless it has a scheme: then it names no file).
    Uri,
}

/// Whether a file of an unregistered type whose content does not parse should be
/// reported: it is meant to be JSON (a `.json` file, a type the project declares
/// rules for, or content that opens like JSON), so its references are invisible.
fn meant_as_json(rules: &DeclaredRules, ext: &str, bytes: &[u8]) -> bool {
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

/// The UTF-8 byte order mark some Windows tools write before JSON.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Whether `text` could be the path of a file in the index (or such a path without
/// its extension): relative, no empty, `.`, `..` or hidden segment, not inside a
/// folder that holds no resources. Only such strings can name a file, whatever
/// their spelling, so only they are kept as generic candidates.
pub fn could_name_a_file(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 4096
        && !text
            .split('/')
            .next()
            .is_some_and(|top| kiln_core::project::NON_RESOURCE_DIRS.contains(&top))
        && text
            .split('/')
            .all(|segment| !segment.is_empty() && !segment.starts_with('.'))
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
        Some(ResourceFormat::Gltf) if crate::gltf::is_binary(ext, bytes) => {
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
    let layout = match crate::gltf::glb_layout(bytes) {
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
    (registry, rules): (&Registry, &DeclaredRules),
    ext: &str,
    schema: Schema,
    bytes: &[u8],
) {
    let start = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    let mut s = Scanner {
        bytes,
        text: "",
        pos: start,
        path: Vec::new(),
        registry,
        rules: rules.applies_to(ext).then_some(rules),
        ext,
        schema,
        scan: {
            scratch.clear();
            std::mem::take(&mut scratch.scan)
        },
        ref_entity: {
            scratch.ref_entity.clear();
            std::mem::take(&mut scratch.ref_entity)
        },
        last_type: NO_TEXT,
        last_component: NO_TEXT,
        pointer_buf: String::new(),
        entity_ids: Vec::new(),
        line: 1,
        line_start: 0,
        keys: Vec::new(),
    };
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
        ref_entity,
        entity_ids,
        ..
    } = s;
    match result {
        Ok(()) => {
            // Entity ids may come after the components in an entity object: attach
            // them once the whole file is read.
            let mut last = NO_TEXT;
            for (k, &n) in ref_entity.iter().enumerate() {
                if let Some(Some(id)) = entity_ids.get(n as usize) {
                    let range = scan.intern(id, &mut last);
                    if let Some(record) = scan.records.get_mut(k) {
                        record.entity = range;
                    }
                }
            }
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
    scratch.scan = scan;
    scratch.ref_entity = ref_entity;
}

#[derive(Debug, Clone)]
enum Segment<'a> {
    /// An object key without escapes, checked as UTF-8 once when entered.
    Key(&'a str),
    /// Raw byte range of a key with escapes (decoded only for a pointer).
    EscapedKey(u32, u32),
    Index(u32),
}

/// Whether `b` matches JSON's number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)?
/// ([eE] [+-]? [0-9]+)?`. Checked by hand: parsing every number of a level as `f64`
/// only to throw it away was a visible share of indexing time.
fn valid_number(b: &[u8]) -> bool {
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

struct Scanner<'a, 'r> {
    bytes: &'a [u8],
    /// `bytes` as text once [`Scanner::check_utf8`] found them UTF-8: keys and
    /// strings are sliced from it (at their quotes, always character boundaries)
    /// rather than checked again one by one.
    text: &'a str,
    pos: usize,
    path: Vec<Segment<'a>>,
    registry: &'r Registry,
    /// The project's declared rules, when any apply to this file's type.
    rules: Option<&'r DeclaredRules>,
    ext: &'r str,
    schema: Schema<'r>,
    scan: FileScan,
    /// Entity index of each record (`u32::MAX` for none), resolved to ids at the end.
    ref_entity: Vec<u32>,
    last_type: TextRange,
    last_component: TextRange,
    pointer_buf: String,
    /// Authoring id of each entity of a level, by index, filled as seen.
    entity_ids: Vec<Option<String>>,
    /// The line [`Scanner::skip_ws`] has reached, 1-based: a line break outside
    /// white space is an error (JSON strings hold none), so counting them as
    /// white space is skipped reads each byte once.
    line: u32,
    /// Where that line starts.
    line_start: usize,
    /// Raw key ranges of the objects being read, innermost last, to find a key given
    /// twice in one object (in Kiln's own files only: foreign data is read as is).
    keys: Vec<(usize, usize)>,
}

const MAX_DEPTH: usize = 256;

impl<'a, 'r> Scanner<'a, 'r> {
    fn error(&self, message: &str) -> ScanError {
        let upto = &self.bytes[..self.pos.min(self.bytes.len())];
        let line = memchr::memchr_iter(b'\n', upto).count() as u32 + 1;
        let line_start = memchr::memrchr(b'\n', upto).map_or(0, |i| i + 1);
        ScanError {
            line,
            column: (self.pos - line_start) as u32 + 1,
            message: message.to_owned(),
        }
    }

    /// JSON text is UTF-8; checking the whole file once lets every string be taken
    /// as text without a check of its own.
    fn check_utf8(&mut self) -> Result<(), ScanError> {
        match std::str::from_utf8(self.bytes) {
            Ok(text) => {
                self.text = text;
                Ok(())
            }
            Err(e) => {
                self.pos = e.valid_up_to();
                Err(self.error("invalid UTF-8"))
            }
        }
    }

    /// The 1-based line and column (in bytes) of `pos`, on the line
    /// [`Scanner::skip_ws`] reached last (a token's first byte).
    fn line_at(&self, pos: usize) -> (u32, u32) {
        (self.line, pos.saturating_sub(self.line_start) as u32 + 1)
    }

    fn skip_ws(&mut self) -> Result<(), ScanError> {
        let mut pos = self.pos;
        while let Some(&b) = self.bytes.get(pos) {
            match b {
                b' ' | b'\r' | b'\t' => pos += 1,
                b'\n' => {
                    pos += 1;
                    self.line += 1;
                    self.line_start = pos;
                }
                _ => break,
            }
        }
        self.pos = pos;
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<(), ScanError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        match self.bytes.get(self.pos) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                let (start, end, escaped) = self.string()?;
                self.string_value(start, end, escaped);
                Ok(())
            }
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => {
                let start = self.pos;
                while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') =
                    self.bytes.get(self.pos)
                {
                    self.pos += 1;
                }
                if !valid_number(&self.bytes[start..self.pos]) {
                    self.pos = start;
                    return Err(self.error("invalid number"));
                }
                Ok(())
            }
            Some(_) => Err(self.error("expected a value")),
            None => Err(self.error("unexpected end of file")),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), ScanError> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error("expected a value"))
        }
    }

    /// Parses a string token; returns the content range and whether it has escapes.
    /// One pass over its bytes: strings are short (a key, a path), and a search
    /// call per string and a second pass for control characters cost more than
    /// looking at each byte once.
    fn string(&mut self) -> Result<(usize, usize, bool), ScanError> {
        let start = self.pos + 1;
        let mut i = start;
        let mut escaped = false;
        // JSON forbids raw control characters in strings: the first one is
        // reported if the string ends, as a raw line break is where it stands.
        let mut control = None;
        loop {
            match self.bytes.get(i) {
                Some(b'"') => {
                    if let Some(c) = control {
                        self.pos = c;
                        return Err(self.error("control character inside a string"));
                    }
                    // An escape must decode: a file `serde_json` would reject is
                    // not read differently here.
                    if escaped
                        && serde_json::from_slice::<String>(&self.bytes[start - 1..i + 1]).is_err()
                    {
                        self.pos = start - 1;
                        return Err(self.error("invalid escape in a string"));
                    }
                    self.pos = i + 1;
                    return Ok((start, i, escaped));
                }
                Some(b'\\') => {
                    escaped = true;
                    // The escaped byte is never the end of the string nor a line
                    // break, but is a control character if it is one.
                    if self.bytes.get(i + 1).is_some_and(|&b| b < 0x20) {
                        control = control.or(Some(i + 1));
                    }
                    i += 2;
                    if i > self.bytes.len() {
                        self.pos = self.bytes.len();
                        return Err(self.error("unterminated string"));
                    }
                }
                Some(b'\n') => {
                    self.pos = i;
                    return Err(self.error("line break inside a string"));
                }
                Some(&b) if b < 0x20 => {
                    control = control.or(Some(i));
                    i += 1;
                }
                // Plain text, up to the next byte that may be special, in a loop of
                // its own (5% to 10% faster than a turn of the one above per byte).
                Some(_) => {
                    i += 1;
                    while let Some(&b) = self.bytes.get(i) {
                        if b == b'"' || b == b'\\' || b < 0x20 {
                            break;
                        }
                        i += 1;
                    }
                }
                None => {
                    self.pos = self.bytes.len();
                    return Err(self.error("unterminated string"));
                }
            }
        }
    }

    fn decode(&self, start: usize, end: usize, escaped: bool) -> Option<String> {
        if escaped {
            serde_json::from_slice::<String>(&self.bytes[start - 1..end + 1]).ok()
        } else {
            self.text.get(start..end).map(str::to_owned)
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), ScanError> {
        self.pos += 1;
        self.skip_ws()?;
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(());
        }
        let first_key = self.keys.len();
        // Kiln's own files only: foreign data (a glTF file too) is read as it is.
        let check_keys = matches!(self.schema, Schema::Entities | Schema::Fields(_));
        loop {
            self.skip_ws()?;
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(self.error("expected a key in double quotes"));
            }
            let key_at = self.pos;
            let (ks, ke, kesc) = self.string()?;
            if check_keys {
                let key = &self.bytes[ks..ke];
                if self.keys[first_key..]
                    .iter()
                    .any(|&(s, e)| &self.bytes[s..e] == key)
                {
                    self.pos = key_at;
                    return Err(self.error(&format!(
                        "duplicate key \"{}\" in one object (the first is ignored; often a merge gone wrong)",
                        String::from_utf8_lossy(key)
                    )));
                }
                self.keys.push((ks, ke));
            }
            self.skip_ws()?;
            if self.bytes.get(self.pos) != Some(&b':') {
                return Err(self.error("expected ':' after the key"));
            }
            self.pos += 1;
            self.skip_ws()?;
            let segment = match (kesc, self.text.get(ks..ke)) {
                (false, Some(key)) => Segment::Key(key),
                _ => Segment::EscapedKey(ks as u32, ke as u32),
            };
            self.path.push(segment);
            self.value(depth + 1)?;
            self.path.pop();
            self.skip_ws()?;
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    self.keys.truncate(first_key);
                    return Ok(());
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), ScanError> {
        self.pos += 1;
        self.skip_ws()?;
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(());
        }
        let mut index = 0u32;
        loop {
            self.skip_ws()?;
            self.path.push(Segment::Index(index));
            self.value(depth + 1)?;
            self.path.pop();
            index += 1;
            self.skip_ws()?;
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

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
                let class = match rules.type_of(self.ext, &path) {
                    Some(ty) => Class::Typed(ty),
                    None => Class::Generic,
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

    fn string_value(&mut self, start: usize, end: usize, escaped: bool) {
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
        let (expected_type, naming) = match class {
            Class::NotReference => return,
            Class::Typed(t) => (Some(t), Naming::ProjectPath),
            Class::Generic => (None, Naming::ProjectPath),
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
            Naming::RelativeUri if crate::gltf::has_scheme(text) => return,
            Naming::RelativeUri => {}
            Naming::ProjectPath if expected_type.is_none() && !could_name_a_file(text) => return,
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
    }

    fn write_pointer(&self, p: &mut String) {
        use std::fmt::Write as _;
        p.clear();
        for seg in &self.path {
            p.push('/');
            match seg {
                Segment::Index(n) => {
                    let _ = write!(p, "{n}");
                }
                Segment::Key(key) => {
                    if key.contains(['~', '/']) {
                        p.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    } else {
                        p.push_str(key);
                    }
                }
                Segment::EscapedKey(s, e) => {
                    let key = self
                        .decode(*s as usize, *e as usize, true)
                        .unwrap_or_default();
                    p.push_str(&key.replace('~', "~0").replace('/', "~1"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let bytes = crate::gltf::glb(GLTF, Some(&bin));
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
        let bytes = crate::gltf::glb(GLTF, Some(&[1, 2, 3, 4]));
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
        let bad = crate::gltf::glb("{\n  \"images\": [,]\n}", None);
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
