//! Queries served by a running `kiln watch`: `kiln check`, `refs`, `deps` and `mv`
//! answered from its index in memory instead of by a process that loads and checks
//! the whole index first.
//!
//! A command started in a terminal costs what the project costs: it reads the cache
//! and stats every file before it can trust a single answer (see `BENCHMARKS.md`).
//! A `kiln watch` running beside it already has the index current, so it answers, as
//! watchman and rust-analyzer answer their clients, over a Unix socket at
//! [`SOCKET`]. Freshness is settled the way git's fsmonitor settles it: before
//! answering, the server writes a sync cookie under `.kiln/` and waits until its
//! watcher reports it; every change made before the question was asked has then
//! been folded in.
//!
//! The answer is exactly what the command would print by itself (the same functions
//! print it), so a client prints it and exits with its status. Without a server, or
//! when anything about the socket is off (a link or a plain file in its place, a
//! server that died), the command does the work itself. `KILN_SERVER=off` always
//! does; `KILN_SERVER=require` fails rather than work alone (tests and benchmarks
//! use it to know which path they measure).

use kiln_core::os::LocalStream;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use anyhow::Context;
use dependency_checker::Checker;
use dependency_checker::watch::SyncCookies;
use serde::{Deserialize, Serialize};

use crate::checker_reports::{self, CheckOptions, MoveOptions, PluginReport};
use crate::outcome::Outcome;

/// The server's socket, relative to the project root.
pub const SOCKET: &str = kiln_core::own_folder::QUERY_SOCKET;

/// The largest request a server reads (a `kiln mv` of many files is a few KB).
const MAX_REQUEST: u64 = 1 << 20;

/// How long a server waits for its watcher to report a sync cookie before it
/// re-walks the project instead (an event lost to a full queue).
const COOKIE_PATIENCE: Duration = Duration::from_secs(1);

/// How long a question waits for the loop that owns the index to take it up. An
/// editor whose frame loop is held (a modal dialog, a test that drives it) or a
/// `kiln watch` compiling a huge level declines, and the client works alone.
const CLAIM_PATIENCE: Duration = Duration::from_secs(3);

/// Where a question is: waiting, taken up by the owner (it will be answered), or
/// given up by the server (it never will be, and the client works alone).
const WAITING: u8 = 0;
const CLAIMED: u8 = 1;
const ABANDONED: u8 = 2;

/// A question a client asks: one of the checker commands with its options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Query {
    /// `kiln check`.
    Check(CheckOptions),
    /// `kiln refs RESOURCE`.
    Refs {
        /// The file or folder.
        resource: String,
        /// `--json`.
        json: bool,
    },
    /// `kiln deps RESOURCE`.
    Deps {
        /// The file or folder.
        resource: String,
        /// `--json`.
        json: bool,
    },
    /// `kiln mv PATHS...`.
    Mv {
        /// OLD NEW, or SOURCE... FOLDER.
        paths: Vec<String>,
        /// `--dry-run`, `--json`.
        options: MoveOptions,
    },
}

impl Query {
    /// Whether answering it may change project files.
    fn changes_files(&self) -> bool {
        match self {
            Query::Check(o) => o.fix && !o.dry_run,
            Query::Mv { options, .. } => !options.dry_run,
            Query::Refs { .. } | Query::Deps { .. } => false,
        }
    }
}

/// What a command printed and its exit status.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Answer {
    /// Exit status ([`Outcome::exit_status`]): a number on the wire, as a
    /// process would give it.
    pub status: u8,
    /// What it printed on standard output.
    pub stdout: String,
    /// What it printed on standard error.
    pub stderr: String,
}

/// What a server sends back.
#[derive(Debug, Serialize, Deserialize)]
enum Reply {
    /// The command's output.
    Answer(Answer),
    /// Not taken up in time, and never will be: the client works alone.
    Declined,
    /// The client's own verdict: the server went away after the question was sent,
    /// so whether a move was applied is unknown. The client works alone, which
    /// first rolls back any half-done move from its journal, then plans against
    /// the disk as it is (a move already done finds nothing to move).
    #[serde(skip)]
    Broken,
}

#[derive(Serialize, Deserialize)]
struct Request {
    /// The protocol's version: a server answers only its own.
    kiln_query: u32,
    query: Query,
}

const PROTOCOL: u32 = 1;

/// Whether commands ask a running server (`KILN_SERVER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerUse {
    /// Ask one if it runs, else work alone (the default).
    Auto,
    /// Always work alone (`KILN_SERVER=off`).
    Off,
    /// Fail when no server answers (`KILN_SERVER=require`).
    Require,
}

impl ServerUse {
    /// From the environment.
    pub fn from_env() -> Self {
        match std::env::var("KILN_SERVER").as_deref() {
            Ok("off") | Ok("0") => ServerUse::Off,
            Ok("require") => ServerUse::Require,
            _ => ServerUse::Auto,
        }
    }
}

/// The socket of the project at `project`, if one is there to be asked: a real
/// `.kiln` folder holding a socket (never a link, which could lead anywhere).
fn socket_of(project: &Path) -> Option<PathBuf> {
    dependency_checker::fs::existing_kiln_dir(project)?;
    let path = project.join(SOCKET);
    kiln_core::os::is_socket(&path).then_some(path)
}

/// Asks the server running on `project` (if any, see [`ServerUse`]); `None` means
/// the caller answers by itself.
pub fn ask(project: &Path, query: &Query) -> anyhow::Result<Option<Answer>> {
    let usage = ServerUse::from_env();
    if usage == ServerUse::Off {
        return Ok(None);
    }
    let reply = socket_of(project).and_then(|socket| ask_at(&socket, query));
    match (reply, usage) {
        (Some(Reply::Answer(a)), _) => Ok(Some(a)),
        (Some(Reply::Declined), ServerUse::Require) => anyhow::bail!(
            "the kiln watch or editor on {} was too busy to answer (KILN_SERVER=require)",
            project.display()
        ),
        (None, ServerUse::Require) => anyhow::bail!(
            "no running kiln watch answered on {} (KILN_SERVER=require)",
            project.join(SOCKET).display()
        ),
        (Some(Reply::Broken), ServerUse::Require) => anyhow::bail!(
            "the kiln watch or editor on {} did not reply (KILN_SERVER=require)",
            project.display()
        ),
        (Some(Reply::Broken), _) => {
            eprintln!("note: the kiln watch or editor answering this did not reply; working alone");
            Ok(None)
        }
        (_, _) => Ok(None),
    }
}

fn ask_at(socket: &Path, query: &Query) -> Option<Reply> {
    let mut stream = LocalStream::connect(socket).ok()?;
    // Only a server of this user: anyone else's answers (or a socket they put
    // there) are not trusted.
    if !kiln_core::os::owned_by_me(socket) {
        return None;
    }
    stream
        .set_write_timeout(Some(Duration::from_secs(5)))
        .ok()?;
    // The server answers or declines within its patience. A question that changes
    // nothing is answered here instead if it does not (a server stopped with
    // SIGSTOP); a move is waited for: it may be under way, and doing it twice would
    // be wrong.
    if !query.changes_files() {
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .ok()?;
    }
    let mut line = serde_json::to_vec(&Request {
        kiln_query: PROTOCOL,
        query: query.clone(),
    })
    .ok()?;
    line.push(b'\n');
    stream.write_all(&line).ok()?;
    stream.finish_writing().ok()?;
    // From here on the server may be acting on the question.
    let mut reply = Vec::new();
    if stream.read_to_end(&mut reply).is_err() {
        return Some(Reply::Broken);
    }
    Some(serde_json::from_slice(&reply).unwrap_or(Reply::Broken))
}

/// What answers the questions a server takes up: `kiln watch` ([`CheckerAnswers`])
/// or the open editor, which makes a served `kiln mv` a step of its undo history.
/// The server and its [`Answering`] side stay outside whatever answers.
pub trait Answerer {
    /// The checker the answers come from.
    fn checker(&mut self) -> anyhow::Result<&mut Checker>;
    /// Answers `query` as the command alone would print it.
    fn answer(&mut self, query: &Query) -> Answer;
}

/// `kiln watch`'s [`Answerer`]: its checker, and why the project's plugins did not
/// load.
#[derive(Debug)]
pub struct CheckerAnswers<'a> {
    /// The index the answers come from.
    pub checker: &'a mut Checker,
    /// Why plugins did not load, and which loaded with a caveat (`check` lists
    /// them).
    pub plugins: &'a PluginReport,
}

impl Answerer for CheckerAnswers<'_> {
    fn checker(&mut self) -> anyhow::Result<&mut Checker> {
        Ok(self.checker)
    }

    fn answer(&mut self, query: &Query) -> Answer {
        let (checker, plugins) = (&mut *self.checker, self.plugins);
        answer(query, plugins, |query, out, err| {
            run_on_checker(checker, plugins, query, out, err)
        })
    }
}

/// Runs `query` on `checker` as the command would, printing on `out` and `err`; a
/// move is applied without an undo step.
pub fn run_on_checker(
    checker: &mut Checker,
    plugins: &PluginReport,
    query: &Query,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    match query {
        Query::Check(options) => {
            checker_reports::check_with(checker, plugins, *options, (out, err))
        }
        Query::Refs { resource, json } => checker_reports::refs_with(checker, resource, *json, out),
        Query::Deps { resource, json } => checker_reports::deps_with(checker, resource, *json, out),
        Query::Mv { paths, options } => {
            let mut mover = checker_reports::CheckerMover {
                checker,
                reread: |checker: &mut Checker| Ok(checker.rescan()?),
            };
            checker_reports::mv_with(&mut mover, paths, *options, (out, err))
        }
    }
}

/// Runs `query` with `run` and captures what it prints, as the command would
/// print it by itself; `plugins` say why plugins of the project did not load, and
/// which loaded with a caveat.
pub fn answer(
    query: &Query,
    plugins: &PluginReport,
    run: impl FnOnce(&Query, &mut dyn Write, &mut dyn Write) -> anyhow::Result<Outcome>,
) -> Answer {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    // As `plugins::report` says them: `check` lists them among its findings.
    if !matches!(query, Query::Check(_)) {
        for w in &plugins.warnings {
            let _ = writeln!(err, "warning: {w}");
        }
        for e in &plugins.errors {
            let _ = writeln!(err, "error: {e}");
        }
    }
    let mut notes = Vec::new();
    let result = run(query, &mut out, &mut notes);
    err.extend(notes);
    let outcome = result.unwrap_or_else(|e| {
        let _ = writeln!(err, "error: {e:#}");
        Outcome::Failed
    });
    Answer {
        status: outcome.exit_status(),
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
    }
}

/// A question waiting for the watcher to catch up; the loop that owns the checker
/// answers it (see [`Answering`]).
#[derive(Debug)]
pub struct PendingQuery {
    query: Query,
    /// The sync cookie written after the question was queued.
    cookie: u64,
    /// [`WAITING`], [`CLAIMED`] or [`ABANDONED`].
    state: Arc<AtomicU8>,
    asked: Instant,
    reply: Sender<Answer>,
}

/// A running server: the socket and the thread that accepts on it. Dropping it
/// removes the socket (if it is still this server's).
#[derive(Debug)]
pub struct QueryServer {
    path: PathBuf,
    inode: u64,
}

impl QueryServer {
    /// Serves the project at `root`: questions go to `queries`, each after a sync
    /// cookie written with `cookies`. Fails when another server already answers
    /// there or the socket cannot be made (the caller goes on without serving).
    pub fn start(
        root: &Path,
        cookies: SyncCookies,
        queries: Sender<PendingQuery>,
    ) -> anyhow::Result<Self> {
        if dependency_checker::fs::existing_kiln_dir(root).is_none() {
            anyhow::bail!(
                "{} is not a folder",
                root.join(kiln_core::own_folder::DIR).display()
            );
        }
        let path = root.join(SOCKET);
        match std::fs::symlink_metadata(&path) {
            Err(_) => {}
            Ok(_) if kiln_core::os::is_socket(&path) => {
                if LocalStream::connect(&path).is_ok() {
                    anyhow::bail!(
                        "another kiln watch already answers queries on {}",
                        path.display()
                    );
                }
                // Left by a server that was killed: nobody listens.
                std::fs::remove_file(&path)
                    .with_context(|| format!("removing the stale {}", path.display()))?;
            }
            Ok(_) => anyhow::bail!(
                "{} is not a socket; remove it to let kiln watch answer queries",
                path.display()
            ),
        }
        // Only this user may ask (a move changes their files).
        let (listener, inode) = kiln_core::os::listen_private(&path)
            .with_context(|| format!("listening on {}", path.display()))?;
        std::thread::Builder::new()
            .name("kiln-query-server".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    let (cookies, queries) = (cookies.clone(), queries.clone());
                    let _ = std::thread::Builder::new()
                        .name("kiln-query".into())
                        .spawn(move || serve_one(stream, &cookies, &queries));
                }
            })
            .context("starting the query server")?;
        Ok(QueryServer { path, inode })
    }
}

impl Drop for QueryServer {
    fn drop(&mut self) {
        if kiln_core::os::is_entry(&self.path, self.inode) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Reads one question from `stream`, has it answered, writes the answer.
fn serve_one(stream: LocalStream, cookies: &SyncCookies, queries: &Sender<PendingQuery>) {
    let peer_is_me = stream.peer_is_me();
    let reply = if peer_is_me {
        ask_owner(&stream, cookies, queries)
    } else {
        Reply::Answer(Answer {
            status: Outcome::Failed.exit_status(),
            stderr: "error: kiln watch answers only its own user\n".into(),
            ..Answer::default()
        })
    };
    let mut stream = stream;
    if let Ok(bytes) = serde_json::to_vec(&reply) {
        let _ = stream.write_all(&bytes);
    }
}

fn ask_owner(stream: &LocalStream, cookies: &SyncCookies, queries: &Sender<PendingQuery>) -> Reply {
    let refuse = |why: String| {
        Reply::Answer(Answer {
            status: Outcome::Failed.exit_status(),
            stderr: format!("error: {why}\n"),
            ..Answer::default()
        })
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut line = String::new();
    if BufReader::new(stream.take(MAX_REQUEST))
        .read_line(&mut line)
        .is_err()
    {
        return refuse("the question could not be read".into());
    }
    let request: Request = match serde_json::from_str(&line) {
        Ok(r) => r,
        Err(e) => return refuse(format!("not a question kiln watch understands: {e}")),
    };
    if request.kiln_query != PROTOCOL {
        return refuse(format!(
            "this kiln watch speaks protocol {PROTOCOL}, not {}",
            request.kiln_query
        ));
    }
    // The question is queued before its cookie is written, so the batch that
    // reports the cookie always finds it waiting.
    let n = cookies.reserve();
    let (reply, answered) = mpsc::channel();
    let state = Arc::new(AtomicU8::new(WAITING));
    let pending = PendingQuery {
        query: request.query,
        cookie: n,
        asked: Instant::now(),
        state: Arc::clone(&state),
        reply,
    };
    if queries.send(pending).is_err() {
        return refuse("kiln watch is stopping".into());
    }
    // Unwritten, the cookie never comes: the question is answered after a re-walk
    // once the owner's patience runs out.
    let _ = cookies.write(n);
    let stopped = || refuse("kiln watch stopped before answering".into());
    let reply = match answered.recv_timeout(CLAIM_PATIENCE) {
        Ok(answer) => Reply::Answer(answer),
        Err(mpsc::RecvTimeoutError::Disconnected) => stopped(),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            // Give the question up, unless the owner has just taken it: then its
            // answer comes, however long it takes.
            match state.compare_exchange(WAITING, ABANDONED, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => Reply::Declined,
                Err(_) => answered.recv().map_or_else(|_| stopped(), Reply::Answer),
            }
        }
    };
    cookies.remove(n);
    reply
}

/// The owner's side: questions waiting for their cookies, answered once the
/// watcher's batches show them (see [`Answering::answer_ready`]).
#[derive(Debug)]
pub struct Answering {
    cookies: SyncCookies,
    queries: Receiver<PendingQuery>,
    waiting: Vec<PendingQuery>,
    /// Cookies the watcher reported before their question was taken from the
    /// channel.
    seen: HashSet<u64>,
}

impl Answering {
    /// The channel end a [`QueryServer`] sends to, and the owner's side, which
    /// writes its own cookies with `cookies` (those of the owner's watcher).
    pub fn new(cookies: SyncCookies) -> (Sender<PendingQuery>, Self) {
        let (tx, queries) = mpsc::channel();
        (
            tx,
            Answering {
                cookies,
                queries,
                waiting: Vec::new(),
                seen: HashSet::new(),
            },
        )
    }

    /// Whether questions are waiting (the owner should wake often).
    pub fn busy(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Notes the cookies a batch (already applied to the answerer's checker) completes, then
    /// answers every question whose cookie has come through. A question whose
    /// cookie is lost or could not be written is answered after a re-walk. Files a
    /// move changed come back through the owner's next batches, as any change.
    pub fn answer_ready(
        &mut self,
        answerer: &mut dyn Answerer,
        synced: &[u64],
    ) -> anyhow::Result<()> {
        self.seen.extend(synced);
        self.waiting.extend(self.queries.try_iter());
        let mut rest = Vec::new();
        let mut rescanned = false;
        for mut q in std::mem::take(&mut self.waiting) {
            let ready = self.seen.remove(&q.cookie);
            let lost = q.asked.elapsed() > COOKIE_PATIENCE;
            if !ready && !lost {
                rest.push(q);
                continue;
            }
            let root = answerer.checker()?.project().root().to_owned();
            if Checker::operation_in_progress(&root) {
                // A move in another process is under way (or was cut short by a
                // crash): the index may hold half of it. Wait for it to commit (or
                // roll it back), then sync again, so the answer sees all of it.
                drop(Checker::committed_state(&root, &|| {})?);
                q.cookie = self.cookies.reserve();
                q.asked = Instant::now();
                let _ = self.cookies.write(q.cookie);
                rest.push(q);
                continue;
            }
            let taken = q
                .state
                .compare_exchange(WAITING, CLAIMED, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
            if !taken {
                // Given up: the client works alone.
                continue;
            }
            if !ready && !rescanned {
                answerer.checker()?.rescan()?;
                rescanned = true;
            }
            let answer = answerer.answer(&q.query);
            let _ = q.reply.send(answer);
        }
        self.waiting = rest;
        // Cookies of questions that were never taken (a client that went away) do
        // not pile up.
        if self.waiting.is_empty() && self.seen.len() > 1024 {
            self.seen.clear();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dependency_checker::BuildOptions;
    use dependency_checker::watch::{Debounce, ProjectWatcher};

    fn pending(cookie: u64, state: u8) -> (PendingQuery, Receiver<Answer>) {
        let (reply, answered) = mpsc::channel();
        let query = Query::Refs {
            resource: "a.material".into(),
            json: false,
        };
        let q = PendingQuery {
            query,
            cookie,
            asked: Instant::now(),
            state: Arc::new(AtomicU8::new(state)),
            reply,
        };
        (q, answered)
    }

    #[test]
    fn a_question_given_up_is_never_answered_and_one_waiting_is_answered_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("kiln.project"), "{}").unwrap();
        std::fs::write(dir.path().join("a.material"), "{}").unwrap();
        let registry = Arc::new(kiln_core::Registry::with_builtins());
        let mut checker = Checker::open(dir.path(), registry, &BuildOptions::default()).unwrap();
        let watcher = ProjectWatcher::start(dir.path(), Debounce::default()).unwrap();
        let (tx, mut answering) = Answering::new(watcher.sync_cookies());
        let (given_up, given_up_answer) = pending(7, ABANDONED);
        let (waiting, waiting_answer) = pending(8, WAITING);
        let waiting_state = Arc::clone(&waiting.state);
        tx.send(given_up).unwrap();
        tx.send(waiting).unwrap();
        let mut answers = CheckerAnswers {
            checker: &mut checker,
            plugins: &PluginReport::default(),
        };
        answering.answer_ready(&mut answers, &[7, 8]).unwrap();
        assert!(given_up_answer.try_recv().is_err());
        let answer = waiting_answer.try_recv().unwrap();
        assert!(
            answer.stdout.contains("0 references to a.material"),
            "{answer:?}"
        );
        assert_eq!(waiting_state.load(Ordering::Acquire), CLAIMED);
        assert!(!answering.busy());
    }
}
