//! Field edits written into the preview without compiling the level: a drag of
//! the move handle, a value typed in the inspector. Such an edit changes what a
//! few entities' components hold and nothing of the level's structure, so only
//! those components are compiled, their instances written over the old ones in
//! the blob, and the running world patched (see `kiln_core::incremental` and
//! `SpawnedLevel::patch`). At 10,000 entities, compiling the whole document for
//! each frame of a drag took about 17 ms. Anything the rewrite does not take (a
//! value the compile refuses, a prefab part, an instance of another size) goes
//! the whole way, which reports the error.

use kiln_core::incremental::DocumentLayout;

use super::Editor;
use crate::editor::document::DocEdit;
use crate::editor::preview::{PREVIEW_COMPILE, ProjectUnits};

/// The (entity, component) pairs `edit` sets fields of, if setting fields of the
/// open file's own entities is all it does.
pub(super) fn fields_set(edit: &DocEdit) -> Option<Vec<(String, String)>> {
    match edit {
        DocEdit::SetField {
            entity, component, ..
        } => Some(vec![(entity.clone(), component.clone())]),
        DocEdit::Group(edits) => {
            let mut all = Vec::new();
            for edit in edits {
                all.extend(fields_set(edit)?);
            }
            // Two fields of one component are one component to compile.
            all.sort_unstable();
            all.dedup();
            Some(all)
        }
        _ => None,
    }
}

impl Editor {
    /// Brings the preview to the document after an edit that set the fields
    /// `fields` (see the module); `false` where the whole document must be
    /// compiled instead (nothing is changed then).
    pub(super) fn follow_fields(&mut self, fields: &[(String, String)]) -> bool {
        if self.compile_error.is_some() {
            return false;
        }
        let started = std::time::Instant::now();
        let Some(level) = &self.level else {
            return false;
        };
        // The first field edit since the structure changed compiles the document
        // once, keeping where its instances are.
        let Some(layout) = &self.doc_layout else {
            let Ok((compiled, layout)) = DocumentLayout::compile(
                &self.registry,
                &mut ProjectUnits(&self.project),
                &level.file,
                &level.doc,
                PREVIEW_COMPILE,
            ) else {
                return false;
            };
            let compile_ms = started.elapsed().as_secs_f64() * 1000.0;
            if (self.preview)
                .install(&self.registry, compiled.blob, compile_ms)
                .is_err()
            {
                return false;
            }
            self.left_out = compiled.left_out;
            self.doc_layout = Some(layout);
            return true;
        };
        let id_at = |k: usize| level.doc.entities.get(k).map(|e| e.id.as_str());
        let mut rewrites = Vec::with_capacity(fields.len());
        for (entity, component) in fields {
            let Some(k) = self.entity_index.find(entity, id_at) else {
                return false;
            };
            let Some(value) = level.doc.entities[k].components.get(component) else {
                return false;
            };
            let Some(rewrite) = layout.rewrite(&self.registry, k, component, value) else {
                return false;
            };
            rewrites.push(rewrite);
        }
        let compile_ms = started.elapsed().as_secs_f64() * 1000.0;
        (self.preview)
            .rewrite(&self.registry, rewrites, compile_ms)
            .is_ok()
    }
}
