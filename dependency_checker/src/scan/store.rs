//! A file's references as the index keeps them: every string of a file in one
//! buffer and each reference a fixed-size record, so an index of 200,000
//! references is 40,000 allocations, not a million, and loading it from the cache
//! is mostly copying.

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
    pub fn owned(&self) -> RawReference {
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

impl<'a> RefView<'a> {
    /// The one path this reference, written in `file`, can resolve through: its
    /// text and type for a typed reference (`materials/bark` + `.material`), its
    /// text for a generic one (with or without an extension), the file a relative
    /// URI names; `None` for a URI that names no file of the project. A key that is
    /// not the text itself is built in `buf`, so that looking at every reference
    /// allocates nothing.
    pub(crate) fn key<'k>(&self, file: &str, buf: &'k mut String) -> Option<&'k str>
    where
        'a: 'k,
    {
        if self.naming == Naming::RelativeUri {
            *buf = kiln_core::gltf::resolve_uri(file, self.text).ok()?;
            return Some(buf);
        }
        match self.expected_type {
            Some(ty) => Some(typed_name(buf, self.text, ty)),
            None => Some(self.text),
        }
    }

    /// Whether, resolving to a file, it names it as it should: a canonical path, or
    /// a relative URI (a URI is not a resource path: its spelling is the URI's, and
    /// the file's own name is reported if it is not canonical).
    pub(crate) fn is_spelled_right(&self) -> bool {
        match (self.naming, self.expected_type) {
            (Naming::RelativeUri, _) => true,
            (_, Some(FULL_PATH)) => kiln_core::ResourcePath::split_file(self.text).is_ok(),
            _ => kiln_core::ResourcePath::is_canonical(self.text),
        }
    }
}

/// The expected type of a reference a declared rule says is written as the full
/// path with its extension (`"textures/bark.png"`): it names the file `text`, of
/// whatever type, and is checked and patched like a typed reference.
pub const FULL_PATH: &str = "*";

/// The file a reference declared of type `ty` names: `text.ty` (`text` itself for
/// [`FULL_PATH`]), built in `buf`.
pub(crate) fn typed_name<'b>(buf: &'b mut String, text: &str, ty: &str) -> &'b str {
    buf.clear();
    if ty == FULL_PATH {
        buf.push_str(text);
        return buf;
    }
    buf.push_str(text);
    buf.push('.');
    buf.push_str(ty);
    buf
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
pub(crate) type TextRange = (u32, u32);
pub(crate) const NO_TEXT: TextRange = (u32::MAX, u32::MAX);

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

    pub(crate) fn text(&self, r: TextRange) -> Option<&str> {
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
    pub(super) fn intern(&mut self, s: &str, last: &mut TextRange) -> TextRange {
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
        self.iter().map(|r| r.owned()).collect()
    }
}
