//! `kiln recover`: the journals of interrupted operations that could not be
//! rolled back whole (a file's folder replaced by a link, or moved out of the
//! project, while a move ran) are kept aside with their backups. This lists
//! them with what applying each would do, and applies or discards one.

use std::io::Write;
use std::path::Path;

use dependency_checker::fs::{Recovery, Restoration};

use crate::outcome::Outcome;

/// What `kiln recover` was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoverAction<'a> {
    /// List the set-aside journals and what applying each would do.
    Show,
    /// Put back what the named journal can still reach.
    Apply(&'a str),
    /// Delete the named journal, backups and all.
    Discard(&'a str),
}

/// Runs `kiln recover` on the project at `project`.
pub fn recover(
    project: &Path,
    action: RecoverAction,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let root = kiln_core::Project::open(project)?.root().to_owned();
    match action {
        RecoverAction::Show => show(&root, out),
        RecoverAction::Apply(folder) => {
            let recovered = dependency_checker::fs::apply_set_aside(&root, folder)?;
            match recovered {
                Recovery::RolledBack { restored } => {
                    writeln!(out, "{folder}: applied and removed")?;
                    for file in &restored {
                        writeln!(out, "  restored  {file}")?;
                    }
                    Ok(Outcome::Done)
                }
                Recovery::Partial {
                    restored,
                    not_restored,
                    folder: kept,
                } => {
                    writeln!(
                        out,
                        "{folder}: applied; what it still cannot reach is kept in {kept}"
                    )?;
                    for file in &restored {
                        writeln!(out, "  restored       {file}")?;
                    }
                    for (file, why) in &not_restored {
                        writeln!(out, "  not restored   {file}: {why}")?;
                    }
                    Ok(Outcome::Findings)
                }
                Recovery::Nothing => {
                    writeln!(out, "{folder}: nothing to apply")?;
                    Ok(Outcome::Done)
                }
                Recovery::SetAside {
                    folder: kept,
                    reason,
                } => {
                    writeln!(out, "{folder}: cannot be used ({reason}); kept in {kept}")?;
                    Ok(Outcome::Findings)
                }
            }
        }
        RecoverAction::Discard(folder) => {
            dependency_checker::fs::discard_set_aside(&root, folder)?;
            writeln!(
                out,
                "{folder}: deleted; the files it named stay as they are"
            )?;
            Ok(Outcome::Done)
        }
    }
}

/// Lists each set-aside journal with what applying it would do.
fn show(root: &Path, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let journals = dependency_checker::fs::preview_set_aside(root);
    if journals.is_empty() {
        writeln!(
            out,
            "no set-aside journals: every interrupted operation was rolled back"
        )?;
        return Ok(Outcome::Done);
    }
    for journal in &journals {
        writeln!(out, "{}: {}", journal.folder, journal.reason)?;
        if let Some(why) = &journal.unusable {
            writeln!(out, "  cannot be applied: {why}; only discarded")?;
        }
        for (file, what) in &journal.entries {
            match what {
                Restoration::Restore => writeln!(out, "  would restore   {file}")?,
                Restoration::Remove => {
                    writeln!(out, "  would remove    {file} (the operation made it)")?
                }
                Restoration::MoveBack { to } => writeln!(out, "  would move back {file} -> {to}")?,
                Restoration::ChangedSince => {
                    writeln!(out, "  keeps           {file} (saved since the operation)")?
                }
                Restoration::Unreachable(why) => writeln!(out, "  cannot reach    {file}: {why}")?,
            }
        }
        writeln!(
            out,
            "  kiln recover --apply {0} puts back what it can reach; kiln recover --discard {0} deletes it",
            journal.folder
        )?;
    }
    Ok(Outcome::Findings)
}
