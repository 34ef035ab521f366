//! Entity ids and the paths of prefab parts (`instance/part`).

use std::collections::HashSet;

/// A new authoring id from `base`: `base_` and six random hex digits (`rock_3fa91c`;
/// a number or such a suffix at the end of `base` is dropped first). Random, so
/// that two designers adding entities on two branches do not both make `rock_1`,
/// which would be two entities of one id when the branches merge (as Unity's file
/// ids and Godot's scene uids are random for the same reason).
pub fn unique_id(base: &str, taken: &HashSet<String>) -> String {
    let base = id_stem(base);
    let base = if base.is_empty() { "entity" } else { base };
    // Room for the suffix within an id's 64 characters.
    let base = &base[..base.len().min(48)];
    let random =
        std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), (base, taken.len()));
    (0u64..)
        .map(|k| {
            format!(
                "{base}_{:06x}",
                (random.wrapping_add(k.wrapping_mul(0x9e37_79b9))) & 0xff_ffff
            )
        })
        .find(|id| !taken.contains(id))
        .unwrap_or_else(|| base.to_owned())
}

/// `base` without a number, or an id's random suffix, at its end: `rock_2` and
/// `rock_3fa91c` are both `rock`.
fn id_stem(base: &str) -> &str {
    match base.rsplit_once('_') {
        Some((stem, tail))
            if !stem.is_empty()
                && (tail.chars().all(|c| c.is_ascii_digit())
                    || (tail.len() == 6 && tail.chars().all(|c| c.is_ascii_hexdigit()))) =>
        {
            stem
        }
        _ => base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '_'),
    }
}

/// `tree_01/trunk` -> (`tree_01`, `trunk`): the instance in the open file and the
/// override key of the part below it.
pub fn split_part(id: &str) -> Option<(&str, &str)> {
    id.split_once('/')
}
