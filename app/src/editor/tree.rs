//! The scene tree as plain data, built from the level document before anything is
//! drawn (so it is testable without a GUI): parents, children in file order, and the
//! filter's matches with their ancestors.

use std::collections::HashSet;

use kiln_core::{IdIndex, LevelDocument};

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
        let ids = doc.entities.iter().map(|e| e.id.as_str());
        Self::build_indexed(doc, &IdIndex::build(ids, doc.entities.len()))
    }

    /// [`SceneTree::build`] with the document's id index made already (the editor
    /// keeps one per edit, for its own lookups).
    pub fn build_indexed(doc: &LevelDocument, index: &IdIndex) -> Self {
        let n = doc.entities.len();
        let id_at = |k: usize| doc.entities.get(k).map(|e| e.id.as_str());
        let mut parent: Vec<Option<usize>> = doc
            .entities
            .iter()
            .map(|e| e.parent.as_deref().and_then(|p| index.find(p, id_at)))
            .collect();
        // Break cycles: walk up from each entity not yet known to reach a root,
        // marking the walk; a walk that meets its own marks is in a cycle, which is
        // cut at the entity where it closes. Each entity is walked once, so a chain a
        // hundred thousand deep costs what it holds, not its square.
        const UNKNOWN: u32 = u32::MAX;
        const REACHES_ROOT: u32 = u32::MAX - 1;
        let mut state = vec![UNKNOWN; n];
        for start in 0..n {
            let mut node = start;
            // Walk up, marking with this walk's number, until a known entity.
            while state[node] == UNKNOWN {
                state[node] = start as u32;
                match parent[node] {
                    Some(p) => node = p,
                    None => break,
                }
            }
            if state[node] == start as u32 && parent[node].is_some() {
                // Back on this walk's own marks: `node` closes a cycle.
                parent[node] = None;
            }
            // Everything this walk marked now reaches a root.
            let mut k = start;
            while state[k] == start as u32 {
                state[k] = REACHES_ROOT;
                match parent[k] {
                    Some(p) => k = p,
                    None => break,
                }
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
    fn a_deep_chain_builds_in_one_pass_and_a_long_cycle_is_cut_once() {
        // 50,000 deep: a walk per entity to the root would take 1.25e9 steps.
        let n = 50_000;
        let mut entities = vec![serde_json::json!({"id": "e0"})];
        for i in 1..n {
            entities
                .push(serde_json::json!({"id": format!("e{i}"), "parent": format!("e{}", i - 1)}));
        }
        let chain = LevelDocument::parse(
            &serde_json::json!({ "entities": entities }).to_string(),
            "t.level",
        )
        .unwrap();
        let started = std::time::Instant::now();
        let t = SceneTree::build(&chain);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(t.roots, vec![0]);
        assert_eq!(t.parent[n - 1], Some(n - 2));

        // The same chain closed into a ring: exactly one link is cut.
        entities[0]["parent"] = serde_json::json!(format!("e{}", n - 1));
        let ring = LevelDocument::parse(
            &serde_json::json!({ "entities": entities }).to_string(),
            "t.level",
        )
        .unwrap();
        let t = SceneTree::build(&ring);
        assert_eq!(t.roots.len(), 1);
        assert_eq!(t.parent.iter().filter(|p| p.is_some()).count(), n - 1);
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
