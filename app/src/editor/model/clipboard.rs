//! Entities copied and pasted: kept in the editor, and put on the system
//! clipboard as JSON under one key, so that another Kiln window can paste them.
//! Text pasted from the system clipboard is anyone's: its ids are checked before
//! anything of it reaches the level.

use kiln_core::EntityDocument;

use super::open_level::OpenLevel;

/// The key that marks entities copied to the system clipboard.
const CLIPBOARD_KEY: &str = "kiln_entities";

/// The selected entities of `level` with everything below them, and the text
/// that puts them on the system clipboard (none where nothing is selected).
pub(super) fn copy(level: &OpenLevel) -> (Vec<EntityDocument>, Option<String>) {
    let copied = level.selected_subtrees();
    if copied.is_empty() {
        return (copied, None);
    }
    let wrapped = serde_json::json!({ CLIPBOARD_KEY: copied });
    let text = serde_json::to_string_pretty(&wrapped).ok();
    (copied, text)
}

/// The entities copied in Kiln that `text` (the system clipboard) holds: `None`
/// where it holds none (then the ones copied here last are pasted), an error
/// where one of their ids is not an authoring id or comes twice.
pub(super) fn pasted(text: &str) -> Option<Result<Vec<EntityDocument>, String>> {
    #[derive(serde::Deserialize)]
    struct Copied {
        kiln_entities: Vec<EntityDocument>,
    }
    let copied = serde_json::from_str::<Copied>(text).ok()?.kiln_entities;
    if copied.is_empty() {
        return None;
    }
    let mut seen = std::collections::HashSet::new();
    let bad = copied
        .iter()
        .find(|e| !kiln_core::level::valid_authoring_id(&e.id) || !seen.insert(e.id.as_str()));
    Some(match bad {
        Some(bad) => Err(format!(
            "cannot paste: the copied entity id \"{}\" is not a valid authoring id or comes twice",
            bad.id
        )),
        None => Ok(copied),
    })
}
