//! Operations that change project files, on an open [`Checker`](crate::Checker):
//! moves and fixes, planned against its index and lookup (`plan.rs`) and applied
//! as one transaction through the write-ahead journal (`apply.rs`, with
//! `fs/journal.rs`), leaving the checker current; planned again where what a plan
//! was made on changed before it was applied (`replan.rs`).

mod apply;
mod plan;
mod replan;
#[cfg(test)]
mod tests;

pub use apply::{Operation, apply, apply_without_undo};
pub use plan::{
    Change, FileEdit, LogUpdate, MovePlan, MoveRequest, SkipReason, Skipped, UndoneMove, plan,
    plan_redirect_fixes, plan_repoint, plan_retarget,
};
pub use replan::{PLAN_ATTEMPTS, apply_planning_again};
