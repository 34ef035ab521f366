//! What `kiln check` reports ([`Finding`], `finding.rs`) and how it works it out
//! from the index and its resolved references (`checks.rs`).

mod checks;
mod finding;

pub(crate) use checks::can_follow_contents_change;
pub use checks::{check, check_changed, replacement_text, roots};
pub(crate) use finding::SharedStrings;
pub use finding::{Finding, Place};
