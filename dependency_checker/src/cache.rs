//! The index cache: `.kiln/index.bin` in the project.
//!
//! A warm start loads it and then stats every file: entries whose size and time match
//! are reused as they are, the others are re-read (and re-parsed only if their content
//! hash changed). The cache is never trusted blindly: a different format version, a
//! different set of schemas (the classification of references depends on them), a
//! checksum mismatch from corruption or truncation, or anything unparsable makes
//! [`load`] return `None` and the index is rebuilt from scratch.
//!
//! The cache is small and loaded without decoding it. Issue 13 asked for `.kiln/` at
//! most 15% of the project's contents; the version before this one stored each
//! reference as fifteen `u32` and its own copies of its strings, 84% of the contents.
//! Now:
//! - every string (reference texts, JSON pointers, entity ids, component and type
//!   names) is stored once for the whole project, in one table, and named by its
//!   number;
//! - numbers are LEB128 varints, spans and lines as differences from the reference
//!   before, paths, pointers and the table's strings as the length they share with
//!   the one before and the rest; strings are numbered from the most used, so that
//!   a type or component name takes one byte;
//! - each file's references stay encoded in the loaded bytes until something asks
//!   for them ([`EncodedScan`]): `kiln check` with nothing changed, or `kiln refs`
//!   of one file, decodes only what it reads;
//! - `kiln check`'s findings are stored with the index they were computed from, so a
//!   check with nothing changed prints them without resolving a reference;
//! - writing the cache again copies the still-encoded references of unchanged files
//!   as they are, keeping their strings' numbers; only changed files are encoded.
//!
//! Format (little-endian; `v` is a varint):
//! - magic `KIDX`, version `u32`, schema fingerprint `u64`, check time `u64` (ns);
//! - the string table: `v` count, then each string as `v` bytes shared with the
//!   string before and `v` length and UTF-8 bytes of the rest;
//! - `v` file count, then per file: `v` bytes shared with the previous path, `v`
//!   length and bytes of the rest, `v` size, `v` zigzag time after the previous
//!   file's, hash `u64`, `v` length and bytes of its references (below);
//! - `v` length and bytes of the findings as JSON (0: none stored), and an xxh3-64
//!   of what the walk met besides files when they were made;
//! - an xxh3-64 of everything before it.
//!
//! A file's references: `v` 0, or 1 with `v` line, `v` column and `v` message of
//! its parse error; `v` count; per reference `v` text, `v` type times 2 plus how it
//! names its file, `v` zigzag start of its span after the previous span's end, `v`
//! span length, `v` zigzag line after the previous line, `v` column, `v` bytes of
//! its pointer shared with the previous one and `v` the rest, `v` entity and `v`
//! component. Type, entity and component are 0 for none, 1 for the previous
//! reference's, or their number + 2.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use kiln_core::{Registry, write_atomic_unsynced};

use crate::error::{CheckerError, io_err};
use crate::findings::Finding;
use crate::index::{FileEntry, Index, ScanCell};
use crate::rules::DeclaredRules;
use crate::scan::{FileScan, LastStored, Naming, RefView, ScanError};

const MAGIC: &[u8; 4] = b"KIDX";
/// 6: one string table, varints, references decoded on use, findings stored.
const VERSION: u32 = 6;
/// The cache file, relative to the project root.
pub const CACHE_FILE: &str = ".kiln/index.bin";

/// A fingerprint of everything that decides how files are scanned: the component
/// and resource schemas (names, fields, kinds), the project's declared reference
/// rules, and this format's version.
pub fn schema_fingerprint(registry: &Registry, rules: &DeclaredRules) -> u64 {
    let mut text = format!("v{VERSION}|{}", rules.fingerprint());
    for c in registry.components() {
        text.push_str(&format!("|{}:{}:{:?}", c.name, c.multiple, c.fields));
    }
    for r in registry.resource_types() {
        text.push_str(&format!("|{}:{:?}", r.extension, r.format));
    }
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// How many bytes `s` shares with the start of `previous`, cut where a character
/// starts (so that the rest is UTF-8 on its own).
fn shared_prefix(s: &str, previous: &str) -> usize {
    let n = s
        .bytes()
        .zip(previous.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    (0..=n).rev().find(|&k| s.is_char_boundary(k)).unwrap_or(0)
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn varint(&mut self) -> Option<u64> {
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
    fn small(&mut self) -> Option<u32> {
        u32::try_from(self.varint()?).ok()
    }
    fn done(&self) -> bool {
        self.at == self.bytes.len()
    }
}

/// A loaded cache's bytes, which its files' references stay encoded in.
pub(crate) struct CacheBody {
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

impl CacheBody {
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
    body: Arc<CacheBody>,
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
    fn may_mention(&self, texts: &crate::FastSet<u32>) -> bool {
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
    fn numbers_of(&self, texts: &crate::FastSet<&str>) -> crate::FastSet<u32> {
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
            let ext = crate::index::split_extension(path).map_or("", |(_, e)| e);
            // Below the root, never through a link: the cache names the path.
            let read = crate::walk::open_below(&self.body.root, path).and_then(|(mut f, _)| {
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
    texts: &'k crate::FastSet<&'s str>,
    numbers: Vec<(EncodedScan, crate::FastSet<u32>)>,
}

impl<'k, 's> Mentions<'k, 's> {
    pub(crate) fn of(texts: &'k crate::FastSet<&'s str>) -> Self {
        Mentions {
            texts,
            numbers: Vec::new(),
        }
    }

    /// Whether a reference of `entry` may be written as one of the texts, or names
    /// its file by a relative URI: `false` only for a file still encoded that
    /// mentions none of them.
    pub(crate) fn may_mention(&mut self, entry: &FileEntry) -> bool {
        let Some(encoded) = entry.scan_cell().still_encoded() else {
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

fn decode_scan(body: &CacheBody, bytes: &[u8]) -> Option<FileScan> {
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
    body: &CacheBody,
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
    ids: crate::FastMap<&'a str, u32>,
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
            ids: crate::FastMap::default(),
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

/// Serialises `index`, with the findings of a check of exactly this index if there
/// are any.
pub fn encode(index: &Index, findings: Option<&[Finding]>) -> Vec<u8> {
    // Writing to memory cannot fail.
    encode_index_to(index, Vec::new())
        .and_then(|encoded| encoded.finish(findings))
        .unwrap_or_default()
}

/// What a cache is written to: everything passes through the hash that the
/// checksum at the end is.
pub(crate) struct Hashed<W: std::io::Write> {
    out: W,
    hasher: xxhash_rust::xxh3::Xxh3,
}

impl<W: std::io::Write> std::io::Write for Hashed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.hasher.update(buf.get(..n).unwrap_or_default());
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The cache written up to its findings: everything that depends on the index alone,
/// so that a check can write it while it works out the findings.
pub(crate) struct EncodedIndex<W: std::io::Write> {
    out: Hashed<W>,
    walked: u64,
}

impl<W: std::io::Write> EncodedIndex<W> {
    /// Writes the rest of the cache: the findings and the checksum. Returns what it
    /// was written to.
    pub(crate) fn finish(mut self, findings: Option<&[Finding]>) -> std::io::Result<W> {
        use std::io::Write;
        let findings_json = findings
            .and_then(|f| serde_json::to_vec(f).ok())
            .unwrap_or_default();
        let mut tail = Vec::with_capacity(findings_json.len() + 32);
        put_varint(&mut tail, findings_json.len() as u64);
        tail.extend_from_slice(&findings_json);
        tail.extend_from_slice(&self.walked.to_le_bytes());
        self.out.write_all(&tail)?;
        let checksum = self.out.hasher.digest();
        let mut out = self.out.out;
        out.write_all(&checksum.to_le_bytes())?;
        Ok(out)
    }
}

/// A cache being written straight to a temporary file beside `.kiln/index.bin`,
/// renamed over it once finished: a first check at 100,000 files held the 20 MB it
/// writes in a buffer, beside the body it copies them from.
pub(crate) struct CacheFile {
    temp: PathBuf,
    path: PathBuf,
    encoded: EncodedIndex<std::io::BufWriter<fs::File>>,
}

impl CacheFile {
    /// Starts writing the cache of `index`, up to its findings.
    pub(crate) fn start(index: &Index) -> Result<Self, CheckerError> {
        let path = cache_path(index.root())?;
        remove_stale_temporaries(&path);
        let temp = path.with_file_name(format!(".index.bin.{}.tmp", std::process::id()));
        let file = fs::File::create(&temp).map_err(io_err(&temp))?;
        match encode_index_to(index, std::io::BufWriter::new(file)) {
            Ok(encoded) => Ok(CacheFile {
                temp,
                path,
                encoded,
            }),
            Err(e) => {
                let _ = fs::remove_file(&temp);
                Err(io_err(&temp)(e))
            }
        }
    }

    /// Writes the findings and the checksum and puts the cache in place.
    pub(crate) fn finish(self, findings: Option<&[Finding]>) -> Result<(), CheckerError> {
        let CacheFile {
            temp,
            path,
            encoded,
        } = self;
        // A torn cache fails its checksum and is rebuilt; a stale one is checked file
        // by file against the disk. Nothing is lost, so the disk is not waited for.
        let written = encoded
            .finish(findings)
            .and_then(|out| out.into_inner().map_err(|e| e.into_error()))
            .and_then(|_| fs::rename(&temp, &path));
        if let Err(e) = written {
            let _ = fs::remove_file(&temp);
            return Err(io_err(&temp)(e));
        }
        Ok(())
    }
}

/// Writes the cache of `index` up to its findings to `out` (see [`EncodedIndex`]).
pub(crate) fn encode_index_to<W: std::io::Write>(
    index: &Index,
    out: W,
) -> std::io::Result<EncodedIndex<W>> {
    let files: Vec<&FileEntry> = index.files().collect();
    // The loaded cache most entries are still encoded in, if one is: its strings
    // keep their numbers, so those entries are copied as they are. When most of its
    // files have been encoded anew, its table is mostly strings nobody uses any
    // more: then everything is encoded again.
    let mut seeds: HashMap<*const CacheBody, (usize, &Arc<CacheBody>)> = HashMap::new();
    for f in &files {
        if let Some(e) = f.scan_cell().still_encoded() {
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
        None => encode_in_halves(&files),
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
    let mut others: HashMap<*const CacheBody, Vec<u32>> = HashMap::new();
    let records: Vec<Record> = (files.iter().enumerate())
        .map(|(i, &f)| match (f.scan_cell().still_encoded(), seed) {
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
                let body: &CacheBody = &e.body;
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
                    encode_scan(f.scan(), &mut strings, &mut fresh);
                    Record::Encoded(start, fresh.len())
                }
            }
            _ => match renumbered_records.get(i) {
                Some(record) if !record.is_empty() => Record::Made(record),
                _ => {
                    let start = fresh.len();
                    strings.look_up_again();
                    encode_scan(f.scan(), &mut strings, &mut fresh);
                    Record::Encoded(start, fresh.len())
                }
            },
        })
        .collect();
    let mut out = Hashed {
        out,
        hasher: xxhash_rust::xxh3::Xxh3::new(),
    };
    let table_bytes: usize = strings.table.iter().map(|s| s.len() + 2).sum();
    let mut head = Vec::with_capacity(48 + table_bytes);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.extend_from_slice(&schema_fingerprint(index.registry(), index.rules()).to_le_bytes());
    head.extend_from_slice(&index.checked_at_ns().to_le_bytes());
    put_varint(&mut head, strings.table.len() as u64);
    put_table(&mut head, &strings.table);
    put_varint(&mut head, files.len() as u64);
    std::io::Write::write_all(&mut out, &head)?;
    drop(head);
    let mut previous: &str = "";
    let mut mtime = 0u64;
    let mut entry = Vec::with_capacity(256);
    for (f, record) in files.iter().zip(&records) {
        entry.clear();
        let shared = shared_prefix(&f.path, previous);
        put_varint(&mut entry, shared as u64);
        put_varint(&mut entry, (f.path.len() - shared) as u64);
        entry.extend_from_slice(&f.path.as_bytes()[shared..]);
        previous = &f.path;
        put_varint(&mut entry, f.size);
        // Files are written in bursts (a checkout, an export): times close together.
        put_varint(&mut entry, zigzag(f.mtime_ns.wrapping_sub(mtime) as i64));
        mtime = f.mtime_ns;
        entry.extend_from_slice(&f.hash.to_le_bytes());
        let bytes: &[u8] = match *record {
            Record::Made(bytes) => bytes,
            Record::Encoded(a, b) => fresh.get(a..b).unwrap_or_default(),
        };
        put_varint(&mut entry, bytes.len() as u64);
        std::io::Write::write_all(&mut out, &entry)?;
        std::io::Write::write_all(&mut out, bytes)?;
    }
    Ok(EncodedIndex {
        out,
        walked: walk_issues_hash(index),
    })
}

/// Writes the strings of a table, each as the bytes it shares with the one before
/// and the rest (see [`StringTable::decode`]).
fn put_table(out: &mut Vec<u8>, table: &[&str]) {
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
    by_hash: crate::FastMap<u64, (u32, u32, u32)>,
    /// The strings whose hash an earlier string has.
    collided: crate::FastMap<Box<str>, u32>,
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
fn encode_in_halves(files: &[&FileEntry]) -> Vec<WalkEncoder> {
    let encode = |half: &[&FileEntry]| {
        let mut encoder = WalkEncoder::default();
        for f in half {
            // For the call only: an entry decoded and kept here would stay decoded
            // (every scan of a project most of whose files were read again).
            f.with_scan(|scan| encoder.encode(&f.path, scan));
        }
        encoder
    };
    let (first, second) = files.split_at(files.len().div_ceil(2));
    std::thread::scope(|threads| {
        let second = threads.spawn(|| encode(second));
        let first = encode(first);
        std::iter::once(first)
            .chain(crate::joined([second]))
            .collect()
    })
}

/// The encoders' strings in one table numbered by use, and each encoder's records
/// renumbered (reading varints, hashing nothing) on a thread of its own, with each
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
    let renumbered = std::thread::scope(|threads| {
        let renumbering: Vec<_> = (records.into_iter().zip(&joined))
            .map(|(records, joined)| {
                let renumber = &renumber;
                threads.spawn(move || renumbered(records, joined, renumber))
            })
            .collect();
        crate::joined(renumbering)
    });
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
) -> (crate::FastMap<Arc<str>, EncodedScan>, EncodedScan) {
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
    let body = Arc::new(CacheBody {
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

/// What the walk met besides files (links leading out, unreadable folders), which
/// `kiln check` reports but the entries do not show: stored findings stand only if
/// these are the same too.
fn walk_issues_hash(index: &Index) -> u64 {
    xxhash_rust::xxh3::xxh3_64(format!("{:?}", index.walk_issues()).as_bytes())
}

/// What the findings stored with a cache say of an index built from it.
#[derive(Debug)]
pub enum StoredFindings {
    /// None are stored, or they say nothing of the index: a check works them out.
    None,
    /// A check of the index gives exactly these.
    Stand(Vec<Finding>),
    /// A check of the index gives these once the findings about the contents of
    /// the files in `before` (their entries as the cache has them) are worked out
    /// again: the index holds the same files, these with other contents.
    Behind {
        /// The stored findings.
        findings: Vec<Finding>,
        /// The entries, as stored, of the files whose contents changed.
        before: Vec<FileEntry>,
    },
}

/// A cache read back: the index, and the findings stored with it.
#[derive(Debug)]
pub struct Loaded {
    /// The index as it was saved; its entries' references are decoded on use.
    pub index: Index,
    findings: Option<Vec<Finding>>,
    walked: u64,
}

impl Loaded {
    /// What the findings stored with the index say of `now`, built from this cache
    /// (see [`StoredFindings`]).
    ///
    /// They stand if `now` holds the same files with the same contents (a file read
    /// again because it was touched, as a `git checkout` leaves it, hashes the
    /// same), so `kiln.project` and `kiln.redirects`, the findings' other inputs,
    /// are unchanged too, and its walk met the same links and unreadable folders.
    /// They are behind if some files hold other contents, those two aside: the
    /// findings about those files' contents are then worked out again, and the
    /// rest stand if the references between files are the same (see
    /// `Checker::findings`).
    pub fn findings_for(self, now: &Index) -> StoredFindings {
        let Some(findings) = self.findings else {
            return StoredFindings::None;
        };
        if now.len() != self.index.len() || walk_issues_hash(now) != self.walked {
            return StoredFindings::None;
        }
        let mut before = Vec::new();
        for (was, is) in self.index.files().zip(now.files()) {
            if was.path != is.path {
                return StoredFindings::None;
            }
            if was.hash != is.hash {
                before.push(was.clone());
            }
        }
        if before.is_empty() {
            StoredFindings::Stand(findings)
        } else if crate::findings::can_follow_contents_change(&before, now.len()) {
            StoredFindings::Behind { findings, before }
        } else {
            StoredFindings::None
        }
    }

    /// How many files `now`, built from this cache, found changed, new or gone (at
    /// least: a file gone and another new count once) that a cache written now
    /// would spare the next command reading: not those changed so recently that
    /// it reads them again anyway.
    pub fn changes_a_save_settles(&self, now: &Index) -> usize {
        let stats = now.stats();
        stats.read.saturating_sub(stats.read_recent) + now.len().abs_diff(self.index.len())
    }
}

/// Reads an encoded index; `None` if it is not a valid cache for `registry` and
/// `rules`.
pub fn decode(
    bytes: Vec<u8>,
    root: &Path,
    registry: &Arc<Registry>,
    rules: &Arc<DeclaredRules>,
) -> Option<Loaded> {
    let body_len = bytes.len().checked_sub(8)?;
    let (body, tail) = bytes.split_at(body_len);
    if xxhash_rust::xxh3::xxh3_64(body) != u64::from_le_bytes(tail.try_into().ok()?) {
        return None;
    }
    let mut r = Reader { bytes: body, at: 0 };
    if r.take(4)? != MAGIC || r.u32()? != VERSION || r.u64()? != schema_fingerprint(registry, rules)
    {
        return None;
    }
    let checked_at = r.u64()?;
    let count = r.varint()? as usize;
    // Stepped over here, decoded when a string is first asked for.
    let table_start = r.at;
    for _ in 0..count {
        r.varint()?;
        let n = r.varint()? as usize;
        r.take(n)?;
    }
    let table_at = (table_start, r.at, count);
    let file_count = r.varint()? as usize;
    // Where each file's fields are, read before the body is shared.
    let mut files = Vec::with_capacity(file_count.min(body.len()));
    let mut path = String::new();
    let mut mtime = 0u64;
    for _ in 0..file_count {
        let shared = r.varint()? as usize;
        let rest = r.varint()? as usize;
        if shared > path.len() || !path.is_char_boundary(shared) {
            return None;
        }
        path.truncate(shared);
        path.push_str(std::str::from_utf8(r.take(rest)?).ok()?);
        // The cache is a file anyone can write: a path that cannot be a project
        // file makes the whole cache untrusted (it is rebuilt).
        if !crate::journal::is_plain_relative(&path) {
            return None;
        }
        let size = r.varint()?;
        mtime = mtime.wrapping_add(unzigzag(r.varint()?) as u64);
        let (mtime_ns, hash) = (mtime, r.u64()?);
        let n = r.varint()? as usize;
        let start = r.at;
        r.take(n)?;
        files.push((
            Arc::<str>::from(path.as_str()),
            size,
            mtime_ns,
            hash,
            u32::try_from(start).ok()?,
            u32::try_from(r.at).ok()?,
        ));
    }
    let n = r.varint()? as usize;
    let findings = match r.take(n)? {
        [] => None,
        json => Some(serde_json::from_slice::<Vec<Finding>>(json).ok()?),
    };
    let walked = r.u64()?;
    if !r.done() {
        return None;
    }
    let mut bytes = bytes;
    bytes.truncate(body_len);
    let shared = Arc::new(CacheBody {
        bytes,
        table_at,
        table: OnceLock::new(),
        files: files.len(),
        root: root.to_owned(),
        registry: Arc::clone(registry),
        rules: Arc::clone(rules),
    });
    let files = files
        .into_iter()
        .map(|(path, size, mtime_ns, hash, start, end)| {
            let scan = ScanCell::encoded(EncodedScan {
                body: Arc::clone(&shared),
                start,
                end,
            });
            FileEntry::with_cell(path, size, mtime_ns, hash, scan)
        })
        .collect();
    Some(Loaded {
        index: Index::from_parts(
            root.to_owned(),
            Arc::clone(registry),
            Arc::clone(rules),
            files,
            checked_at,
        ),
        findings,
        walked,
    })
}

/// Loads the cache of the project at `root`, if there is a valid one.
pub fn load(root: &Path, registry: &Arc<Registry>, rules: &Arc<DeclaredRules>) -> Option<Loaded> {
    // Only a regular file, bounded: a FIFO or a link to /dev/zero put there must not
    // hang the open or eat memory.
    crate::lock::existing_kiln_dir(root)?;
    let bytes = crate::journal::read_regular(&root.join(CACHE_FILE), 4 << 30).ok()?;
    decode(bytes, root, registry, rules)
}

/// Saves `index` as its project's cache (atomically), with a `.gitignore` that keeps
/// `.kiln/` out of version control; `findings` are those of a check of exactly this
/// index, if there are any.
pub fn save(index: &Index, findings: Option<&[Finding]>) -> Result<(), CheckerError> {
    write(index.root(), &encode(index, findings))
}

/// Where the cache of the project at `root` goes: in `.kiln/`, a real folder inside
/// the project (never a link to somewhere else), with its `.gitignore`.
fn cache_path(root: &Path) -> Result<PathBuf, CheckerError> {
    let dir = crate::lock::kiln_dir(root)?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        fs::write(
            &ignore,
            "# Kiln's caches and journals: local to this machine.\n*\n",
        )
        .map_err(io_err(&ignore))?;
    }
    Ok(root.join(CACHE_FILE))
}

/// Removes the temporary caches that processes killed while writing them left
/// beside `cache` (`.index.bin.PID.tmp`, PID no longer running): a check writes its
/// cache while it works out the findings, so a `kill -9` during a check leaves one.
/// Another running process's is left alone.
fn remove_stale_temporaries(cache: &Path) {
    let Some(dir) = cache.parent() else {
        return;
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = (name.to_str())
            .and_then(|n| n.strip_prefix(".index.bin.")?.strip_suffix(".tmp"))
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let running = rustix::process::Pid::from_raw(pid).is_some_and(|pid| {
            !matches!(
                rustix::process::test_kill_process(pid),
                Err(rustix::io::Errno::SRCH)
            )
        });
        if !running && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Writes `bytes` (from [`encode`]) as the cache of the project at `root`.
pub(crate) fn write(root: &Path, bytes: &[u8]) -> Result<(), CheckerError> {
    let file = cache_path(root)?;
    // A torn cache fails its checksum and is rebuilt; a stale one is checked file by
    // file against the disk. Nothing is lost, so the disk is not waited for.
    write_atomic_unsynced(&file, bytes).map_err(io_err(&file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::BuildOptions;
    use kiln_core::Project;

    fn project() -> (tempfile::TempDir, Project, Arc<Registry>) {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("kiln.project", "{}"),
            (
                "levels/a.level",
                r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/m"}}}]}"#,
            ),
            ("meshes/m.mesh", "{}"),
            ("materials/bad.material", "{ nope"),
        ];
        for (p, c) in files {
            let full = dir.path().join(p);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, c).unwrap();
        }
        let project = Project::open(dir.path()).unwrap();
        (dir, project, Arc::new(Registry::with_builtins()))
    }

    fn load_bytes(
        bytes: Vec<u8>,
        project: &Project,
        registry: &Arc<Registry>,
        index: &Index,
    ) -> Index {
        decode(bytes, project.root(), registry, index.rules())
            .unwrap()
            .index
    }

    /// Every entry and every reference of both, decoded.
    fn assert_same(a: &Index, b: &Index) {
        assert_eq!(a.files().collect::<Vec<_>>(), b.files().collect::<Vec<_>>());
        for (x, y) in a.files().zip(b.files()) {
            assert_eq!(x.scan(), y.scan(), "{}", x.path);
        }
    }

    #[test]
    fn round_trips_and_warm_start_reads_nothing() {
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let decoded = load_bytes(encode(&index, None), &project, &registry, &index);
        assert!(
            decoded
                .files()
                .all(|f| f.scan_cell().still_encoded().is_some())
        );
        assert_same(&decoded, &index);
        // Pretend the cache was written long after the files (no racy entries).
        let mut bytes = encode(&index, None);
        let at = 4 + 4 + 8;
        bytes[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        reseal(&mut bytes);
        let cached = load_bytes(bytes, &project, &registry, &index);
        let warm =
            Index::build_from(&project, registry, Some(&cached), &BuildOptions::default()).unwrap();
        assert_eq!(warm.stats().read, 0);
        assert_same(&warm, &index);
    }

    #[test]
    fn writing_again_copies_encoded_entries_and_encodes_changed_ones() {
        let (dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let loaded = load_bytes(encode(&index, None), &project, &registry, &index);
        // Unchanged entries are copied as they are, with their strings' numbers.
        let again = encode(&loaded, None);
        assert!(
            loaded
                .files()
                .all(|f| f.scan_cell().still_encoded().is_some())
        );
        assert_same(&load_bytes(again, &project, &registry, &index), &index);
        // One file changed: it is encoded anew beside the copies, its new strings
        // added to the table.
        let mut changed = loaded.clone();
        fs::write(
            dir.path().join("levels/a.level"),
            r#"{"entities": [{"id": "y", "components": {"mesh": {"mesh": "meshes/other"}}}]}"#,
        )
        .unwrap();
        changed.update(&["levels/a.level".to_owned()]);
        let fresh = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        assert_same(&changed, &fresh);
        let round = load_bytes(encode(&changed, None), &project, &registry, &index);
        assert_same(&round, &fresh);
        assert_eq!(
            round
                .file("levels/a.level")
                .unwrap()
                .scan()
                .get(0)
                .unwrap()
                .text,
            "meshes/other"
        );
    }

    /// A warm walk keeps the files it reads again in the cache's encoding (its own
    /// table), and the cache written after takes their records and the loaded
    /// cache's from both tables without decoding either: whether most files are
    /// still in the loaded cache (its table is the new one's start) or most were
    /// read again (then the walk's is).
    #[test]
    fn a_warm_walk_keeps_what_it_reads_encoded_and_the_cache_takes_both_tables() {
        for changed in [1, 5] {
            let (dir, project, registry) = project();
            let level = |i: usize, mesh: &str| {
                format!(
                    r#"{{"entities": [{{"id": "e{i}", "components": {{"mesh": {{"mesh": "{mesh}"}}}}}}]}}"#
                )
            };
            for i in 0..6 {
                fs::write(
                    dir.path().join(format!("levels/l{i}.level")),
                    level(i, "meshes/m"),
                )
                .unwrap();
            }
            let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
            // Written long after the files: none is read again for being too new.
            let mut bytes = encode(&index, None);
            let at = 4 + 4 + 8;
            bytes[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
            reseal(&mut bytes);
            let loaded = load_bytes(bytes, &project, &registry, &index);
            for i in 0..changed {
                let mesh = format!("meshes/other{i}/with/a/longer/path");
                fs::write(
                    dir.path().join(format!("levels/l{i}.level")),
                    level(i, &mesh),
                )
                .unwrap();
            }
            let options = BuildOptions {
                keep_encoded: true,
                ..BuildOptions::default()
            };
            let warm =
                Index::build_from(&project, registry.clone(), Some(&loaded), &options).unwrap();
            assert_eq!(warm.stats().parsed, changed);
            let all_encoded = |index: &Index| {
                index
                    .files()
                    .all(|f| f.scan_cell().still_encoded().is_some())
            };
            assert!(
                all_encoded(&warm),
                "{changed} changed: a scan read again is held decoded"
            );
            let written = encode(&warm, None);
            assert!(
                all_encoded(&warm),
                "{changed} changed: writing the cache decoded a scan"
            );
            let fresh = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
            assert_same(&warm, &fresh);
            assert_same(&load_bytes(written, &project, &registry, &index), &fresh);
        }
    }

    #[test]
    fn a_cold_encode_renumbers_what_it_encoded_without_encoding_again() {
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry, &BuildOptions::default()).unwrap();
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
    fn a_record_that_does_not_decode_reads_the_file_instead() {
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let mut bytes = encode(&index, None);
        break_the_level_record(&mut bytes);
        let crafted = load_bytes(bytes, &project, &registry, &index);
        assert_same(&crafted, &index);
    }

    /// Makes a crafted cache's checksum right again, as a hand-made cache would.
    fn reseal(bytes: &mut [u8]) {
        let body = bytes.len() - 8;
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..body]).to_le_bytes();
        bytes[body..].copy_from_slice(&sum);
    }

    /// Makes the level's one reference name a string past the end of the table; the
    /// checksum is made right, as a hand-made cache would.
    fn break_the_level_record(bytes: &mut [u8]) {
        let scan_at = level_record_at(bytes);
        bytes[scan_at + 2] = 0x7f;
        reseal(bytes);
    }

    /// Where the level's record starts in the cache `bytes`.
    fn level_record_at(bytes: &[u8]) -> usize {
        record_at(bytes, b"levels/a.level")
    }

    /// Where the record of the file stored with `stored` (the part of its path not
    /// shared with the path before) starts in the cache `bytes`; the record holds
    /// one reference.
    fn record_at(bytes: &[u8], stored: &[u8]) -> usize {
        let level = bytes
            .windows(stored.len())
            .position(|w| w == stored)
            .unwrap();
        // After the path: size, time, hash, then the scan's length and bytes (0 for
        // no error, 1 reference, then its text's number).
        let mut r = Reader {
            bytes,
            at: level + stored.len(),
        };
        r.varint().unwrap();
        r.varint().unwrap();
        r.u64().unwrap();
        r.varint().unwrap();
        let scan_at = r.at;
        assert_eq!(&bytes[scan_at..scan_at + 2], &[0, 1]);
        scan_at
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

    #[test]
    fn a_check_resolves_a_record_that_stops_reading_halfway_as_its_file() {
        use crate::graph::{Graph, ResolvedReferences, Target};
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let mut bytes = encode(&index, None);
        // It says it holds two references and holds one: read in place, the first
        // is resolved before the record fails, and the file is read instead.
        let scan_at = level_record_at(&bytes);
        bytes[scan_at + 1] = 2;
        reseal(&mut bytes);
        let crafted = load_bytes(bytes, &project, &registry, &index);
        let targets = |refs: &dyn ResolvedReferences, index: &Index| {
            let mut out: Vec<(String, usize, Target)> = Vec::new();
            refs.each_reference(index, &mut |f, i, t| {
                out.push((f.path.to_string(), i, t.clone()))
            });
            out
        };
        let resolution = crate::resolution::Resolution::build(&crafted);
        let expected = targets(&Graph::build(&index), &index);
        assert!(expected.iter().any(|(file, ..)| file == "levels/a.level"));
        assert_eq!(targets(&resolution, &crafted), expected);
    }

    /// A record that stops reading halfway gives back what it resolved, and the
    /// spellings it remembered with it: a later file of the same thread with the
    /// same spelling resolves it afresh, not to a target the file read instead put
    /// in its place.
    #[test]
    fn a_record_that_stops_halfway_leaves_no_resolved_spelling_behind() {
        use crate::graph::{ResolvedReferences, Target};
        let dir = tempfile::tempdir().unwrap();
        let level = |texts: &[&str]| {
            let entities: Vec<String> = (texts.iter().enumerate())
                .map(|(i, t)| {
                    format!(r#"{{"id": "e{i}", "components": {{"mesh": {{"mesh": "{t}"}}}}}}"#)
                })
                .collect();
            format!(r#"{{"entities": [{}]}}"#, entities.join(", "))
        };
        // The big level first, alone in its thread's run: the two small ones after
        // it share one whatever the number of cores.
        let files = [
            ("kiln.project", "{}".to_owned()),
            ("levels/0big.level", level(&["meshes/m"; 100])),
            ("levels/a.level", level(&["meshes/gone"])),
            ("levels/b.level", level(&["meshes/gone"])),
            ("meshes/m.mesh", "{}".to_owned()),
        ];
        for (p, c) in &files {
            let full = dir.path().join(p);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, c).unwrap();
        }
        let project = Project::open(dir.path()).unwrap();
        let registry = Arc::new(Registry::with_builtins());
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let mut bytes = encode(&index, None);
        // a's record says it holds two references and holds one; the file, read
        // instead, names another mesh now.
        // Stored after "levels/0big.level", it shares "levels/" with it.
        let scan_at = record_at(&bytes, b"a.level");
        bytes[scan_at + 1] = 2;
        reseal(&mut bytes);
        fs::write(
            dir.path().join("levels/a.level"),
            level(&["meshes/elsewhere"]),
        )
        .unwrap();
        let crafted = load_bytes(bytes, &project, &registry, &index);
        let resolution = crate::resolution::Resolution::build(&crafted);
        let mut targets = Vec::new();
        resolution.each_reference(&crafted, &mut |f, _, t| {
            if f.path.starts_with("levels/a") || f.path.starts_with("levels/b") {
                targets.push((f.path.to_string(), t.clone()));
            }
        });
        assert_eq!(
            targets,
            vec![
                (
                    "levels/a.level".into(),
                    Target::Missing("meshes/elsewhere.mesh".into())
                ),
                (
                    "levels/b.level".into(),
                    Target::Missing("meshes/gone.mesh".into())
                ),
            ]
        );
    }

    /// A crafted cache whose record of a file changed since does not read: the
    /// check cannot tell what that file named before, so it takes nothing of the
    /// stored findings about what the boot levels reach (reading the file instead
    /// would make the file look as it was); it works out everything again.
    #[test]
    fn a_changed_file_whose_record_does_not_read_is_checked_from_scratch() {
        let (dir, _, registry) = project();
        let root = dir.path();
        fs::write(
            root.join("kiln.project"),
            r#"{"boot_levels": ["levels/a"]}"#,
        )
        .unwrap();
        fs::write(root.join("meshes/n.mesh"), "{}").unwrap();
        let set_back = |rel: &str, secs: u64| {
            let file = fs::File::options()
                .write(true)
                .open(root.join(rel))
                .unwrap();
            let then = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
            file.set_modified(then).unwrap();
        };
        for rel in [
            "kiln.project",
            "levels/a.level",
            "meshes/m.mesh",
            "meshes/n.mesh",
            "materials/bad.material",
        ] {
            set_back(rel, 60);
        }
        let options = crate::index::BuildOptions::default();
        let check = || {
            crate::Checker::open(root, registry.clone(), &options)
                .unwrap()
                .findings()
        };
        let unused = |rel: &str| Finding::Unused { file: rel.into() };
        assert!(check().contains(&unused("meshes/n.mesh")));
        let mut bytes = fs::read(root.join(CACHE_FILE)).unwrap();
        break_the_level_record(&mut bytes);
        fs::write(root.join(CACHE_FILE), bytes).unwrap();
        // The level names the other mesh now.
        fs::write(
            root.join("levels/a.level"),
            r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/n"}}}]}"#,
        )
        .unwrap();
        set_back("levels/a.level", 30);
        let findings = check();
        assert!(findings.contains(&unused("meshes/m.mesh")), "{findings:?}");
        assert!(!findings.contains(&unused("meshes/n.mesh")), "{findings:?}");
    }

    #[test]
    fn a_string_table_that_does_not_decode_reads_the_files_and_is_not_copied() {
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let mut bytes = encode(&index, None);
        // Magic, version, fingerprint and time, then the table's count (one byte
        // here) and its first string, which claims to share 5 bytes with none.
        let first = 4 + 4 + 8 + 8 + 1;
        assert_eq!(bytes[first], 0);
        bytes[first] = 5;
        reseal(&mut bytes);
        let crafted = load_bytes(bytes, &project, &registry, &index);
        assert!(
            crafted
                .files()
                .all(|f| f.scan_cell().still_encoded().is_some())
        );
        // Encoded again before anything was decoded: nothing may be copied from
        // the broken table. Its records, read back after the level changed on disk,
        // still say what the level said (a record that does not decode would read
        // the level again instead).
        let again = encode(&crafted, None);
        assert_same(&crafted, &index);
        fs::write(
            project.root().join("levels/a.level"),
            r#"{"entities": [{"id": "x", "components": {"mesh": {"mesh": "meshes/other"}}}]}"#,
        )
        .unwrap();
        let again = load_bytes(again, &project, &registry, &index);
        assert_same(&again, &index);
    }

    #[test]
    fn a_record_read_from_its_file_is_not_read_through_a_link() {
        let (dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let mut bytes = encode(&index, None);
        break_the_level_record(&mut bytes);
        let crafted = load_bytes(bytes, &project, &registry, &index);
        // Since the walk, `levels` became a link to a folder outside with a level
        // of the same name.
        let outside = tempfile::tempdir().unwrap();
        fs::write(
            outside.path().join("a.level"),
            r#"{"entities": [{"id": "y", "components": {"mesh": {"mesh": "meshes/secret"}}}]}"#,
        )
        .unwrap();
        fs::rename(dir.path().join("levels"), dir.path().join("old")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("levels")).unwrap();
        let scan = crafted.file("levels/a.level").unwrap().scan();
        assert!(scan.iter().all(|r| r.text != "meshes/secret"));
        assert!(scan.error.is_some(), "{scan:?}");
    }

    #[test]
    fn corrupt_truncated_or_foreign_caches_are_rejected() {
        let (_dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        let bytes = encode(&index, None);
        for len in 0..bytes.len() {
            assert!(
                decode(
                    bytes[..len].to_vec(),
                    project.root(),
                    &registry,
                    index.rules()
                )
                .is_none(),
                "truncated to {len}"
            );
        }
        for pos in (0..bytes.len()).step_by(7) {
            let mut b = bytes.clone();
            b[pos] ^= 0x40;
            assert!(
                decode(b, project.root(), &registry, index.rules()).is_none(),
                "flipped byte {pos}"
            );
        }
        let mut other = Registry::with_builtins();
        other
            .register_resource_type(kiln_core::registry::ResourceType {
                extension: "sound".into(),
                format: kiln_core::registry::ResourceFormat::Binary,
                doc: String::new(),
            })
            .unwrap();
        assert!(
            decode(
                bytes.clone(),
                project.root(),
                &Arc::new(other),
                index.rules()
            )
            .is_none(),
            "schemas changed"
        );
        let rules =
            DeclaredRules::new(&serde_json::from_str(r#"{"json": {"mesh": "mesh"}}"#).unwrap());
        assert!(
            decode(bytes, project.root(), &registry, &Arc::new(rules)).is_none(),
            "the project's declared rules changed"
        );
    }

    #[test]
    fn files_changed_behind_the_cache_are_re_read() {
        let (dir, project, registry) = project();
        let index = Index::build(&project, registry.clone(), &BuildOptions::default()).unwrap();
        save(&index, None).unwrap();
        fs::write(dir.path().join("meshes/m.mesh"), r#"{"shape": "sphere"}"#).unwrap();
        fs::write(dir.path().join("meshes/n.mesh"), "{}").unwrap();
        fs::remove_file(dir.path().join("materials/bad.material")).unwrap();
        let cached = load(dir.path(), &registry, index.rules()).unwrap().index;
        let warm =
            Index::build_from(&project, registry, Some(&cached), &BuildOptions::default()).unwrap();
        assert!(warm.file("meshes/n.mesh").is_some());
        assert!(warm.file("materials/bad.material").is_none());
        assert_eq!(warm.file("meshes/m.mesh").unwrap().size, 19);
    }

    mod random {
        use super::*;
        use crate::scan::RawReference;
        use proptest::prelude::*;

        fn text() -> impl Strategy<Value = String> {
            prop::sample::select(vec![
                "",
                "a",
                "mesh",
                "meshes/m",
                "ö/é",
                "/entities/0/",
                "日本",
            ])
            .prop_map(str::to_owned)
        }

        fn reference() -> impl Strategy<Value = RawReference> {
            (
                (text(), text()),
                (0u32..5000, 0u32..300),
                (0u32..u32::MAX, 0u32..500),
                (text(), text()),
                (
                    prop::option::of(text()),
                    prop::option::of(text()),
                    prop::option::of(text()),
                    any::<bool>(),
                ),
            )
                .prop_map(
                    |(
                        (t1, t2),
                        (start, len),
                        (line, column),
                        (p1, p2),
                        (ty, entity, component, uri),
                    )| {
                        RawReference {
                            text: t1 + &t2,
                            span: (start, start + len),
                            line,
                            column,
                            pointer: p1 + &p2,
                            expected_type: ty,
                            naming: if uri {
                                Naming::RelativeUri
                            } else {
                                Naming::ProjectPath
                            },
                            entity,
                            component,
                        }
                    },
                )
        }

        fn scan() -> impl Strategy<Value = FileScan> {
            (
                prop::collection::vec(reference(), 0..12),
                prop::option::of((any::<u32>(), any::<u32>(), text())),
            )
                .prop_map(|(refs, error)| {
                    let error = error.map(|(line, column, message)| ScanError {
                        line,
                        column,
                        message,
                    });
                    FileScan::from_references(&refs, error)
                })
        }

        fn index_of(root: &Path, scans: &[FileScan], stamp: u64) -> Index {
            let files = scans
                .iter()
                .enumerate()
                .map(|(i, scan)| {
                    FileEntry::new(
                        format!("d/ö{i}.json").into(),
                        i as u64,
                        stamp.wrapping_mul(i as u64 + 1),
                        stamp ^ i as u64,
                        Arc::new(scan.clone()),
                    )
                })
                .collect();
            let registry = Arc::new(Registry::with_builtins());
            let rules = Arc::new(DeclaredRules::default());
            Index::from_parts(root.to_owned(), registry, rules, files, stamp)
        }

        proptest! {
            /// Any scans read back as they were written, whether the cache encodes
            /// them anew or copies them from the cache they were loaded from, with
            /// some files replaced by new ones in between.
            #[test]
            fn scans_round_trip_encoded_anew_or_copied(
                scans in prop::collection::vec(scan(), 0..8),
                replaced in prop::collection::vec(scan(), 0..8),
                stamp in any::<u64>(),
            ) {
                let root = Path::new("/nonexistent-kiln-root");
                let index = index_of(root, &scans, stamp);
                let read = |index: &Index| {
                    decode(encode(index, None), root, index.registry(), index.rules())
                        .expect("reads back")
                        .index
                };
                let loaded = read(&index);
                prop_assert_eq!(loaded.files().collect::<Vec<_>>(), index.files().collect::<Vec<_>>());
                for (a, b) in loaded.files().zip(index.files()) {
                    prop_assert_eq!(a.scan(), b.scan());
                }
                let with_entries = |entries: Vec<FileEntry>| {
                    Index::from_parts(
                        root.to_owned(),
                        index.registry().clone(),
                        index.rules().clone(),
                        entries,
                        stamp,
                    )
                };
                // Reload (nothing decoded), replace some files, write again.
                let reloaded = read(&index);
                let mut expected = scans.clone();
                let entries: Vec<FileEntry> = reloaded
                    .files()
                    .enumerate()
                    .map(|(i, old)| match replaced.get(i).filter(|_| i % 2 == 0) {
                        Some(scan) => {
                            expected[i] = scan.clone();
                            FileEntry::new(old.path.clone(), 1, 2, 3, Arc::new(scan.clone()))
                        }
                        None => old.clone(),
                    })
                    .collect();
                let mixed = with_entries(entries);
                let again = read(&mixed);
                for (i, f) in again.files().enumerate() {
                    prop_assert_eq!(f.scan(), &expected[i], "file {}", i);
                }
                // The same, the new files still encoded in a second cache (as a
                // warm walk keeps what it reads): written from both tables, either
                // one first or neither, without decoding an entry.
                let other = read(&index_of(root, &replaced, stamp));
                let reloaded = read(&index);
                let entries: Vec<FileEntry> = reloaded
                    .files()
                    .enumerate()
                    .map(|(i, old)| match other.file(&old.path).filter(|_| i % 2 == 0) {
                        Some(new) => new.clone(),
                        None => old.clone(),
                    })
                    .collect();
                let two_tables = with_entries(entries);
                let again = read(&two_tables);
                prop_assert!(two_tables.files().all(|f| !f.scan_is_decoded()));
                for (i, f) in again.files().enumerate() {
                    prop_assert_eq!(f.scan(), &expected[i], "file {}", i);
                }
            }
        }
    }
}
