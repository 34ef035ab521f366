//! What the editor says to the user and asks of the view: the log panel's lines,
//! toasts, and one-shot effects the view takes after the frame's actions. Every
//! other part writes here; nothing here reads another part.

/// How bad a log line or toast is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Information.
    Info,
    /// Something to look at.
    Warning,
    /// Something failed.
    Error,
}

/// One line of the log panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// How bad.
    pub severity: Severity,
    /// What happened.
    pub text: String,
}

/// Something applying an action asks of the view, once: the view takes these after
/// applying the frame's actions ([`super::Editor::take_effects`]). One-shot
/// requests live here rather than as flags in the state.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Point the camera at the selection (or the whole level when nothing is
    /// selected).
    FrameSelection,
    /// Open the name field of this entity in the scene tree.
    BeginRename(String),
    /// Show a message for a few seconds (it is in the log too).
    Toast(LogLine),
    /// Select a file (or a folder: `path/`) in the asset browser and show it (a file
    /// just made, copied or imported).
    ShowFile(String),
    /// Open a level or unit, asking about unsaved edits first (one just made).
    OpenLevel(String),
    /// Put this text on the system clipboard (copied entities).
    CopyText(String),
    /// Files moved (old, new): what shows them (the asset browser's selection, the
    /// inspector) follows them.
    FilesMoved(Vec<(String, String)>),
    /// Files or folders deleted: what showed them (the asset browser's selection,
    /// the inspector) lets them go.
    FilesDeleted(Vec<String>),
    /// The open level has merge conflicts: show them.
    ShowConflicts,
}

/// The log and the effects waiting for the view.
#[derive(Debug, Default)]
pub struct Outbox {
    log: Vec<LogLine>,
    effects: Vec<Effect>,
}

impl Outbox {
    /// The log panel's lines.
    pub fn log(&self) -> &[LogLine] {
        &self.log
    }

    /// Logs `text`; with `toast`, shows it for a few seconds too.
    pub fn note(&mut self, severity: Severity, text: impl Into<String>, toast: bool) {
        let text = text.into();
        if toast {
            self.effects.push(Effect::Toast(LogLine {
                severity,
                text: text.clone(),
            }));
        }
        self.log.push(LogLine { severity, text });
    }

    /// Logs an error and shows it as a toast.
    pub fn error(&mut self, text: impl Into<String>) {
        self.note(Severity::Error, text, true);
    }

    /// Logs a warning and shows it as a toast.
    pub fn warn(&mut self, text: impl Into<String>) {
        self.note(Severity::Warning, text, true);
    }

    /// Logs information.
    pub fn info(&mut self, text: impl Into<String>) {
        self.note(Severity::Info, text, false);
    }

    /// Logs lines without toasts.
    pub fn extend(&mut self, lines: impl IntoIterator<Item = LogLine>) {
        self.log.extend(lines);
    }

    /// Asks the view for `effect` once.
    pub fn push(&mut self, effect: Effect) {
        self.effects.push(effect);
    }

    /// What was asked of the view since the last call.
    pub fn take_effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.effects)
    }
}
