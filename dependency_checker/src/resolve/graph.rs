//! The reference graph: one node per resource (and per missing target), one edge per
//! reference, built from an [`Index`] with `petgraph`. Answers what a resource
//! references, what references it, what is missing, unused, ambiguous or cyclic.

use std::sync::Arc;

use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::Dfs;

use super::target::{
    BaseMatch, FileSet, ResolvedRef, ResolvedReferences, Target, includes_prefab,
    prefab_cycles_among, resolve,
};
use crate::hash::{FastMap, FastSet};
use crate::index::{FileEntry, Index};

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
