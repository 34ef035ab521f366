//! The compiled level format (seed part 4), written by the compiler and validated
//! before spawning. `core/FORMAT.md` specifies it byte by byte.
//!
//! ```text
//! header (24 bytes): magic "KLVL", format_version, entities_offset, entities_size,
//!                    ids_offset, ids_size
//! entities:  num_entities, num_component_types, parent_index[num_entities],
//!            then per component type: component_identifier, num_instances, size,
//!            entity_index[num_instances], instance_data[size] + zero padding to 4
//! ids:       num_ids, offsets[num_ids + 1], utf-8 bytes + zero padding to 4
//! ```
//! All integers are little-endian `u32`. Parents precede children
//! (`parent_index[i] < i`), so a reader can compute world poses in one forward pass.

use std::borrow::Cow;

/// The first four bytes of a level blob.
pub const MAGIC: [u8; 4] = *b"KLVL";
/// The version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Size of the header in bytes.
pub const HEADER_SIZE: usize = 24;
/// `parent_index` value of a root entity.
pub const NO_PARENT: u32 = u32::MAX;

/// Why a blob cannot be loaded. Loading never panics and never reads out of bounds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlobError {
    /// Shorter than the header.
    #[error("level blob is {0} bytes, shorter than its {HEADER_SIZE}-byte header")]
    TooShort(usize),
    /// Not a level blob.
    #[error("not a level blob (bad magic bytes)")]
    BadMagic,
    /// Written by another version.
    #[error(
        "level blob format version {0} is not supported (this build reads version {FORMAT_VERSION}); recompile the level"
    )]
    UnsupportedVersion(u32),
    /// A section or field runs past the end of the blob.
    #[error("level blob is truncated or corrupt: {0}")]
    Corrupt(String),
}

/// One component type's section of a blob.
#[derive(Debug, Clone)]
pub struct ComponentSection<'a> {
    /// FNV-1a 32 of the component type name.
    pub component_identifier: u32,
    /// Owner of each instance, as an index into the level's entities.
    pub entity_index: Cow<'a, [u32]>,
    /// Instance data of all instances (padding excluded).
    pub data: &'a [u8],
}

/// A validated view of a level blob.
#[derive(Debug, Clone)]
pub struct LevelBlob<'a> {
    /// Parent of each entity, or [`NO_PARENT`]; always `< i` for entity `i`.
    pub parent_index: Cow<'a, [u32]>,
    /// Component sections, in stored (spawn) order.
    pub components: Vec<ComponentSection<'a>>,
    /// Authoring ids of all entities, concatenated (empty without an id table).
    pub id_text: &'a str,
    /// End of each entity's id in `id_text` (empty without an id table).
    pub id_ends: Cow<'a, [u32]>,
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    section: &'static str,
}

impl<'a> Cursor<'a> {
    fn u32(&mut self, what: &str) -> Result<u32, BlobError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    fn array(&mut self, what: &str) -> Result<[u8; 4], BlobError> {
        let b = self.take(4, what)?;
        Ok([b[0], b[1], b[2], b[3]])
    }
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], BlobError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| {
            BlobError::Corrupt(format!(
                "{what} ({n} bytes at offset {} of the {} section) runs past its end ({} bytes)",
                self.pos,
                self.section,
                self.bytes.len()
            ))
        })?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }
    /// `count` little-endian `u32`s, read in place when the machine is
    /// little-endian and the blob 4-aligned (a `Vec<u8>` or a read file is), so
    /// that spawning does not copy a level's index arrays; copied otherwise.
    fn u32s(&mut self, count: u32, what: &str) -> Result<Cow<'a, [u32]>, BlobError> {
        let n = (count as usize)
            .checked_mul(4)
            .ok_or_else(|| BlobError::Corrupt(format!("{what}: count {count} overflows")))?;
        let bytes = self.take(n, what)?;
        if cfg!(target_endian = "little")
            && let Ok(words) = bytemuck::try_cast_slice::<u8, u32>(bytes)
        {
            return Ok(Cow::Borrowed(words));
        }
        Ok(Cow::Owned(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ))
    }
}

fn section<'a>(
    bytes: &'a [u8],
    offset: u32,
    size: u32,
    name: &'static str,
) -> Result<&'a [u8], BlobError> {
    let (start, len) = (offset as usize, size as usize);
    start
        .checked_add(len)
        .filter(|&end| end <= bytes.len() && start >= HEADER_SIZE)
        .map(|end| &bytes[start..end])
        .ok_or_else(|| {
            BlobError::Corrupt(format!(
                "the {name} section (offset {offset}, {size} bytes) lies outside the {}-byte blob",
                bytes.len()
            ))
        })
}

impl<'a> LevelBlob<'a> {
    /// Validates and reads `bytes`.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, BlobError> {
        if bytes.len() < HEADER_SIZE {
            return Err(BlobError::TooShort(bytes.len()));
        }
        let mut header = Cursor {
            bytes,
            pos: 0,
            section: "header",
        };
        if header.array("magic")? != MAGIC {
            return Err(BlobError::BadMagic);
        }
        let version = header.u32("format_version")?;
        if version != FORMAT_VERSION {
            return Err(BlobError::UnsupportedVersion(version));
        }
        let (entities_offset, entities_size) =
            (header.u32("entities_offset")?, header.u32("entities_size")?);
        let (ids_offset, ids_size) = (header.u32("ids_offset")?, header.u32("ids_size")?);

        let mut c = Cursor {
            bytes: section(bytes, entities_offset, entities_size, "entities")?,
            pos: 0,
            section: "entities",
        };
        let num_entities = c.u32("num_entities")?;
        let num_component_types = c.u32("num_component_types")?;
        let parent_index = c.u32s(num_entities, "parent_index")?;
        // Checked in one pass without an early exit, which the compiler vectorizes;
        // the offender is looked for only when there is one.
        let parents_first = (0u32..)
            .zip(parent_index.iter())
            .fold(true, |ok, (i, &p)| ok & ((p == NO_PARENT) | (p < i)));
        if !parents_first
            && let Some((i, p)) = (0u32..)
                .zip(parent_index.iter().copied())
                .find(|&(i, p)| p != NO_PARENT && p >= i)
        {
            return Err(BlobError::Corrupt(format!(
                "entity {i} has parent {p}, but parents must come before their children"
            )));
        }
        let mut components = Vec::with_capacity(num_component_types.min(1024) as usize);
        for t in 0..num_component_types {
            let component_identifier = c.u32("component_identifier")?;
            // Each type has one section: a second would spawn its instances twice.
            if components
                .iter()
                .any(|s: &ComponentSection| s.component_identifier == component_identifier)
            {
                return Err(BlobError::Corrupt(format!(
                    "component type {t} ({component_identifier:#010x}) has a second section"
                )));
            }
            let num_instances = c.u32("num_instances")?;
            let size = c.u32("size")?;
            let entity_index = c.u32s(num_instances, "entity_index")?;
            if entity_index
                .iter()
                .max()
                .is_some_and(|&m| m >= num_entities)
                && let Some((i, &e)) = entity_index
                    .iter()
                    .enumerate()
                    .find(|(_, e)| **e >= num_entities)
            {
                return Err(BlobError::Corrupt(format!(
                    "component type {t} ({component_identifier:#010x}): instance {i} belongs to entity {e}, but there are only {num_entities}"
                )));
            }
            let data = c.take(size as usize, "instance_data")?;
            c.take(
                (size as usize).next_multiple_of(4) - size as usize,
                "padding",
            )?;
            components.push(ComponentSection {
                component_identifier,
                entity_index,
                data,
            });
        }
        if c.pos != c.bytes.len() {
            return Err(BlobError::Corrupt(format!(
                "{} unexpected bytes after the last component type",
                c.bytes.len() - c.pos
            )));
        }

        let (mut id_text, mut id_ends) = ("", Cow::Borrowed(&[][..]));
        if ids_size > 0 {
            let mut c = Cursor {
                bytes: section(bytes, ids_offset, ids_size, "ids")?,
                pos: 0,
                section: "ids",
            };
            let count = c.u32("num_ids")?;
            if count != num_entities {
                return Err(BlobError::Corrupt(format!(
                    "{count} ids for {num_entities} entities"
                )));
            }
            let offsets = c.u32s(count.saturating_add(1), "id offsets")?;
            let total = *offsets.last().unwrap_or(&0) as usize;
            let text = c.take(total, "id text")?;
            // One UTF-8 check for all ids; each boundary must then fall between chars.
            id_text = std::str::from_utf8(text)
                .map_err(|_| BlobError::Corrupt("the id table is not UTF-8".into()))?;
            // In one pass each without an early exit, which the compiler vectorizes
            // (a blob is read whole anyway; a bad one is rare).
            let ordered = offsets.windows(2).fold(true, |ok, w| ok & (w[0] <= w[1]));
            let bytes = id_text.as_bytes();
            let on_boundaries = offsets.iter().fold(true, |ok, &o| {
                // `str::is_char_boundary`, without its branches.
                let at = bytes
                    .get(o as usize)
                    .map_or(o as usize == bytes.len(), |&b| (b as i8) >= -0x40);
                ok & at
            });
            if offsets[0] != 0 || !ordered || !on_boundaries {
                return Err(BlobError::Corrupt(
                    "id offsets are out of order or split a character".into(),
                ));
            }
            id_ends = match offsets {
                Cow::Borrowed(o) => Cow::Borrowed(&o[1..]),
                Cow::Owned(mut o) => {
                    o.remove(0);
                    Cow::Owned(o)
                }
            };
        }
        Ok(LevelBlob {
            parent_index,
            components,
            id_text,
            id_ends,
        })
    }

    /// Number of entities.
    pub fn num_entities(&self) -> usize {
        self.parent_index.len()
    }

    /// The authoring id of entity `k`, if the blob has an id table.
    pub fn id(&self, k: usize) -> Option<&'a str> {
        let end = *self.id_ends.get(k)? as usize;
        let start = if k == 0 {
            0
        } else {
            self.id_ends[k - 1] as usize
        };
        self.id_text.get(start..end)
    }

    /// All authoring ids, in entity order.
    pub fn ids(&self) -> impl Iterator<Item = &'a str> + '_ {
        (0..self.id_ends.len()).filter_map(|k| self.id(k))
    }
}

/// One component type's instances, ready to be written.
#[derive(Debug, Clone, Default)]
pub struct ComponentBlock {
    /// FNV-1a 32 of the type name.
    pub component_identifier: u32,
    /// Owner of each instance.
    pub entity_index: Vec<u32>,
    /// Concatenated instance data.
    pub data: Vec<u8>,
}

fn put(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Writes a blob. `parent_index[i]` must be `< i` or [`NO_PARENT`]; `ids` is empty or
/// has one id per entity.
pub fn write_blob(parent_index: &[u32], components: &[ComponentBlock], ids: &[&str]) -> Vec<u8> {
    // Sized first and written once: a million-entity blob is 114 MB, and building the
    // body and the id section apart to copy them after held it three times over.
    let body_len = 8
        + 4 * parent_index.len()
        + components
            .iter()
            .map(|c| (12 + 4 * c.entity_index.len() + c.data.len()).next_multiple_of(4))
            .sum::<usize>();
    let id_len = if ids.is_empty() {
        0
    } else {
        (8 + 4 * ids.len() + ids.iter().map(|id| id.len()).sum::<usize>()).next_multiple_of(4)
    };
    let mut out = Vec::with_capacity(HEADER_SIZE + body_len + id_len);
    out.extend_from_slice(&MAGIC);
    put(&mut out, FORMAT_VERSION);
    put(&mut out, HEADER_SIZE as u32);
    put(&mut out, body_len as u32);
    put(
        &mut out,
        if ids.is_empty() {
            0
        } else {
            (HEADER_SIZE + body_len) as u32
        },
    );
    put(&mut out, id_len as u32);
    put(&mut out, parent_index.len() as u32);
    put(&mut out, components.len() as u32);
    for &p in parent_index {
        put(&mut out, p);
    }
    for c in components {
        put(&mut out, c.component_identifier);
        put(&mut out, c.entity_index.len() as u32);
        put(&mut out, c.data.len() as u32);
        for &e in &c.entity_index {
            put(&mut out, e);
        }
        out.extend_from_slice(&c.data);
        out.resize(out.len().next_multiple_of(4), 0);
    }
    if !ids.is_empty() {
        put(&mut out, ids.len() as u32);
        let mut offset = 0u32;
        put(&mut out, 0);
        for id in ids {
            offset += id.len() as u32;
            put(&mut out, offset);
        }
        for id in ids {
            out.extend_from_slice(id.as_bytes());
        }
        out.resize(out.len().next_multiple_of(4), 0);
    }
    debug_assert_eq!(out.len(), HEADER_SIZE + body_len + id_len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The layout byte by byte (core/FORMAT.md), padding included: what the reader
    /// accepts is not enough to pin it.
    #[test]
    fn a_blob_is_laid_out_byte_by_byte() {
        let blocks = [ComponentBlock {
            component_identifier: 7,
            entity_index: vec![1],
            data: vec![1, 2, 3],
        }];
        let blob = write_blob(&[NO_PARENT, 0], &blocks, &["a", "bc"]);
        let words = |ws: &[u32]| ws.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
        let mut expected = b"KLVL".to_vec();
        // version, header size, body length, id section offset and length
        expected.extend(words(&[1, 24, 36, 60, 20]));
        // entity and block counts, parents, one block: id, count, data length, index
        expected.extend(words(&[2, 1, u32::MAX, 0, 7, 1, 3, 1]));
        expected.extend([1, 2, 3, 0]);
        // id count, offsets, the ids' bytes, padding
        expected.extend(words(&[2, 0, 1, 3]));
        expected.extend(b"abc\0");
        assert_eq!(blob, expected);
        let empty = write_blob(&[], &[], &[]);
        let mut expected = b"KLVL".to_vec();
        expected.extend(words(&[1, 24, 8, 0, 0, 0, 0]));
        assert_eq!(empty, expected);
    }

    fn sample() -> Vec<u8> {
        let blocks = vec![
            ComponentBlock {
                component_identifier: 7,
                entity_index: vec![0, 2],
                data: vec![1, 2, 3, 4, 5, 6],
            },
            ComponentBlock {
                component_identifier: 9,
                entity_index: vec![1],
                data: vec![],
            },
        ];
        write_blob(&[NO_PARENT, 0, 1], &blocks, &["a", "bb", "a/c"])
    }

    #[test]
    fn write_then_parse_round_trips() {
        let bytes = sample();
        let blob = LevelBlob::parse(&bytes).unwrap();
        assert_eq!(blob.parent_index, vec![NO_PARENT, 0, 1]);
        assert_eq!(blob.components.len(), 2);
        assert_eq!(blob.components[0].data, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(blob.components[1].entity_index, vec![1]);
        assert_eq!(blob.ids().collect::<Vec<_>>(), vec!["a", "bb", "a/c"]);
    }

    #[test]
    fn an_unaligned_blob_reads_the_same_by_copying() {
        let bytes = sample();
        // Copies of the blob at a 4-aligned start and one byte past one.
        let at = |shift: usize| {
            let mut buffer = vec![0u8; bytes.len() + 4];
            let start = (4 - buffer.as_ptr() as usize % 4) % 4 + shift;
            buffer[start..start + bytes.len()].copy_from_slice(&bytes);
            (buffer, start)
        };
        let ((a_buffer, a_start), (u_buffer, u_start)) = (at(0), at(1));
        let aligned = &a_buffer[a_start..a_start + bytes.len()];
        let unaligned = &u_buffer[u_start..u_start + bytes.len()];
        let (a, u) = (
            LevelBlob::parse(aligned).unwrap(),
            LevelBlob::parse(unaligned).unwrap(),
        );
        assert!(matches!(a.parent_index, Cow::Borrowed(_)) || cfg!(target_endian = "big"));
        assert!(matches!(u.parent_index, Cow::Owned(_)));
        assert_eq!(a.parent_index, u.parent_index);
        assert_eq!(a.id_ends, u.id_ends);
        assert_eq!(a.ids().collect::<Vec<_>>(), u.ids().collect::<Vec<_>>());
        for (x, y) in a.components.iter().zip(&u.components) {
            assert_eq!((&x.entity_index, x.data), (&y.entity_index, y.data));
        }
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = sample();
        for len in 0..bytes.len() {
            assert!(
                LevelBlob::parse(&bytes[..len]).is_err(),
                "truncated to {len} bytes was accepted"
            );
        }
    }

    #[test]
    fn children_before_parents_are_refused() {
        let bytes = write_blob(&[1, NO_PARENT], &[], &[]);
        assert!(
            matches!(LevelBlob::parse(&bytes), Err(BlobError::Corrupt(m)) if m.contains("parents must come before"))
        );
        let bytes = write_blob(&[NO_PARENT, 0, 2, 1], &[], &[]);
        assert!(
            matches!(LevelBlob::parse(&bytes), Err(BlobError::Corrupt(m)) if m.contains("entity 2 has parent 2"))
        );
    }

    #[test]
    fn an_owner_past_the_last_entity_is_refused() {
        let block = ComponentBlock {
            component_identifier: 7,
            entity_index: vec![0, 1, 5, 2],
            data: vec![],
        };
        let bytes = write_blob(&[NO_PARENT, 0, 0], &[block], &[]);
        assert!(
            matches!(LevelBlob::parse(&bytes), Err(BlobError::Corrupt(m)) if m.contains("instance 2 belongs to entity 5, but there are only 3")),
        );
    }

    /// Id offsets that go backwards, split a character or run past the text are
    /// refused; every boundary of a multi-byte id is accepted.
    #[test]
    fn id_offsets_must_be_ordered_character_boundaries() {
        // The id section: the count, the offsets, then the text.
        let with_offsets = |ids: &[&str], offsets: &[u32]| {
            let mut bytes = write_blob(&vec![NO_PARENT; ids.len()], &[], ids);
            let ids_at = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
            for (k, o) in offsets.iter().enumerate() {
                let at = ids_at + 4 + 4 * k;
                bytes[at..at + 4].copy_from_slice(&o.to_le_bytes());
            }
            bytes
        };
        let written = with_offsets(&["é", "b"], &[0, 2, 3]);
        let parsed = LevelBlob::parse(&written).unwrap();
        assert_eq!(parsed.ids().collect::<Vec<_>>(), vec!["é", "b"]);
        assert!(LevelBlob::parse(&with_offsets(&["a", "b", "c"], &[0, 1, 2, 3])).is_ok());
        for (ids, offsets, what) in [
            (&["é", "b"][..], &[0, 1, 3][..], "splits the é"),
            (&["é", "b"], &[0, 3, 2], "goes backwards, past the text"),
            (&["é", "b"], &[1, 2, 3], "does not start at 0"),
            // Backwards inside the text, every offset a boundary: only the order says.
            (&["a", "b", "c"], &[0, 2, 1, 3], "goes backwards"),
        ] {
            assert!(
                matches!(
                    LevelBlob::parse(&with_offsets(ids, offsets)),
                    Err(BlobError::Corrupt(m)) if m.contains("out of order or split")
                ),
                "{offsets:?} {what}"
            );
        }
    }

    proptest! {
        /// Flipping any byte either still parses or fails with an error: never a panic.
        #[test]
        fn corrupt_bytes_never_panic(pos in any::<usize>(), value in any::<u8>()) {
            let mut bytes = sample();
            let pos = pos % bytes.len();
            bytes[pos] = value;
            let _ = LevelBlob::parse(&bytes);
        }
    }
}
