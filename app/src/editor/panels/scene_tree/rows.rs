//! The scene tree's rows as plain data: the open level's hierarchy flattened in the
//! order it is drawn, folders the user closed left out, the filter applied, prefab
//! parts under their instances. Built only when the tree, the openness or the filter
//! changes, so a frame draws the rows in view and never walks a million entities.

use std::collections::HashMap;
use std::rc::Rc;

use kiln_core::LevelDocument;

use crate::editor::model::prefab_parts::{LoadedUnit, PrefabLibrary};
use crate::editor::tree::SceneTree;

/// What a row shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowItem {
    /// An entity of the open file, by index into `doc.entities`.
    Entity(usize),
    /// A part of a prefab instance: its id (`tree_01/trunk`, the compiler's naming)
    /// and the name it is shown with.
    Part {
        /// Instance id, `/`, the part's id in its unit (nested instances add more).
        id: String,
        /// The part's name, or its id when it has none.
        label: String,
    },
}

/// One line of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The entity or part.
    pub item: RowItem,
    /// Nesting level: 0 for roots.
    pub depth: u32,
    /// `None` for a row without children; `Some(open)` for a folder.
    pub folder: Option<bool>,
    /// The row of the parent, if any.
    pub parent: Option<u32>,
}

impl Row {
    /// The entity id or part id of the row.
    pub fn id<'a>(&'a self, doc: &'a LevelDocument) -> &'a str {
        match &self.item {
            RowItem::Entity(i) => &doc.entities[*i].id,
            RowItem::Part { id, .. } => id,
        }
    }

    /// Whether the row is a prefab part (not moved or dropped onto).
    pub fn is_part(&self) -> bool {
        matches!(self.item, RowItem::Part { .. })
    }
}

/// Which folders are open. Entities with children are open until closed; parts of
/// prefab instances are closed until opened. Only the user's choices are stored.
#[derive(Debug, Clone, Default)]
pub struct Openness {
    chosen: HashMap<String, bool>,
    /// Bumped by every change, so that the rows know to rebuild.
    revision: u64,
}

impl Openness {
    /// Whether the folder `id` is open, given the default of its kind.
    pub fn is_open(&self, id: &str, default: bool) -> bool {
        if self.chosen.is_empty() {
            return default;
        }
        self.chosen.get(id).copied().unwrap_or(default)
    }

    /// Opens or closes the folder `id`.
    pub fn set(&mut self, id: &str, open: bool) {
        if self.chosen.get(id) != Some(&open) {
            self.chosen.insert(id.to_owned(), open);
            self.revision += 1;
        }
    }

    /// Opens the folder `id` if it is closed; an open one is left alone (and
    /// unrecorded), so revealing many rows stores only the folders it opened.
    pub fn reveal(&mut self, id: &str, default: bool) {
        if !self.is_open(id, default) {
            self.set(id, true);
        }
    }

    /// A number that changes whenever a folder is opened or closed.
    pub fn revision(&self) -> u64 {
        self.revision
    }
}

/// The default openness of a folder row.
pub fn open_by_default(is_part: bool) -> bool {
    !is_part
}

/// What the rows were built from; they are built again when it differs.
#[derive(Debug, Clone)]
struct BuiltFrom {
    tree: u64,
    openness: u64,
    filter: String,
}

/// The rows, kept between frames.
#[derive(Debug, Default)]
pub struct Rows {
    rows: Vec<Row>,
    built_from: Option<BuiltFrom>,
}

impl Rows {
    /// Brings the rows up to date: rebuilt only when `tree_revision` (the level's
    /// hierarchy and its prefabs), the openness or the filter changed.
    pub fn update(
        &mut self,
        doc: &LevelDocument,
        tree: &SceneTree,
        tree_revision: u64,
        prefabs: &PrefabLibrary,
        openness: &Openness,
        filter: &str,
    ) {
        let current = self.built_from.as_ref().is_some_and(|b| {
            b.tree == tree_revision && b.openness == openness.revision() && b.filter == filter
        });
        if !current {
            self.rows = build(doc, tree, &|p| prefabs.unit(p), openness, filter);
            self.built_from = Some(BuiltFrom {
                tree: tree_revision,
                openness: openness.revision(),
                filter: filter.to_owned(),
            });
        }
    }

    /// The rows, in drawing order.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The row showing `id`.
    pub fn position(&self, doc: &LevelDocument, id: &str) -> Option<usize> {
        self.rows.iter().position(|r| r.id(doc) == id)
    }
}

/// Something left to lay out, on an explicit stack (a level may nest deeply).
enum Task<'a> {
    Entity {
        node: usize,
        depth: u32,
        parent: Option<u32>,
    },
    /// The parts of an instance (or nested instance) whose row is `parent`.
    UnitRoots {
        unit: &'a LoadedUnit,
        /// While filtering, which of its parts match or hold a match.
        marks: Option<Rc<Vec<bool>>>,
        prefix: String,
        nesting: usize,
        depth: u32,
        parent: u32,
    },
    Part {
        unit: &'a LoadedUnit,
        marks: Option<Rc<Vec<bool>>>,
        node: usize,
        prefix: String,
        nesting: usize,
        depth: u32,
        parent: u32,
    },
}

/// Which parts of each prefab match a filter or hold a match below them (in a
/// nested prefab too), worked out once per unit and filter: a deep or repeated
/// prefab costs its size once, not once per row.
struct PartMatches<'a, 'u> {
    filter: String,
    unit_of: &'u dyn Fn(&str) -> Option<&'a LoadedUnit>,
    by_unit: HashMap<String, Rc<Vec<bool>>>,
}

impl<'a> PartMatches<'a, '_> {
    /// The marks of the unit `path`'s entities; `None` for a unit not loaded or
    /// nested too deep (a prefab that contains itself is cut off there too).
    fn of(&mut self, path: &str, nesting: usize) -> Option<Rc<Vec<bool>>> {
        if let Some(marks) = self.by_unit.get(path) {
            return Some(marks.clone());
        }
        if nesting > kiln_core::compiler::MAX_PREFAB_DEPTH {
            return None;
        }
        let unit = (self.unit_of)(path)?;
        // Parents before children, then marked children first.
        let mut order = Vec::with_capacity(unit.doc.entities.len());
        let mut stack: Vec<usize> = unit.tree.roots.clone();
        while let Some(i) = stack.pop() {
            order.push(i);
            stack.extend(&unit.tree.children[i]);
        }
        let mut marks = vec![false; unit.doc.entities.len()];
        for &i in order.iter().rev() {
            let e = &unit.doc.entities[i];
            let nested = e.prefab.as_deref().and_then(|p| self.of(p, nesting + 1));
            marks[i] = matches(&e.name, &e.id, &self.filter)
                || unit.tree.children[i].iter().any(|&c| marks[c])
                || nested.is_some_and(|m| m.contains(&true));
        }
        let marks = Rc::new(marks);
        self.by_unit.insert(path.to_owned(), marks.clone());
        Some(marks)
    }
}

/// Whether a name or id holds the (lower-case) filter text.
fn matches(name: &str, id: &str, filter: &str) -> bool {
    name.to_lowercase().contains(filter) || id.to_lowercase().contains(filter)
}

/// Flattens the tree into rows, depth first, children in file order and an
/// instance's parts after its children. While a filter is on, only matches and their
/// ancestors are shown, every folder among them open: prefab parts that match
/// are shown under their instance, as the designer sees them in the viewport.
pub fn build<'a>(
    doc: &LevelDocument,
    tree: &SceneTree,
    unit_of: &dyn Fn(&str) -> Option<&'a LoadedUnit>,
    openness: &Openness,
    filter: &str,
) -> Vec<Row> {
    let mut visible = tree.visible(doc, filter);
    let filtering = visible.is_some();
    let mut parts = PartMatches {
        filter: filter.trim().to_lowercase(),
        unit_of,
        by_unit: HashMap::new(),
    };
    // Instances with a matching part are shown, with their ancestors.
    let mut instance_marks: HashMap<usize, Rc<Vec<bool>>> = HashMap::new();
    if let Some(visible) = &mut visible {
        for (i, e) in doc.entities.iter().enumerate() {
            let Some(marks) = e.prefab.as_deref().and_then(|p| parts.of(p, 0)) else {
                continue;
            };
            if !marks.contains(&true) {
                continue;
            }
            instance_marks.insert(i, marks);
            let mut node = Some(i);
            while let Some(k) = node {
                if !visible.insert(k) && k != i {
                    break;
                }
                node = tree.parent[k];
            }
        }
    }
    let shown = |i: usize| visible.as_ref().is_none_or(|v| v.contains(&i));
    let instance_unit = |node: usize| {
        if filtering && !instance_marks.contains_key(&node) {
            return None;
        }
        unit_of(doc.entities[node].prefab.as_deref()?)
    };
    let mut rows = Vec::with_capacity(visible.as_ref().map_or(doc.entities.len(), |v| v.len()));
    let mut stack: Vec<Task> = tree
        .roots
        .iter()
        .rev()
        .filter(|&&r| shown(r))
        .map(|&node| Task::Entity {
            node,
            depth: 0,
            parent: None,
        })
        .collect();
    while let Some(task) = stack.pop() {
        match task {
            Task::Entity {
                node,
                depth,
                parent,
            } => {
                let unit = instance_unit(node);
                let has_children = tree.children[node].iter().any(|&c| shown(c));
                let folder = (has_children || unit.is_some()).then(|| {
                    filtering || openness.is_open(&doc.entities[node].id, open_by_default(false))
                });
                let row = rows.len() as u32;
                rows.push(Row {
                    item: RowItem::Entity(node),
                    depth,
                    folder,
                    parent,
                });
                if folder != Some(true) {
                    continue;
                }
                if let Some(unit) = unit {
                    stack.push(Task::UnitRoots {
                        unit,
                        marks: instance_marks.get(&node).cloned(),
                        prefix: doc.entities[node].id.clone(),
                        nesting: 0,
                        depth: depth + 1,
                        parent: row,
                    });
                }
                stack.extend(
                    tree.children[node]
                        .iter()
                        .rev()
                        .filter(|&&c| shown(c))
                        .map(|&c| Task::Entity {
                            node: c,
                            depth: depth + 1,
                            parent: Some(row),
                        }),
                );
            }
            Task::UnitRoots {
                unit,
                marks,
                prefix,
                nesting,
                depth,
                parent,
            } => {
                if nesting > kiln_core::compiler::MAX_PREFAB_DEPTH {
                    continue;
                }
                let shown = |n: &usize| marks.as_ref().is_none_or(|m| m[*n]);
                stack.extend(
                    unit.tree
                        .roots
                        .iter()
                        .rev()
                        .filter(|n| shown(n))
                        .map(|&node| Task::Part {
                            unit,
                            marks: marks.clone(),
                            node,
                            prefix: prefix.clone(),
                            nesting,
                            depth,
                            parent,
                        }),
                );
            }
            Task::Part {
                unit,
                marks,
                node,
                prefix,
                nesting,
                depth,
                parent,
            } => {
                let e = &unit.doc.entities[node];
                // Parts are named by id alone below their instance, whatever their
                // parent inside the unit: the compiler's naming.
                let id = format!("{prefix}/{}", e.id);
                let shown = |n: &usize| marks.as_ref().is_none_or(|m| m[*n]);
                let nested_marks = if filtering {
                    e.prefab.as_deref().and_then(|p| parts.of(p, nesting + 1))
                } else {
                    None
                };
                let nested = e.prefab.as_deref().and_then(unit_of).filter(|_| {
                    !filtering || nested_marks.as_ref().is_some_and(|m| m.contains(&true))
                });
                let has_children = unit.tree.children[node].iter().any(&shown) || nested.is_some();
                let folder =
                    has_children.then(|| filtering || openness.is_open(&id, open_by_default(true)));
                let row = rows.len() as u32;
                let label = if e.name.is_empty() { &e.id } else { &e.name };
                rows.push(Row {
                    item: RowItem::Part {
                        id: id.clone(),
                        label: label.clone(),
                    },
                    depth,
                    folder,
                    parent: Some(parent),
                });
                if folder != Some(true) {
                    continue;
                }
                if let Some(nested) = nested {
                    stack.push(Task::UnitRoots {
                        unit: nested,
                        marks: nested_marks,
                        prefix: id,
                        nesting: nesting + 1,
                        depth: depth + 1,
                        parent: row,
                    });
                }
                stack.extend(
                    unit.tree.children[node]
                        .iter()
                        .rev()
                        .filter(|c| shown(c))
                        .map(|&c| Task::Part {
                            unit,
                            marks: marks.clone(),
                            node: c,
                            prefix: prefix.clone(),
                            nesting,
                            depth: depth + 1,
                            parent: row,
                        }),
                );
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> LevelDocument {
        LevelDocument::parse(text, "t.level").unwrap()
    }

    fn unit(text: &str) -> LoadedUnit {
        let doc = doc(text);
        let tree = SceneTree::build(&doc);
        LoadedUnit { doc, tree }
    }

    /// Each row as `depth id folder-mark`, for readable comparisons.
    fn lines(d: &LevelDocument, rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| {
                let mark = match r.folder {
                    None => "",
                    Some(true) => " v",
                    Some(false) => " >",
                };
                format!("{}{}{mark}", "  ".repeat(r.depth as usize), r.id(d))
            })
            .collect()
    }

    const LEVEL: &str = r#"{"entities": [
        {"id": "table", "name": "Table"},
        {"id": "lamp", "parent": "table", "name": "Desk lamp"},
        {"id": "bulb", "parent": "lamp"},
        {"id": "leg", "parent": "table"},
        {"id": "tree_01", "prefab": "units/tree"},
        {"id": "rock"}
    ]}"#;

    const TREE_UNIT: &str = r#"{"entities": [
        {"id": "trunk", "name": "Trunk"},
        {"id": "crown", "parent": "trunk"},
        {"id": "nest", "prefab": "units/nest"}
    ]}"#;

    #[test]
    fn folders_are_open_until_closed_and_parts_closed_until_opened() {
        let d = doc(LEVEL);
        let t = SceneTree::build(&d);
        let tree_unit = unit(TREE_UNIT);
        let nest = unit(r#"{"entities": [{"id": "egg"}]}"#);
        let units = |p: &str| match p {
            "units/tree" => Some(&tree_unit),
            "units/nest" => Some(&nest),
            _ => None,
        };
        let mut open = Openness::default();
        let rows = build(&d, &t, &units, &open, "");
        assert_eq!(
            lines(&d, &rows),
            [
                "table v",
                "  lamp v",
                "    bulb",
                "  leg",
                "tree_01 v",
                "  tree_01/trunk >",
                "  tree_01/nest >",
                "rock"
            ]
        );
        assert_eq!(rows[2].parent, Some(1));
        assert_eq!(rows[5].parent, Some(4));
        assert!(rows[5].is_part() && !rows[4].is_part());

        open.set("lamp", false);
        open.set("tree_01/trunk", true);
        open.set("tree_01/nest", true);
        let rows = build(&d, &t, &units, &open, "");
        assert_eq!(
            lines(&d, &rows),
            [
                "table v",
                "  lamp >",
                "  leg",
                "tree_01 v",
                "  tree_01/trunk v",
                "    tree_01/crown",
                "  tree_01/nest v",
                "    tree_01/nest/egg",
                "rock"
            ]
        );
        assert_eq!(
            rows[7].item,
            RowItem::Part {
                id: "tree_01/nest/egg".into(),
                label: "egg".into()
            }
        );
    }

    #[test]
    fn a_filter_shows_matches_and_their_ancestors_open_with_the_parts_that_match() {
        let d = doc(LEVEL);
        let t = SceneTree::build(&d);
        let tree_unit = unit(TREE_UNIT);
        let nest = unit(r#"{"entities": [{"id": "egg", "name": "Blue egg"}]}"#);
        let units = |p: &str| match p {
            "units/tree" => Some(&tree_unit),
            "units/nest" => Some(&nest),
            _ => None,
        };
        let mut open = Openness::default();
        open.set("table", false);
        let rows = build(&d, &t, &units, &open, "BULB");
        assert_eq!(lines(&d, &rows), ["table v", "  lamp v", "    bulb"]);
        // Positive control: the instance's own id matches, none of its parts do.
        let rows = build(&d, &t, &units, &open, "tree_0");
        assert_eq!(lines(&d, &rows), ["tree_01"]);
        // A part's name: its instance is shown open with the part, closed as the
        // parts were.
        let rows = build(&d, &t, &units, &open, "trunk");
        assert_eq!(lines(&d, &rows), ["tree_01 v", "  tree_01/trunk"]);
        let rows = build(&d, &t, &units, &open, "crown");
        assert_eq!(
            lines(&d, &rows),
            ["tree_01 v", "  tree_01/trunk v", "    tree_01/crown"]
        );
        // Inside a nested prefab, found by name.
        let rows = build(&d, &t, &units, &open, "blue");
        assert_eq!(
            lines(&d, &rows),
            ["tree_01 v", "  tree_01/nest v", "    tree_01/nest/egg"]
        );
        // A prefab that contains itself is cut off, not followed forever.
        let looped = unit(r#"{"entities": [{"id": "me", "prefab": "units/loop"}]}"#);
        let loops = |_: &str| Some(&looped);
        let l = doc(r#"{"entities": [{"id": "x", "prefab": "units/loop"}]}"#);
        let rows = build(&l, &SceneTree::build(&l), &loops, &open, "me");
        assert!(lines(&l, &rows).len() < 200, "{}", rows.len());
    }

    #[test]
    fn rows_are_rebuilt_only_when_what_they_show_changed() {
        let d = doc(LEVEL);
        let t = SceneTree::build(&d);
        let prefabs = PrefabLibrary::default();
        let mut open = Openness::default();
        let mut rows = Rows::default();
        rows.update(&d, &t, 1, &prefabs, &open, "");
        assert_eq!(rows.rows().len(), 6);
        assert_eq!(rows.position(&d, "leg"), Some(3));
        // The same inputs keep the rows, even for a different document: the
        // revision is what says the hierarchy changed.
        let other = doc(r#"{"entities": [{"id": "x"}]}"#);
        rows.update(&other, &SceneTree::build(&other), 1, &prefabs, &open, "");
        assert_eq!(rows.rows().len(), 6);
        rows.update(&other, &SceneTree::build(&other), 2, &prefabs, &open, "");
        assert_eq!(rows.rows().len(), 1);
        rows.update(&d, &t, 3, &prefabs, &open, "");
        open.set("table", false);
        rows.update(&d, &t, 3, &prefabs, &open, "");
        assert_eq!(lines(&d, rows.rows()), ["table >", "tree_01", "rock"]);
        rows.update(&d, &t, 3, &prefabs, &open, "lamp");
        assert_eq!(lines(&d, rows.rows()), ["table v", "  lamp"]);
    }
}
