//! The editor answering `kiln` commands typed in a terminal (the server itself is
//! `editor/command_server.rs`, outside the editor's state). A served `kiln mv` is
//! a move like one made in the editor: one step of its undo history, followed by
//! the problems, the asset tree and the open level. Other commands read the
//! editor's index; whatever they change (a served `check --fix`) is followed as a
//! change made outside.

use anyhow::Context as _;
use dependency_checker::Checker;
use dependency_checker::ops::MovePlan;

use super::Editor;
use super::parts::ChangedBy;
use crate::checker_reports::{self, Mover};
use crate::query_service::{self, Answer, Answerer, Query};

impl Answerer for Editor {
    fn checker(&mut self) -> anyhow::Result<&mut Checker> {
        self.files
            .checker
            .as_mut()
            .context("the project is not indexed")
    }

    fn answer(&mut self, query: &Query) -> Answer {
        let plugins = crate::checker_reports::PluginReport {
            errors: self.plugins.errors().to_vec(),
            warnings: self.plugins.warnings().to_vec(),
            libraries: crate::plugins::libraries_fingerprint(self.plugins.loaded()),
            some_not_loaded: self.plugins.some_not_loaded(self.files.project.config()),
        };
        match query {
            Query::Mv { paths, options } => {
                query_service::answer(query, &plugins, |_, out, err| {
                    checker_reports::mv_with(self, paths, *options, (out, err))
                })
            }
            _ => {
                let answer = query_service::answer(query, &plugins, |query, out, err| {
                    let checker = self
                        .files
                        .checker
                        .as_mut()
                        .context("the project is not indexed")?;
                    query_service::run_on_checker(checker, &plugins, query, out, err)
                });
                let changed = self.files.checker.as_mut().map(Checker::take_changed);
                if let Some(changed) = changed {
                    let (mut parts, history) = self.split();
                    let by = ChangedBy::Outside {
                        first_event: None,
                        history,
                    };
                    parts.follow_files(&changed, by);
                }
                answer
            }
        }
    }
}

/// The editor moves for a served `kiln mv` as for its own rename dialog.
impl Mover for Editor {
    fn checker(&mut self) -> anyhow::Result<&mut Checker> {
        Answerer::checker(self)
    }

    fn apply(&mut self, plan: &MovePlan) -> anyhow::Result<()> {
        let (mut parts, history) = self.split();
        parts.apply_move(plan, history)?;
        // Followed as the editor's own change already.
        if let Some(checker) = &mut self.files.checker {
            checker.take_changed();
        }
        Ok(())
    }

    fn reread(&mut self) -> anyhow::Result<()> {
        // A refused apply read the project again already (`apply_plan`): only
        // another operation since makes it read again.
        Answerer::checker(self)?.catch_up()?;
        Ok(())
    }
}
