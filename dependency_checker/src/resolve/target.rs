//! How a reference resolves: the one rule ([`resolve`]) that the lean
//! [`Resolution`](super::Resolution) of a check, the [`Lookup`](super::Lookup)
//! kept current change by change and the whole [`Graph`](super::Graph) all ask, and
//! what a resolved reference is ([`Target`], [`ResolvedReferences`]).

use std::collections::HashMap;
use std::sync::Arc;

use kiln_core::ResourcePath;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::hash::FastSet;
use crate::index::{FileEntry, Index};
use crate::scan::{Naming, RefView, ScanError};

/// What a reference points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An existing file.
    Resolved(Arc<str>),
    /// A typed reference (or a relative URI) to a file that does not exist.
    Missing(Arc<str>),
    /// A generic reference without extension that matches several files.
    Ambiguous(Vec<Arc<str>>),
    /// A typed reference whose text is not a canonical path, or a relative URI that
    /// names no file of the project (it leads outside, or does not decode): why.
    Invalid(String),
}

/// One reference and its resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedRef {
    /// The referencing file.
    pub file: Arc<str>,
    /// Position in that file's reference list.
    pub index: usize,
    /// What it points at.
    pub target: Target,
}

/// Whether a reference written in `file` at `pointer`, of type `ty`, includes a
/// prefab: an entity's `prefab` field in a file of entities (a level or a unit).
pub(crate) fn includes_prefab(index: &Index, file: &str, ty: Option<&str>, pointer: &str) -> bool {
    ty == Some("unit")
        && is_prefab_field(pointer)
        && crate::fs::split_extension(file)
            .and_then(|(_, ext)| index.registry().resource_type(ext))
            .is_some_and(|t| matches!(t.format, kiln_core::registry::ResourceFormat::Entities))
}

/// Whether `pointer` is an entity's `prefab` field (`/entities/3/prefab`): the only
/// place where one unit includes another. A unit named by any other field (a
/// spawner's list, a third-party component) is a plain reference, not an inclusion.
fn is_prefab_field(pointer: &str) -> bool {
    let mut parts = pointer.split('/');
    parts.next() == Some("")
        && parts.next() == Some("entities")
        && parts.next().is_some_and(|n| n.parse::<u32>().is_ok())
        && parts.next() == Some("prefab")
        && parts.next().is_none()
}

/// The files a reference may be resolved against: the graph's build uses maps
/// made once for all references, the lookup (`lookup.rs`) the index itself.
pub(crate) trait FileSet {
    /// The file at exactly `path`, as the index spells it.
    fn file(&self, path: &str) -> Option<&Arc<str>>;
    /// The files whose path without extension is `base`, in path order.
    fn with_base(&self, base: &str) -> BaseMatch<'_>;
}

/// The files a path without extension matches.
pub(crate) enum BaseMatch<'a> {
    /// None.
    None,
    /// Exactly one.
    One(&'a Arc<str>),
    /// Several, in path order.
    Many(Vec<Arc<str>>),
}

/// What `r`, written in `file`, points at among `files`; `None` when it is no
/// reference at all (a string written without type that names no file). `buf` is
/// scratch space reused across calls. The one place that says how a reference
/// resolves: the graph and the lookup both ask it.
pub(crate) fn resolve<F: FileSet>(
    files: &F,
    reference: (&str, &RefView),
    buf: &mut String,
) -> Option<Target> {
    resolve_in(files, reference, buf).map(|found| match found {
        Resolved::File(path) => Target::Resolved(path.clone()),
        Resolved::Other(target) => target,
    })
}

/// What [`resolve_in`] found.
pub(crate) enum Resolved<'f> {
    /// A file of the set, borrowed: a check resolving 874,000 references (at
    /// 100,000 files) on two threads kept only its number, and counting the
    /// path's handle up and down for each made the threads fight over the cache
    /// lines of the most named paths.
    File(&'f Arc<str>),
    /// Anything else: missing, ambiguous, invalid.
    Other(Target),
}

/// [`resolve`], with a file found borrowed from `files`.
pub(crate) fn resolve_in<'f, F: FileSet>(
    files: &'f F,
    (file, r): (&str, &RefView),
    buf: &mut String,
) -> Option<Resolved<'f>> {
    if r.naming == Naming::RelativeUri {
        // Relative to the file's folder, with its extension; never followed
        // outside the project (only the index is consulted).
        return Some(match kiln_core::gltf::resolve_uri(file, r.text) {
            Ok(path) => match files.file(&path) {
                Some(found) => Resolved::File(found),
                None => Resolved::Other(Target::Missing(Arc::from(path))),
            },
            Err(reason) => Resolved::Other(Target::Invalid(format!("\"{}\" {reason}", r.text))),
        });
    }
    match r.expected_type {
        Some(ty) => {
            crate::scan::typed_name(buf, r.text, ty);
            // A file with that name is what the reference names, however it is
            // spelled (`findings` reports a non-canonical spelling).
            if let Some(found) = files.file(buf) {
                return Some(Resolved::File(found));
            }
            let problem = if ty == crate::scan::FULL_PATH {
                ResourcePath::split_file(r.text).err()
            } else if ResourcePath::is_canonical(r.text) {
                None
            } else {
                ResourcePath::parse(r.text).err()
            };
            if let Some(e) = problem {
                return Some(Resolved::Other(Target::Invalid(e.to_string())));
            }
            Some(Resolved::Other(Target::Missing(Arc::from(buf.as_str()))))
        }
        None => {
            if let Some(found) = files.file(r.text) {
                return Some(Resolved::File(found));
            }
            match files.with_base(r.text) {
                BaseMatch::One(found) => Some(Resolved::File(found)),
                BaseMatch::Many(candidates) => Some(Resolved::Other(Target::Ambiguous(candidates))),
                // A string that names no file is not a reference.
                BaseMatch::None => None,
            }
        }
    }
}

/// The cycles among prefab inclusions `edges` (from, to: files' numbers), each
/// listed by `name` from its first file back to it, sorted.
pub(crate) fn prefab_cycles_among(
    edges: impl Iterator<Item = (u32, u32)>,
    name: impl Fn(u32) -> String,
) -> Vec<Vec<String>> {
    let mut inclusions: DiGraph<u32, ()> = DiGraph::new();
    let mut local: HashMap<u32, NodeIndex> = HashMap::new();
    for (from, to) in edges {
        let a = *local
            .entry(from)
            .or_insert_with(|| inclusions.add_node(from));
        let b = *local.entry(to).or_insert_with(|| inclusions.add_node(to));
        inclusions.update_edge(a, b, ());
    }
    let mut cycles = Vec::new();
    for scc in petgraph::algo::tarjan_scc(&inclusions) {
        let self_loop = scc.len() == 1 && inclusions.find_edge(scc[0], scc[0]).is_some();
        if scc.len() > 1 || self_loop {
            let mut cycle: Vec<String> = scc.iter().map(|&n| name(inclusions[n])).collect();
            cycle.sort();
            cycle.push(cycle[0].clone());
            cycles.push(cycle);
        }
    }
    cycles.sort();
    cycles
}

/// The references of an index, resolved: what a check reads. The whole graph
/// (`Graph`, behind the `oracle` feature) gives them, and so does the leaner
/// [`Resolution`](super::Resolution) that `kiln check` builds; a property test
/// requires the same findings from both.
pub trait ResolvedReferences {
    /// Calls `f` with every reference that resolves to something (a string that
    /// names no file is no reference): its file, its position in the file's scan
    /// and its target; file by file in path order, each file's in order.
    fn each_reference<'a>(
        &'a self,
        index: &'a Index,
        f: &mut dyn FnMut(&'a FileEntry, usize, &Target),
    );
    /// As [`ResolvedReferences::each_reference`], but may leave out references
    /// that resolve to a file and are spelled right (a canonical path, or a relative URI):
    /// the check reports nothing of them.
    fn each_reportable<'a>(
        &'a self,
        index: &'a Index,
        f: &mut dyn FnMut(&'a FileEntry, usize, &Target),
    ) {
        self.each_reference(index, f);
    }
    /// Calls `f` with every file whose scan has an error (it does not parse), in
    /// path order.
    fn each_scan_error<'a>(
        &'a self,
        index: &'a Index,
        f: &mut dyn FnMut(&'a FileEntry, &ScanError),
    ) {
        for file in index.files() {
            if let Some(error) = &file.scan().error {
                f(file, error);
            }
        }
    }
    /// The files reachable from `roots` through references, roots included.
    fn reachable(&self, roots: &[String]) -> FastSet<&str>;
    /// The cycles among prefab inclusions, each listed from its first file back
    /// to it, sorted.
    fn prefab_cycles(&self) -> Vec<Vec<String>>;
}
