//! Entity order: which entities a side moved, as the fewest moves that explain its
//! order (the rest keep their order: a longest increasing subsequence). A diff says
//! one line per move, and a merge carries one side's moves into the other's order.

/// Which items of `items` (ordered by their `.0`, all distinct) form one longest
/// strictly increasing subsequence: patience sorting, O(n log n).
pub(crate) fn longest_increasing<T>(items: &[(usize, T)]) -> Vec<bool> {
    // tails[l]: the index of the item ending the best run of length l + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut before: Vec<Option<usize>> = vec![None; items.len()];
    for (k, (key, _)) in items.iter().enumerate() {
        let at = tails.partition_point(|&t| items[t].0 < *key);
        before[k] = at.checked_sub(1).map(|p| tails[p]);
        if at == tails.len() {
            tails.push(k);
        } else {
            tails[at] = k;
        }
    }
    let mut keep = vec![false; items.len()];
    let mut at = tails.last().copied();
    while let Some(k) = at {
        keep[k] = true;
        at = before[k];
    }
    keep
}

/// The ids of `side` (in its order) that it moved relative to `base`: those of the
/// entities in both that are not in one longest run kept in base's order.
pub(crate) fn moved<'a>(
    base_index: impl Fn(&str) -> Option<usize>,
    side: impl Iterator<Item = &'a str>,
) -> Vec<&'a str> {
    let common: Vec<(usize, &str)> = side
        .filter_map(|id| base_index(id).map(|k| (k, id)))
        .collect();
    let keep = longest_increasing(&common);
    common
        .iter()
        .zip(keep)
        .filter(|(_, kept)| !kept)
        .map(|((_, id), _)| *id)
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn longest_increasing_keeps_the_most_in_order() {
        let items: Vec<(usize, ())> = [3, 1, 2, 5, 4, 6].iter().map(|&k| (k, ())).collect();
        let keep = longest_increasing(&items);
        assert_eq!(keep.iter().filter(|k| **k).count(), 4);
        let kept: Vec<usize> = items
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(i, _)| i.0)
            .collect();
        assert!(kept.windows(2).all(|w| w[0] < w[1]), "{kept:?}");
    }

    #[test]
    fn a_move_is_the_one_entity_moved() {
        let base = ["a", "b", "c", "d", "e"];
        let index = |id: &str| base.iter().position(|b| *b == id);
        assert_eq!(moved(index, ["a", "d", "b", "c", "e"].into_iter()), ["d"]);
        assert!(moved(index, ["a", "x", "c", "e"].into_iter()).is_empty());
        assert_eq!(moved(index, ["b", "a"].into_iter()).len(), 1);
    }
}
