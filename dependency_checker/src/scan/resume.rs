//! Scanning a big level's next version by the entities that changed.
//!
//! A save of a 100,000-entity level changes a few of its entities, and scanning
//! all 28 MB of it again took the editor 236 ms before the index knew the file.
//! A scan of a level ([`scan_level`]) keeps its [`LevelLayout`]: where each entity
//! of the `entities` array ends (byte, line, and how many references came before),
//! and a hash of every 4 KB block counted from each end of the file (and of the
//! text before and after the list). The next version's blocks, compared from
//! both ends, bound the bytes that changed;
//! scanning starts after the last entity that ends before them and goes entity by
//! entity until it stands at the end of an entity (or of the array) whose bytes
//! from there on are the old file's, shifted. The references before and after are
//! the old scan's, moved by the bytes, lines and entity positions the change added
//! or removed. Where the bounds fall outside the array (a changed header), the
//! text no longer scans, a project rule applies to the file's type, or a merge
//! left conflicts in it, the whole file is scanned, as it always was: every
//! message comes from that one scan.
//!
//! Only hashes are kept, not the old bytes: 110 KB for a 28 MB level. Two blocks
//! with one hash are taken as equal, as the index takes two files with one
//! content hash.

use kiln_core::Registry;

use super::rules::DeclaredRules;
use super::scanner::{Boundary, EntityMarks, Scanner, Schema, Segment};
use super::store::{FileScan, LastStored, RefRecord, TextRange};
use super::{ScanScratch, attach_entity_ids, scan_json_marking};

/// The size of the blocks compared: a whole-file hash pass costs 2 ms at 28 MB,
/// and a change costs scanning at most a block's worth of entities on each side.
const BLOCK: usize = 4096;

/// What a scan of one version of a level keeps to scan the next by the entities
/// that changed (see the module's documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelLayout {
    /// The content hash of the version it describes.
    hash: u64,
    len: usize,
    /// The hash of each whole block, from the start of the file.
    head: Vec<u64>,
    /// The hash of each whole block, from the end of the file.
    tail: Vec<u64>,
    /// The hash of the text before the entity list (up to its `[`), and of the
    /// text after it (from its `]`): a change in an entity of the first or the
    /// last block is found inside the list by these, where the blocks say only
    /// that the block changed.
    before_list: u64,
    after_list: u64,
    /// Just after the entity list's `[`.
    open: Boundary,
    /// Just after each entity.
    ends: Vec<Boundary>,
    /// Just after the list's `]`.
    close: Boundary,
}

impl LevelLayout {
    /// Whether it describes the content hashing to `hash`.
    pub fn describes(&self, hash: u64) -> bool {
        self.hash == hash
    }

    /// How many entities the level has.
    #[cfg(test)]
    pub fn entities(&self) -> usize {
        self.ends.len()
    }

    fn new(bytes: &[u8], hash: u64, marks: EntityMarks) -> Option<Self> {
        let (open, close) = (marks.open?, marks.close?);
        Some(LevelLayout {
            hash,
            len: bytes.len(),
            head: head_blocks(bytes),
            tail: tail_blocks(bytes),
            before_list: xxhash_rust::xxh3::xxh3_64(bytes.get(..open.pos as usize)?),
            after_list: xxhash_rust::xxh3::xxh3_64(bytes.get(close.pos as usize..)?),
            open,
            ends: marks.ends,
            close,
        })
    }
}

fn head_blocks(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(BLOCK)
        .map(xxhash_rust::xxh3::xxh3_64)
        .collect()
}

fn tail_blocks(bytes: &[u8]) -> Vec<u64> {
    bytes
        .rchunks_exact(BLOCK)
        .map(xxhash_rust::xxh3::xxh3_64)
        .collect()
}

/// How a level was scanned by [`scan_level`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelScan {
    /// From the previous version, scanning only the entities that changed.
    Resumed,
    /// Whole.
    Whole,
}

/// Scans `bytes`, a level or unit of type `ext` whose content hashes to `hash`,
/// and returns its scan and, if it scanned without error, its layout. Given the
/// scan and layout of the version before, it scans only the entities that
/// changed where it can; the scan is the same either way (the property test in
/// this module holds it to a whole scan).
pub fn scan_level(
    scratch: &mut ScanScratch,
    rules: (&Registry, &DeclaredRules),
    ext: &str,
    (bytes, hash): (&[u8], u64),
    previous: Option<(&FileScan, &LevelLayout)>,
) -> (FileScan, Option<LevelLayout>, LevelScan) {
    if let Some((scan, layout)) = previous
        && let Some((scan, layout)) = resume(scratch, rules, ext, bytes, hash, scan, layout)
    {
        return (scan, Some(layout), LevelScan::Resumed);
    }
    let marks = if rules.1.applies_to(ext) {
        // A conditional rule is decided over the whole file.
        None
    } else {
        Some(EntityMarks::default())
    };
    let marks = scan_json_marking(scratch, rules, ext, Schema::Entities, bytes, marks);
    let layout = marks.and_then(|marks| LevelLayout::new(bytes, hash, marks));
    (scratch.scan.clone(), layout, LevelScan::Whole)
}

/// The scan of `new` from `old`'s scan and layout, or `None` where the whole file
/// must be scanned.
fn resume(
    scratch: &mut ScanScratch,
    (registry, rules): (&Registry, &DeclaredRules),
    ext: &str,
    new: &[u8],
    hash: u64,
    old_scan: &FileScan,
    old: &LevelLayout,
) -> Option<(FileScan, LevelLayout)> {
    if rules.applies_to(ext) || old_scan.error.is_some() || old_scan.len() < old.close_records() {
        return None;
    }
    // The same content (as the index takes one hash to mean): the same scan.
    if hash == old.hash && new.len() == old.len {
        return Some((old_scan.clone(), old.clone()));
    }
    let text = std::str::from_utf8(new).ok()?;
    if kiln_core::conflict::may_have_conflicts(text) {
        return None;
    }
    let head = head_blocks(new);
    let tail = tail_blocks(new);
    let same = |a: &[u64], b: &[u64]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let shorter = old.len.min(new.len());
    let mut prefix = (same(&head, &old.head) * BLOCK).min(shorter);
    let before_list = old.open.pos as usize;
    if prefix < before_list
        && before_list <= shorter
        && xxhash_rust::xxh3::xxh3_64(&new[..before_list]) == old.before_list
    {
        prefix = before_list;
    }
    if prefix < before_list {
        return None;
    }
    let mut suffix = (same(&tail, &old.tail) * BLOCK).min(shorter - prefix);
    let after_list = old.len - old.close.pos as usize;
    if suffix < after_list
        && after_list <= shorter - prefix
        && xxhash_rust::xxh3::xxh3_64(&new[new.len() - after_list..]) == old.after_list
    {
        suffix = after_list;
    }
    // Bytes from `in_tail` on are the old file's from `in_tail - delta` on.
    let in_tail = new.len() - suffix;
    let delta = new.len() as i64 - old.len as i64;

    // Resume after the last entity that ends before the change.
    let unchanged = old.ends.partition_point(|e| e.pos as usize <= prefix);
    let from = match unchanged {
        0 => old.open,
        k => old.ends[k - 1],
    };
    let schema = (ext, Schema::Entities);
    let mut s = Scanner::new(
        scratch,
        (registry, None),
        schema,
        (new, text, from.pos as usize),
    );
    s.path.push(Segment::Key("entities"));
    (s.line, s.line_start) = (from.line, from.line_start as usize);
    let rejoined = read_until_rejoined(&mut s, old, unchanged, (in_tail, delta));
    let Scanner {
        mut scan,
        ref_entity,
        entity_ids,
        ..
    } = s;
    let result = rejoined.map(|(read, rejoin)| {
        attach_entity_ids(&mut scan, &ref_entity, &entity_ids);
        splice(
            (old_scan, old),
            (unchanged, from),
            (&scan, read),
            rejoin,
            (hash, head, tail),
        )
    });
    scratch.scan = scan;
    scratch.ref_entity = ref_entity;
    result
}

impl LevelLayout {
    fn close_records(&self) -> usize {
        self.close.records as usize
    }
}

/// Where the new file's entities rejoin the old file's: the old boundary, the new
/// one, and the entity index (in the new file) after it.
struct Rejoin {
    old: Boundary,
    new: Boundary,
    /// The old entities after `old` (the first's index, in the old file); for
    /// the list's end, the number of old entities.
    old_next: usize,
    new_next: usize,
    at_close: bool,
}

/// Reads the entity list from where `s` stands (after the `unchanged`-th entity's
/// end, or after `[` if none) until it stands after an entity, or the list's end,
/// whose following bytes are the old file's: the boundaries of the entities read
/// (their references counted from `s`'s start) and where it rejoined. `None` if
/// the text does not scan, or never rejoins.
fn read_until_rejoined(
    s: &mut Scanner,
    old: &LevelLayout,
    unchanged: usize,
    (in_tail, delta): (usize, i64),
) -> Option<(Vec<Boundary>, Rejoin)> {
    let mut read = Vec::new();
    let mut index = unchanged as u32;
    let mut after_entity = unchanged > 0;
    loop {
        s.skip_ws().ok()?;
        if after_entity {
            match s.bytes.get(s.pos) {
                Some(b',') => {
                    s.pos += 1;
                    s.skip_ws().ok()?;
                }
                Some(b']') => {
                    s.pos += 1;
                    let here = s.here();
                    let rejoins = here.pos as usize >= in_tail
                        && here.pos as i64 - delta == old.close.pos as i64;
                    return rejoins.then(|| {
                        let rejoin = Rejoin {
                            old: old.close,
                            new: here,
                            old_next: old.ends.len(),
                            new_next: index as usize,
                            at_close: true,
                        };
                        (read, rejoin)
                    });
                }
                _ => return None,
            }
        } else if s.bytes.get(s.pos) == Some(&b']') {
            // An empty list: the change emptied it, or is in what follows it.
            after_entity = true;
            continue;
        }
        s.path.push(Segment::Index(index));
        s.value(2).ok()?;
        s.path.pop();
        index += 1;
        after_entity = true;
        let here = s.here();
        read.push(here);
        if here.pos as usize >= in_tail {
            let was = here.pos as i64 - delta;
            if let Ok(m) = old.ends.binary_search_by_key(&was, |e| e.pos as i64) {
                let rejoin = Rejoin {
                    old: old.ends[m],
                    new: here,
                    old_next: m + 1,
                    new_next: index as usize,
                    at_close: false,
                };
                return Some((read, rejoin));
            }
        }
    }
}

/// How a place of the old file after the rejoin moved.
struct Shift {
    bytes: i64,
    lines: i64,
    /// For the rejoin's own line: the columns.
    columns: i64,
    rejoin_line: u32,
    rejoin_line_start: u32,
    records: i64,
    entities: i64,
}

impl Shift {
    fn boundary(&self, b: Boundary) -> Boundary {
        let line_start = if b.line == self.rejoin_line {
            self.rejoin_line_start
        } else {
            (b.line_start as i64 + self.bytes) as u32
        };
        Boundary {
            pos: (b.pos as i64 + self.bytes) as u32,
            line: (b.line as i64 + self.lines) as u32,
            line_start,
            records: (b.records as i64 + self.records) as u32,
        }
    }
}

/// The new scan and layout: the old scan's references before `from` (the end of
/// the `unchanged`-th entity, or the list's start), the ones read, then the old
/// ones after the rejoin, moved.
fn splice(
    (old_scan, old): (&FileScan, &LevelLayout),
    (unchanged, from): (usize, Boundary),
    (read_scan, read): (&FileScan, Vec<Boundary>),
    rejoin: Rejoin,
    (hash, head, tail): (u64, Vec<u64>, Vec<u64>),
) -> (FileScan, LevelLayout) {
    let before = from.records as usize;
    let after = rejoin.old.records as usize;
    let column = |b: Boundary| b.pos as i64 - b.line_start as i64;
    let shift = Shift {
        bytes: rejoin.new.pos as i64 - rejoin.old.pos as i64,
        lines: rejoin.new.line as i64 - rejoin.old.line as i64,
        columns: column(rejoin.new) - column(rejoin.old),
        rejoin_line: rejoin.old.line,
        rejoin_line_start: rejoin.new.line_start,
        records: (before + read_scan.len()) as i64 - after as i64,
        entities: rejoin.new_next as i64 - rejoin.old_next as i64,
    };

    let mut scan = FileScan {
        strings: old_scan.strings.clone(),
        records: Vec::with_capacity(before + read_scan.len() + (old_scan.len() - after)),
        error: None,
    };
    scan.records.extend_from_slice(&old_scan.records[..before]);
    let base = scan.strings.len() as u32;
    scan.strings.push_str(&read_scan.strings);
    let moved = |r: TextRange| {
        if r == super::store::NO_TEXT {
            r
        } else {
            (r.0 + base, r.1 + base)
        }
    };
    scan.records
        .extend(read_scan.records.iter().map(|r| RefRecord {
            text: moved(r.text),
            pointer: moved(r.pointer),
            expected_type: moved(r.expected_type),
            entity: moved(r.entity),
            component: moved(r.component),
            ..*r
        }));
    let mut pointer = String::new();
    // Only the list's own records are renumbered: a key after it that decodes to
    // `entities` too (written with an escape) names other entities.
    let in_list = old.close.records as usize;
    for (k, r) in old_scan.records.iter().enumerate().skip(after) {
        let mut r = *r;
        if r.line == shift.rejoin_line {
            r.column = (r.column as i64 + shift.columns) as u32;
        }
        r.line = (r.line as i64 + shift.lines) as u32;
        r.span = (
            (r.span.0 as i64 + shift.bytes) as u32,
            (r.span.1 as i64 + shift.bytes) as u32,
        );
        if shift.entities != 0
            && k < in_list
            && let Some(old_pointer) = old_scan.text(r.pointer)
            && renumbered(old_pointer, shift.entities, &mut pointer)
        {
            let start = scan.strings.len() as u32;
            scan.strings.push_str(&pointer);
            r.pointer = (start, scan.strings.len() as u32);
        }
        scan.records.push(r);
    }
    if wasted_more_than_half(&scan) {
        scan = compacted(&scan);
    }

    let mut ends = Vec::with_capacity(old.ends.len() + read.len());
    ends.extend_from_slice(&old.ends[..unchanged]);
    ends.extend(read.iter().map(|b| Boundary {
        records: b.records + from.records,
        ..*b
    }));
    let close = if rejoin.at_close {
        Boundary {
            records: rejoin.new.records + from.records,
            ..rejoin.new
        }
    } else {
        ends.extend(
            old.ends[rejoin.old_next..]
                .iter()
                .map(|&b| shift.boundary(b)),
        );
        shift.boundary(old.close)
    };
    let layout = LevelLayout {
        hash,
        len: (old.len as i64 + shift.bytes) as usize,
        head,
        tail,
        // Both in the bytes common to the two versions.
        before_list: old.before_list,
        after_list: old.after_list,
        open: old.open,
        ends,
        close,
    };
    (scan, layout)
}

/// `pointer` with its entity index moved by `by`, into `out`, if it points into
/// an entity (`/entities/12/...`).
fn renumbered(pointer: &str, by: i64, out: &mut String) -> bool {
    use std::fmt::Write as _;
    let Some(rest) = pointer.strip_prefix("/entities/") else {
        return false;
    };
    let digits = rest.find('/').unwrap_or(rest.len());
    let Ok(n) = rest[..digits].parse::<i64>() else {
        return false;
    };
    out.clear();
    let _ = write!(out, "/entities/{}{}", n + by, &rest[digits..]);
    true
}

/// Whether most of the scan's strings belong to references no longer in it
/// (every change appends the strings of what it read).
fn wasted_more_than_half(scan: &FileScan) -> bool {
    let len = |r: TextRange| r.1.wrapping_sub(r.0) as usize;
    // The type, entity and component strings are shared by runs of records:
    // counted once a run.
    let mut last: Option<&RefRecord> = None;
    let mut live = 0;
    for r in &scan.records {
        live += len(r.text) + len(r.pointer);
        for (now, was) in [
            (r.expected_type, last.map(|l| l.expected_type)),
            (r.entity, last.map(|l| l.entity)),
            (r.component, last.map(|l| l.component)),
        ] {
            if Some(now) != was && now != super::store::NO_TEXT {
                live += len(now);
            }
        }
        last = Some(r);
    }
    scan.strings.len() > 2 * live + BLOCK
}

fn compacted(scan: &FileScan) -> FileScan {
    let mut fresh = FileScan {
        error: scan.error.clone(),
        ..FileScan::default()
    };
    let mut last = LastStored::default();
    for r in scan.iter() {
        fresh.push(&r, &mut last);
    }
    fresh
}

#[cfg(test)]
mod tests;
