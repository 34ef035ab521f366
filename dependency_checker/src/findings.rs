//! What `kiln check` reports: everything wrong or suspicious about a project's
//! references, each with the place and, where one exists, the fix.

use std::fmt;

use kiln_core::ResourcePath;
use serde::Serialize;

use crate::graph::{Graph, Target};
use crate::index::{Index, WalkIssue};
use crate::redirects::Redirects;
use crate::scan::RefView;

/// Where a reference is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Place {
    /// The file, from the project root.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// JSON pointer to the value.
    pub pointer: String,
    /// Entity authoring id, in levels and units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity: Option<String>,
    /// Component type, in levels and units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
}

impl Place {
    /// The place of `r` in `file`.
    pub fn of(file: &str, r: &RefView) -> Self {
        Place {
            file: file.to_owned(),
            line: r.line,
            pointer: r.pointer.to_owned(),
            entity: r.entity.map(str::to_owned),
            component: r.component.map(str::to_owned),
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    /// A typed reference that is not a canonical path.
    InvalidReference {
        /// Where.
        place: Place,
        /// The text.
        text: String,
        /// Why, with the canonical form where one exists.
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
            | Finding::InvalidReference { place, .. } => &place.file,
            Finding::Unused { file }
            | Finding::NonCanonicalName { file, .. }
            | Finding::ParseError { file, .. }
            | Finding::LinkOutside { file }
            | Finding::Unreadable { file, .. } => file,
            Finding::PrefabCycle { cycle } => cycle.first().map_or("", String::as_str),
        }
    }

    /// Whether the finding breaks the game (as opposed to tidiness).
    pub fn is_error(&self) -> bool {
        !matches!(
            self,
            Finding::Unused { .. } | Finding::NonCanonicalName { .. }
        )
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
        }
    }
}

/// Files that are part of the project's machinery, never "unused".
const PROJECT_FILES: &[&str] = &[
    kiln_core::project::PROJECT_FILE,
    crate::redirects::REDIRECT_FILE,
];

/// The project's roots: its boot levels, or every level when it names none.
pub fn roots(index: &Index, boot_levels: &[String]) -> Vec<String> {
    let mut roots: Vec<String> = PROJECT_FILES.iter().map(|s| s.to_string()).collect();
    if boot_levels.is_empty() {
        roots.extend(
            index
                .files()
                .filter(|f| f.path.ends_with(".level"))
                .map(|f| f.path.to_string()),
        );
    } else {
        roots.extend(boot_levels.iter().map(|l| format!("{l}.level")));
    }
    roots
}

/// Every finding of the project, sorted by file.
pub fn check(
    index: &Index,
    graph: &Graph,
    redirects: &Redirects,
    boot_levels: &[String],
) -> Vec<Finding> {
    let mut out = Vec::new();
    for f in index.files() {
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
        if let Some(e) = &f.scan.error {
            out.push(Finding::ParseError {
                file: f.path.to_string(),
                line: e.line,
                column: e.column,
                message: e.message.clone(),
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
    for r in graph.references() {
        let Some(raw) = index.file(&r.file).and_then(|f| f.scan.get(r.index)) else {
            continue;
        };
        let place = Place::of(&r.file, &raw);
        match &r.target {
            Target::Resolved(_) => {}
            Target::Missing(target) => {
                match redirects.follow(target).filter(|new| index.contains(new)) {
                    Some(new) => {
                        let replacement = replacement_text(&raw, target, &new);
                        out.push(Finding::StaleRedirect {
                            place,
                            old: target.to_string(),
                            new,
                            replacement,
                        });
                    }
                    None => out.push(Finding::Missing {
                        place,
                        target: target.to_string(),
                    }),
                }
            }
            Target::Ambiguous(candidates) => out.push(Finding::Ambiguous {
                place,
                text: raw.text.to_owned(),
                candidates: candidates.iter().map(|c| c.to_string()).collect(),
            }),
            Target::Invalid(reason) => out.push(Finding::InvalidReference {
                place,
                text: raw.text.to_owned(),
                reason: reason.clone(),
            }),
        }
    }
    // Generic references that name an old path of the redirect log no longer resolve
    // at all; find them by the log's old paths.
    for f in index.files() {
        if redirects.moves().is_empty() {
            break;
        }
        for raw in f.scan.iter().filter(|r| r.expected_type.is_none()) {
            let old = if raw.text.contains('.') && redirects.follow(raw.text).is_some() {
                Some(raw.text.to_owned())
            } else {
                redirects.old_with_base(raw.text)
            };
            if let Some(old) = old
                && !index.contains(raw.text)
                && let Some(new) = redirects.follow(&old).filter(|n| index.contains(n))
            {
                let replacement = replacement_text(&raw, &old, &new);
                out.push(Finding::StaleRedirect {
                    place: Place::of(&f.path, &raw),
                    old,
                    new,
                    replacement,
                });
            }
        }
    }
    let reachable = graph.reachable(&roots(index, boot_levels));
    for f in index.files() {
        if !reachable.contains(&*f.path)
            && !PROJECT_FILES.contains(&&*f.path)
            && f.resource().is_some()
        {
            out.push(Finding::Unused {
                file: f.path.to_string(),
            });
        }
    }
    for cycle in graph.prefab_cycles() {
        out.push(Finding::PrefabCycle { cycle });
    }
    out.sort_by(|a, b| a.file().cmp(b.file()));
    out
}

/// The text a reference that named `old_file` should have to name `new_file`:
/// typed references, and generic ones written without extension, get the new path
/// without extension; a generic reference written as the full file path gets the
/// full new path.
pub fn replacement_text(raw: &RefView, old_file: &str, new_file: &str) -> String {
    if raw.expected_type.is_none() && raw.text == old_file {
        new_file.to_owned()
    } else {
        new_file
            .rsplit_once('.')
            .map_or(new_file, |(base, _)| base)
            .to_owned()
    }
}
