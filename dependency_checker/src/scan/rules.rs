//! Declared reference rules: how a project tells the checker which strings of file
//! types it has no schema for are references, and of which type.
//!
//! Engines of the Bitsquid family name a reference's type by its field, not its text:
//! `"mesh_resource": "units/props/barrel"` means `units/props/barrel.mesh` even when
//! `barrel.unit` and `barrel.material` exist beside it. Without a schema such a string
//! is *ambiguous*. A project declares the fields in `kiln.project`:
//!
//! ```json
//! {
//!   "references": {
//!     "unit": {"/components/*/data/mesh_resource": "mesh", "material": "material"},
//!     "*": {"unit": "unit"}
//!   }
//! }
//! ```
//!
//! A pattern starting with `/` is a JSON pointer to the string: `*` stands for any one
//! key or array index, `**` for any number of them. Any other pattern is a field name:
//! a string under that key, or in an array (of arrays) under it, anywhere in the file.
//! Rules keyed by an extension apply to files of that type; rules keyed `*` to every
//! file. When several rules match one string, the extension's own rules win over
//! `*`, pointer patterns over field names, and then the first in sorted order.
//!
//! Rules apply only where no built-in schema decides: they can type a string of a
//! third-party component inside a level, but never change what a `mesh` component's
//! `material` field means.
//!
//! ```
//! use dependency_checker::{DeclaredRules, PathSegment};
//! let config = serde_json::from_str(r#"{"unit": {"/components/*/data/mesh_resource": "mesh"}}"#).unwrap();
//! let rules = DeclaredRules::new(&config);
//! let at = [
//!     PathSegment::Key("components"),
//!     PathSegment::Index(0),
//!     PathSegment::Key("data"),
//!     PathSegment::Key("mesh_resource"),
//! ];
//! assert_eq!(rules.type_of("unit", &at), Some("mesh"));
//! assert_eq!(rules.type_of("level", &at), None);
//! ```

use std::collections::HashMap;

use kiln_core::ReferenceRules;
use kiln_core::reference_rules::{RuleCase, RuleOutcome, RuleSpec};

/// One step of the path from a file's root to a string value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathSegment<'a> {
    /// An object key.
    Key(&'a str),
    /// An array index.
    Index(u32),
}

impl PathSegment<'_> {
    fn matches(&self, literal: &str) -> bool {
        match self {
            PathSegment::Key(k) => *k == literal,
            PathSegment::Index(n) => literal.parse::<u32>().ok() == Some(*n),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PatternSegment {
    Literal(String),
    /// `*`: exactly one segment.
    One,
    /// `**`: any number of segments, none included.
    Any,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    Pointer(Vec<PatternSegment>),
    Field(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    pattern: Pattern,
    /// The pattern as written, to name the rule.
    written: String,
    cases: Vec<RuleCase>,
}

/// What the declared rules make of a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision<'r> {
    /// No rule matches: a generic candidate, if it could name a file.
    NoRule,
    /// A reference written without extension to a file of this type.
    Typed(&'r str),
    /// A reference written as the full path with its extension.
    FullPath,
    /// Not a reference.
    NotReference,
    /// A matching rule has conditions on the string's sibling fields, which are
    /// not known yet (they may come after it in the file).
    NeedsSiblings,
}

impl<'r> Decision<'r> {
    fn of(outcome: &'r RuleOutcome) -> Self {
        match outcome {
            RuleOutcome::Typed(t) => Decision::Typed(t),
            RuleOutcome::FullPath => Decision::FullPath,
            RuleOutcome::NotReference => Decision::NotReference,
        }
    }
}

/// A project's declared rules, ready to match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeclaredRules {
    by_extension: HashMap<String, Vec<Rule>>,
    everywhere: Vec<Rule>,
    /// Whether some rule has conditions.
    conditional: bool,
    /// A stable text of every rule, for the cache's fingerprint.
    fingerprint: String,
}

fn compile(rules: &std::collections::BTreeMap<String, RuleSpec>) -> Vec<Rule> {
    let mut out: Vec<Rule> = rules
        .iter()
        .map(|(pattern, spec)| Rule {
            pattern: match pattern.strip_prefix('/') {
                Some(pointer) => Pattern::Pointer(
                    pointer
                        .split('/')
                        .map(|s| match s {
                            "*" => PatternSegment::One,
                            "**" => PatternSegment::Any,
                            other => {
                                PatternSegment::Literal(other.replace("~1", "/").replace("~0", "~"))
                            }
                        })
                        .collect(),
                ),
                None => Pattern::Field(pattern.clone()),
            },
            written: pattern.clone(),
            cases: spec.cases.clone(),
        })
        .collect();
    // Pointer patterns first: they say more than a field name. Stable, so sorted order
    // decides among equals.
    out.sort_by_key(|r| matches!(r.pattern, Pattern::Field(_)));
    out
}

/// Whether `path` matches the pointer `pattern`. The positions in the pattern the
/// path so far can have reached are kept as a set, one step of the path at a
/// time: the work is the pattern's length times the path's, however many `**` the
/// pattern has. (A backtracking matcher, which tried every split at each `**`,
/// took exponential time on a pattern of several; globset, built for file paths
/// of text, does not match JSON pointers' key-or-index segments.)
fn pointer_matches(pattern: &[PatternSegment], path: &[PathSegment]) -> bool {
    let n = pattern.len();
    // A `**` at a reached position also reaches the next one (it may match
    // nothing); in increasing order, a run of them is followed to its end.
    let follow_any = |reached: &mut [bool]| {
        for i in 0..n {
            if reached[i] && pattern[i] == PatternSegment::Any {
                reached[i + 1] = true;
            }
        }
    };
    let mut reached = vec![false; n + 1];
    reached[0] = true;
    follow_any(&mut reached);
    let mut next = vec![false; n + 1];
    for segment in path {
        next.fill(false);
        for i in (0..n).filter(|&i| reached[i]) {
            match &pattern[i] {
                PatternSegment::Any => next[i] = true,
                PatternSegment::One => next[i + 1] = true,
                PatternSegment::Literal(l) => next[i + 1] |= segment.matches(l),
            }
        }
        follow_any(&mut next);
        std::mem::swap(&mut reached, &mut next);
        if !reached.contains(&true) {
            return false;
        }
    }
    reached[n]
}

/// The key a string is stored under, looking through array indices
/// (`{"materials": [["a"]]}` gives `materials` for `a`).
fn field_name<'a>(path: &[PathSegment<'a>]) -> Option<&'a str> {
    path.iter().rev().find_map(|s| match s {
        PathSegment::Key(k) => Some(*k),
        PathSegment::Index(_) => None,
    })
}

impl Rule {
    fn matches(&self, path: &[PathSegment]) -> bool {
        match &self.pattern {
            Pattern::Pointer(p) => pointer_matches(p, path),
            Pattern::Field(name) => field_name(path) == Some(name.as_str()),
        }
    }
}

impl DeclaredRules {
    /// Compiles the `references` section of `kiln.project` (already validated by
    /// [`kiln_core::ProjectConfig::parse`]).
    pub fn new(config: &ReferenceRules) -> Self {
        let mut rules = DeclaredRules::default();
        for (ext, patterns) in config {
            let compiled = compile(patterns);
            rules.conditional |= compiled
                .iter()
                .any(|r| r.cases.iter().any(|c| !c.when.is_empty()));
            if ext == "*" {
                rules.everywhere = compiled;
            } else {
                rules.by_extension.insert(ext.clone(), compiled);
            }
        }
        rules.fingerprint = format!("{config:?}");
        rules
    }

    /// Whether no rule is declared.
    pub fn is_empty(&self) -> bool {
        self.by_extension.is_empty() && self.everywhere.is_empty()
    }

    /// Whether rules name files of type `ext` (so they are expected to be JSON).
    pub fn declares(&self, ext: &str) -> bool {
        self.by_extension.contains_key(ext)
    }

    /// Whether any rule could apply to a file of type `ext`.
    pub fn applies_to(&self, ext: &str) -> bool {
        !self.everywhere.is_empty() || self.by_extension.contains_key(ext)
    }

    /// The resource type the string at `path` in a file of type `ext` names, if an
    /// unconditional rule makes it a typed reference.
    pub fn type_of(&self, ext: &str, path: &[PathSegment]) -> Option<&str> {
        match self.decide(ext, path, None) {
            Decision::Typed(t) => Some(t),
            _ => None,
        }
    }

    fn rules_for(&self, ext: &str) -> impl Iterator<Item = &Rule> {
        self.by_extension
            .get(ext)
            .into_iter()
            .flatten()
            .chain(&self.everywhere)
    }

    /// What the string at `path` in a file of type `ext` is. `enclosing` gives the
    /// object that holds it and those around it (innermost first), once known;
    /// without it, a matching rule with conditions gives
    /// [`Decision::NeedsSiblings`]. A rule none of whose cases holds leaves the
    /// string to the rules after it.
    pub fn decide(
        &self,
        ext: &str,
        path: &[PathSegment],
        enclosing: Option<&[&serde_json::Map<String, serde_json::Value>]>,
    ) -> Decision<'_> {
        for rule in self.rules_for(ext).filter(|r| r.matches(path)) {
            for case in &rule.cases {
                if case.when.is_empty() {
                    return Decision::of(&case.outcome);
                }
                let Some(enclosing) = enclosing else {
                    return Decision::NeedsSiblings;
                };
                if case.holds(|depth, key| enclosing.get(depth)?.get(key)) {
                    return Decision::of(&case.outcome);
                }
            }
        }
        Decision::NoRule
    }

    /// Whether some rule has conditions on sibling fields.
    pub fn has_conditions(&self) -> bool {
        self.conditional
    }

    /// Every rule, by extension (`*` last), each in the order it is tried: what
    /// `kiln check` uses to find the rules that type nothing.
    pub fn rules(&self) -> impl Iterator<Item = DeclaredRule<'_>> {
        let mut by_extension: Vec<_> = self.by_extension.iter().collect();
        by_extension.sort_by_key(|(ext, _)| ext.as_str());
        by_extension
            .into_iter()
            .flat_map(|(ext, rules)| rules.iter().map(move |r| (ext.as_str(), r)))
            .chain(self.everywhere.iter().map(|r| ("*", r)))
            .map(|(ext, rule)| DeclaredRule { ext, rule })
    }

    /// A text that changes whenever the rules do.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
}

/// One declared rule, to ask what it matches.
#[derive(Debug, Clone, Copy)]
pub struct DeclaredRule<'r> {
    /// The extension it is declared for, `*` for every file.
    pub ext: &'r str,
    rule: &'r Rule,
}

impl DeclaredRule<'_> {
    /// The pattern as written in `kiln.project`.
    pub fn pattern(&self) -> &str {
        &self.rule.written
    }

    /// Whether it applies to a file of type `ext`.
    pub fn applies_to(&self, ext: &str) -> bool {
        self.ext == "*" || self.ext == ext
    }

    /// Whether its pattern matches `path`.
    pub fn matches(&self, path: &[PathSegment]) -> bool {
        self.rule.matches(path)
    }

    /// Whether it can make a string a reference of `expected_type` (`*` for a full
    /// path).
    pub fn can_type(&self, expected_type: &str) -> bool {
        self.rule.cases.iter().any(|c| match &c.outcome {
            RuleOutcome::Typed(t) => t == expected_type,
            RuleOutcome::FullPath => expected_type == crate::scan::FULL_PATH,
            RuleOutcome::NotReference => false,
        })
    }

    /// Whether it only says that strings are not references (which leaves no
    /// reference behind to show it matched).
    pub fn only_excludes(&self) -> bool {
        self.rule
            .cases
            .iter()
            .all(|c| c.outcome == RuleOutcome::NotReference)
    }

    /// Whether a case of it has conditions (`when`).
    pub fn is_conditional(&self) -> bool {
        self.rule.cases.iter().any(|c| !c.when.is_empty())
    }

    /// Whether it says it may type nothing in a project (`"optional": true`): a
    /// rule set shared between projects.
    pub fn is_optional(&self) -> bool {
        self.rule
            .cases
            .iter()
            .filter(|c| c.outcome != RuleOutcome::NotReference)
            .all(|c| c.optional)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PathSegment::{Index, Key};

    fn rules(json: &str) -> DeclaredRules {
        DeclaredRules::new(&serde_json::from_str(json).unwrap())
    }

    /// The matcher as first written, trying every split at each `**`: exponential,
    /// but plainly right. The oracle of the property test.
    fn backtracking(pattern: &[PatternSegment], path: &[PathSegment]) -> bool {
        match pattern.split_first() {
            None => path.is_empty(),
            Some((PatternSegment::Any, rest)) => {
                (0..=path.len()).any(|skip| backtracking(rest, &path[skip..]))
            }
            Some((segment, rest)) => match path.split_first() {
                None => false,
                Some((first, tail)) => {
                    let here = match segment {
                        PatternSegment::One => true,
                        PatternSegment::Literal(l) => first.matches(l),
                        PatternSegment::Any => false,
                    };
                    here && backtracking(rest, tail)
                }
            },
        }
    }

    proptest::proptest! {
        #[test]
        fn the_pointer_matcher_agrees_with_backtracking(
            pattern in proptest::collection::vec(0u8..5, 0..7),
            path in proptest::collection::vec(0u8..4, 0..8),
        ) {
            let names = ["a", "b", "0"];
            let pattern: Vec<PatternSegment> = pattern
                .iter()
                .map(|&p| match p {
                    0 => PatternSegment::Any,
                    1 => PatternSegment::One,
                    k => PatternSegment::Literal(names[usize::from(k) - 2].to_owned()),
                })
                .collect();
            let path: Vec<PathSegment> = path
                .iter()
                .map(|&p| match p {
                    0 => Index(0),
                    1 => Index(1),
                    k => Key(names[usize::from(k) - 2]),
                })
                .collect();
            proptest::prop_assert_eq!(
                pointer_matches(&pattern, &path),
                backtracking(&pattern, &path)
            );
        }
    }

    /// A rule of many `**` against a deep path that almost matches: the
    /// backtracking matcher took exponential time (minutes at this size).
    #[test]
    fn many_double_stars_take_linear_time() {
        let pattern = format!("/{}/z", vec!["**"; 40].join("/"));
        let r = rules(&format!(r#"{{"unit": {{"{pattern}": "mesh"}}}}"#));
        let deep: Vec<PathSegment> = (0..60).map(|_| Key("a")).collect();
        let started = std::time::Instant::now();
        assert_eq!(r.type_of("unit", &deep), None);
        let mut ends_in_z = deep.clone();
        ends_in_z.push(Key("z"));
        assert_eq!(r.type_of("unit", &ends_in_z), Some("mesh"));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn pointer_patterns_match_whole_paths_with_wildcards() {
        let r = rules(
            r#"{"unit": {"/components/*/data/mesh_resource": "mesh", "/**/sound": "wav", "/lods/~1x/*": "mesh"}}"#,
        );
        let t = |path: &[PathSegment]| r.type_of("unit", path);
        assert_eq!(
            t(&[
                Key("components"),
                Key("c1"),
                Key("data"),
                Key("mesh_resource")
            ]),
            Some("mesh")
        );
        assert_eq!(
            t(&[
                Key("components"),
                Index(3),
                Key("data"),
                Key("mesh_resource")
            ]),
            Some("mesh")
        );
        assert_eq!(
            t(&[Key("components"), Key("data"), Key("mesh_resource")]),
            None
        );
        assert_eq!(t(&[Key("sound")]), Some("wav"));
        assert_eq!(
            t(&[Key("a"), Index(0), Key("b"), Key("sound")]),
            Some("wav")
        );
        assert_eq!(t(&[Key("sound"), Key("x")]), None);
        assert_eq!(t(&[Key("lods"), Key("/x"), Index(2)]), Some("mesh"));
    }

    #[test]
    fn field_names_match_anywhere_and_through_arrays() {
        let r = rules(r#"{"*": {"material": "material"}}"#);
        assert_eq!(
            r.type_of("anything", &[Key("a"), Key("material")]),
            Some("material")
        );
        assert_eq!(
            r.type_of("x", &[Key("material"), Index(1), Index(0)]),
            Some("material")
        );
        assert_eq!(r.type_of("x", &[Key("material"), Key("name")]), None);
        assert_eq!(r.type_of("x", &[Index(0)]), None);
    }

    #[test]
    fn the_extensions_own_rules_and_pointers_win() {
        let r =
            rules(r#"{"unit": {"/a/mesh": "mesh", "mesh": "unit"}, "*": {"mesh": "material"}}"#);
        assert_eq!(r.type_of("unit", &[Key("a"), Key("mesh")]), Some("mesh"));
        assert_eq!(r.type_of("unit", &[Key("b"), Key("mesh")]), Some("unit"));
        assert_eq!(
            r.type_of("json", &[Key("a"), Key("mesh")]),
            Some("material")
        );
        assert!(r.declares("unit") && !r.declares("json"));
    }
}
