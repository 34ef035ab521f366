//! The checks: the findings of a project worked out from its index, its resolved
//! references and its redirect log, all at once ([`check`]) or again for the
//! files whose contents changed ([`check_changed`]).

use kiln_core::ResourcePath;

use super::finding::{Finding, Place};
use crate::hash::FastSet;
use crate::index::Redirects;
use crate::index::{FileEntry, Index, WalkIssue};
use crate::resolve::{ResolvedReferences, Target};
use crate::scan::rules::PathSegment;
use crate::scan::{FULL_PATH, Naming, RefView};

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

/// Whether Kiln itself reads the typed reference `raw` of `file`: a field of a
/// component type or resource type Kiln has the schema of (a level's, a unit's, a
/// material's). Its compiler refuses a spelling that is not canonical, so such a
/// reference is an error. A type only a rule of `kiln.project` gives (another
/// engine's file type, a component Kiln has no schema for) is for another
/// program to read: Kiln finds, lists and patches the reference, and its spelling
/// is a warning, as a generic reference's is.
fn kiln_reads(index: &Index, file: &str, raw: &RefView) -> bool {
    let registry = index.registry();
    let ext = crate::fs::split_extension(file).map_or("", |(_, ext)| ext);
    if index.rules().declares(ext) {
        return false;
    }
    // The type came from a schema only if the field is one of the schema's: a
    // rule may type another field of the same file (an extra field of a
    // material, a third-party component's field in a level).
    let segments: Vec<&str> = raw.pointer.split('/').skip(1).collect();
    let has_field = |fields: &[kiln_core::FieldSchema], name: Option<&&str>| {
        name.is_some_and(|name| fields.iter().any(|f| f.name == *name))
    };
    match (ext, segments.as_slice()) {
        ("level" | "unit", ["entities", _, "prefab"]) => true,
        ("level" | "unit", ["entities", _, "components" | "overrides", rest @ ..]) => {
            // Overrides name the prefab's entity first.
            let rest = if segments[2] == "overrides" {
                rest.get(1..).unwrap_or_default()
            } else {
                rest
            };
            let Some((component, fields)) = rest.split_first() else {
                return false;
            };
            let Some(ty) = registry.component(component) else {
                return false;
            };
            // Several instances of one type are an array.
            let field = match fields.first() {
                Some(first) if first.parse::<u32>().is_ok() && ty.multiple => fields.get(1),
                other => other,
            };
            has_field(&ty.fields, field)
        }
        (_, [field, ..]) => registry
            .resource_type(ext)
            .is_some_and(|r| match &r.format {
                kiln_core::registry::ResourceFormat::Json(fields) => has_field(fields, Some(field)),
                _ => false,
            }),
        _ => false,
    }
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
/// accepts, or several old paths with the text as their path without extension to
/// new paths that share one (the new text is the same whichever it meant). Returns
/// an old path and its new one.
fn redirect_for(
    index: &Index,
    redirects: &Redirects,
    text: &str,
    expected_type: Option<&str>,
) -> Option<(String, String)> {
    let exists_with_type = |new: &str| {
        index.contains(new)
            && expected_type.is_none_or(|ty| {
                ty == FULL_PATH || crate::fs::split_extension(new).is_some_and(|(_, ext)| ext == ty)
            })
    };
    let olds: Vec<String> = match expected_type {
        Some(ty) => vec![crate::scan::typed_name(&mut String::new(), text, ty).to_owned()],
        None => match redirects.follow(text) {
            Some(_) => vec![text.to_owned()],
            None => (redirects.olds_with_base(text).into_iter())
                .map(str::to_owned)
                .collect(),
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
    let base = |path: &str| crate::fs::split_extension(path).map(|(base, _)| base.to_owned());
    match found.as_slice() {
        [one] => Some(one.clone()),
        // Text without extension that named several files, all moved to one new
        // path without extension (`sfx/a` for `sfx/a.sound` and `sfx/a.wav`, both
        // moved to `audio/`): every candidate gives the same new text, `audio/a`,
        // which names them as the old text did.
        [first, rest @ ..]
            if expected_type.is_none()
                && base(&first.0).as_deref() == Some(text)
                && rest.iter().all(|(_, new)| base(new) == base(&first.1)) =>
        {
            Some(first.clone())
        }
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
    unused_rules(index, &mut out);
    sort(&mut out);
    out
}

/// Pushes a finding for each declared rule that types no string of the project.
/// A rule that only says strings are not references leaves nothing to show it
/// matched, and is never reported.
fn unused_rules(index: &Index, out: &mut Vec<Finding>) {
    let rules = index.rules();
    // Each rule not seen typing a string yet, with how many strings its pattern
    // matched (whose conditions then never held).
    let mut left: Vec<_> = (rules.rules())
        .filter(|r| !r.only_excludes() && !r.is_optional())
        .map(|r| (r, 0usize))
        .collect();
    let mut path: Vec<String> = Vec::new();
    for f in index.files() {
        if left.is_empty() {
            break;
        }
        let ext = crate::fs::split_extension(&f.path).map_or("", |(_, e)| e);
        if !left.iter().any(|(r, _)| r.applies_to(ext)) {
            continue;
        }
        // Strings no rule typed matter only to a conditional rule (to say its
        // pattern matched though its conditions never held).
        let counting = left
            .iter()
            .any(|(r, _)| r.applies_to(ext) && r.is_conditional());
        f.with_scan(|scan| {
            for raw in scan.iter() {
                if raw.expected_type.is_none() && !counting {
                    continue;
                }
                path.clear();
                path.extend(
                    raw.pointer
                        .split('/')
                        .skip(1)
                        .map(|s| s.replace("~1", "/").replace("~0", "~")),
                );
                // A segment of digits is taken for an array index (a pattern's
                // literal matches either), so that a field name is looked for
                // through arrays as when the file was scanned.
                let at: Vec<PathSegment> = path
                    .iter()
                    .map(|s| match s.parse::<u32>() {
                        Ok(n) if n.to_string() == *s => PathSegment::Index(n),
                        _ => PathSegment::Key(s),
                    })
                    .collect();
                left.retain_mut(|(r, matched)| {
                    if !(r.applies_to(ext) && r.matches(&at)) {
                        return true;
                    }
                    match raw.expected_type {
                        Some(ty) if r.can_type(ty) => false,
                        _ => {
                            *matched += 1;
                            true
                        }
                    }
                });
            }
        });
    }
    out.extend(left.into_iter().map(|(r, matched)| Finding::UnusedRule {
        file: "kiln.project".to_owned(),
        extension: r.ext.to_owned(),
        pattern: r.pattern().to_owned(),
        matched,
    }));
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
    // Which rules type a string may change with any file's contents: worked out
    // again.
    let mut out: Vec<Finding> = (findings.into_iter())
        .filter(|f| !(f.is_about_contents() && changed.contains(f.file())))
        .filter(|f| !matches!(f, Finding::UnusedRule { .. }))
        .collect();
    unused_rules(index, &mut out);
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
                if raw.expected_type.is_some() && kiln_reads(index, &f.path, &raw) {
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
        kiln_core::gltf::replacement_uri(at, new_file, raw.text)
    } else if raw.expected_type == Some(FULL_PATH)
        || (raw.expected_type.is_none() && raw.text == old_file)
    {
        new_file.to_owned()
    } else {
        new_file
            .rsplit_once('.')
            .map_or(new_file, |(base, _)| base)
            .to_owned()
    }
}
