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

use super::open_level::OpenLevel;
use super::preview_state::PreviewState;
use super::project_files::ProjectFiles;
use crate::editor::preview::{PREVIEW_COMPILE, ProjectUnits};

impl PreviewState {
    /// Brings the preview to the document after an edit that set the fields
    /// `fields` (see the module); `false` where the whole document must be
    /// compiled instead (nothing is changed then).
    pub(super) fn follow_fields(
        &mut self,
        level: &OpenLevel,
        files: &ProjectFiles,
        fields: &[(String, String)],
    ) -> bool {
        if self.compile_error.is_some() {
            return false;
        }
        let started = std::time::Instant::now();
        // The first field edit since the structure changed compiles the document
        // once, keeping where its instances are.
        let Some(layout) = &self.doc_layout else {
            let Ok((compiled, layout)) = DocumentLayout::compile(
                &files.registry,
                &mut ProjectUnits(&files.project),
                &level.file,
                &level.doc,
                PREVIEW_COMPILE,
            ) else {
                return false;
            };
            let compile_ms = started.elapsed().as_secs_f64() * 1000.0;
            if (self.runtime)
                .install(&files.registry, compiled.blob, compile_ms)
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
            let Some(k) = level.entity_index.find(entity, id_at) else {
                return false;
            };
            let Some(value) = level.doc.entities[k].components.get(component) else {
                return false;
            };
            let Some(rewrite) = layout.rewrite(&files.registry, k, component, value) else {
                return false;
            };
            rewrites.push(rewrite);
        }
        let compile_ms = started.elapsed().as_secs_f64() * 1000.0;
        (self.runtime)
            .rewrite(&files.registry, rewrites, compile_ms)
            .is_ok()
    }
}
