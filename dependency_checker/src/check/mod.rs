//! What `kiln check` reports ([`Finding`]) and how it works it out from the
//! index and its resolved references.

mod findings;

pub use findings::{Finding, Place, check, check_changed, replacement_text, roots};
pub(crate) use findings::{SharedStrings, can_follow_contents_change};
