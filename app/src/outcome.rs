//! What a command came to, and the exit status each outcome gives: the one place
//! that numbers them. Commands return an [`Outcome`]; `cli.rs` turns it (or an
//! error) into the process's status, and a served command's answer carries the
//! same number to the client.

/// How a command that ran to its end came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything worked: exit status 0.
    Done,
    /// The command ran and found problems (findings, a level that did not
    /// compile, a merge with conflicts, a difference): exit status 1.
    Findings,
    /// The command failed and has said why (usage and I/O errors, and a served
    /// command whose server reported its error): exit status 2.
    Failed,
}

impl Outcome {
    /// `Findings` when `found`, else `Done`.
    pub fn findings_if(found: bool) -> Self {
        if found {
            Outcome::Findings
        } else {
            Outcome::Done
        }
    }

    /// The process exit status.
    pub fn exit_status(self) -> u8 {
        match self {
            Outcome::Done => 0,
            Outcome::Findings => 1,
            Outcome::Failed => 2,
        }
    }

    /// The outcome a served command's status stands for (any unknown number is a
    /// failure).
    pub fn from_exit_status(status: u8) -> Self {
        match status {
            0 => Outcome::Done,
            1 => Outcome::Findings,
            _ => Outcome::Failed,
        }
    }
}
