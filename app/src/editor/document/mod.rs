//! The open level's document as the editor edits it: entity ids, the paths of
//! prefab parts (`instance/part`), the overridden fields an instance keeps for its
//! parts, and the reversible edits ([`DocEdit`]) every change of it is made of.
//! Below the history and the editor's model, which all use them.

mod edit;
mod ids;
mod overrides;

pub use edit::DocEdit;
pub use ids::{split_part, unique_id};
pub use overrides::{override_of, set_override};

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use kiln_core::LevelDocument;
    use serde_json::Value;
    use std::collections::HashSet;

    #[test]
    fn new_ids_are_random_so_that_two_branches_do_not_make_the_same_one() {
        let taken: HashSet<String> = HashSet::new();
        let a = unique_id("rock_2", &taken);
        let b = unique_id("rock_2", &taken);
        assert!(
            a.starts_with("rock_") && a.len() == "rock_".len() + 6,
            "{a}"
        );
        assert_ne!(a, b, "two processes (branches) make two ids");
        assert!(
            unique_id(&a, &taken).starts_with("rock_") && !unique_id(&a, &taken).starts_with(&a)
        );
        assert!(kiln_core::level::valid_authoring_id(&unique_id(
            &"x".repeat(64),
            &taken
        )));
    }

    #[test]
    fn reverting_the_last_override_leaves_no_trace() {
        let text = r#"{"entities": [{"id": "t", "prefab": "units/tree"}]}"#;
        let before = LevelDocument::parse(text, "a.level").unwrap();
        let mut doc = before.clone();
        let v = Some(Value::from("materials/oak"));
        set_override(&mut doc, "t", "trunk", "mesh", "material", &v);
        assert_eq!(
            override_of(&doc, "t", "trunk", "mesh", "material"),
            v.clone()
        );
        set_override(&mut doc, "t", "trunk", "mesh", "material", &None);
        assert_eq!(doc, before);
    }
}
