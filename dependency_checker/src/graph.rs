//! The reference graph: one node per resource (and per missing target), one edge per
//! reference, built from an [`Index`] with `petgraph`. Answers what a resource
//! references, what references it, what is missing, unused, ambiguous or cyclic.

use std::collections::{BTreeSet, HashMap};

use kiln_core::ResourcePath;
use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::Dfs;

use crate::index::Index;
use crate::scan::RawReference;

/// What a reference points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An existing file.
    Resolved(String),
    /// A typed reference to a file that does not exist.
    Missing(String),
    /// A generic reference without extension that matches several files.
    Ambiguous(Vec<String>),
    /// A typed reference whose text is not a canonical path.
    Invalid(String),
}

/// One reference and its resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedRef {
    /// The referencing file.
    pub file: String,
    /// Position in that file's reference list.
    pub index: usize,
    /// What it points at.
    pub target: Target,
}

/// The graph of a project's references.
#[derive(Debug)]
pub struct Graph {
    graph: DiGraph<String, usize>,
    nodes: HashMap<String, NodeIndex>,
    refs: Vec<ResolvedRef>,
}

/// Resolves `r` (found in some file) against the files of `index`.
pub fn resolve(
    index: &Index,
    base_paths: &HashMap<&str, Vec<&str>>,
    r: &RawReference,
) -> Option<Target> {
    match &r.expected_type {
        Some(ty) => Some(match ResourcePath::parse(&r.text) {
            Ok(path) => {
                let file = path.with_extension(ty);
                if index.contains(&file) {
                    Target::Resolved(file)
                } else {
                    Target::Missing(file)
                }
            }
            Err(e) => Target::Invalid(e.to_string()),
        }),
        None => {
            if index.contains(&r.text) {
                return Some(Target::Resolved(r.text.clone()));
            }
            match base_paths.get(r.text.as_str()).map(Vec::as_slice) {
                Some([one]) => Some(Target::Resolved((*one).to_owned())),
                Some(many) if many.len() > 1 => Some(Target::Ambiguous(
                    many.iter().map(|s| s.to_string()).collect(),
                )),
                // A string that names no file is not a reference.
                _ => None,
            }
        }
    }
}

impl Graph {
    /// Resolves every reference of `index` and builds the graph.
    pub fn build(index: &Index) -> Self {
        let base_paths = index.by_base_path();
        let mut graph = DiGraph::new();
        let mut nodes = HashMap::new();
        for f in index.files() {
            nodes.insert(f.path.clone(), graph.add_node(f.path.clone()));
        }
        let mut refs = Vec::new();
        for f in index.files() {
            for (i, r) in f.scan.references.iter().enumerate() {
                let Some(target) = resolve(index, &base_paths, r) else {
                    continue;
                };
                let to = match &target {
                    Target::Resolved(p) | Target::Missing(p) => Some(p.clone()),
                    _ => None,
                };
                if let Some(to) = to {
                    let to_node = *nodes
                        .entry(to.clone())
                        .or_insert_with(|| graph.add_node(to));
                    graph.add_edge(nodes[&f.path], to_node, refs.len());
                }
                refs.push(ResolvedRef {
                    file: f.path.clone(),
                    index: i,
                    target,
                });
            }
        }
        Graph { graph, nodes, refs }
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
            .map(|e| &self.refs[*e.weight()])
            .collect();
        out.sort_by(|a, b| (&a.file, a.index).cmp(&(&b.file, b.index)));
        out
    }

    /// The references made by `file`, in file order.
    pub fn references_from(&self, file: &str) -> Vec<&ResolvedRef> {
        let mut out: Vec<&ResolvedRef> = self.refs.iter().filter(|r| r.file == file).collect();
        out.sort_by_key(|r| r.index);
        out
    }

    /// Files reachable from `roots` through references (roots included).
    pub fn reachable(&self, roots: &[String]) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        for root in roots {
            let Some(&start) = self.nodes.get(root) else {
                continue;
            };
            let mut dfs = Dfs::new(&self.graph, start);
            while let Some(n) = dfs.next(&self.graph) {
                seen.insert(self.graph[n].clone());
            }
        }
        seen
    }

    /// Cycles of prefabs: strongly connected groups of `.unit` files joined by their
    /// references to units, each listed from its first file back to it.
    pub fn prefab_cycles(&self) -> Vec<Vec<String>> {
        let mut cycles = Vec::new();
        for scc in petgraph::algo::tarjan_scc(&self.graph) {
            let units: Vec<&String> = scc
                .iter()
                .map(|&n| &self.graph[n])
                .filter(|p| p.ends_with(".unit"))
                .collect();
            let self_loop = scc.len() == 1 && self.graph.find_edge(scc[0], scc[0]).is_some();
            if units.len() == scc.len() && (scc.len() > 1 || self_loop) {
                let mut cycle: Vec<String> = units.into_iter().cloned().collect();
                cycle.sort();
                cycle.push(cycle[0].clone());
                cycles.push(cycle);
            }
        }
        cycles.sort();
        cycles
    }
}
