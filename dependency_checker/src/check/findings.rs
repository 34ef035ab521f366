//! What `kiln check` reports: everything wrong or suspicious about a project's
//! references, each with the place and, where one exists, the fix.

use std::fmt;
use std::sync::Arc;

use kiln_core::ResourcePath;
use serde::{Deserialize, Serialize};

use crate::hash::FastSet;
use crate::index::Redirects;
use crate::index::{FileEntry, Index, WalkIssue};
use crate::resolve::{ResolvedReferences, Target};
use crate::scan::{Naming, RefView};

/// Where a reference is written.
///
/// The file, entity and component are shared strings: a move's plan holds a place
/// for each of the 250,000 references it patches in a big folder move, most of them
/// in files, entities and components it names many times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The file, from the project root.
    pub file: Arc<str>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in bytes) of the string's opening quote. In a `.glb` file,
    /// line and column are those of its JSON chunk.
    pub column: u32,
    /// JSON pointer to the value.
    pub pointer: String,
    /// Entity authoring id, in levels and units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity: Option<Arc<str>>,
    /// Component type, in levels and units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component: Option<Arc<str>>,
}

impl Place {
    /// The place of `r` in `file` (an index entry's path, shared).
    pub fn of(file: &Arc<str>, r: &RefView) -> Self {
        Self::with_strings(file, r, |s| Arc::from(s))
    }

    /// [`Place::of`], with the entity and component taken from `strings`.
    pub(crate) fn shared(file: &Arc<str>, r: &RefView, strings: &mut SharedStrings) -> Self {
        Self::with_strings(file, r, |s| strings.get(s))
    }

    fn with_strings(file: &Arc<str>, r: &RefView, mut share: impl FnMut(&str) -> Arc<str>) -> Self {
        Place {
            file: file.clone(),
            line: r.line,
            column: r.column,
            pointer: r.pointer.to_owned(),
            entity: r.entity.map(&mut share),
            component: r.component.map(&mut share),
        }
    }
}

/// One shared copy of each string given: what many places and changes repeat.
#[derive(Default)]
pub(crate) struct SharedStrings(crate::hash::FastSet<Arc<str>>);

impl SharedStrings {
    /// The shared copy of `s`.
    pub(crate) fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(shared) = self.0.get(s) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(s);
        self.0.insert(shared.clone());
        shared
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)?;
        match (&self.entity, &self.component) {
            (Some(e), Some(c)) => {
                write!(f, " (entity \"{e}\", component \"{c}\", {})", self.pointer)
            }
            (Some(e), None) => write!(f, " (entity \"{e}\", {})", self.pointer),
            _ => write!(f, " ({})", self.pointer),
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// A reference to a file that does not exist.
    Missing {
        /// Where.
        place: Place,
        /// The file it should name.
        target: String,
    },
    /// A reference to a path that was moved (per the redirect log).
    StaleRedirect {
        /// Where.
        place: Place,
        /// The old path it uses.
        old: String,
        /// The path the resource has now; `kiln check --fix` writes it.
        new: String,
        /// The replacement text for the reference.
        replacement: String,
    },
    /// A reference without extension that matches several files.
    Ambiguous {
        /// Where.
        place: Place,
        /// The text.
        text: String,
        /// The files it could mean.
        candidates: Vec<String>,
    },
    /// A reference that names an existing file, spelled in a way that is not a
    /// canonical path (`"textures/Bark.png"` naming `textures/Bark.png`). It is
    /// indexed and patched on moves like any other; renaming the file to its
    /// canonical name fixes both.
    NonCanonicalReference {
        /// Where.
        place: Place,
        /// The text.
        text: String,
        /// The file it names.
        target: String,
        /// The text once the file has its canonical name, where one exists.
        canonical: Option<String>,
    },
    /// A typed reference that is not a canonical path.
    InvalidReference {
        /// Where.
        place: Place,
        /// The text.
        text: String,
        /// Why, with the canonical form where one exists.
        reason: String,
    },
    /// A relative URI (a glTF buffer's or image's `uri`) that names no file of the
    /// project: it leads outside the project, is absolute, or does not decode. Kiln
    /// never follows it.
    InvalidUri {
        /// Where.
        place: Place,
        /// The text.
        text: String,
        /// Why.
        reason: String,
    },
    /// A resource nothing reachable from the project's boot levels uses.
    Unused {
        /// The file.
        file: String,
    },
    /// A file whose name is not a canonical resource path.
    NonCanonicalName {
        /// The file.
        file: String,
        /// Why, with the canonical form where one exists.
        reason: String,
    },
    /// A file of a type Kiln has no schema for that is meant to be JSON (`.json`,
    /// a type with declared rules, or content that opens with `{` or `[`) but does not
    /// parse: its references cannot be seen, so moves will not patch them.
    InvalidJson {
        /// The file.
        file: String,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What is wrong.
        message: String,
    },
    /// A binary file of a type Kiln reads (a `.glb`) whose layout is wrong
    /// (truncated, a wrong header or chunk): its references cannot be seen.
    MalformedBinary {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A file of a JSON resource type that does not parse.
    ParseError {
        /// The file.
        file: String,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What is wrong.
        message: String,
    },
    /// Prefabs that include each other.
    PrefabCycle {
        /// The unit files, the first repeated at the end.
        cycle: Vec<String>,
    },
    /// A symbolic link leading outside the project (not followed).
    LinkOutside {
        /// The link.
        file: String,
    },
    /// The journal of an interrupted operation could not be used (damaged, or naming
    /// paths outside the project) and was set aside: the files it names may be half
    /// changed.
    JournalSetAside {
        /// Where it was moved, from the project root.
        file: String,
        /// Why it could not be used.
        reason: String,
    },
    /// Something that was not a folder stood where Kiln keeps its own (`.kiln`); it
    /// was moved aside, untouched, and Kiln made its folder.
    OwnFolderSetAside {
        /// Where it is now.
        file: String,
    },
    /// A line of the redirect log names a path that cannot be in the project; it is
    /// ignored.
    InvalidRedirect {
        /// The log.
        file: String,
        /// 1-based line.
        line: u32,
        /// The line.
        text: String,
    },
    /// One of Kiln's own folders (`.kiln`, `build`) is a symbolic link: Kiln never
    /// reads or writes through it (no cache, no moves, no compiled output there).
    LinkedOwnFolder {
        /// The folder.
        file: String,
    },
    /// A file that could not be read.
    Unreadable {
        /// The file.
        file: String,
        /// The error.
        message: String,
    },
}

impl Finding {
    /// The file the finding is about, for sorting and jumping.
    pub fn file(&self) -> &str {
        match self {
            Finding::Missing { place, .. }
            | Finding::StaleRedirect { place, .. }
            | Finding::Ambiguous { place, .. }
            | Finding::NonCanonicalReference { place, .. }
            | Finding::InvalidReference { place, .. }
            | Finding::InvalidUri { place, .. } => &place.file,
            Finding::Unused { file }
            | Finding::NonCanonicalName { file, .. }
            | Finding::InvalidJson { file, .. }
            | Finding::JournalSetAside { file, .. }
            | Finding::ParseError { file, .. }
            | Finding::MalformedBinary { file, .. }
            | Finding::LinkOutside { file }
            | Finding::LinkedOwnFolder { file }
            | Finding::InvalidRedirect { file, .. }
            | Finding::OwnFolderSetAside { file }
            | Finding::Unreadable { file, .. } => file,
            Finding::PrefabCycle { cycle } => cycle.first().map_or("", String::as_str),
        }
    }

    /// Where the finding is written, for references.
    pub fn place(&self) -> Option<&Place> {
        match self {
            Finding::Missing { place, .. }
            | Finding::StaleRedirect { place, .. }
            | Finding::Ambiguous { place, .. }
            | Finding::NonCanonicalReference { place, .. }
            | Finding::InvalidReference { place, .. }
            | Finding::InvalidUri { place, .. } => Some(place),
            _ => None,
        }
    }

    /// Whether the finding is about what its file holds (how it parses, what its
    /// references name), as opposed to its name, what the walk met, or what other
    /// files make of it: what a check works out again for a file whose contents
    /// changed (see [`check_changed`]).
    pub fn is_about_contents(&self) -> bool {
        self.place().is_some()
            || matches!(
                self,
                Finding::InvalidJson { .. }
                    | Finding::MalformedBinary { .. }
                    | Finding::ParseError { .. }
            )
    }

    /// Where the finding goes among its file's: see [`sort`].
    fn order_in_file(&self) -> u8 {
        match self {
            Finding::NonCanonicalName { .. } => 0,
            Finding::InvalidJson { .. }
            | Finding::MalformedBinary { .. }
            | Finding::ParseError { .. } => 1,
            Finding::LinkOutside { .. } | Finding::Unreadable { .. } => 2,
            _ if self.place().is_some() => 3,
            Finding::Unused { .. } => 4,
            Finding::PrefabCycle { .. } => 5,
            _ => 6,
        }
    }

    /// Whether the finding breaks the game (an error), as opposed to a warning about
    /// tidiness or about data Kiln cannot fully see.
    pub fn is_error(&self) -> bool {
        !matches!(
            self,
            Finding::Unused { .. }
                | Finding::NonCanonicalName { .. }
                | Finding::NonCanonicalReference { .. }
                | Finding::InvalidJson { .. }
                | Finding::InvalidRedirect { .. }
                | Finding::OwnFolderSetAside { .. }
                | Finding::Ambiguous { .. }
        )
    }

    /// `"error"` or `"warning"`.
    pub fn severity(&self) -> &'static str {
        if self.is_error() { "error" } else { "warning" }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Missing { place, target } => {
                write!(f, "{place}: missing: {target} does not exist")
            }
            Finding::StaleRedirect {
                place, old, new, ..
            } => {
                write!(
                    f,
                    "{place}: stale path: {old} was moved to {new} (kiln check --fix patches it)"
                )
            }
            Finding::Ambiguous {
                place,
                text,
                candidates,
            } => {
                write!(
                    f,
                    "{place}: ambiguous: \"{text}\" could be {}",
                    candidates.join(" or ")
                )
            }
            Finding::InvalidReference { place, reason, .. } => {
                write!(f, "{place}: invalid reference: {reason}")
            }
            Finding::InvalidUri { place, reason, .. } => {
                write!(f, "{place}: invalid URI: {reason}")
            }
            Finding::NonCanonicalReference {
                place,
                text,
                target,
                canonical,
            } => {
                write!(
                    f,
                    "{place}: non-canonical reference: \"{text}\" names {target}, whose name is not canonical"
                )?;
                match canonical {
                    Some(c) => write!(f, " (rename the file and it becomes \"{c}\")"),
                    None => Ok(()),
                }
            }
            Finding::InvalidJson {
                file,
                line,
                column,
                message,
            } => write!(
                f,
                "{file}:{line}:{column}: not valid JSON, so its references cannot be seen: {message}"
            ),
            Finding::Unused { file } => write!(f, "{file}: unused: no boot level reaches it"),
            Finding::NonCanonicalName { file, reason } => {
                write!(f, "{file}: non-canonical name: {reason}")
            }
            Finding::ParseError {
                file,
                line,
                column,
                message,
            } => write!(f, "{file}:{line}:{column}: {message}"),
            Finding::MalformedBinary { file, message } => {
                write!(f, "{file}: {message}; its references cannot be seen")
            }
            Finding::PrefabCycle { cycle } => {
                write!(f, "{}: prefab cycle: {}", self.file(), cycle.join(" -> "))
            }
            Finding::LinkOutside { file } => {
                write!(
                    f,
                    "{file}: symbolic link leads outside the project; not followed"
                )
            }
            Finding::Unreadable { file, message } => write!(f, "{file}: cannot be read: {message}"),
            Finding::OwnFolderSetAside { file } => write!(
                f,
                "{file}: a file named .kiln stood where Kiln keeps its folder; it was moved here, untouched (delete it once you have looked)"
            ),
            Finding::InvalidRedirect { file, line, text } => write!(
                f,
                "{file}:{line}: \"{text}\" is not a move between paths of the project; ignored"
            ),
            Finding::LinkedOwnFolder { file } => write!(
                f,
                "{file}: is a symbolic link; Kiln never reads or writes through links at its own folders (remove it: Kiln makes the folder itself)"
            ),
            Finding::JournalSetAside { file, reason } => write!(
                f,
                "{file}: an interrupted operation's journal could not be used ({reason}) and was set aside; the files it names may be half changed: look at them, then delete the folder"
            ),
        }
    }
}

/// Files that are part of the project's machinery, never "unused", and inputs of
/// every file's findings (boot levels, plugin folders, the redirect log).
const PROJECT_FILES: &[&str] = &[
    kiln_core::project::PROJECT_FILE,
    crate::index::REDIRECT_FILE,
];

/// The project's roots for "unused": its boot levels and its own files. A project
/// that declares no boot levels has no notion of unused, and gets no roots.
pub fn roots(boot_levels: &[String]) -> Vec<String> {
    if boot_levels.is_empty() {
        return Vec::new();
    }
    let mut roots: Vec<String> = PROJECT_FILES.iter().map(|s| s.to_string()).collect();
    roots.extend(boot_levels.iter().map(|l| format!("{l}.level")));
    roots
}

/// The canonical spelling of a reference `text` that names `file` once the file is
/// renamed to its canonical name: the full canonical path when the text is the
/// file's path, the canonical path without extension otherwise.
fn canonical_text(text: &str, file: &str) -> Option<String> {
    let canonical_file = match ResourcePath::split_file(file) {
        Ok(_) => file.to_owned(),
        Err(e) => e.suggestion?,
    };
    if text == file {
        Some(canonical_file)
    } else {
        crate::fs::split_extension(&canonical_file).map(|(base, _)| base.to_owned())
    }
}

/// The file a stale reference should name now: its text resolves to nothing, and the
/// redirect log moved exactly one old path it may mean (the text itself, or an old
/// path without extension) to a file that exists and has a type `expected_type`
/// accepts. Returns the old path and the new one.
fn redirect_for(
    index: &Index,
    redirects: &Redirects,
    text: &str,
    expected_type: Option<&str>,
) -> Option<(String, String)> {
    let exists_with_type = |new: &str| {
        index.contains(new)
            && expected_type
                .is_none_or(|ty| crate::fs::split_extension(new).is_some_and(|(_, ext)| ext == ty))
    };
    let olds: Vec<String> = match expected_type {
        Some(ty) => vec![format!("{text}.{ty}")],
        None => match redirects.follow(text) {
            Some(_) => vec![text.to_owned()],
            None => redirects.olds_with_base(text).to_vec(),
        },
    };
    let mut found: Vec<(String, String)> = olds
        .into_iter()
        .filter_map(|old| {
            let new = redirects.follow(&old)?;
            exists_with_type(&new).then_some((old, new))
        })
        .collect();
    found.dedup_by(|a, b| a.1 == b.1);
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// Every finding of the project, sorted by file. Files in `plugin_folders` are the
/// plugins' sources: never "unused".
pub fn check(
    index: &Index,
    references: &dyn ResolvedReferences,
    redirects: &Redirects,
    boot_levels: &[String],
    plugin_folders: &[String],
) -> Vec<Finding> {
    let mut out = Vec::new();
    let in_plugin = in_plugin_folder(plugin_folders);
    for f in index.files() {
        if in_plugin(&f.path) {
            continue;
        }
        if let Err(e) = ResourcePath::split_file(&f.path) {
            let reason = match e.suggestion {
                Some(s) => format!("{} (rename it to {s})", e.reason),
                None => e.reason.to_owned(),
            };
            out.push(Finding::NonCanonicalName {
                file: f.path.to_string(),
                reason,
            });
        }
    }
    for issue in index.walk_issues() {
        match issue {
            WalkIssue::LinkOutside(file) => out.push(Finding::LinkOutside { file: file.clone() }),
            WalkIssue::Unreadable(file, message) => out.push(Finding::Unreadable {
                file: file.clone(),
                message: message.clone(),
            }),
            WalkIssue::NotUtf8(path) => out.push(Finding::NonCanonicalName {
                file: path.to_string_lossy().into_owned(),
                reason: "its name is not UTF-8".into(),
            }),
        }
    }
    contents_findings(index, references, redirects, &in_plugin, None, &mut out);
    let roots = roots(boot_levels);
    if !roots.is_empty() {
        let reachable = references.reachable(&roots);
        for f in index.files() {
            if !reachable.contains(&*f.path)
                && !PROJECT_FILES.contains(&&*f.path)
                && !in_plugin(&f.path)
                && f.resource().is_some()
            {
                out.push(Finding::Unused {
                    file: f.path.to_string(),
                });
            }
        }
    }
    for cycle in references.prefab_cycles() {
        out.push(Finding::PrefabCycle { cycle });
    }
    sort(&mut out);
    out
}

/// The findings of a check that were about the contents of the files in
/// `changed`, worked out again as they are now; every other finding in
/// `findings` (of a check of the same files as they were) kept. `references`
/// are those of [`Resolution::build_changed`](crate::resolve::Resolution::build_changed),
/// which holds the changed files' references only, and only when the references
/// between files are as they were: then which files are unused, and which
/// prefabs include themselves, are as they were too. Equals a [`check`] of the
/// index as it is now.
pub fn check_changed(
    index: &Index,
    references: &dyn ResolvedReferences,
    redirects: &Redirects,
    plugin_folders: &[String],
    findings: Vec<Finding>,
    changed: &FastSet<&str>,
) -> Vec<Finding> {
    let mut out: Vec<Finding> = (findings.into_iter())
        .filter(|f| !(f.is_about_contents() && changed.contains(f.file())))
        .collect();
    let in_plugin = in_plugin_folder(plugin_folders);
    contents_findings(
        index,
        references,
        redirects,
        &in_plugin,
        Some(changed),
        &mut out,
    );
    sort(&mut out);
    out
}

/// Whether a check can work out its findings from those of the same files as they
/// were (see [`check_changed`]) when the files `changed` (their entries as they
/// were) hold other contents: not if one of them is an input of every file's
/// findings (`kiln.project`, `kiln.redirects`), nor past half the `files`, where
/// resolving the changed files twice (as they were and are) costs more than
/// resolving every file once.
pub(crate) fn can_follow_contents_change(changed: &[FileEntry], files: usize) -> bool {
    changed.len().saturating_mul(2) <= files
        && !changed.iter().any(|f| PROJECT_FILES.contains(&&*f.path))
}

/// Sorts findings by file and, within a file, by what they are about, in the
/// order a check works them out: its name, whether it parses, what the walk met
/// there, its references, whether anything reaches it, the cycles starting there.
/// The sort is stable: the references keep the file's order.
fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| (a.file(), a.order_in_file()).cmp(&(b.file(), b.order_in_file())));
}

/// Whether a path is in one of `plugin_folders`: a plugin's folder holds its code
/// (`Cargo.toml`, `src/lib.rs`, `blink.c`), named and written as its language
/// wants, not resources.
fn in_plugin_folder(plugin_folders: &[String]) -> impl Fn(&str) -> bool + '_ {
    |path| plugin_folders.iter().any(|p| crate::fs::is_within(path, p))
}

/// Pushes the findings about files' contents (see [`Finding::is_about_contents`])
/// of every file, or of the files in `only`.
fn contents_findings(
    index: &Index,
    references: &dyn ResolvedReferences,
    redirects: &Redirects,
    in_plugin: &dyn Fn(&str) -> bool,
    only: Option<&FastSet<&str>>,
    out: &mut Vec<Finding>,
) {
    let in_scope = |path: &str| only.is_none_or(|o| o.contains(path));
    references.each_scan_error(index, &mut |f, e| {
        if in_plugin(&f.path) || !in_scope(&f.path) {
            return;
        }
        if e.line == 0 {
            out.push(Finding::MalformedBinary {
                file: f.path.to_string(),
                message: e.message.clone(),
            });
            return;
        }
        let known_type = crate::fs::split_extension(&f.path)
            .is_some_and(|(_, ext)| index.registry().resource_type(ext).is_some());
        let (file, line, column, message) =
            (f.path.to_string(), e.line, e.column, e.message.clone());
        out.push(if known_type {
            Finding::ParseError {
                file,
                line,
                column,
                message,
            }
        } else {
            Finding::InvalidJson {
                file,
                line,
                column,
                message,
            }
        });
    });
    // A place (four strings) is made only for a reference that is reported.
    references.each_reportable(index, &mut |f, i, target| {
        if !in_scope(&f.path) {
            return;
        }
        let Some(raw) = f.scan().get(i) else {
            return;
        };
        let place = || Place::of(&f.path, &raw);
        let uri = raw.naming == Naming::RelativeUri;
        match target {
            Target::Resolved(file) => {
                if raw.is_spelled_right() {
                    return;
                }
                if raw.expected_type.is_some() {
                    // The compiler refuses a non-canonical typed reference.
                    let reason = ResourcePath::parse(raw.text)
                        .err()
                        .map_or_else(String::new, |e| e.to_string());
                    out.push(Finding::InvalidReference {
                        place: place(),
                        text: raw.text.to_owned(),
                        reason,
                    });
                } else if ResourcePath::split_file(raw.text).is_err() || raw.text != &**file {
                    out.push(Finding::NonCanonicalReference {
                        place: place(),
                        text: raw.text.to_owned(),
                        target: file.to_string(),
                        canonical: canonical_text(raw.text, file),
                    });
                }
            }
            Target::Missing(target) => {
                let redirect = if uri {
                    // The path it names moved: point the URI at where it went.
                    redirects
                        .follow(target)
                        .filter(|new| index.contains(new))
                        .map(|new| (target.to_string(), new))
                } else {
                    redirect_for(index, redirects, raw.text, raw.expected_type)
                };
                match redirect {
                    Some((old, new)) => {
                        let replacement = replacement_text(&f.path, &raw, &old, &new);
                        out.push(Finding::StaleRedirect {
                            place: place(),
                            old,
                            new,
                            replacement,
                        });
                    }
                    None => out.push(Finding::Missing {
                        place: place(),
                        target: target.to_string(),
                    }),
                }
            }
            Target::Ambiguous(candidates) => out.push(Finding::Ambiguous {
                place: place(),
                text: raw.text.to_owned(),
                candidates: candidates.iter().map(|c| c.to_string()).collect(),
            }),
            Target::Invalid(reason) if uri => out.push(Finding::InvalidUri {
                place: place(),
                text: raw.text.to_owned(),
                reason: reason.clone(),
            }),
            Target::Invalid(reason) => out.push(Finding::InvalidReference {
                place: place(),
                text: raw.text.to_owned(),
                reason: reason.clone(),
            }),
        }
    });
    // A generic string that names an old path of the redirect log resolves to nothing
    // (otherwise it would be a reference to what it names, and not stale): it is no
    // reference, so look for such strings by the log's old paths. Only a string the
    // log answers for can be one, so the files still encoded that hold none of those
    // are not decoded (after a folder move, that pass decoded every file).
    if redirects.has_moves() {
        let followed = redirects.followed_texts();
        let mut mentions = crate::index::Mentions::of(&followed);
        let base_paths = std::cell::OnceCell::new();
        let files: Box<dyn Iterator<Item = &FileEntry>> = match only {
            Some(only) => Box::new(index.files().filter(|f| only.contains(&*f.path))),
            None => Box::new(index.files()),
        };
        for f in files {
            if !mentions.may_mention(f.scan_cell()) {
                continue;
            }
            // Decoded for this pass only, as the references were resolved.
            f.with_scan(|scan| {
                for raw in scan.iter().filter(|r| {
                    r.expected_type.is_none()
                        && r.naming == Naming::ProjectPath
                        && followed.contains(r.text)
                }) {
                    let base_paths = base_paths.get_or_init(|| index.by_base_path());
                    if index.contains(raw.text) || base_paths.contains_key(raw.text) {
                        continue;
                    }
                    if let Some((old, new)) = redirect_for(index, redirects, raw.text, None) {
                        let replacement = replacement_text(&f.path, &raw, &old, &new);
                        out.push(Finding::StaleRedirect {
                            place: Place::of(&f.path, &raw),
                            old,
                            new,
                            replacement,
                        });
                    }
                }
            });
        }
    }
}

/// The text a reference `raw`, written in the file `at` (where that file is when the
/// text is read), that named `old_file` should have to name `new_file`: typed
/// references, and generic ones written without extension, get the new path without
/// extension; a generic reference written as the full file path gets the full new
/// path; a relative URI gets the percent-encoded path from `at`'s folder.
pub fn replacement_text(at: &str, raw: &RefView, old_file: &str, new_file: &str) -> String {
    if raw.naming == Naming::RelativeUri {
        crate::scan::gltf::replacement_uri(at, new_file, raw.text)
    } else if raw.expected_type.is_none() && raw.text == old_file {
        new_file.to_owned()
    } else {
        new_file
            .rsplit_once('.')
            .map_or(new_file, |(base, _)| base)
            .to_owned()
    }
}
