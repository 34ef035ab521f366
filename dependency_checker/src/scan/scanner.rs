//! The scanner's state: where in the file it is, the path of keys and indices to
//! the current value, the schema it reads the file under, and the scan it fills.
//! The JSON grammar (`json.rs`) and the classification of strings (`classify.rs`)
//! are its two halves.

use kiln_core::{FieldSchema, Registry};

use super::rules::DeclaredRules;
use super::store::{FileScan, TextRange};

// The UTF-8 byte order mark some Windows tools write before JSON (one spelling,
// core's).
pub(super) use kiln_core::json_format::BOM;

/// How a file's content is interpreted.
#[derive(Debug, Clone, Copy)]
pub(super) enum Schema<'r> {
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

/// A place between two tokens of a level: after `[`, after an entity, after `]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Boundary {
    /// Its byte offset.
    pub(crate) pos: u32,
    /// Its 1-based line.
    pub(crate) line: u32,
    /// Where that line starts.
    pub(crate) line_start: u32,
    /// How many references the file has before it.
    pub(crate) records: u32,
}

/// The boundaries of a level's entity list, noted by the scanner as it reads it.
#[derive(Debug, Clone, Default)]
pub(crate) struct EntityMarks {
    pub(crate) open: Option<Boundary>,
    pub(crate) ends: Vec<Boundary>,
    pub(crate) close: Option<Boundary>,
}

#[derive(Debug, Clone)]
pub(super) enum Segment<'a> {
    /// An object key without escapes, checked as UTF-8 once when entered.
    Key(&'a str),
    /// Raw byte range of a key with escapes (decoded only for a pointer).
    EscapedKey(u32, u32),
    Index(u32),
}

pub(super) struct Scanner<'a, 'r> {
    pub(super) bytes: &'a [u8],
    /// `bytes` as text once [`Scanner::check_utf8`] found them UTF-8: keys and
    /// strings are sliced from it (at their quotes, always character boundaries)
    /// rather than checked again one by one.
    pub(super) text: &'a str,
    pub(super) pos: usize,
    pub(super) path: Vec<Segment<'a>>,
    pub(super) registry: &'r Registry,
    /// The project's declared rules, when any apply to this file's type.
    pub(super) rules: Option<&'r DeclaredRules>,
    pub(super) ext: &'r str,
    pub(super) schema: Schema<'r>,
    pub(super) scan: FileScan,
    /// Entity index of each record (`u32::MAX` for none), resolved to ids at the end.
    pub(super) ref_entity: Vec<u32>,
    pub(super) last_type: TextRange,
    pub(super) last_component: TextRange,
    pub(super) pointer_buf: String,
    /// Authoring id of each entity of a level, by index, filled as seen.
    pub(super) entity_ids: Vec<Option<String>>,
    /// The line [`Scanner::skip_ws`] has reached, 1-based: a line break outside
    /// white space is an error (JSON strings hold none), so counting them as
    /// white space is skipped reads each byte once.
    pub(super) line: u32,
    /// Where that line starts.
    pub(super) line_start: usize,
    /// Raw key ranges of the objects being read, innermost last, to find a key given
    /// twice in one object (in Kiln's own files only: foreign data is read as is).
    pub(super) keys: Vec<(usize, usize)>,
    /// Records a conditional rule matched, decided once the file is read.
    pub(super) pending: Vec<usize>,
    /// Where a level's entities end, when asked for (see `resume.rs`).
    pub(super) marks: Option<EntityMarks>,
}

impl<'a, 'r> Scanner<'a, 'r> {
    /// A scanner of `bytes` from `pos`, filling `scratch`'s buffers (emptied).
    pub(super) fn new(
        scratch: &mut super::ScanScratch,
        (registry, rules): (&'r Registry, Option<&'r DeclaredRules>),
        (ext, schema): (&'r str, Schema<'r>),
        (bytes, text, pos): (&'a [u8], &'a str, usize),
    ) -> Self {
        scratch.clear();
        scratch.ref_entity.clear();
        Scanner {
            bytes,
            text,
            pos,
            path: Vec::new(),
            registry,
            rules,
            ext,
            schema,
            scan: std::mem::take(&mut scratch.scan),
            ref_entity: std::mem::take(&mut scratch.ref_entity),
            last_type: super::store::NO_TEXT,
            last_component: super::store::NO_TEXT,
            pointer_buf: String::new(),
            entity_ids: Vec::new(),
            line: 1,
            line_start: 0,
            keys: Vec::new(),
            pending: Vec::new(),
            marks: None,
        }
    }
}
