//! Authoring id -> position in a list of ids, without a copy of the ids: an
//! open-addressing table of positions, hashed by the id text. A level's document and
//! a spawned level keep their ids in their own storage; the index only points into
//! it, so it costs 8 bytes or less per id and one pass to build.

/// Marks an empty slot.
const EMPTY: u32 = u32::MAX;

/// Positions of ids, found by hashing the id: a table of positions into the
/// storage that holds the ids, which is read back to confirm a match.
///
/// ```
/// use kiln_core::IdIndex;
/// let ids = ["rock", "tree", "lamp"];
/// let index = IdIndex::build(ids.iter().copied(), ids.len());
/// assert_eq!(index.find("tree", |k| ids.get(k).copied()), Some(1));
/// assert_eq!(index.find("pond", |k| ids.get(k).copied()), None);
/// ```
#[derive(Debug, Clone, Default)]
pub struct IdIndex {
    /// Position of an id in each slot, or [`EMPTY`]. A power of two long, at most
    /// half full.
    slots: Box<[u32]>,
    /// Number of ids indexed.
    len: usize,
}

/// FNV-1a: short ids hash in a few nanoseconds, and no hasher state is kept.
fn hash(id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in id.as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // Mix the high bits down: the table uses the low ones.
    h ^ (h >> 29)
}

impl IdIndex {
    /// Indexes `ids`, of which there are `count` (positions beyond `u32::MAX - 1`
    /// are not indexed). The first of two equal ids is the one found, as a search
    /// from the front would find it.
    pub fn build<'a>(ids: impl Iterator<Item = &'a str>, count: usize) -> Self {
        let size = (count.max(1) * 2).next_power_of_two();
        let mask = size - 1;
        let mut slots = vec![EMPTY; size].into_boxed_slice();
        let mut len = 0;
        for (position, id) in ids.enumerate().take(count.min(EMPTY as usize)) {
            let mut slot = hash(id) as usize & mask;
            while slots[slot] != EMPTY {
                slot = (slot + 1) & mask;
            }
            slots[slot] = position as u32;
            len += 1;
        }
        IdIndex { slots, len }
    }

    /// Number of ids indexed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no id is indexed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The position of `id`; `id_at` reads the id at a position from the storage the
    /// index was built from.
    pub fn find<'a>(&self, id: &str, id_at: impl Fn(usize) -> Option<&'a str>) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut slot = hash(id) as usize & mask;
        // Probes run in insertion order along a chain, so the first equal id
        // inserted is met first.
        loop {
            let position = self.slots[slot];
            if position == EMPTY {
                return None;
            }
            if id_at(position as usize) == Some(id) {
                return Some(position as usize);
            }
            slot = (slot + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Differential: the index finds what a search from the front finds, for ids
        /// present (duplicates included) and absent.
        #[test]
        fn finds_what_a_linear_search_finds(
            ids in proptest::collection::vec("[a-c]{0,3}", 0..60),
            queries in proptest::collection::vec("[a-d]{0,3}", 0..20),
        ) {
            let index = IdIndex::build(ids.iter().map(String::as_str), ids.len());
            prop_assert_eq!(index.len(), ids.len());
            let at = |k: usize| ids.get(k).map(String::as_str);
            for q in queries.iter().chain(&ids) {
                prop_assert_eq!(index.find(q, at), ids.iter().position(|i| i == q));
            }
        }
    }

    #[test]
    fn an_empty_index_finds_nothing() {
        let index = IdIndex::default();
        assert!(index.is_empty());
        assert_eq!(index.find("x", |_| Some("x")), None);
        let built = IdIndex::build(std::iter::empty(), 0);
        assert_eq!(built.find("x", |_| Some("x")), None);
    }
}
