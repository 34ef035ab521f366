//! Answers `kiln check`, `refs`, `deps` and `mv` typed in a terminal while the
//! editor is open, from the editor's index (see `query_service`). The server lives
//! beside the editor, not in its state: the window (or a test) holds both, and
//! once a frame hands the editor to [`CommandServer::serve`], which answers through
//! the editor as `kiln watch` answers through its checker (the `Answerer` trait).
//! A served `kiln mv` is then a step of the editor's undo history.

use anyhow::Context as _;

use super::model::Editor;
use crate::query_service::{Answering, QueryServer};

/// The socket and the questions waiting on it.
#[derive(Debug)]
pub struct CommandServer {
    // Held for its socket, which goes when it is dropped.
    _server: QueryServer,
    answering: Answering,
    /// Cookies reported while plugins were being built, answered once they are.
    held: Vec<u64>,
}

impl CommandServer {
    /// Starts answering for the project `editor` has open. Without it, commands in
    /// a terminal work alone: slower, as correct.
    pub fn start(editor: &Editor) -> anyhow::Result<Self> {
        let cookies = (editor.disk().sync_cookies())
            .context("the project's files are not watched, so answers could be stale")?;
        let (questions, answering) = Answering::new(cookies.clone());
        let server = QueryServer::start(editor.files().project().root(), cookies, questions)?;
        Ok(CommandServer {
            _server: server,
            answering,
            held: Vec::new(),
        })
    }

    /// Answers the questions whose sync cookies `editor`'s watcher has reported
    /// (call it after [`Editor::tick`], which folds the watcher's batches in).
    pub fn serve(&mut self, editor: &mut Editor) -> anyhow::Result<()> {
        let mut synced = editor.disk_mut().take_synced_cookies();
        if !editor.plugins().building().is_empty() {
            // A command started now would load the plugins as their sources are:
            // the answer waits for the build (and, past the client's patience,
            // the command works alone).
            self.held.append(&mut synced);
            return Ok(());
        }
        synced.append(&mut self.held);
        if synced.is_empty() && !self.answering.busy() {
            return Ok(());
        }
        self.answering.answer_ready(editor, &synced)
    }

    /// Whether a question waits to be answered: the window should wake within a
    /// second even if nothing else happens (a question whose sync cookie was lost
    /// is answered after that wait).
    pub fn busy(&self) -> bool {
        self.answering.busy()
    }
}
