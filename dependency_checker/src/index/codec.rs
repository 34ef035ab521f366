//! The scan codec: a file's references encoded compactly, and kept encoded until
//! something asks for them.
//!
//! Every string (reference texts, JSON pointers, entity ids, component and type
//! names) is stored once per body of scans, in one table, and named by its number;
//! numbers are LEB128 varints, spans and lines differences from the reference
//! before, pointers the length they share with the one before and the rest; strings
//! are numbered from the most used, so that a type or component name takes one
//! byte. A walk encodes each file as it scans it ([`WalkEncoder`], joined by
//! [`seal`]); the cache file (`cache.rs`) stores the same records and loads
//! them without decoding ([`EncodedScan`]).
//!
//! A file's record: `v` 0, or 1 with `v` line, `v` column and `v` message of its
//! parse error; `v` count; per reference `v` text, `v` type times 2 plus how it
//! names its file, `v` zigzag start of its span after the previous span's end, `v`
//! span length, `v` zigzag line after the previous line, `v` column, `v` bytes of
//! its pointer shared with the previous one and `v` the rest, `v` entity and `v`
//! component. Type, entity and component are 0 for none, 1 for the previous
//! reference's, or their number + 2.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use kiln_core::Registry;
use rayon::prelude::*;

use crate::scan::{DeclaredRules, FileScan, LastStored, Naming, RefView, ScanError};

/// A file's scan: made now, or still encoded in the cache the entry was loaded from
/// and decoded on first use. A warm command that asks about a few files decodes a
/// few; the rest of the cache is never turned into scans.
#[derive(Clone)]
pub(crate) struct ScanCell {
    decoded: OnceLock<Arc<FileScan>>,
    encoded: Option<EncodedScan>,
}

impl ScanCell {
    pub(crate) fn new(scan: Arc<FileScan>) -> Self {
        ScanCell {
            decoded: OnceLock::from(scan),
            encoded: None,
        }
    }

    /// A scan encoded by a walk's thread, until the walk is sealed.
    pub(crate) fn unsealed() -> Self {
        ScanCell {
            decoded: OnceLock::new(),
            encoded: None,
        }
    }

    /// Whether this is [`ScanCell::unsealed`]: every other cell holds a scan or
    /// a record (asking for an unsealed cell's scan makes it hold an empty one).
    pub(crate) fn is_unsealed(&self) -> bool {
        self.decoded.get().is_none() && self.encoded.is_none()
    }

    pub(crate) fn encoded(encoded: EncodedScan) -> Self {
        ScanCell {
            decoded: OnceLock::new(),
            encoded: Some(encoded),
        }
    }

    /// The scan still in its cache's bytes, if it was not decoded yet (the cache
    /// copies those bytes as they are when it is written again).
    pub(crate) fn still_encoded(&self) -> Option<&EncodedScan> {
        self.decoded
            .get()
            .is_none()
            .then_some(self.encoded.as_ref())
            .flatten()
    }

    /// The scan, if it is at hand (made now, or decoded and kept).
    pub(crate) fn decoded(&self) -> Option<&Arc<FileScan>> {
        self.decoded.get()
    }

    /// Calls `f` with the scan, decoded for the call only if it was not yet.
    pub(crate) fn with<T>(&self, path: &str, f: impl FnOnce(&FileScan) -> T) -> T {
        match (self.decoded.get(), &self.encoded) {
            (Some(scan), _) => f(scan),
            (None, Some(e)) => f(&e.decode(path)),
            (None, None) => f(&FileScan::default()),
        }
    }

    /// How many references the scan holds, without decoding it: the count its
    /// record starts with (a hint only, if the record was crafted).
    pub(crate) fn len_hint(&self) -> usize {
        match (self.decoded.get(), &self.encoded) {
            (Some(scan), _) => scan.len(),
            (None, Some(e)) => e.count_hint(),
            (None, None) => 0,
        }
    }

    pub(crate) fn get(&self, path: &str) -> &Arc<FileScan> {
        self.decoded.get_or_init(|| match &self.encoded {
            Some(e) => Arc::new(e.decode(path)),
            None => Arc::default(),
        })
    }
}

impl std::fmt::Debug for ScanCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.decoded.get() {
            Some(scan) => scan.fmt(f),
            None => f.write_str("FileScan { still encoded in the cache }"),
        }
    }
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// How many bytes `s` shares with the start of `previous`, cut where a character
/// starts (so that the rest is UTF-8 on its own).
pub(crate) fn shared_prefix(s: &str, previous: &str) -> usize {
    let n = s
        .bytes()
        .zip(previous.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    (0..=n).rev().find(|&k| s.is_char_boundary(k)).unwrap_or(0)
}

pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub(crate) fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }
    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub(crate) fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.bytes.get(self.at)?;
            self.at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }
    pub(crate) fn small(&mut self) -> Option<u32> {
        u32::try_from(self.varint()?).ok()
    }
    pub(crate) fn done(&self) -> bool {
        self.at == self.bytes.len()
    }
}

/// A loaded cache's bytes, which its files' references stay encoded in.
pub(crate) struct ScanBody {
    bytes: Vec<u8>,
    /// Where the string table is in `bytes` (start, end) and how many strings it
    /// holds. It is decoded on first use: a check with nothing changed never reads a
    /// string, and decoding the table was a third of loading the cache.
    table_at: (usize, usize, usize),
    /// The table, once decoded; `None` if it does not decode (a crafted cache whose
    /// checksum holds): every scan that names a string is then read from its file.
    table: OnceLock<Option<StringTable>>,
    /// Files in it, to tell when most of them have been encoded anew.
    files: usize,
    root: PathBuf,
    registry: Arc<Registry>,
    rules: Arc<DeclaredRules>,
}

/// The cache's strings, decoded.
struct StringTable {
    /// The strings, one after the other.
    text: String,
    /// Start and end of each string, in `text`.
    spans: Vec<(u32, u32)>,
}

impl StringTable {
    /// The table as [`encode`] wrote it: `count` strings, each as the bytes it shares
    /// with the string before and the rest.
    fn decode(bytes: &[u8], count: usize) -> Option<Self> {
        let mut r = Reader { bytes, at: 0 };
        let mut spans: Vec<(u32, u32)> = Vec::with_capacity(count.min(bytes.len()));
        let mut text = String::with_capacity(bytes.len());
        let mut previous = (0usize, 0usize);
        for _ in 0..count {
            let shared = r.varint()? as usize;
            let n = r.varint()? as usize;
            let rest = std::str::from_utf8(r.take(n)?).ok()?;
            let before = text.get(previous.0..previous.1)?;
            if shared > before.len() || !before.is_char_boundary(shared) {
                return None;
            }
            let start = text.len();
            text.extend_from_within(previous.0..previous.0 + shared);
            text.push_str(rest);
            previous = (start, text.len());
            spans.push((u32::try_from(start).ok()?, u32::try_from(text.len()).ok()?));
        }
        r.done().then_some(StringTable { text, spans })
    }
}

impl ScanBody {
    fn table(&self) -> Option<&StringTable> {
        self.table
            .get_or_init(|| {
                let (start, end, count) = self.table_at;
                StringTable::decode(self.bytes.get(start..end)?, count)
            })
            .as_ref()
    }

    fn string(&self, id: u32) -> Option<&str> {
        let table = self.table()?;
        let &(a, b) = table.spans.get(id as usize)?;
        table.text.get(a as usize..b as usize)
    }

    /// How many strings the table holds (none if it does not decode).
    fn string_count(&self) -> u32 {
        self.table().map_or(0, |t| t.spans.len() as u32)
    }
}

/// One file's references, still in the bytes of the cache they were loaded from.
#[derive(Clone)]
pub(crate) struct EncodedScan {
    body: Arc<ScanBody>,
    start: u32,
    end: u32,
}

impl EncodedScan {
    fn bytes(&self) -> &[u8] {
        &self.body.bytes[self.start as usize..self.end as usize]
    }

    /// Whether a reference of this file may be written as one of `texts` (strings
    /// of its cache's table, by number), or names its file by a relative URI, without
    /// decoding it. `true` when unsure (a record that does not read).
    fn may_mention(&self, texts: &crate::hash::FastSet<u32>) -> bool {
        let read = || -> Option<bool> {
            let (mut r, count) = self.references()?;
            for _ in 0..count {
                let text = r.small()?;
                let typed = r.small()?;
                if texts.contains(&text) || Naming::from_code(typed & 1)? == Naming::RelativeUri {
                    return Some(true);
                }
                for _ in 0..8 {
                    r.varint()?;
                }
            }
            Some(false)
        };
        read().unwrap_or(true)
    }

    /// A reader at the record's first reference, and how many the record says
    /// there are.
    fn references(&self) -> Option<(Reader<'_>, u64)> {
        let mut r = Reader {
            bytes: self.bytes(),
            at: 0,
        };
        if r.varint()? == 1 {
            // The parse error's line, column and message.
            for _ in 0..3 {
                r.varint()?;
            }
        }
        let count = r.varint()?;
        Some((r, count))
    }

    /// How many references the record says it holds, without decoding them (a
    /// hint: a crafted record may say anything).
    pub(crate) fn count_hint(&self) -> usize {
        // A reference takes at least ten bytes (ten numbers).
        self.references().map_or(0, |(_, n)| {
            usize::try_from(n).unwrap_or(0).min(self.bytes().len() / 10)
        })
    }

    /// Calls `f` with each reference in order, read in place from the cache's
    /// bytes and table, and returns the scan's error: what [`EncodedScan::decode`]
    /// gives, without copying a string. `None` if the record does not read as a
    /// whole (`f` may have been called for some references): the caller then
    /// decodes it, which reads the file.
    ///
    /// Each reference comes with its text, type and naming as numbers in its
    /// cache's table ([`SpellingKey`]): two references of the same cache with the
    /// same key are spelled alike, whatever file they are in.
    pub(crate) fn visit(&self, f: impl FnMut(&RefView, SpellingKey)) -> Option<Option<ScanError>> {
        visit_scan(&self.body, self.bytes(), f)
    }

    /// A number for the cache this scan is in, the same for every scan of it while
    /// one of them is alive: [`SpellingKey`]s are compared within one cache.
    pub(crate) fn cache_id(&self) -> usize {
        Arc::as_ptr(&self.body) as usize
    }

    /// The numbers of `texts` in this scan's cache's table (looked up once per
    /// table by [`Mentions`]).
    fn numbers_of(&self, texts: &crate::hash::FastSet<&str>) -> crate::hash::FastSet<u32> {
        let body = &self.body;
        (0..body.string_count())
            .filter(|&id| body.string(id).is_some_and(|s| texts.contains(s)))
            .collect()
    }

    fn same_cache(&self, other: &EncodedScan) -> bool {
        Arc::ptr_eq(&self.body, &other.body)
    }

    /// The scan. The cache's checksum held, so a record that does not decode was
    /// written by hand to look valid: the file itself is read and scanned instead.
    pub(crate) fn decode(&self, path: &str) -> FileScan {
        decode_scan(&self.body, self.bytes()).unwrap_or_else(|| {
            let ext = crate::fs::split_extension(path).map_or("", |(_, e)| e);
            // Below the root, never through a link: the cache names the path.
            let read = crate::fs::open_below(&self.body.root, path).and_then(|(mut f, _)| {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut f, &mut bytes).map(|_| bytes)
            });
            match read {
                Ok(bytes) => {
                    crate::scan::scan_file(&self.body.registry, &self.body.rules, ext, &bytes)
                }
                Err(e) => FileScan::from_references(
                    &[],
                    Some(ScanError {
                        line: 0,
                        column: 0,
                        message: format!("could not be read: {e}"),
                    }),
                ),
            }
        })
    }
}

/// Which files may have a reference written as one of a few texts, told without
/// decoding the files still encoded in a cache: a question about a few strings
/// decodes only the files that mention them. Each cache's numbers for the texts are
/// looked up once (the loaded cache, and a warm walk's of the files it read again:
/// their entries alternate).
pub(crate) struct Mentions<'k, 's> {
    texts: &'k crate::hash::FastSet<&'s str>,
    numbers: Vec<(EncodedScan, crate::hash::FastSet<u32>)>,
}

impl<'k, 's> Mentions<'k, 's> {
    pub(crate) fn of(texts: &'k crate::hash::FastSet<&'s str>) -> Self {
        Mentions {
            texts,
            numbers: Vec::new(),
        }
    }

    /// Whether a reference of the scan `cell` may be written as one of the texts,
    /// or names its file by a relative URI: `false` only for a scan still encoded
    /// that mentions none of them.
    pub(crate) fn may_mention(&mut self, cell: &ScanCell) -> bool {
        let Some(encoded) = cell.still_encoded() else {
            return true;
        };
        let seen = self
            .numbers
            .iter()
            .position(|(seen, _)| seen.same_cache(encoded));
        let at = seen.unwrap_or_else(|| {
            let numbers = encoded.numbers_of(self.texts);
            self.numbers.push((encoded.clone(), numbers));
            self.numbers.len() - 1
        });
        self.numbers
            .get(at)
            .is_none_or(|(_, numbers)| encoded.may_mention(numbers))
    }
}

/// An optional string written as 0 (none), 1 (the previous reference's) or its
/// number + 2: the type, entity and component of references in a row repeat.
fn repeated<'s>(
    code: u32,
    previous: Option<&'s str>,
    string: impl Fn(u32) -> Option<&'s str>,
) -> Option<Option<&'s str>> {
    match code {
        0 => Some(None),
        1 => Some(previous),
        n => Some(Some(string(n - 2)?)),
    }
}

fn decode_scan(body: &ScanBody, bytes: &[u8]) -> Option<FileScan> {
    let mut scan = FileScan::default();
    let mut last = LastStored::default();
    scan.error = visit_scan(body, bytes, |view, _| scan.push(view, &mut last))?;
    Some(scan)
}

/// A reference's text, type and naming as its cache's table numbers them: within
/// one cache, references with the same key have the same text, expected type and
/// naming.
pub(crate) type SpellingKey = u64;

/// Reads one file's references as [`encode_scan`] wrote them, calling `f` with each
/// in order, its strings read in place from the table, and its [`SpellingKey`];
/// returns the scan's error. `None` if the record does not read as a whole (then
/// `f` may have been called for some references before).
fn visit_scan(
    body: &ScanBody,
    bytes: &[u8],
    mut f: impl FnMut(&RefView, SpellingKey),
) -> Option<Option<ScanError>> {
    let mut r = Reader { bytes, at: 0 };
    let string = |id: u32| body.string(id);
    let error = match r.varint()? {
        0 => None,
        1 => Some(ScanError {
            line: r.small()?,
            column: r.small()?,
            message: string(r.small()?)?.to_owned(),
        }),
        _ => return None,
    };
    let count = r.small()? as usize;
    let (mut end, mut line) = (0i64, 0i64);
    let mut pointer = String::new();
    let (mut ty, mut entity, mut component) = (None, None, None);
    // The type's code as `repeated` reads it, with "the previous one" replaced.
    let mut ty_code = 0u32;
    let mut visited = 0;
    for _ in 0..count.min(bytes.len()) {
        let text_id = r.small()?;
        let text = string(text_id)?;
        let typed = r.small()?;
        let naming = Naming::from_code(typed & 1)?;
        ty = repeated(typed >> 1, ty, string)?;
        if typed >> 1 != 1 {
            ty_code = typed >> 1;
        }
        let key = (u64::from(text_id) << 32) | u64::from(ty_code << 1 | (typed & 1));
        let start = end.checked_add(unzigzag(r.varint()?))?;
        end = start.checked_add(i64::from(r.small()?))?;
        line = line.checked_add(unzigzag(r.varint()?))?;
        let column = r.small()?;
        let shared = r.small()? as usize;
        if shared > pointer.len() || !pointer.is_char_boundary(shared) {
            return None;
        }
        pointer.truncate(shared);
        pointer.push_str(string(r.small()?)?);
        entity = repeated(r.small()?, entity, string)?;
        component = repeated(r.small()?, component, string)?;
        f(
            &RefView {
                text,
                span: (u32::try_from(start).ok()?, u32::try_from(end).ok()?),
                line: u32::try_from(line).ok()?,
                column,
                pointer: &pointer,
                expected_type: ty,
                naming,
                entity,
                component,
            },
            key,
        );
        visited += 1;
    }
    (visited == count && r.done()).then_some(error)
}

/// Builds the string table while files are encoded.
#[derive(Default)]
struct Strings<'a> {
    /// Not SipHash: a cold check numbers every string of the project.
    ids: crate::hash::FastMap<&'a str, u32>,
    table: Vec<&'a str>,
    /// How often each string was named.
    uses: Vec<u32>,
}

impl<'a> Strings<'a> {
    fn reserve(&mut self, strings: usize) {
        self.ids.reserve(strings);
        self.table.reserve(strings);
        self.uses.reserve(strings);
    }

    fn id(&mut self, s: &'a str) -> u32 {
        self.count(s, 1)
    }

    /// The number of `s`, named `uses` more times.
    fn count(&mut self, s: &'a str, uses: u32) -> u32 {
        let id = *self.ids.entry(s).or_insert_with(|| {
            self.table.push(s);
            self.uses.push(0);
            (self.table.len() - 1) as u32
        });
        self.uses[id as usize] += uses;
        id
    }

    /// The same strings, numbered from the most named: a type or component name,
    /// named by thousands of references, takes one byte each time, not three.
    /// Returns the new number of each old one too.
    fn by_use(self) -> (Self, Vec<u32>) {
        let mut order: Vec<usize> = (0..self.table.len()).collect();
        // Alphabetical among equals: the table is written with each string's start
        // shared with the one before (`materials/props/`...), and most strings are
        // named once or twice.
        order.sort_unstable_by(|&a, &b| {
            (std::cmp::Reverse(self.uses[a]), self.table[a])
                .cmp(&(std::cmp::Reverse(self.uses[b]), self.table[b]))
        });
        let mut renumber = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            renumber[old] = new as u32;
        }
        let table: Vec<&str> = order.iter().map(|&i| self.table[i]).collect();
        // Not looked up again unless a scan must be encoded anew (see
        // `look_up_again`): hashing every string once more was a sixth of the save.
        let strings = Strings {
            ids: crate::hash::FastMap::default(),
            uses: vec![0; table.len()],
            table,
        };
        (strings, renumber)
    }

    /// Makes the strings' numbers found by their text again after [`Strings::by_use`].
    fn look_up_again(&mut self) {
        if self.ids.is_empty() {
            self.ids = (self.table.iter().enumerate())
                .map(|(i, s)| (*s, i as u32))
                .collect();
        }
    }
}

/// What numbers the strings of the scans [`encode_scan`] writes.
trait Numbering<'a> {
    /// The number of `s`, named once more.
    fn id(&mut self, s: &'a str) -> u32;

    /// See [`repeated`].
    fn repeated(&mut self, s: Option<&'a str>, previous: &mut Option<&'a str>) -> u64 {
        let code = match s {
            None => 0,
            Some(_) if s == *previous => 1,
            Some(s) => u64::from(self.id(s)) + 2,
        };
        *previous = s;
        code
    }
}

impl<'a> Numbering<'a> for Strings<'a> {
    fn id(&mut self, s: &'a str) -> u32 {
        Strings::id(self, s)
    }
}

fn encode_scan<'a>(scan: &'a FileScan, strings: &mut impl Numbering<'a>, out: &mut Vec<u8>) {
    match &scan.error {
        Some(e) => {
            put_varint(out, 1);
            put_varint(out, e.line.into());
            put_varint(out, e.column.into());
            put_varint(out, strings.id(&e.message).into());
        }
        None => put_varint(out, 0),
    }
    put_varint(out, scan.len() as u64);
    let (mut end, mut line) = (0i64, 0i64);
    let mut pointer: &str = "";
    let (mut ty, mut entity, mut component) = (None, None, None);
    for r in scan.iter() {
        put_varint(out, strings.id(r.text).into());
        put_varint(
            out,
            strings.repeated(r.expected_type, &mut ty) << 1 | u64::from(r.naming.code()),
        );
        let (a, b) = (i64::from(r.span.0), i64::from(r.span.1));
        put_varint(out, zigzag(a - end));
        put_varint(out, (b - a).max(0) as u64);
        end = a + (b - a).max(0);
        put_varint(out, zigzag(i64::from(r.line) - line));
        line = r.line.into();
        put_varint(out, r.column.into());
        // Pointers of references in a row share their start
        // (`/entities/3/components/mesh/` then `mesh` and `material`).
        let shared = shared_prefix(r.pointer, pointer);
        put_varint(out, shared as u64);
        put_varint(out, strings.id(&r.pointer[shared..]).into());
        pointer = r.pointer;
        put_varint(out, strings.repeated(r.entity, &mut entity));
        put_varint(out, strings.repeated(r.component, &mut component));
    }
}

/// One file's references as [`encode_scan`] wrote them, with each string number
/// `n` replaced by `renumber[n]`; `None` if they do not read as such.
fn renumber_scan(bytes: &[u8], renumber: &[u32], out: &mut Vec<u8>) -> Option<()> {
    let new = |n: u64| {
        renumber
            .get(usize::try_from(n).ok()?)
            .map(|&m| u64::from(m))
    };
    renumber_scan_with(bytes, new, out)
}

/// [`renumber_scan`] with each string number `n` replaced by `new(n)`.
fn renumber_scan_with(
    bytes: &[u8],
    mut new: impl FnMut(u64) -> Option<u64>,
    out: &mut Vec<u8>,
) -> Option<()> {
    let mut r = Reader { bytes, at: 0 };
    // See `repeated`: 0 and 1 name no string.
    let repeated = |new: &mut dyn FnMut(u64) -> Option<u64>, code: u64| match code {
        0 | 1 => Some(code),
        n => Some(new(n - 2)? + 2),
    };
    let error = r.varint()?;
    put_varint(out, error);
    if error == 1 {
        put_varint(out, r.varint()?);
        put_varint(out, r.varint()?);
        put_varint(out, new(r.varint()?)?);
    }
    let count = r.varint()?;
    put_varint(out, count);
    for _ in 0..count {
        put_varint(out, new(r.varint()?)?);
        let typed = r.varint()?;
        put_varint(out, repeated(&mut new, typed >> 1)? << 1 | typed & 1);
        // Span start and length, line, column, the pointer's shared bytes.
        for _ in 0..5 {
            put_varint(out, r.varint()?);
        }
        put_varint(out, new(r.varint()?)?);
        put_varint(out, repeated(&mut new, r.varint()?)?);
        put_varint(out, repeated(&mut new, r.varint()?)?);
    }
    r.done().then_some(())
}

impl ScanBody {
    /// The scans of `files` files in `bytes` (a loaded cache's body), whose string
    /// table is at `table_at` (start, end, count): a scan that does not decode reads
    /// its file below `root` with `registry` and `rules`.
    pub(crate) fn new(
        bytes: Vec<u8>,
        table_at: (usize, usize, usize),
        files: usize,
        (root, registry, rules): (&Path, &Arc<Registry>, &Arc<DeclaredRules>),
    ) -> Arc<Self> {
        Arc::new(ScanBody {
            bytes,
            table_at,
            table: OnceLock::new(),
            files,
            root: root.to_owned(),
            registry: Arc::clone(registry),
            rules: Arc::clone(rules),
        })
    }
}

impl EncodedScan {
    /// The scan in `body` from byte `start` to `end` (an empty range: read from its
    /// file when asked for).
    pub(crate) fn new(body: &Arc<ScanBody>, start: u32, end: u32) -> Self {
        EncodedScan {
            body: Arc::clone(body),
            start,
            end,
        }
    }
}

/// Writes the strings of a table, each as the bytes it shares with the one before
/// and the rest (see [`StringTable::decode`]).
pub(crate) fn put_table(out: &mut Vec<u8>, table: &[&str]) {
    let mut previous: &str = "";
    for s in table {
        let shared = shared_prefix(s, previous);
        put_varint(out, shared as u64);
        put_varint(out, (s.len() - shared) as u64);
        out.extend_from_slice(&s.as_bytes()[shared..]);
        previous = s;
    }
}

/// A file's record: its path, and where its record starts and ends.
type Record = (Arc<str>, u32, u32);

/// An encoder's records, and each file's record in them.
type Records = (Vec<u8>, Vec<Record>);

/// A walker thread's encoder, for a first index kept in the cache's encoding
/// ([`crate::index::BuildOptions::keep_encoded`]): each file's references are
/// encoded as soon as it is scanned, with strings numbered by this thread in order
/// of first use, and the scan is dropped. A first `kiln check` of 100,000 files held
/// every scan decoded (110 MB for 143 MB of files) and then encoded them all;
/// [`seal`] joins the threads' tables and renumbers by use, as a cold encode does.
#[derive(Default)]
pub(crate) struct WalkEncoder {
    /// The strings, owned (the scans they came from are gone), one after the
    /// other: a string's own allocation, handle and map key took twice the room.
    text: String,
    /// Where each string is in `text`, by number.
    spans: Vec<(u32, u32)>,
    /// A string's hash -> where it is in `text`, and its number: found without
    /// looking up `spans` too (a first check's string lookups wait on memory).
    by_hash: crate::hash::FastMap<u64, (u32, u32, u32)>,
    /// The strings whose hash an earlier string has.
    collided: crate::hash::FastMap<Box<str>, u32>,
    /// Hashes the strings for `by_hash`.
    hasher: foldhash::fast::FixedState,
    uses: Vec<u32>,
    bytes: Vec<u8>,
    /// Each file's record in `bytes`.
    files: Vec<Record>,
}

impl<'a> Numbering<'a> for WalkEncoder {
    fn id(&mut self, s: &'a str) -> u32 {
        use std::hash::BuildHasher;
        let hash = self.hasher.hash_one(s);
        let id = match self.by_hash.get(&hash) {
            Some(&(a, b, id)) if self.text.get(a as usize..b as usize) == Some(s) => id,
            Some(_) => match self.collided.get(s) {
                Some(&id) => id,
                None => {
                    let id = self.push(s);
                    if id != u32::MAX {
                        self.collided.insert(Box::from(s), id);
                    }
                    id
                }
            },
            None => {
                let id = self.push(s);
                if let Some(&(a, b)) = self.spans.get(id as usize) {
                    self.by_hash.insert(hash, (a, b, id));
                }
                id
            }
        };
        if let Some(uses) = self.uses.get_mut(id as usize) {
            *uses += 1;
        }
        id
    }
}

impl WalkEncoder {
    /// The string numbered `id`.
    fn string(&self, id: u32) -> Option<&str> {
        let &(a, b) = self.spans.get(id as usize)?;
        self.text.get(a as usize..b as usize)
    }

    /// Adds `s` to the table, named no time yet; returns its number. Past 4 GB of
    /// strings, a number no table has: the records that name it do not read, and
    /// their files are read again when asked for.
    fn push(&mut self, s: &str) -> u32 {
        let end = self.text.len().checked_add(s.len());
        let (Ok(start), Some(Ok(end))) = (u32::try_from(self.text.len()), end.map(u32::try_from))
        else {
            return u32::MAX;
        };
        self.text.push_str(s);
        self.spans.push((start, end));
        self.uses.push(0);
        (self.spans.len() - 1) as u32
    }

    /// Every string, by number, with how often it was named.
    fn table(&self) -> impl Iterator<Item = (&str, u32)> {
        (0..self.spans.len() as u32).map(|id| {
            (
                self.string(id).unwrap_or(""),
                self.uses.get(id as usize).copied().unwrap_or(0),
            )
        })
    }

    /// Takes this thread's records out, and drops the maps only encoding needed:
    /// what is left is its strings, which the joined table borrows. Renumbered, the
    /// records are dropped one thread's at a time, not kept beside the body they
    /// become until the end (a fifth of a first check's peak at 100,000 files).
    fn take_records(&mut self) -> Records {
        self.by_hash = Default::default();
        self.collided = Default::default();
        (
            std::mem::take(&mut self.bytes),
            std::mem::take(&mut self.files),
        )
    }
}

/// One thread's records (see [`WalkEncoder::take_records`]) with each string
/// number `n` replaced by `renumber[joined[n]]`, and each file's record in them
/// (empty: it did not read as written, and is read from its file when asked for).
fn renumbered((old, old_files): Records, joined: &[u32], renumber: &[u32]) -> Records {
    let numbers: Vec<u32> = (joined.iter())
        .map(|&n| renumber.get(n as usize).copied().unwrap_or(u32::MAX))
        .collect();
    let mut bytes = Vec::with_capacity(old.len());
    let mut files = Vec::with_capacity(old_files.len());
    for (path, start, end) in old_files {
        let at = bytes.len();
        let record = old.get(start as usize..end as usize);
        let written = record.and_then(|r| renumber_scan(r, &numbers, &mut bytes));
        match (written, u32::try_from(at), u32::try_from(bytes.len())) {
            (Some(()), Ok(a), Ok(b)) if a < b => files.push((path, a, b)),
            _ => {
                bytes.truncate(at);
                files.push((path, 0, 0));
            }
        }
    }
    (bytes, files)
}

impl WalkEncoder {
    /// Encodes the scan of the file at `path`.
    pub(crate) fn encode(&mut self, path: &Arc<str>, scan: &FileScan) {
        let start = self.bytes.len();
        let mut bytes = std::mem::take(&mut self.bytes);
        encode_scan(scan, self, &mut bytes);
        self.bytes = bytes;
        // A record past 4 GB is kept empty, and read from its file when asked for.
        let range = (u32::try_from(start), u32::try_from(self.bytes.len()));
        let (start, end) = match range {
            (Ok(start), Ok(end)) => (start, end),
            _ => (0, 0),
        };
        self.files.push((path.clone(), start, end));
    }
}

/// Encodes the files' references on two threads, half the files each, as a walk's
/// threads do: a cold encode of an index whose scans are at hand.
fn encode_in_halves(files: &[(&Arc<str>, &ScanCell)]) -> Vec<WalkEncoder> {
    let encode = |half: &[(&Arc<str>, &ScanCell)]| {
        let mut encoder = WalkEncoder::default();
        for (path, cell) in half {
            // For the call only: an entry decoded and kept here would stay decoded
            // (every scan of a project most of whose files were read again).
            cell.with(path, |scan| encoder.encode(path, scan));
        }
        encoder
    };
    let (first, second) = files.split_at(files.len().div_ceil(2));
    let (first, second) = rayon::join(|| encode(first), || encode(second));
    vec![first, second]
}

/// The encoders' strings in one table numbered by use, and each encoder's records
/// renumbered (reading varints, hashing nothing) as a task of its own, with each
/// file's record in them.
fn join(encoders: &mut [WalkEncoder]) -> (Strings<'_>, Vec<Records>) {
    let records: Vec<Records> = encoders.iter_mut().map(WalkEncoder::take_records).collect();
    let encoders = &*encoders;
    let mut strings = Strings::default();
    strings.reserve(encoders.first().map_or(0, |e| e.spans.len()));
    // Each encoder's numbers in the joined table.
    let joined: Vec<Vec<u32>> = (encoders.iter())
        .map(|e| e.table().map(|(s, uses)| strings.count(s, uses)).collect())
        .collect();
    let (strings, renumber) = strings.by_use();
    let renumbered = (records.into_par_iter().zip(&joined))
        .map(|(records, joined)| renumbered(records, joined, &renumber))
        .collect();
    (strings, renumbered)
}

/// Joins the walker threads' encoders into one body of references that the
/// index's entries stay encoded in: the strings of every thread in one table,
/// numbered by use, and each file's record renumbered (reading varints, hashing
/// nothing). Returns each file's scan, by path, and for a file without one, a
/// scan that reads its file when asked for.
pub(crate) fn seal(
    mut encoders: Vec<WalkEncoder>,
    root: &Path,
    registry: &Arc<Registry>,
    rules: &Arc<DeclaredRules>,
) -> (crate::hash::FastMap<Arc<str>, EncodedScan>, EncodedScan) {
    let (strings, renumbered) = join(&mut encoders);
    let mut bytes = Vec::with_capacity(
        strings.table.iter().map(|s| s.len() + 2).sum::<usize>()
            + renumbered.iter().map(|(b, _)| b.len()).sum::<usize>(),
    );
    put_table(&mut bytes, &strings.table);
    let table_at = (0, bytes.len(), strings.table.len());
    let mut records = Vec::new();
    for (records_bytes, files) in renumbered {
        let Ok(at) = u32::try_from(bytes.len()) else {
            // Past 4 GB: read from their files when asked for.
            records.extend(files.into_iter().map(|(path, ..)| (path, 0, 0)));
            continue;
        };
        bytes.extend_from_slice(&records_bytes);
        records.extend(files.into_iter().map(|(path, a, b)| {
            match (a.checked_add(at), b.checked_add(at)) {
                (Some(a), Some(b)) if a < b => (path, a, b),
                _ => (path, 0, 0),
            }
        }));
    }
    let body = Arc::new(ScanBody {
        bytes,
        table_at,
        table: OnceLock::new(),
        files: records.len(),
        root: root.to_owned(),
        registry: Arc::clone(registry),
        rules: Arc::clone(rules),
    });
    let unread = EncodedScan {
        body: Arc::clone(&body),
        start: 0,
        end: 0,
    };
    let scans = (records.into_iter())
        .map(|(path, start, end)| {
            let scan = EncodedScan {
                body: Arc::clone(&body),
                start,
                end,
            };
            (path, scan)
        })
        .collect();
    (scans, unread)
}

/// Encodes the scans of `files` (each file's path and scan, in the order they are
/// written) for a cache, and hands `write` the string table and each file's record,
/// in that order. Scans still encoded in one body are copied as they are when most
/// of that body's files are among them (its table is taken whole); scans still
/// encoded elsewhere are renumbered into the table without being decoded; the rest
/// are encoded.
pub(crate) fn encode_scans<R>(
    files: &[(&Arc<str>, &ScanCell)],
    write: impl FnOnce(&[&str], &[&[u8]]) -> R,
) -> R {
    // The loaded cache most entries are still encoded in, if one is: its strings
    // keep their numbers, so those entries are copied as they are. When most of its
    // files have been encoded anew, its table is mostly strings nobody uses any
    // more: then everything is encoded again.
    let mut seeds: HashMap<*const ScanBody, (usize, &Arc<ScanBody>)> = HashMap::new();
    for f in files {
        if let Some(e) = f.1.still_encoded() {
            seeds.entry(Arc::as_ptr(&e.body)).or_insert((0, &e.body)).0 += 1;
        }
    }
    let seed = seeds
        .into_values()
        .max_by_key(|(n, _)| *n)
        // Its entries name strings of its table: no table, no copying.
        .filter(|(n, body)| 2 * n >= body.files && body.table().is_some())
        .map(|(_, body)| body);
    // Without a seed, every file's references encoded with strings numbered in order
    // of first use, half the files on each of two threads as a walk's threads encode
    // them, then joined and renumbered by use (see `join`).
    let mut encoders = match seed {
        Some(_) => Vec::new(),
        None => encode_in_halves(files),
    };
    let (mut strings, renumbered) = match seed {
        Some(body) => {
            let mut strings = Strings::default();
            for id in 0..body.string_count() {
                strings.table.push(body.string(id).unwrap_or(""));
            }
            // Found by their text only if a changed file is encoded (see below):
            // copying the others names no string.
            strings.uses = vec![0; strings.table.len()];
            (strings, Vec::new())
        }
        None => join(&mut encoders),
    };
    // Each file's renumbered record, in the files' order (the halves' in turn).
    let renumbered_records: Vec<&[u8]> = (renumbered.iter())
        .flat_map(|(bytes, records)| {
            (records.iter()).map(move |&(_, a, b)| bytes.get(a as usize..b as usize).unwrap_or(&[]))
        })
        .collect();
    // Each file's record: copied from the seed, renumbered already, or (the record
    // did not renumber, or there is a seed) encoded now, first, since the table
    // written in front of the files must hold its strings.
    enum Record<'b> {
        Made(&'b [u8]),
        Encoded(usize, usize),
    }
    let mut fresh = Vec::new();
    // For each other cache entries are still encoded in (a warm walk's, of the
    // files it read again), the number of each of its strings in this table, found
    // when first named (`u32::MAX` until then).
    let mut others: HashMap<*const ScanBody, Vec<u32>> = HashMap::new();
    let records: Vec<Record> = (files.iter().enumerate())
        .map(|(i, f)| match (f.1.still_encoded(), seed) {
            // An empty record is one left to be read from its file: not copied.
            (Some(e), Some(s)) if Arc::ptr_eq(&e.body, s) && e.start < e.end => {
                Record::Made(e.bytes())
            }
            // Renumbered into this table, not decoded (decoding keeps the scan).
            (Some(e), Some(_)) if e.start < e.end && e.body.table().is_some() => {
                let start = fresh.len();
                strings.look_up_again();
                let numbers = (others.entry(Arc::as_ptr(&e.body)))
                    .or_insert_with(|| vec![u32::MAX; e.body.string_count() as usize]);
                let body: &ScanBody = &e.body;
                let new = |n: u64| {
                    let number = numbers.get_mut(usize::try_from(n).ok()?)?;
                    if *number == u32::MAX {
                        *number = strings.id(body.string(n as u32)?);
                    }
                    Some(u64::from(*number))
                };
                if renumber_scan_with(e.bytes(), new, &mut fresh).is_some() {
                    Record::Encoded(start, fresh.len())
                } else {
                    fresh.truncate(start);
                    encode_scan(f.1.get(f.0), &mut strings, &mut fresh);
                    Record::Encoded(start, fresh.len())
                }
            }
            _ => match renumbered_records.get(i) {
                Some(record) if !record.is_empty() => Record::Made(record),
                _ => {
                    let start = fresh.len();
                    strings.look_up_again();
                    encode_scan(f.1.get(f.0), &mut strings, &mut fresh);
                    Record::Encoded(start, fresh.len())
                }
            },
        })
        .collect();
    let records: Vec<&[u8]> = (records.iter())
        .map(|record| match *record {
            Record::Made(bytes) => bytes,
            Record::Encoded(a, b) => fresh.get(a..b).unwrap_or_default(),
        })
        .collect();
    write(&strings.table, &records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{BuildOptions, Index};
    use kiln_core::Project;

    fn project() -> (tempfile::TempDir, Index) {
        let dir = tempfile::tempdir().unwrap();
        for (p, c) in [
            ("kiln.project", "{}"),
            (
                "levels/a.level",
                r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/m"}}}]}"#,
            ),
            ("meshes/m.mesh", "{}"),
            ("materials/bad.material", "{ nope"),
        ] {
            let full = dir.path().join(p);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, c).unwrap();
        }
        let project = Project::open(dir.path()).unwrap();
        let registry = Arc::new(Registry::with_builtins());
        let index = Index::build(&project, registry, &BuildOptions::default()).unwrap();
        (dir, index)
    }

    #[test]
    fn a_cold_encode_renumbers_what_it_encoded_without_encoding_again() {
        let (_dir, index) = project();
        let mut strings = Strings::default();
        let mut first = Vec::new();
        let mut ranges = Vec::new();
        for f in index.files() {
            let start = first.len();
            encode_scan(f.scan(), &mut strings, &mut first);
            ranges.push((f, start, first.len()));
        }
        let (mut by_use, renumber) = strings.by_use();
        by_use.look_up_again();
        for (f, a, b) in ranges {
            let mut renumbered = Vec::new();
            assert!(renumber_scan(&first[a..b], &renumber, &mut renumbered).is_some());
            let mut direct = Vec::new();
            encode_scan(f.scan(), &mut by_use, &mut direct);
            assert_eq!(renumbered, direct, "{}", f.path);
        }
    }

    #[test]
    fn a_walk_encoder_tells_apart_strings_whose_hashes_collide() {
        use std::hash::BuildHasher;
        let mut encoder = WalkEncoder::default();
        assert_eq!(encoder.id("materials/a"), 0);
        // As if "materials/b" hashed as "materials/a" does.
        let hash = encoder.hasher.hash_one("materials/b");
        let first = encoder.by_hash.values().next().copied().unwrap();
        encoder.by_hash.insert(hash, first);
        assert_eq!(encoder.id("materials/b"), 1);
        assert_eq!(encoder.id("materials/b"), 1);
        assert_eq!(encoder.id("materials/a"), 0);
        let table: Vec<(&str, u32)> = encoder.table().collect();
        assert_eq!(table, [("materials/a", 2), ("materials/b", 2)]);
    }
}
