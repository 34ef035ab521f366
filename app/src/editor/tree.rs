//! The scene tree as plain data, built from the level document before anything is
//! drawn (so it is testable without a GUI): parents, children in file order, and the
//! filter's matches with their ancestors.

use std::collections::{HashMap, HashSet};

use kiln_core::LevelDocument;

/// The hierarchy of a level's entities, by index into `doc.entities`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SceneTree {
    /// Entities without a (valid) parent, in file order.
    pub roots: Vec<usize>,
    /// Children of each entity, in file order.
    pub children: Vec<Vec<usize>>,
    /// Parent of each entity.
    pub parent: Vec<Option<usize>>,
}

impl SceneTree {
    /// Builds the tree. An entity whose parent does not exist, or that is in a parent
    /// cycle, is shown as a root so that nothing disappears from view.
    pub fn build(doc: &LevelDocument) -> Self {
        let index: HashMap<&str, usize> = doc
            .entities
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.as_str(), i))
            .collect();
        let n = doc.entities.len();
        let mut parent: Vec<Option<usize>> = doc
            .entities
            .iter()
            .map(|e| e.parent.as_deref().and_then(|p| index.get(p).copied()))
            .collect();
        // Break cycles: walk up from each entity; if the walk comes back, cut there.
        for start in 0..n {
            let mut seen = HashSet::new();
            let mut node = start;
            while let Some(p) = parent[node] {
                if !seen.insert(node) || p == start {
                    parent[start] = None;
                    break;
                }
                node = p;
            }
        }
        let mut children = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, p) in parent.iter().enumerate() {
            match p {
                Some(p) => children[*p].push(i),
                None => roots.push(i),
            }
        }
        SceneTree {
            roots,
            children,
            parent,
        }
    }

    /// Entities to show for a filter: those whose name or id contains it (case
    /// insensitive), and their ancestors. `None` when the filter is empty (show all).
    pub fn visible(&self, doc: &LevelDocument, filter: &str) -> Option<HashSet<usize>> {
        let filter = filter.trim().to_lowercase();
        if filter.is_empty() {
            return None;
        }
        let mut out = HashSet::new();
        for (i, e) in doc.entities.iter().enumerate() {
            if e.name.to_lowercase().contains(&filter) || e.id.to_lowercase().contains(&filter) {
                let mut node = Some(i);
                while let Some(k) = node {
                    if !out.insert(k) {
                        break;
                    }
                    node = self.parent[k];
                }
            }
        }
        Some(out)
    }

    /// The entity and every descendant, parents first.
    pub fn subtree(&self, root: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(i) = stack.pop() {
            out.push(i);
            stack.extend(self.children[i].iter().rev());
        }
        out
    }

    /// Whether `node` is `ancestor` or below it.
    pub fn is_within(&self, node: usize, ancestor: usize) -> bool {
        let mut n = Some(node);
        while let Some(k) = n {
            if k == ancestor {
                return true;
            }
            n = self.parent[k];
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> LevelDocument {
        LevelDocument::parse(
            r#"{"entities": [
                {"id": "lamp", "parent": "table", "name": "Desk lamp"},
                {"id": "table", "name": "Table"},
                {"id": "leg", "parent": "table", "name": "Leg"},
                {"id": "orphan", "parent": "nobody"},
                {"id": "a", "parent": "b"}, {"id": "b", "parent": "a"}
            ]}"#,
            "t.level",
        )
        .unwrap()
    }

    #[test]
    fn children_keep_file_order_and_broken_parents_become_roots() {
        let t = SceneTree::build(&doc());
        assert_eq!(t.children[1], vec![0, 2]);
        assert!(t.roots.contains(&1) && t.roots.contains(&3));
        // The cycle a <-> b is cut so both stay visible.
        assert!(t.roots.contains(&4) || t.roots.contains(&5));
        assert_eq!(t.subtree(1), vec![1, 0, 2]);
    }

    #[test]
    fn filter_keeps_ancestors_of_matches() {
        let d = doc();
        let t = SceneTree::build(&d);
        let v = t.visible(&d, "LAMP").unwrap();
        assert_eq!(v, HashSet::from([0, 1]));
        assert!(t.visible(&d, "  ").is_none());
    }
}
