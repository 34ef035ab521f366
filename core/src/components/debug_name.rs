//! Debug names: a readable label per entity (seed part 1's first example).
//!
//! Names live in one shared byte buffer with a span per instance, so spawning ten
//! thousand names is one buffer append each, not ten thousand allocations. Destroyed
//! or replaced names leave garbage that is compacted once it outweighs the live text.
//! Names from a level blob are checked for UTF-8 when read, not when spawned: debug
//! names are read rarely, levels are spawned often.

use crate::component::{Compaction, GcRng, Instance, NONE, OwnedInstances, sweep_dead};
use crate::dense_entity_map::DenseEntityMap;
use crate::entity::{Entity, EntityManager};
use crate::manager::Simulates;

/// Associates at most one debug name with an entity.
#[derive(Debug, Default, Clone)]
pub struct DebugNameManager {
    entity: Vec<Entity>,
    span: Vec<(u32, u32)>,
    text: Vec<u8>,
    garbage: usize,
    /// Nearly every entity of a level has one: indexed by entity index.
    map: DenseEntityMap,
    rng: GcRng,
}

impl DebugNameManager {
    /// An empty manager.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of instances.
    pub fn len(&self) -> usize {
        self.entity.len()
    }

    /// Whether there are no instances.
    pub fn is_empty(&self) -> bool {
        self.entity.is_empty()
    }

    /// The instance of `entity`, if it has a name.
    pub fn lookup(&self, entity: Entity) -> Option<Instance> {
        self.map.get(entity)
    }

    /// The name of `entity`, if it has one.
    pub fn debug_name(&self, entity: Entity) -> Option<&str> {
        self.lookup(entity).map(|i| self.name(i))
    }

    /// The name stored at `i`.
    pub fn name(&self, i: Instance) -> &str {
        let (start, len) = self.span[i.index()];
        std::str::from_utf8(&self.text[start as usize..(start + len) as usize])
            .unwrap_or("\u{fffd}")
    }

    /// The owner of `i`.
    pub fn entity(&self, i: Instance) -> Entity {
        self.entity[i.index()]
    }

    /// Sets (or replaces) the name of `entity`.
    pub fn set_debug_name(&mut self, entity: Entity, name: &str) {
        let span = self.append_text(name.as_bytes());
        match self.lookup(entity) {
            Some(i) => {
                self.garbage += self.span[i.index()].1 as usize;
                self.span[i.index()] = span;
                self.maybe_compact();
            }
            None => {
                self.map.insert(entity, Instance(self.entity.len() as u32));
                self.entity.push(entity);
                self.span.push(span);
            }
        }
    }

    /// Adds names for many entities at once (entities must not have names yet).
    /// Names that are not UTF-8 read back as U+FFFD.
    pub fn create_many<'a>(&mut self, names: impl ExactSizeIterator<Item = (Entity, &'a [u8])>) {
        self.entity.reserve(names.len());
        self.span.reserve(names.len());
        self.map.reserve(names.len());
        // Names average a dozen bytes; one reservation instead of a doubling series.
        self.text.reserve(names.len() * 16);
        for (entity, name) in names {
            let span = self.append_text(name);
            self.map.insert(entity, Instance(self.entity.len() as u32));
            self.entity.push(entity);
            self.span.push(span);
        }
    }

    /// Adds `spans.len()` names at once, all cut from one `text`: the k-th belongs
    /// to `owner(k)` and is `text[start..start + len]` for `spans[k] = (start, len)`.
    /// `text` is appended in one copy (a level blob's name records, length prefixes
    /// and padding included); the bytes no span covers count as garbage for the next
    /// compaction. Owners must not have names yet, as with
    /// [`DebugNameManager::create_many`].
    ///
    /// # Panics
    /// If a span reaches past the end of `text`: the caller cut them from it.
    pub fn create_in_text(
        &mut self,
        owner: impl Fn(usize) -> Entity,
        text: &[u8],
        spans: &[(u32, u32)],
    ) {
        let named: usize = spans
            .iter()
            .map(|&(start, len)| {
                let end = start as usize + len as usize;
                assert!(
                    end <= text.len(),
                    "name span {start}+{len} is outside the text"
                );
                len as usize
            })
            .sum();
        let base = self.text.len() as u32;
        self.text.extend_from_slice(text);
        self.garbage += text.len() - named;
        let first = self.entity.len();
        self.entity.extend((0..spans.len()).map(owner));
        self.span
            .extend(spans.iter().map(|&(start, len)| (base + start, len)));
        self.map.insert_all(&self.entity[first..], first as u32);
    }

    fn append_text(&mut self, name: &[u8]) -> (u32, u32) {
        let start = self.text.len() as u32;
        self.text.extend_from_slice(name);
        (start, name.len() as u32)
    }

    /// Removes the name at `i` (swap-erase).
    pub fn destroy(&mut self, i: Instance) {
        let last = self.entity.len() - 1;
        self.garbage += self.span[i.index()].1 as usize;
        self.map.remove(self.entity[i.index()]);
        self.entity.swap_remove(i.index());
        self.span.swap_remove(i.index());
        if i.index() != last {
            self.map.insert(self.entity[i.index()], i);
        }
        self.maybe_compact();
    }

    fn maybe_compact(&mut self) {
        if self.garbage < 4096 || self.garbage * 2 < self.text.len() {
            return;
        }
        let mut text = Vec::with_capacity(self.text.len() - self.garbage);
        for span in &mut self.span {
            let (start, len) = (span.0 as usize, span.1 as usize);
            let new_start = text.len() as u32;
            text.extend_from_slice(&self.text[start..start + len]);
            span.0 = new_start;
        }
        self.text = text;
        self.garbage = 0;
    }
}

impl DebugNameManager {
    /// Removes what `plan` removes, compacting the kept names' text as it goes.
    fn remove_in_one_pass(&mut self, plan: &Compaction) {
        let mut text = Vec::new();
        for (old, new) in plan.moves() {
            let owner = self.entity[old as usize];
            if new == NONE {
                self.map.remove(owner);
                continue;
            }
            if new != old {
                self.map.redirect(owner, Instance(old), Instance(new));
            }
            let span = &mut self.span[old as usize];
            let (start, len) = (span.0 as usize, span.1 as usize);
            span.0 = text.len() as u32;
            text.extend_from_slice(self.text.get(start..start + len).unwrap_or_default());
        }
        plan.apply(&mut self.entity);
        plan.apply(&mut self.span);
        self.text = text;
        self.garbage = 0;
    }
}

impl OwnedInstances for DebugNameManager {
    const TYPE_NAME: &'static str = "debug_name";
    fn instance_count(&self) -> usize {
        self.entity.len()
    }
    fn owner(&self, index: usize) -> Entity {
        self.entity[index]
    }
    fn destroy_index(&mut self, index: usize) {
        self.destroy(Instance(index as u32));
    }
    fn gc_rng(&mut self) -> &mut GcRng {
        &mut self.rng
    }
    fn instance_of(&self, entity: Entity) -> Option<Instance> {
        self.lookup(entity)
    }
    fn sweep_dead_owners(&mut self, entities: &EntityManager) {
        // A few dead: destroyed one by one. Many (a level despawned): one pass.
        match Compaction::of_dead(&self.entity, entities) {
            Some(plan) => self.remove_in_one_pass(&plan),
            None => sweep_dead(self, entities),
        }
    }
}

impl Simulates for DebugNameManager {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::spawn_debug_name;
    use crate::manager::ComponentManager;
    use crate::record::RecordWriter;
    use crate::registry::{ComponentBatch, SpawnContext};

    #[test]
    fn names_survive_churn_and_compaction() {
        let mut em = EntityManager::new();
        let mut names = DebugNameManager::new();
        let mut all = Vec::new();
        em.create_many(3000, &mut all);
        names.create_many(all.iter().enumerate().map(|(i, &e)| {
            (
                e,
                if i % 2 == 0 {
                    &b"even-entity-name"[..]
                } else {
                    b"odd"
                },
            )
        }));
        for &e in all.iter().step_by(3) {
            em.destroy(e);
        }
        names.sweep(&em);
        names.set_debug_name(all[1], "renamed");
        for (i, &e) in all.iter().enumerate() {
            match names.debug_name(e) {
                _ if i == 1 => assert_eq!(names.debug_name(e), Some("renamed")),
                Some(n) => {
                    assert!(em.alive(e));
                    assert_eq!(
                        n,
                        if i % 2 == 0 {
                            "even-entity-name"
                        } else {
                            "odd"
                        }
                    );
                }
                None => assert!(!em.alive(e)),
            }
        }
        assert!(names.text.len() < 3000 * 16, "garbage was never compacted");
    }

    #[test]
    fn name_records_are_checked_before_anything_is_made() {
        let record = |name: &str| {
            let mut out = Vec::new();
            out.put_u32(name.len() as u32);
            out.extend_from_slice(name.as_bytes());
            out.resize(out.len().next_multiple_of(4), 0);
            out
        };
        let spawn = |data: &[u8], count: usize| {
            let mut em = EntityManager::new();
            let mut world = crate::world::World::new();
            let mut owners = Vec::new();
            em.create_many(count, &mut owners);
            let index: Vec<u32> = (0..count as u32).collect();
            let batch = ComponentBatch {
                entity_lookup: &owners,
                entity_index: &index,
                parent_index: &[],
                data,
            };
            let mut ctx = SpawnContext {
                entities: &mut em,
                world: &mut world,
            };
            spawn_debug_name(&mut ctx, &batch).map(|()| {
                owners
                    .iter()
                    .map(|&e| world.debug_names.debug_name(e).map(String::from))
                    .collect::<Vec<_>>()
            })
        };
        let mut two = record("Élan");
        two.extend(record(""));
        assert_eq!(
            spawn(&two, 2),
            Ok(vec![Some("Élan".into()), Some(String::new())])
        );
        assert!(
            spawn(&two, 3)
                .unwrap_err()
                .contains("debug name 2 runs past the end")
        );
        assert!(
            spawn(&two, 1)
                .unwrap_err()
                .contains("4 bytes left after the last")
        );
        let mut huge = two.clone();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(
            spawn(&huge, 2)
                .unwrap_err()
                .contains("debug name 0 runs past the end")
        );
        assert!(
            spawn(&two[..7], 1)
                .unwrap_err()
                .contains("debug name 0 runs past the end")
        );
    }

    #[test]
    fn gc_collects_dead_entities_lazily() {
        let mut em = EntityManager::new();
        let mut names = DebugNameManager::new();
        let mut all = Vec::new();
        em.create_many(100, &mut all);
        names.create_many(all.iter().map(|&e| (e, &b"x"[..])));
        em.destroy_many(&all[..90]);
        for _ in 0..200 {
            names.gc(&em);
        }
        assert!(names.len() <= 20, "gc left {} names", names.len());
        assert!(all[90..].iter().all(|&e| names.debug_name(e).is_some()));
    }
}
