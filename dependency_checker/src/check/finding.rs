//! What `kiln check` reports: each thing wrong or suspicious about a project's
//! references ([`Finding`]), with the place ([`Place`]) and, where one exists, the
//! fix, and the sentence a person reads.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::scan::RefView;

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
    /// A rule of `kiln.project`'s `references` that makes no string of the
    /// project a reference: a pattern that misses the files' layout, or an
    /// extension no file has, leaves the references it was meant for unseen.
    UnusedRule {
        /// `kiln.project`.
        file: String,
        /// The extension the rule is declared for, `*` for every file.
        extension: String,
        /// The pattern as written.
        pattern: String,
        /// How many strings the pattern matched whose case conditions (`when`)
        /// never held: 0 when the pattern matched nothing.
        #[serde(default)]
        matched: usize,
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
            | Finding::UnusedRule { file, .. }
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
    /// changed (see `check_changed`).
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
    pub(super) fn order_in_file(&self) -> u8 {
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
                | Finding::UnusedRule { .. }
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
            Finding::UnusedRule {
                file,
                extension,
                pattern,
                matched,
            } => {
                let files = if extension == "*" {
                    "any file".to_owned()
                } else {
                    format!("any .{extension} file")
                };
                if *matched == 0 {
                    write!(
                        f,
                        "{file}: unused rule: references.{extension}.\"{pattern}\" makes no string of {files} a reference: the pattern matches no field (is the pattern right?)"
                    )
                } else {
                    write!(
                        f,
                        "{file}: unused rule: references.{extension}.\"{pattern}\" makes no string of {files} a reference: the pattern matches {matched} string{}, but no case's condition held for any (is its \"when\" right? a field of the enclosing object is \"../field\")",
                        if *matched == 1 { "" } else { "s" }
                    )
                }
            }
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
                "{file}: an interrupted operation's journal was set aside ({reason}); the files it names may be half changed: `kiln recover` shows what it would restore, then applies or discards it"
            ),
        }
    }
}
