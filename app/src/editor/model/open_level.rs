//! The level being edited and everything that belongs to it alone: its file and
//! document, the hierarchy built from it, the id index, the selection, the units
//! its instances use, and its unsaved edits kept for a crash (`recovery.rs`).
//! Fyrox's editor keeps a scene entry the same way. The history stays beside it
//! (a step may write files as well as the document).

use kiln_core::{EntityDocument, IdIndex, LevelDocument, Project};

use super::prefab_parts::{self, PartView, PrefabLibrary};
use crate::editor::tree::SceneTree;

/// A tree revision no editor has used, so that a view built for another project's
/// editor, or for a level since closed, is never taken for current.
fn next_tree_revision() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The level being edited.
#[derive(Debug)]
pub struct OpenLevel {
    /// Project path, e.g. `levels/forest.level`.
    pub file: String,
    /// The document as edited.
    pub doc: LevelDocument,
    /// The hierarchy of the level (rebuilt after each edit).
    pub(super) tree: SceneTree,
    /// Moves on whenever the hierarchy or the prefabs it shows may have changed.
    pub(super) tree_revision: u64,
    /// Authoring id -> position in the entities, rebuilt with the tree, so that
    /// looking an entity up (the inspector, the handles, every frame) does not
    /// search a million entities.
    pub(super) entity_index: IdIndex,
    /// Selected authoring ids; the first is the primary one.
    pub(super) selection: Vec<String>,
    /// The units the level instances, for showing and editing their parts.
    pub(super) prefabs: PrefabLibrary,
    /// Unsaved edits of the level recovered from a crash, waiting for the user
    /// to restore or discard them.
    pub(super) recovery: Option<LevelDocument>,
    /// When the recovery file was last written.
    pub(super) recovery_written: Option<std::time::Instant>,
}

impl OpenLevel {
    /// `doc`, read from `file`, with nothing built from it yet (see
    /// [`OpenLevel::rebuild`]).
    pub(super) fn new(file: &str, doc: LevelDocument) -> Self {
        OpenLevel {
            file: file.to_owned(),
            doc,
            tree: SceneTree::default(),
            tree_revision: next_tree_revision(),
            entity_index: IdIndex::default(),
            selection: Vec::new(),
            prefabs: PrefabLibrary::default(),
            recovery: None,
            recovery_written: None,
        }
    }

    /// The hierarchy of the level.
    pub fn tree(&self) -> &SceneTree {
        &self.tree
    }
    /// A number that changes whenever [`Self::tree`] or the prefab units it shows
    /// may have changed: views built from them are rebuilt when it moves on.
    pub fn tree_revision(&self) -> u64 {
        self.tree_revision
    }
    /// Says the tree (or the prefabs it shows) may have changed.
    pub(super) fn tree_changed(&mut self) {
        self.tree_revision = next_tree_revision();
    }
    /// Selected authoring ids; the first is the primary one.
    pub fn selection(&self) -> &[String] {
        &self.selection
    }
    /// The units the level's instances use.
    pub fn prefabs(&self) -> &PrefabLibrary {
        &self.prefabs
    }
    /// Unsaved edits recovered from a crash, waiting for the user's choice.
    pub fn recovery(&self) -> Option<&LevelDocument> {
        self.recovery.as_ref()
    }
    /// The entity with authoring id `id`.
    pub fn entity(&self, id: &str) -> Option<&EntityDocument> {
        self.doc.entities.get(self.entity_position(id)?)
    }
    /// The position of the entity `id` in the level's entity list.
    pub fn entity_position(&self, id: &str) -> Option<usize> {
        let entities = &self.doc.entities;
        let at = |k: usize| entities.get(k).map(|e| e.id.as_str());
        match self.entity_index.find(id, at) {
            Some(k) => Some(k),
            // Every edit rebuilds the index; should one have slipped past (the
            // count tells), a search still finds the entity.
            None if self.entity_index.len() != entities.len() => {
                entities.iter().position(|e| e.id == id)
            }
            None => None,
        }
    }
    /// A prefab part (`tree_01/trunk`) as it ends up with the file's overrides.
    pub fn part(&self, path: &str) -> Option<PartView> {
        prefab_parts::part_view(&self.doc, &self.prefabs, path)
    }

    /// Rebuilds what follows from the document alone: the id index, the tree, the
    /// units its instances use, and the selection (entities that are gone leave
    /// it; a part stays while its instance exists).
    pub(super) fn rebuild(&mut self, project: &Project) {
        // One id index per edit, for the tree, the selection and every lookup after.
        self.entity_index = IdIndex::build(
            self.doc.entities.iter().map(|e| e.id.as_str()),
            self.doc.entities.len(),
        );
        self.tree = SceneTree::build_indexed(&self.doc, &self.entity_index);
        self.tree_changed();
        self.prefabs.load_for(project, &self.doc);
        let id_at = |k: usize| self.doc.entities.get(k).map(|e| e.id.as_str());
        let index = &self.entity_index;
        self.selection.retain(|s| {
            let entity =
                crate::editor::document::split_part(s).map_or(s.as_str(), |(instance, _)| instance);
            index.find(entity, id_at).is_some()
        });
    }

    /// Selects `ids` where they exist (a part where its instance does).
    pub(super) fn select_existing(&mut self, ids: Vec<String>) {
        let existing: Vec<String> = ids
            .into_iter()
            .filter(|id| {
                let entity =
                    crate::editor::document::split_part(id).map_or(id.as_str(), |(i, _)| i);
                self.entity(entity).is_some()
            })
            .collect();
        if !existing.is_empty() {
            self.selection = existing;
        }
    }

    /// The selected entities with everything below them (copied, duplicated).
    pub(super) fn selected_subtrees(&self) -> Vec<EntityDocument> {
        super::entity_edits::selected_subtrees(&self.doc, &self.tree, &self.selection)
    }
}
