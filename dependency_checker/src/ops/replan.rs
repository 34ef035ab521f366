//! Applying a plan, and planning again when what it was planned on changed: the
//! one loop `kiln mv`, `kiln check --fix` and the editor's moves and fixes share.
//! Another process (a second `kiln mv`, an editor saving) may change a file to
//! patch between planning and applying; the apply then refuses, changing nothing
//! ([`CheckerError::asks_to_plan_again`]), and the operation is planned again from
//! what is on disk now, a bounded number of times.

use super::MovePlan;
use crate::error::CheckerError;

/// How many times an operation is planned again before its refusal is returned.
pub const PLAN_ATTEMPTS: usize = 5;

/// Applies `plan` on `ctx` with `apply`. Where the apply is refused because what
/// the plan was made on changed (`refusal` finds the [`CheckerError`] in an
/// error, if there is one), `plan_again` reads the project again and plans anew
/// into `plan`, and the new plan is applied; at most [`PLAN_ATTEMPTS`] times. On
/// return `plan` is the plan that was applied (or last refused).
pub fn apply_planning_again<C: ?Sized, T, E>(
    ctx: &mut C,
    plan: &mut MovePlan,
    mut apply: impl FnMut(&mut C, &MovePlan) -> Result<T, E>,
    mut plan_again: impl FnMut(&mut C, &CheckerError) -> Result<MovePlan, E>,
    refusal: impl Fn(&E) -> Option<&CheckerError>,
) -> Result<T, E> {
    let mut attempts = 0;
    loop {
        let refused = match apply(ctx, plan) {
            Ok(done) => return Ok(done),
            Err(e) => e,
        };
        match refusal(&refused) {
            Some(stale) if stale.asks_to_plan_again() && attempts < PLAN_ATTEMPTS => {
                attempts += 1;
                *plan = plan_again(ctx, stale)?;
            }
            _ => return Err(refused),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn stale() -> CheckerError {
        CheckerError::Changed {
            file: "a.txt".into(),
        }
    }

    #[test]
    fn a_stale_plan_is_planned_again_a_bounded_number_of_times() {
        // Refused twice, then applied: planned again twice.
        let mut refusals = 2;
        let mut planned = 0;
        let mut plan = MovePlan::patches(Vec::new());
        let done = apply_planning_again(
            &mut (),
            &mut plan,
            |_, _| {
                if refusals > 0 {
                    refusals -= 1;
                    Err(stale())
                } else {
                    Ok("applied")
                }
            },
            |_, _| {
                planned += 1;
                Ok(MovePlan::patches(Vec::new()))
            },
            |e: &CheckerError| Some(e),
        );
        assert_eq!(done.ok(), Some("applied"));
        assert_eq!(planned, 2);

        // Always refused: given up after PLAN_ATTEMPTS new plans.
        let mut planned = 0;
        let gave_up = apply_planning_again(
            &mut (),
            &mut plan,
            |_, _| Err::<(), _>(stale()),
            |_, _| {
                planned += 1;
                Ok(MovePlan::patches(Vec::new()))
            },
            |e: &CheckerError| Some(e),
        );
        assert!(gave_up.is_err());
        assert_eq!(planned, PLAN_ATTEMPTS);
    }

    #[test]
    fn other_errors_are_not_planned_again() {
        let mut planned = 0;
        let mut plan = MovePlan::patches(Vec::new());
        let failed = apply_planning_again(
            &mut (),
            &mut plan,
            |_, _| {
                Err::<(), _>(CheckerError::Refused {
                    path: PathBuf::from("x"),
                    reason: "no".into(),
                })
            },
            |_, _| {
                planned += 1;
                Ok(MovePlan::patches(Vec::new()))
            },
            |e: &CheckerError| Some(e),
        );
        assert!(failed.is_err());
        assert_eq!(planned, 0);
    }
}
