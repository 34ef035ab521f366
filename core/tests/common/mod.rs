//! Strategies shared by the spawn tests.

use proptest::prelude::*;

/// A random forest of `n` entities in parents-first order: entity k's parent is
/// one of the entities before it, or none.
pub fn parents_first(n: usize) -> Vec<BoxedStrategy<Option<usize>>> {
    (0..n)
        .map(|k| {
            if k == 0 {
                Just(None).boxed()
            } else {
                proptest::option::of(0..k).boxed()
            }
        })
        .collect()
}
