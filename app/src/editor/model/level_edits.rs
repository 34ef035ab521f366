//! The user's edits of the open level, from action to history entry: what each
//! changes, what is selected after it, and how the preview follows it, decided
//! when the edit is made (a field set is written into the running world; a
//! change of structure rebuilds it). Pure: nothing here touches the editor.

use glam::{Affine3A, Vec3};
use kiln_core::EntityDocument;

use super::conflicts;
use super::entity_edits;
use super::open_level::OpenLevel;
use crate::editor::actions::{Action, UiCommand};
use crate::editor::document::{DocEdit, override_of, split_part};

/// How the preview follows an edit of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Follow {
    /// Only these (entity, component) pairs' fields changed: their instances
    /// are compiled alone and written into the running world (`field_edits.rs`),
    /// where the rewrite takes them; the whole rebuild otherwise.
    Fields(Vec<(String, String)>),
    /// The structure may have changed: the tree is rebuilt and the level
    /// compiled and spawned (a partial respawn where the preview can).
    Rebuild,
}

/// An edit of the open document as the user made it.
#[derive(Debug, Clone)]
pub struct LevelEdit {
    /// The change.
    pub edit: DocEdit,
    /// Part of the gesture of the step before (a drag): merged into it.
    pub continuing: bool,
    /// What is selected once it is done, if the edit says.
    pub select: Option<Vec<String>>,
    /// How the preview follows it.
    pub follow: Follow,
    /// What to log once it is made.
    pub said: Option<String>,
    /// The step it joins, if that is still the last one (settling what was just
    /// placed, see [`crate::editor::history::History::push_into`]).
    pub amends: Option<u64>,
}

impl LevelEdit {
    /// An edit that rebuilds the preview, on its own step.
    pub fn rebuild(edit: DocEdit) -> Self {
        LevelEdit {
            edit,
            continuing: false,
            select: None,
            follow: Follow::Rebuild,
            said: None,
            amends: None,
        }
    }

    /// An edit that rebuilds the preview and selects what it says.
    pub fn select((edit, selection): entity_edits::EditAndSelection) -> Self {
        LevelEdit {
            select: Some(selection),
            ..Self::rebuild(edit)
        }
    }

    /// An edit setting fields (of one entity, or a group of them, a part's
    /// overrides among them or not): followed field by field where it sets the
    /// file's own entities' fields alone.
    pub fn of(edit: DocEdit, continuing: bool) -> Self {
        let follow = fields_set(&edit).map_or(Follow::Rebuild, Follow::Fields);
        LevelEdit {
            edit,
            continuing,
            select: None,
            follow,
            said: None,
            amends: None,
        }
    }

    /// The edit, logging `said` once it is made.
    pub fn saying(self, said: String) -> Self {
        LevelEdit {
            said: Some(said),
            ..self
        }
    }
}

/// The (entity, component) pairs `edit` sets fields of, if setting fields of the
/// open file's own entities is all it does (a part's override compiles its
/// instance again).
fn fields_set(edit: &DocEdit) -> Option<Vec<(String, String)>> {
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

/// What an entity edit comes to.
#[derive(Debug)]
pub enum Planned {
    /// An edit to make.
    Edit(Box<LevelEdit>),
    /// Nothing changes (a field set to its value, an unknown entity).
    Nothing,
    /// Refused, with the reason to show.
    Refused(String),
}

impl Planned {
    fn edit(edit: LevelEdit) -> Self {
        Planned::Edit(Box::new(edit))
    }
}

/// The edit `action` makes of `level`, where `action` edits entities (a
/// command among them: delete, duplicate, paste `clipboard`, move in the
/// hierarchy); other actions are handed back (boxed: an action is large).
/// `world_pose` gives an entity's pose in the preview world (moves keep it; a
/// new entity is placed in its parent's space).
pub fn plan(
    action: Action,
    (level, registry): (&OpenLevel, &kiln_core::Registry),
    clipboard: &[EntityDocument],
    world_pose: &dyn Fn(&str) -> Option<Affine3A>,
) -> Result<Planned, Box<Action>> {
    let doc = &level.doc;
    let select = |made: Option<entity_edits::EditAndSelection>| {
        made.map_or(Planned::Nothing, |made| {
            Planned::edit(LevelEdit::select(made))
        })
    };
    let planned = |edit: Option<DocEdit>| {
        edit.map_or(Planned::Nothing, |e| Planned::edit(LevelEdit::rebuild(e)))
    };
    Ok(match action {
        Action::Rename { entity, name } => planned(entity_edits::rename(doc, &entity, name)),
        Action::Reparent {
            entities,
            parent,
            before,
        } => {
            match entity_edits::reparent(doc, &level.tree, world_pose, &entities, parent, before) {
                Ok(edit) => Planned::edit(LevelEdit::rebuild(edit)),
                Err(entity_edits::Cycle) => Planned::Refused(
                    "cannot move an entity under itself or one of its children".to_owned(),
                ),
            }
        }
        Action::SetField {
            entities,
            component,
            instance,
            field,
            value,
            continuing,
        } => {
            let mut edits: Vec<DocEdit> = entities
                .iter()
                .filter_map(|entity| {
                    entity_edits::set_field(
                        doc,
                        entity,
                        &component,
                        instance,
                        &field,
                        value.clone(),
                    )
                })
                .filter(DocEdit::changes)
                .collect();
            let edit = match edits.len() {
                0 => return Ok(Planned::Nothing),
                // Several entities: one step, and a drag merges step by step.
                1 if entities.len() == 1 => edits.remove(0),
                _ => DocEdit::Group(edits),
            };
            Planned::edit(LevelEdit::of(edit, continuing))
        }
        Action::SetFieldEach {
            component,
            field,
            values,
            continuing,
        } => {
            // Unchanged entities stay in the group, so that every frame of a drag
            // has the same shape and merges into one step.
            let edits: Vec<DocEdit> = values
                .into_iter()
                .filter_map(|(entity, value)| {
                    entity_edits::set_field(doc, &entity, &component, None, &field, value)
                })
                .collect();
            if edits.is_empty() {
                return Ok(Planned::Nothing);
            }
            Planned::edit(LevelEdit::of(DocEdit::Group(edits), continuing))
        }
        Action::SetFieldsEach {
            component,
            values,
            continuing,
        } => {
            let edits: Vec<DocEdit> = values
                .into_iter()
                .filter_map(|(entity, field, value)| {
                    entity_edits::set_field(doc, &entity, &component, None, &field, value)
                })
                .collect();
            if edits.is_empty() {
                return Ok(Planned::Nothing);
            }
            Planned::edit(LevelEdit::of(DocEdit::Group(edits), continuing))
        }
        Action::Settle { values, step } => {
            let edits: Vec<DocEdit> = values
                .into_iter()
                .filter_map(|(entity, value)| {
                    entity_edits::set_field(doc, &entity, "transform", None, "position", value)
                })
                .collect();
            if edits.is_empty() {
                return Ok(Planned::Nothing);
            }
            Planned::edit(LevelEdit {
                amends: Some(step),
                ..LevelEdit::of(DocEdit::Group(edits), false)
            })
        }
        Action::RevertOverride {
            part,
            component,
            field,
        } => {
            let Some((instance_id, key)) = split_part(&part) else {
                return Ok(Planned::Nothing);
            };
            let old = override_of(doc, instance_id, key, &component, &field);
            if old.is_none() {
                return Ok(Planned::Nothing);
            }
            Planned::edit(LevelEdit::rebuild(DocEdit::SetOverride {
                instance: instance_id.to_owned(),
                key: key.to_owned(),
                component,
                field,
                old,
                new: None,
            }))
        }
        Action::AddComponent { entity, component } => {
            planned(entity_edits::add_component(doc, &entity, &component))
        }
        Action::RemoveComponent { entity, component } => {
            planned(entity_edits::remove_component(doc, &entity, &component))
        }
        Action::PlaceAsset { file, position } => {
            let position = Vec3::from_array(position.unwrap_or([0.0; 3]));
            match entity_edits::place_asset(doc, &file, position) {
                Some(made) => Planned::edit(LevelEdit::select(made)),
                None => Planned::Refused(format!(
                    "{file} is not a mesh or a prefab: it cannot be placed"
                )),
            }
        }
        Action::CreateEntity { position } => {
            let parent = level.selection.first().cloned();
            // The position is in the world; the new entity lives in its parent's space.
            let parent_world = parent
                .as_deref()
                .and_then(world_pose)
                .unwrap_or(Affine3A::IDENTITY);
            let local = parent_world
                .inverse()
                .transform_point3(Vec3::from_array(position));
            Planned::edit(LevelEdit::select(entity_edits::new_entity(
                doc, parent, local,
            )))
        }
        Action::Run(UiCommand::Delete) => select(entity_edits::delete(
            doc,
            &level.tree,
            &level.selection,
            registry,
        )),
        Action::Run(UiCommand::Duplicate) => select(entity_edits::paste(
            doc,
            &level.selected_subtrees(),
            registry,
        )),
        Action::Run(UiCommand::Paste) => select(entity_edits::paste(doc, clipboard, registry)),
        // Without a camera to put it in front of (tests, scripts): at the origin.
        Action::Run(UiCommand::NewEntity) => {
            let new = Action::CreateEntity { position: [0.0; 3] };
            return plan(new, (level, registry), clipboard, world_pose);
        }
        Action::Run(
            way
            @ (UiCommand::MoveUp | UiCommand::MoveDown | UiCommand::Indent | UiCommand::Outdent),
        ) => {
            let way = match way {
                UiCommand::MoveUp => entity_edits::Nudge::Up,
                UiCommand::MoveDown => entity_edits::Nudge::Down,
                UiCommand::Indent => entity_edits::Nudge::Indent,
                _ => entity_edits::Nudge::Outdent,
            };
            let Some((entities, parent, before)) =
                entity_edits::nudge(doc, &level.tree, &level.selection, way)
            else {
                return Ok(Planned::Nothing);
            };
            let reparent = Action::Reparent {
                entities,
                parent,
                before,
            };
            return plan(reparent, (level, registry), clipboard, world_pose);
        }
        Action::ResolveConflict { index, how } => {
            let resolved = conflicts::resolve_one(level, index, how);
            resolved.map_or(Planned::Nothing, |(edit, said)| {
                Planned::edit(LevelEdit::of(edit, false).saying(said))
            })
        }
        Action::ResolveAllConflicts(side) => {
            let resolved = conflicts::resolve_all(level, side);
            resolved.map_or(Planned::Nothing, |(edit, said)| {
                Planned::edit(LevelEdit::of(edit, false).saying(said))
            })
        }
        other => return Err(Box::new(other)),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn builtins() -> kiln_core::Registry {
        kiln_core::Registry::with_builtins()
    }
    use kiln_core::LevelDocument;
    use serde_json::json;

    fn level() -> OpenLevel {
        let doc = LevelDocument::parse(
            r#"{"entities": [
                {"id": "a", "name": "A", "components": {"transform": {"position": [1, 0, 0]}}},
                {"id": "lamp", "name": "Lamp", "prefab": "units/lamp"}
            ]}"#,
            "t.level",
        )
        .unwrap();
        OpenLevel::new("t.level", doc)
    }

    fn set(entities: &[&str], value: serde_json::Value) -> Action {
        Action::SetField {
            entities: entities.iter().map(|e| (*e).to_owned()).collect(),
            component: "transform".into(),
            instance: None,
            field: "position".into(),
            value,
            continuing: true,
        }
    }

    fn planned(action: Action) -> LevelEdit {
        match plan(action, (&level(), &builtins()), &[], &|_| None) {
            Ok(Planned::Edit(edit)) => *edit,
            other => panic!("not an edit: {other:?}"),
        }
    }

    #[test]
    fn a_field_set_says_when_made_that_it_is_followed_field_by_field() {
        let edit = planned(set(&["a"], json!([2, 0, 0])));
        assert_eq!(
            edit.follow,
            Follow::Fields(vec![("a".into(), "transform".into())])
        );
        assert!(edit.continuing, "a drag frame merges into its gesture");
        // A part's field is an override of its instance: the instance is
        // compiled again.
        let part = planned(set(&["lamp/head"], json!([0, 1, 0])));
        assert_eq!(part.follow, Follow::Rebuild);
        let both = planned(set(&["a", "lamp/head"], json!([0, 1, 0])));
        assert_eq!(both.follow, Follow::Rebuild);
    }

    #[test]
    fn structural_edits_rebuild_and_say_what_to_select() {
        let renamed = planned(Action::Rename {
            entity: "a".into(),
            name: "Rock".into(),
        });
        assert_eq!(renamed.follow, Follow::Rebuild);
        assert_eq!(renamed.select, None);
        let made = planned(Action::CreateEntity {
            position: [0.0, 1.0, 0.0],
        });
        assert_eq!(made.follow, Follow::Rebuild);
        let selected = made.select.unwrap();
        assert_eq!(selected.len(), 1);
        assert_ne!(selected[0], "a");
    }

    #[test]
    fn nothing_changes_and_other_actions_are_handed_back() {
        assert!(matches!(
            plan(
                set(&["a"], json!([1, 0, 0])),
                (&level(), &builtins()),
                &[],
                &|_| None
            ),
            Ok(Planned::Nothing)
        ));
        assert!(matches!(
            plan(Action::EndGesture, (&level(), &builtins()), &[], &|_| None),
            Err(action) if matches!(*action, Action::EndGesture)
        ));
        assert!(matches!(
            plan(
                Action::Reparent {
                    entities: vec!["a".into()],
                    parent: Some("a".into()),
                    before: None,
                },
                (&level(), &builtins()),
                &[],
                &|_| None
            ),
            Ok(Planned::Refused(_))
        ));
    }
}
