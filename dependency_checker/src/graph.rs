//! The reference graph: one node per resource (and per missing target), one edge per
//! reference, built from an [`Index`] with `petgraph`. Answers what a resource
//! references, what references it, what is missing, unused, ambiguous or cyclic.

use std::collections::HashMap;
use std::sync::Arc;

use kiln_core::ResourcePath;
use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::Dfs;

use crate::index::{FileEntry, Index};
use crate::scan::{Naming, RefView, ScanError};
use crate::{FastMap, FastSet};

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

/// The graph of a project's references.
#[derive(Debug)]
pub struct Graph {
    graph: DiGraph<Arc<str>, u32>,
    nodes: FastMap<Arc<str>, NodeIndex>,
    refs: Vec<ResolvedRef>,
    /// For each file, the ambiguous references that have it among their candidates.
    ambiguous: FastMap<Arc<str>, Vec<u32>>,
    /// Prefab inclusions (an entity's `prefab` field in a level or unit), from -> to.
    prefab_edges: Vec<(NodeIndex, NodeIndex)>,
}

/// Whether a reference written in `file` at `pointer`, of type `ty`, includes a
/// prefab: an entity's `prefab` field in a file of entities (a level or a unit).
pub(crate) fn includes_prefab(index: &Index, file: &str, ty: Option<&str>, pointer: &str) -> bool {
    ty == Some("unit")
        && is_prefab_field(pointer)
        && crate::index::split_extension(file)
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
/// made once for all references, [`crate::lookup`] the index itself.
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

/// The file a reference declared of type `ty` names: `text.ty`, built in `buf`.
pub(crate) fn typed_name<'b>(buf: &'b mut String, text: &str, ty: &str) -> &'b str {
    buf.clear();
    buf.push_str(text);
    buf.push('.');
    buf.push_str(ty);
    buf
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
        return Some(match crate::gltf::resolve_uri(file, r.text) {
            Ok(path) => match files.file(&path) {
                Some(found) => Resolved::File(found),
                None => Resolved::Other(Target::Missing(Arc::from(path))),
            },
            Err(reason) => Resolved::Other(Target::Invalid(format!("\"{}\" {reason}", r.text))),
        });
    }
    match r.expected_type {
        Some(ty) => {
            typed_name(buf, r.text, ty);
            // A file with that name is what the reference names, however it is
            // spelled (`findings` reports a non-canonical spelling).
            if let Some(found) = files.file(buf) {
                return Some(Resolved::File(found));
            }
            if !ResourcePath::is_canonical(r.text) {
                let reason = ResourcePath::parse(r.text)
                    .err()
                    .map_or_else(|| "not a canonical path".to_owned(), |e| e.to_string());
                return Some(Resolved::Other(Target::Invalid(reason)));
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

/// The graph build's view of the files: `nodes` maps each file's path to its
/// node, `base_paths` groups files by path without extension.
struct BuildFiles<'a> {
    nodes: &'a FastMap<Arc<str>, NodeIndex>,
    base_paths: &'a FastMap<&'a str, Vec<&'a Arc<str>>>,
}

impl FileSet for BuildFiles<'_> {
    fn file(&self, path: &str) -> Option<&Arc<str>> {
        self.nodes.get_key_value(path).map(|(k, _)| k)
    }
    fn with_base(&self, base: &str) -> BaseMatch<'_> {
        match self.base_paths.get(base).map(Vec::as_slice) {
            None | Some([]) => BaseMatch::None,
            Some([one]) => BaseMatch::One(one),
            Some(many) => BaseMatch::Many(many.iter().map(|p| (*p).clone()).collect()),
        }
    }
}

impl Graph {
    /// Resolves every reference of `index` and builds the graph.
    pub fn build(index: &Index) -> Self {
        let base_paths = index.by_base_path();
        // Sized once: grown by doubling, these arrays (a hundred bytes per
        // reference) were copied and their fresh pages cleared again and again, a
        // third of the build at 100,000 files.
        let references: usize = index.files().map(|f| f.scan().len()).sum();
        let mut graph = DiGraph::with_capacity(index.stats().files.max(16), references);
        let mut nodes: FastMap<Arc<str>, NodeIndex> =
            FastMap::with_capacity_and_hasher(index.stats().files, Default::default());
        for f in index.files() {
            nodes.insert(f.path.clone(), graph.add_node(f.path.clone()));
        }
        let mut refs = Vec::with_capacity(references);
        let mut missing: Vec<(u32, Arc<str>)> = Vec::new();
        let mut ambiguous: FastMap<Arc<str>, Vec<u32>> = FastMap::default();
        let mut prefab_edges = Vec::new();
        let mut buf = String::new();
        for f in index.files() {
            let from = nodes[&f.path];
            // Positions as `FileScan::get` numbers them (a record it cannot read, in
            // a crafted cache, is skipped without shifting the others).
            for i in 0..f.scan().len() {
                let Some(r) = f.scan().get(i) else { continue };
                let files = BuildFiles {
                    nodes: &nodes,
                    base_paths: &base_paths,
                };
                let Some(target) = resolve(&files, (&f.path, &r), &mut buf) else {
                    continue;
                };
                let to = match &target {
                    Target::Resolved(p) => nodes.get(p).copied(),
                    _ => None,
                };
                match (&target, to) {
                    (_, Some(to)) => {
                        graph.add_edge(from, to, refs.len() as u32);
                        if includes_prefab(index, &f.path, r.expected_type, r.pointer) {
                            prefab_edges.push((from, to));
                        }
                    }
                    (Target::Missing(p), None) => missing.push((refs.len() as u32, p.clone())),
                    (Target::Ambiguous(candidates), None) => {
                        for c in candidates {
                            ambiguous
                                .entry(c.clone())
                                .or_default()
                                .push(refs.len() as u32);
                        }
                    }
                    _ => {}
                }
                refs.push(ResolvedRef {
                    file: f.path.clone(),
                    index: i,
                    target,
                });
            }
        }
        // Missing targets get nodes of their own, so "what references X" works for
        // files that do not exist (yet, or any more).
        for (k, path) in missing {
            let to = *nodes
                .entry(path.clone())
                .or_insert_with(|| graph.add_node(path));
            let from = nodes[&refs[k as usize].file];
            graph.add_edge(from, to, k);
        }
        Graph {
            graph,
            nodes,
            refs,
            ambiguous,
            prefab_edges,
        }
    }

    /// The ambiguous references that may mean `file` (it is one of their candidates).
    pub fn ambiguous_references_to(&self, file: &str) -> Vec<&ResolvedRef> {
        self.ambiguous
            .get(file)
            .into_iter()
            .flatten()
            .map(|&k| &self.refs[k as usize])
            .collect()
    }

    /// Every resolved reference.
    pub fn references(&self) -> &[ResolvedRef] {
        &self.refs
    }

    /// The references that point at `file`.
    pub fn references_to(&self, file: &str) -> Vec<&ResolvedRef> {
        let Some(&node) = self.nodes.get(file) else {
            return Vec::new();
        };
        let mut out: Vec<&ResolvedRef> = self
            .graph
            .edges_directed(node, Direction::Incoming)
            .map(|e| &self.refs[*e.weight() as usize])
            .collect();
        out.sort_by(|a, b| (&a.file, a.index).cmp(&(&b.file, b.index)));
        out
    }

    /// The references made by `file`, in file order.
    pub fn references_from(&self, file: &str) -> Vec<&ResolvedRef> {
        let mut out: Vec<&ResolvedRef> = self.refs.iter().filter(|r| &*r.file == file).collect();
        out.sort_by_key(|r| r.index);
        out
    }

    /// Cycles of prefabs: strongly connected groups of units joined by prefab
    /// inclusions (an entity's `prefab` field, never any other reference to a unit),
    /// each listed from its first file back to it.
    pub fn prefab_cycles(&self) -> Vec<Vec<String>> {
        let edges = self
            .prefab_edges
            .iter()
            .map(|(a, b)| (a.index() as u32, b.index() as u32));
        prefab_cycles_among(edges, |n| {
            self.graph[NodeIndex::new(n as usize)].to_string()
        })
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

/// The references of an index, resolved: what [`crate::findings::check`] reads.
/// The whole [`Graph`] gives them, and so does the leaner
/// [`Resolution`](crate::resolution::Resolution) that `kiln check` builds; a property
/// test requires the same findings from both.
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
    /// that resolve to a file and are [spelled right](crate::findings::is_spelled_right):
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
    /// See [`Graph::prefab_cycles`].
    fn prefab_cycles(&self) -> Vec<Vec<String>>;
}

impl ResolvedReferences for Graph {
    fn each_reference<'a>(
        &'a self,
        index: &'a Index,
        f: &mut dyn FnMut(&'a FileEntry, usize, &Target),
    ) {
        // References come file by file: each file is looked up once.
        let mut file: Option<&FileEntry> = None;
        for r in &self.refs {
            if file.is_none_or(|f| !Arc::ptr_eq(&f.path, &r.file)) {
                file = index.file(&r.file);
            }
            if let Some(entry) = file {
                f(entry, r.index, &r.target);
            }
        }
    }
    fn reachable(&self, roots: &[String]) -> FastSet<&str> {
        let mut seen = FastSet::default();
        for root in roots {
            let Some(&start) = self.nodes.get(root.as_str()) else {
                continue;
            };
            let mut dfs = Dfs::new(&self.graph, start);
            while let Some(n) = dfs.next(&self.graph) {
                seen.insert(&*self.graph[n]);
            }
        }
        seen
    }
    fn prefab_cycles(&self) -> Vec<Vec<String>> {
        Graph::prefab_cycles(self)
    }
}
