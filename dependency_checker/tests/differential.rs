//! Differential tests: the checker against an oracle on generated projects.
//!
//! The oracle is deliberately simple, slow and obviously right: walk every file,
//! parse it with `serde_json`, and collect every string that names an existing file
//! by the documented rules (docs/references.md, "What a reference is"). The checker's index must
//! find exactly the same references, resolved the same way, on projects with random
//! folder trees and file types, references with and without extensions,
//! non-canonical spellings, ambiguous names, nested arrays, strings that merely look
//! like paths, declared rules, broken JSON, binary files and symbolic links.
//!
//! Then random sequences of moves (files, folders, several at once, case-only, into
//! folders, refused ones) are applied: after each, the oracle must find every
//! reference pointing where the move says, no byte outside the patched reference
//! strings may change, and applying the inverses in reverse must restore the
//! original tree byte for byte.
//!
//! Each runs `KILN_DIFF_CASES` cases (default 48): raise it for a long run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod project_fixture;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs;
use std::path::Path;
use std::sync::Arc;

use dependency_checker::BuildOptions;
use dependency_checker::check;
use dependency_checker::check::Finding;
use dependency_checker::ops::{self, MoveRequest, Operation};
use dependency_checker::resolve::Lookup;
use dependency_checker::resolve::Resolution;
use dependency_checker::resolve::{Graph, ResolvedRef, ResolvedReferences, Target};
use dependency_checker::{Checker, CheckerError};
use kiln_core::Registry;
use proptest::prelude::*;
use serde_json::Value;

// ---------------------------------------------------------------------------------
// The oracle.

/// What a reference points at, as the oracle sees it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Points {
    Resolved(String),
    Missing(String),
    Ambiguous(Vec<String>),
    Invalid,
}

/// (file, JSON pointer) -> (text, what it points at).
type References = BTreeMap<(String, String), (String, Points)>;

/// Every regular file of the project, as the checker defines resources: not hidden,
/// not under `.git`, `.kiln` or `build`, not behind a symbolic link.
fn oracle_files(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![(root.to_owned(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            if name.starts_with('.') || (prefix.is_empty() && name == "build") {
                continue;
            }
            let kind = fs::symlink_metadata(entry.path()).unwrap().file_type();
            let rel = format!("{prefix}{name}");
            if kind.is_dir() {
                stack.push((entry.path(), format!("{rel}/")));
            } else if kind.is_file() {
                out.insert(rel);
            }
        }
    }
    out
}

/// The extension: after the last dot of the name, with something before the dot.
fn extension(path: &str) -> Option<(&str, &str)> {
    let name_start = path.rfind('/').map_or(0, |i| i + 1);
    let dot = path[name_start..].rfind('.')? + name_start;
    (dot > name_start && dot + 1 < path.len()).then(|| (&path[..dot], &path[dot + 1..]))
}

fn canonical(text: &str) -> bool {
    !text.is_empty()
        && text.split('/').all(|s| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && s.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-' | '.')
                })
        })
}

/// A step of the path to a value.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn pointer(path: &[Step]) -> String {
    path.iter()
        .map(|s| match s {
            Step::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
            Step::Index(i) => format!("/{i}"),
        })
        .collect()
}

/// A declared rule pattern against a path, written out plainly.
fn rule_matches(pattern: &str, path: &[Step]) -> bool {
    fn glob(pattern: &[&str], path: &[Step]) -> bool {
        match pattern.split_first() {
            None => path.is_empty(),
            Some((&"**", rest)) => (0..=path.len()).any(|k| glob(rest, &path[k..])),
            Some((p, rest)) => match path.split_first() {
                None => false,
                Some((step, tail)) => {
                    let here = match step {
                        Step::Key(k) => *p == "*" || *p == k.as_str(),
                        Step::Index(i) => *p == "*" || *p == i.to_string(),
                    };
                    here && glob(rest, tail)
                }
            },
        }
    }
    match pattern.strip_prefix('/') {
        Some(p) => {
            let parts: Vec<String> = p
                .split('/')
                .map(|s| s.replace("~1", "/").replace("~0", "~"))
                .collect();
            let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
            glob(&parts, path)
        }
        None => {
            path.iter().rev().find_map(|s| match s {
                Step::Key(k) => Some(k.as_str()),
                Step::Index(_) => None,
            }) == Some(pattern)
        }
    }
}

/// How the oracle classifies a string: `Some(Some(type))` typed, `Some(None)`
/// generic, `None` not a reference.
fn classify(
    ext: &str,
    path: &[Step],
    rules: &BTreeMap<String, BTreeMap<String, Value>>,
    holder: Option<&serde_json::Map<String, Value>>,
) -> Option<Option<String>> {
    let top = match path.first() {
        Some(Step::Key(k)) => Some(k.as_str()),
        _ => None,
    };
    // The schemas of the types these projects use (Kiln's own `material` and
    // `project`), as docs/projects.md documents them.
    match (ext, top, path.len()) {
        ("material", Some("texture"), 1) => return Some(Some("png".into())),
        ("material", Some("color" | "roughness" | "texture"), _) => return None,
        ("project", Some("boot_levels"), 2) => return Some(Some("level".into())),
        ("project", Some("name" | "references" | "boot_levels"), _) => return None,
        _ => {}
    }
    let mut declared: Vec<(&String, &Value)> = Vec::new();
    for key in [ext, "*"] {
        if let Some(r) = rules.get(key) {
            let mut pointers: Vec<_> = r.iter().filter(|(p, _)| p.starts_with('/')).collect();
            let fields: Vec<_> = r.iter().filter(|(p, _)| !p.starts_with('/')).collect();
            pointers.extend(fields);
            declared.extend(pointers);
        }
    }
    // A rule is a type, `"*"` (a full path), `null` (no reference), a case
    // `{"type": .., "when": {sibling: value or [values]}}`, or a list of cases.
    for (pattern, spec) in declared {
        if !rule_matches(pattern, path) {
            continue;
        }
        let cases: Vec<&Value> = match spec {
            Value::Array(cases) => cases.iter().collect(),
            one => vec![one],
        };
        for case in cases {
            let (outcome, when) = match case {
                Value::Object(c) => (&c["type"], c.get("when")),
                plain => (plain, None),
            };
            let holds = when.and_then(Value::as_object).is_none_or(|when| {
                when.iter().all(|(key, allowed)| {
                    let value = holder.and_then(|h| h.get(key)).unwrap_or(&Value::Null);
                    match allowed {
                        Value::Array(any) => any.contains(value),
                        one => one == value,
                    }
                })
            });
            if holds {
                return match outcome {
                    Value::String(ty) => Some(Some(ty.clone())),
                    _ => None,
                };
            }
        }
    }
    Some(None)
}

fn resolve(text: &str, ty: Option<&str>, files: &BTreeSet<String>) -> Option<Points> {
    match ty {
        Some("*") => Some(if files.contains(text) {
            Points::Resolved(text.to_owned())
        } else if extension(text).is_some_and(|(base, _)| canonical(base)) && canonical(text) {
            Points::Missing(text.to_owned())
        } else {
            Points::Invalid
        }),
        Some(ty) => {
            let file = format!("{text}.{ty}");
            Some(if files.contains(&file) {
                Points::Resolved(file)
            } else if canonical(text) {
                Points::Missing(file)
            } else {
                Points::Invalid
            })
        }
        None => {
            if files.contains(text) {
                return Some(Points::Resolved(text.to_owned()));
            }
            let same_base: Vec<String> = files
                .iter()
                .filter(|f| extension(f).is_some_and(|(base, _)| base == text))
                .cloned()
                .collect();
            match same_base.len() {
                0 => None,
                1 => Some(Points::Resolved(same_base[0].clone())),
                _ => Some(Points::Ambiguous(same_base)),
            }
        }
    }
}

/// Every reference in the project at `root`, by the documented rules.
fn oracle(root: &Path) -> References {
    let files = oracle_files(root);
    let mut out = References::new();
    for s in oracle_strings(root, &files) {
        if let Some(points) = resolve(&s.text, s.ty.as_deref(), &files) {
            out.insert((s.file, s.pointer), (s.text, points));
        }
    }
    out
}

/// A string the documented rules make a reference (typed) or a candidate.
struct OracleString {
    file: String,
    pointer: String,
    text: String,
    /// The type a schema or rule gives it (`*`: a full path); `None`: generic.
    ty: Option<String>,
}

/// Every non-empty string of the project's JSON files that is a reference or a
/// candidate, by the documented rules, whether or not it names a file.
fn oracle_strings(root: &Path, files: &BTreeSet<String>) -> Vec<OracleString> {
    let rules: BTreeMap<String, BTreeMap<String, Value>> =
        serde_json::from_str::<Value>(&fs::read_to_string(root.join("kiln.project")).unwrap())
            .ok()
            .and_then(|v| v.get("references").cloned())
            .and_then(|r| serde_json::from_value(r).ok())
            .unwrap_or_default();
    let mut out = Vec::new();
    for file in files {
        let ext = extension(file).map_or("", |(_, e)| e);
        if ext == "png" {
            continue;
        }
        let bytes = fs::read(root.join(file)).unwrap();
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        // Each value with the object that holds it (through arrays): where a rule's
        // conditions look.
        type Holder<'v> = Option<&'v serde_json::Map<String, Value>>;
        let mut stack: Vec<(Vec<Step>, &Value, Holder)> = vec![(Vec::new(), &value, None)];
        while let Some((path, v, holder)) = stack.pop() {
            match v {
                Value::String(text) => {
                    let Some(ty) = classify(ext, &path, &rules, holder) else {
                        continue;
                    };
                    if text.is_empty() {
                        continue;
                    }
                    out.push(OracleString {
                        file: file.clone(),
                        pointer: pointer(&path),
                        text: text.clone(),
                        ty,
                    });
                }
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        let mut p = path.clone();
                        p.push(Step::Index(i));
                        stack.push((p, item, holder));
                    }
                }
                Value::Object(map) => {
                    for (k, item) in map {
                        let mut p = path.clone();
                        p.push(Step::Key(k.clone()));
                        stack.push((p, item, Some(map)));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The checker's references, in the oracle's terms.
fn checker_references(checker: &Checker) -> References {
    let mut out = References::new();
    for f in checker.index().files() {
        for r in checker.dependencies_of(&f.path) {
            let points = match r.target {
                Target::Resolved(p) => Points::Resolved(p.to_string()),
                Target::Missing(p) => Points::Missing(p.to_string()),
                Target::Ambiguous(c) => {
                    let mut c: Vec<String> = c.iter().map(|p| p.to_string()).collect();
                    c.sort();
                    Points::Ambiguous(c)
                }
                Target::Invalid(_) => Points::Invalid,
            };
            let key = (r.place.file.to_string(), r.place.pointer.clone());
            assert!(
                out.insert(key.clone(), (r.text, points)).is_none(),
                "{key:?} listed twice"
            );
        }
    }
    out
}

// ---------------------------------------------------------------------------------
// Generated projects.

/// SplitMix64: a small, seedable generator (proptest supplies the seed and keeps
/// failing ones in its regression file).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const FOLDERS: &[&str] = &["props", "art", "Tex", "sub dir", "a.b", "x-1", "données"];
const NAMES: &[&str] = &["rock", "Rock", "barrel", "tex_1", "Big Crate", "r", "名前"];
const EXTS: &[&str] = &[
    "json",
    "json",
    "sunit",
    "mesh",
    "material",
    "png",
    "lua",
    "physics_config",
    "",
];

const RULES: &str = r#"{
    "sunit": {"/parts/*/mesh": "mesh", "/**/unit": "sunit"},
    "*": {
        "material": "material",
        "texture": "*",
        "data": [{"type": "mesh", "when": {"kind": "kind_a"}}, {"type": null, "when": {"kind": ["kind_b", null]}}]
    }
}"#;

/// Plans a project: paths and, for JSON types, the strings to put in them.
fn generate(rng: &mut Rng, root: &Path) {
    let with_rules = rng.chance(50);
    let mut paths: Vec<String> = Vec::new();
    for _ in 0..(4 + rng.below(10)) {
        let depth = rng.below(3);
        let mut p: Vec<String> = (0..depth).map(|_| rng.pick(FOLDERS).to_string()).collect();
        let ext = rng.pick(EXTS);
        let name = rng.pick(NAMES);
        p.push(if ext.is_empty() {
            name.to_string()
        } else {
            format!("{name}.{ext}")
        });
        let path = p.join("/");
        // A file cannot also be a folder.
        let clash = paths.iter().any(|q| {
            q == &path || q.starts_with(&format!("{path}/")) || path.starts_with(&format!("{q}/"))
        });
        if !clash {
            paths.push(path);
        }
    }
    // Strings to write: paths with and without extension, other spellings, and text
    // that merely looks like a path.
    let mut strings: Vec<String> = vec![
        "hello world".into(),
        "../props/rock".into(),
        "/props/rock.json".into(),
        "props//rock".into(),
        "".into(),
        "missing/thing".into(),
        "kind_a".into(),
        "kind_b".into(),
    ];
    for p in &paths {
        strings.push(p.clone());
        if let Some((base, _)) = extension(p) {
            strings.push(base.to_owned());
        }
        strings.push(p.to_uppercase());
        strings.push(format!("{p}.bak"));
        strings.push(format!(" {p}"));
    }
    let keys = [
        "material", "mesh", "unit", "data", "parts", "name", "texture", "kind",
    ];
    fn value(rng: &mut Rng, strings: &[String], keys: &[&str], depth: usize) -> Value {
        match rng.below(if depth > 3 { 2 } else { 5 }) {
            0 | 1 => Value::String(rng.pick(strings).clone()),
            2 => Value::Array(
                (0..rng.below(4))
                    .map(|_| value(rng, strings, keys, depth + 1))
                    .collect(),
            ),
            3 => {
                let mut map = serde_json::Map::new();
                for _ in 0..rng.below(4) {
                    let k = rng.pick(keys).to_string();
                    let v = value(rng, strings, keys, depth + 1);
                    map.insert(k, v);
                }
                Value::Object(map)
            }
            _ => Value::from(rng.below(100) as f64 / 4.0),
        }
    }
    let project = if with_rules {
        format!(r#"{{"references": {RULES}}}"#)
    } else {
        "{}".to_owned()
    };
    fs::write(root.join("kiln.project"), project).unwrap();
    for p in &paths {
        let full = root.join(p);
        fs::create_dir_all(full.parent().unwrap()).unwrap();
        let ext = extension(p).map_or("", |(_, e)| e);
        let bytes: Vec<u8> = match ext {
            "png" => vec![0x89, b'P', b'N', b'G', 0, 1, 2, 0xff],
            "lua" => b"return { rock = 'props/rock' }".to_vec(),
            _ => {
                let v = match ext {
                    "material" => {
                        serde_json::json!({"texture": rng.pick(&strings).clone(), "notes": value(rng, &strings, &keys, 1)})
                    }
                    "sunit" => {
                        serde_json::json!({"parts": [{"mesh": rng.pick(&strings).clone(), "unit": rng.pick(&strings).clone()}], "x": value(rng, &strings, &keys, 1)})
                    }
                    _ => value(rng, &strings, &keys, 0),
                };
                let mut text = if rng.chance(50) {
                    serde_json::to_string_pretty(&v).unwrap()
                } else {
                    serde_json::to_string(&v).unwrap()
                };
                if rng.chance(15) {
                    // JSON may escape a slash.
                    text = text.replace('/', "\\/");
                }
                if rng.chance(10) {
                    text.insert(0, '\u{feff}');
                }
                if rng.chance(10) {
                    // Broken: cut short.
                    let cut = text.len() / 2;
                    text = text.chars().take(cut).collect();
                }
                text.into_bytes()
            }
        };
        fs::write(&full, bytes).unwrap();
    }
    if rng.chance(30) {
        kiln_core::os::symlink("/tmp", root.join("outside_link")).unwrap();
    }
    if rng.chance(30)
        && let Some(p) = paths.first()
    {
        kiln_core::os::symlink(root.join(p), root.join("inner_link.json")).unwrap();
    }
    if rng.chance(20) {
        fs::create_dir_all(root.join(".hidden")).unwrap();
        fs::write(root.join(".hidden/x.json"), r#"["props/rock.json"]"#).unwrap();
    }
}

fn open(root: &Path) -> Checker {
    Checker::open(
        root,
        Arc::new(Registry::with_builtins()),
        &BuildOptions::default(),
    )
    .unwrap()
}

fn cases() -> u32 {
    std::env::var("KILN_DIFF_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

// ---------------------------------------------------------------------------------
// Moves.

/// Every file and folder under `root` (except `.kiln/`) with its bytes.
fn tree(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".kiln" {
                continue;
            }
            let kind = fs::symlink_metadata(e.path()).unwrap().file_type();
            if kind.is_dir() {
                out.insert(rel, None);
                stack.push(e.path());
            } else if kind.is_symlink() {
                out.insert(
                    rel,
                    Some(
                        fs::read_link(e.path())
                            .unwrap()
                            .into_os_string()
                            .into_encoded_bytes(),
                    ),
                );
            } else {
                out.insert(rel, Some(fs::read(e.path()).unwrap()));
            }
        }
    }
    out
}

/// The entries that differ between two trees, for a readable failure.
fn difference(
    a: &BTreeMap<String, Option<Vec<u8>>>,
    b: &BTreeMap<String, Option<Vec<u8>>>,
) -> String {
    let text = |v: Option<&Option<Vec<u8>>>| match v {
        None => "(absent)".to_owned(),
        Some(None) => "(folder)".to_owned(),
        Some(Some(bytes)) => format!("{:?}", String::from_utf8_lossy(bytes)),
    };
    a.keys()
        .chain(b.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("\n  {k}: {} -> {}", text(a.get(k)), text(b.get(k))))
        .collect()
}

/// A random move request on the project: files or folders, to new names, into
/// folders, case-only, onto existing paths, into themselves, several at once.
fn random_request(rng: &mut Rng, root: &Path, checker: &Checker) -> MoveRequest {
    let files: Vec<String> = checker
        .index()
        .files()
        .map(|f| f.path.to_string())
        .collect();
    let mut folders: BTreeSet<String> = BTreeSet::new();
    for f in &files {
        let mut p = f.as_str();
        while let Some((parent, _)) = p.rsplit_once('/') {
            folders.insert(parent.to_owned());
            p = parent;
        }
    }
    let folders: Vec<String> = folders.into_iter().collect();
    let source = |rng: &mut Rng| -> String {
        if !folders.is_empty() && rng.chance(30) {
            rng.pick(&folders).clone()
        } else if files.is_empty() {
            "nothing.json".into()
        } else {
            rng.pick(&files).clone()
        }
    };
    let s = source(rng);
    let name = s.rsplit('/').next().unwrap_or(&s).to_owned();
    let kind = rng.below(8);
    let sources = vec![s.clone()];
    let dest = match kind {
        0 => format!("moved/{name}"),
        1 => {
            let (base, ext) = extension(&name).unwrap_or((&name, ""));
            let new = format!("{}_2", base.to_lowercase().replace(' ', "_"));
            let new = if ext.is_empty() {
                new
            } else {
                format!("{new}.{}", ext.to_lowercase())
            };
            match s.rsplit_once('/') {
                Some((parent, _)) => format!("{parent}/{new}"),
                None => new,
            }
        }
        2 => s.to_lowercase().replace(' ', "_"),
        3 if !folders.is_empty() => format!("{}/", rng.pick(&folders)),
        4 if !files.is_empty() => rng.pick(&files).clone(),
        5 => format!("{s}/inner"),
        6 => {
            let other = source(rng);
            return MoveRequest::from_arguments(root, &[s, other], "bundle/");
        }
        _ => s.clone(),
    };
    MoveRequest::from_arguments(root, &sources, &dest)
}

/// After `plan` was applied: every reference of `before` points where the move
/// says, and every file's bytes are the old ones with exactly the planned patches.
fn check_move(
    before: &References,
    before_tree: &BTreeMap<String, Option<Vec<u8>>>,
    plan: &ops::MovePlan,
    root: &Path,
) -> Result<(), TestCaseError> {
    let moved: BTreeMap<&str, &str> = plan
        .moves
        .iter()
        .map(|(o, n)| (o.as_str(), n.as_str()))
        .collect();
    let place = |p: &str| moved.get(p).map_or(p.to_owned(), |n| n.to_string());
    let skipped: BTreeSet<(String, String)> = plan
        .skipped
        .iter()
        .map(|s| (s.place.file.to_string(), s.place.pointer.clone()))
        .collect();
    let after = oracle(root);
    for ((file, pointer), (_, points)) in before {
        if skipped.contains(&(file.clone(), pointer.clone())) {
            continue;
        }
        let now = after.get(&(place(file), pointer.clone())).map(|(_, p)| p);
        let ok = match points {
            Points::Resolved(t) => now == Some(&Points::Resolved(place(t))),
            Points::Missing(m) => {
                now == Some(&Points::Missing(m.clone()))
                    || now == Some(&Points::Resolved(m.clone()))
            }
            Points::Invalid => now == Some(&Points::Invalid),
            Points::Ambiguous(c) => match now {
                Some(Points::Ambiguous(n)) => c.iter().all(|x| n.contains(&place(x))),
                _ => false,
            },
        };
        prop_assert!(
            ok,
            "{file} {pointer}: {points:?} became {now:?} after {:?}",
            plan.moves
        );
    }
    // Bytes: each file is its old self with the planned patches, nothing else.
    let after_tree = tree(root);
    // Folders: none left empty by the move (one empty before may stay so).
    for (folder, _) in after_tree.iter().filter(|(_, bytes)| bytes.is_none()) {
        let inside = format!("{folder}/");
        let holds_something = after_tree
            .range(inside.clone()..)
            .next()
            .is_some_and(|(p, _)| p.starts_with(&inside));
        prop_assert!(
            holds_something || before_tree.get(folder) == Some(&None),
            "{folder} was left empty by {:?}",
            plan.moves
        );
    }
    for (path, bytes) in before_tree {
        let Some(old) = bytes else { continue };
        if path == "kiln.redirects" {
            continue;
        }
        let mut expected = old.clone();
        if let Some(edit) = plan.edits.iter().find(|e| e.file == *path) {
            for c in edit.changes.iter().rev() {
                // Written as JSON, keeping a `\/` spelling where the original had it.
                let raw = String::from_utf8_lossy(&old[c.span.0 as usize..c.span.1 as usize]);
                let mut text = serde_json::to_string(&c.new_text).unwrap();
                text = text[1..text.len() - 1].to_owned();
                if raw.contains("\\/") {
                    text = text.replace('/', "\\/");
                }
                expected.splice(c.span.0 as usize..c.span.1 as usize, text.bytes());
            }
        }
        let new_path = plan
            .renames
            .iter()
            .find(|(o, _)| path == o || path.starts_with(&format!("{o}/")))
            .map_or(path.clone(), |(o, n)| format!("{n}{}", &path[o.len()..]));
        prop_assert!(
            after_tree.get(&new_path) == Some(&Some(expected.clone())),
            "{} (now {}) should be {:?}, is {:?}",
            path,
            new_path,
            String::from_utf8_lossy(&expected),
            after_tree.get(&new_path)
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------
// The lookup against the graph.

/// The checker's lookup (kept current change by change) answers every question as
/// a graph built from scratch on the same index: for every file and every missing
/// target, what references it, which ambiguous references may mean it, and what it
/// references.
fn lookup_agrees_with_graph(checker: &Checker, when: &str) -> Result<(), TestCaseError> {
    let graph = Graph::build(checker.index());
    let key = |r: &ResolvedRef| (r.file.to_string(), r.index, format!("{:?}", r.target));
    let sorted = |mut v: Vec<(String, usize, String)>| {
        v.sort();
        v
    };
    let mut paths: BTreeSet<String> = checker
        .index()
        .files()
        .map(|f| f.path.to_string())
        .collect();
    for r in graph.references() {
        if let Target::Missing(p) = &r.target {
            paths.insert(p.to_string());
        }
    }
    for p in &paths {
        prop_assert_eq!(
            sorted(graph.references_to(p).into_iter().map(key).collect()),
            sorted(checker.refs_to(p).iter().map(key).collect()),
            "{}: references to {}",
            when,
            p
        );
        // A lookup filed for this one question (as a command working alone files it).
        let partial = Lookup::for_files(checker.index(), std::slice::from_ref(p));
        prop_assert_eq!(
            sorted(graph.references_to(p).into_iter().map(key).collect()),
            sorted(
                partial
                    .references_to(checker.index(), p)
                    .iter()
                    .map(key)
                    .collect()
            ),
            "{}: references to {} (filed for the question)",
            when,
            p
        );
        // The same question asked of the index as a later command loads it from
        // the cache: references still encoded, files that cannot mention it skipped.
        let cached = project_fixture::loaded_from_cache(checker.index());
        let from_cache = Lookup::for_files(&cached, std::slice::from_ref(p));
        prop_assert_eq!(
            sorted(graph.references_to(p).into_iter().map(key).collect()),
            sorted(
                from_cache
                    .references_to(&cached, p)
                    .iter()
                    .map(key)
                    .collect()
            ),
            "{}: references to {} (from the cache)",
            when,
            p
        );
        let mut maybe: Vec<_> = graph
            .ambiguous_references_to(p)
            .into_iter()
            .map(key)
            .collect();
        maybe.sort();
        prop_assert_eq!(
            maybe,
            sorted(
                partial
                    .ambiguous_references_to(checker.index(), p)
                    .iter()
                    .map(key)
                    .collect()
            ),
            "{}: ambiguous references to {} (filed for the question)",
            when,
            p
        );
        prop_assert_eq!(
            sorted(
                graph
                    .ambiguous_references_to(p)
                    .into_iter()
                    .map(key)
                    .collect()
            ),
            sorted(checker.ambiguous_refs_to(p).iter().map(key).collect()),
            "{}: ambiguous references to {}",
            when,
            p
        );
        prop_assert_eq!(
            graph
                .references_from(p)
                .into_iter()
                .map(key)
                .collect::<Vec<_>>(),
            checker.refs_from(p).iter().map(key).collect::<Vec<_>>(),
            "{}: references from {}",
            when,
            p
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------
// The check's resolution against the graph.

/// Adds units that include each other as prefabs (cycles, self-inclusions, missing
/// prefabs, and unit references that are not inclusions), a level of them, and
/// boot levels, some missing, so that what the boot levels reach decides what is
/// unused.
fn add_prefabs_and_boot_levels(rng: &mut Rng, root: &Path) {
    let units: Vec<String> = (0..2 + rng.below(5))
        .map(|i| format!("units/u{i}"))
        .collect();
    let named = |rng: &mut Rng| -> String {
        if rng.chance(15) {
            "units/gone".to_owned()
        } else {
            rng.pick(&units).clone()
        }
    };
    fs::create_dir_all(root.join("units")).unwrap();
    fs::create_dir_all(root.join("levels")).unwrap();
    for unit in &units {
        let entities: Vec<Value> = (0..rng.below(3))
            .map(|i| {
                let mut entity = serde_json::json!({"id": format!("e{i}")});
                if rng.chance(70) {
                    entity["prefab"] = Value::String(named(rng));
                }
                if rng.chance(30) {
                    // A spawner's list names a unit without including it.
                    entity["components"] = serde_json::json!({"spawner": {"units": [named(rng)]}});
                }
                entity
            })
            .collect();
        let text = serde_json::json!({ "entities": entities }).to_string();
        fs::write(root.join(format!("{unit}.unit")), text).unwrap();
    }
    let placed: Vec<Value> = (0..1 + rng.below(3))
        .map(|i| serde_json::json!({"id": format!("p{i}"), "prefab": named(rng)}))
        .collect();
    let level = serde_json::json!({ "entities": placed }).to_string();
    fs::write(root.join("levels/main.level"), level).unwrap();
    let mut boot = vec!["levels/main"];
    if rng.chance(30) {
        boot.push("levels/absent");
    }
    let mut project: Value =
        serde_json::from_slice(&fs::read(root.join("kiln.project")).unwrap()).unwrap();
    project["boot_levels"] = serde_json::json!(boot);
    if rng.chance(50) {
        // The spawner's list typed by a declared rule, as a team would declare it.
        let rule = serde_json::json!({"/entities/*/components/spawner/units/*": "unit"});
        project["references"]["unit"] = rule.clone();
        project["references"]["level"] = rule;
    }
    fs::write(root.join("kiln.project"), project.to_string()).unwrap();
}

/// Sets every regular file under `root` a minute back: a file changed within the
/// last seconds is read again at the next open however the cache stands, and these
/// tests want most entries loaded from the cache, still encoded.
fn age_files(root: &Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let mut folders = vec![root.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).unwrap().flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                folders.push(entry.path());
            } else if kind.is_file() {
                let file = fs::File::options().write(true).open(entry.path()).unwrap();
                file.set_modified(old).unwrap();
            }
        }
    }
}

/// The check's findings from the lean resolution are the graph's, and so is every
/// reference's target, what the boot levels reach and the prefab cycles.
fn resolution_agrees_with_graph(checker: &Checker, when: &str) -> Result<(), TestCaseError> {
    let index = checker.index();
    // First: a resolution of an index loaded from the cache decodes each scan for
    // itself, without keeping it (the graph keeps them).
    let resolution = Resolution::build(index);
    let graph = Graph::build(index);
    let targets = |refs: &dyn ResolvedReferences| {
        let mut out = Vec::new();
        refs.each_reference(index, &mut |f, i, target| {
            out.push((f.path.to_string(), i, target.clone()))
        });
        out
    };
    prop_assert_eq!(targets(&resolution), targets(&graph), "{}: targets", when);
    let config = checker.project().config();
    let roots = check::roots(&config.boot_levels);
    // The graph reaches missing targets too, which are no file to report.
    let files = |set: HashSet<&str, _>| -> BTreeSet<String> {
        set.into_iter()
            .filter(|p| index.contains(p))
            .map(str::to_owned)
            .collect()
    };
    prop_assert_eq!(
        files(resolution.reachable(&roots)),
        files(graph.reachable(&roots)),
        "{}: reachable from {:?}",
        when,
        roots
    );
    prop_assert_eq!(
        resolution.prefab_cycles(),
        graph.prefab_cycles(),
        "{}: cycles",
        when
    );
    let check = |refs: &dyn ResolvedReferences| {
        check::check(
            index,
            refs,
            checker.redirects(),
            &config.boot_levels,
            &config.plugins,
        )
    };
    prop_assert_eq!(check(&resolution), check(&graph), "{}: findings", when);
    Ok(())
}

/// A random change outside Kiln: a file copied to a new name (new references, and
/// maybe new ambiguity), a file deleted, or a file's content replaced by another's.
/// Returns the paths to refresh.
fn random_edit(rng: &mut Rng, root: &Path, checker: &Checker) -> Vec<String> {
    let files: Vec<String> = checker
        .index()
        .files()
        .map(|f| f.path.to_string())
        .collect();
    random_edit_of(rng, root, &files)
}

/// A random edit of one of `files` (created, removed, rewritten) made outside Kiln;
/// returns the paths it changed.
fn random_edit_of(rng: &mut Rng, root: &Path, files: &[String]) -> Vec<String> {
    let files: Vec<String> = files
        .iter()
        .filter(|p| *p != "kiln.project" && *p != "kiln.redirects")
        .cloned()
        .collect();
    if files.is_empty() {
        return Vec::new();
    }
    let a = rng.pick(&files).clone();
    let b = rng.pick(&files).clone();
    match rng.below(4) {
        0 => {
            let name = format!(
                "{}/{}.{}",
                rng.pick(FOLDERS),
                rng.pick(NAMES),
                rng.pick(EXTS)
            );
            let name = name.trim_end_matches('.').to_owned();
            if root.join(&name).exists() {
                return Vec::new();
            }
            fs::create_dir_all(root.join(&name).parent().unwrap()).unwrap();
            fs::copy(root.join(&a), root.join(&name)).unwrap();
            vec![name]
        }
        1 => {
            fs::remove_file(root.join(&a)).unwrap();
            vec![a]
        }
        // A reference put in front of the others: the same keys at new positions.
        2 => match serde_json::from_slice::<Value>(&fs::read(root.join(&a)).unwrap()) {
            Ok(old) => {
                let new = Value::Array(vec![Value::String(b), old]);
                fs::write(root.join(&a), new.to_string()).unwrap();
                vec![a]
            }
            Err(_) => Vec::new(),
        },
        _ => {
            fs::write(root.join(&a), fs::read(root.join(&b)).unwrap()).unwrap();
            vec![a]
        }
    }
}

/// Sets the files `paths` under `root` back by `seconds`, so that the next open
/// reads them (a size or time unlike the cache's) and not the others.
fn set_back(root: &Path, paths: &[String], seconds: u64) {
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(seconds);
    for p in paths {
        if let Ok(file) = fs::File::options().write(true).open(root.join(p)) {
            file.set_modified(then).unwrap();
        }
    }
}

/// A random change of one file's contents outside Kiln, keeping every path: the
/// contents of another file, a reference put in front, the same bytes again, a
/// prefab taken out or put in, JSON cut short, a path to no file put in front, or
/// the same JSON laid out otherwise (the same references at other lines). Returns
/// the path changed.
fn random_contents_edit(rng: &mut Rng, root: &Path, files: &[String]) -> Option<String> {
    let files: Vec<&String> = files.iter().filter(|p| *p != "kiln.project").collect();
    let a = (*rng.pick(&files)).clone();
    let b = (*rng.pick(&files)).clone();
    let bytes = fs::read(root.join(&a)).ok()?;
    let new = match rng.below(8) {
        6 => match serde_json::from_slice::<Value>(&bytes) {
            Ok(old) => Value::Array(vec![Value::String("missing/thing".into()), old])
                .to_string()
                .into(),
            Err(_) => return None,
        },
        7 => match serde_json::from_slice::<Value>(&bytes) {
            Ok(old) if bytes.contains(&b'\n') => old.to_string().into(),
            Ok(old) => serde_json::to_string_pretty(&old).ok()?.into(),
            Err(_) => return None,
        },
        0 => fs::read(root.join(&b)).ok()?,
        1 => match serde_json::from_slice::<Value>(&bytes) {
            Ok(old) => Value::Array(vec![Value::String(b), old]).to_string().into(),
            Err(_) => return None,
        },
        // Touched: read again, the same.
        2 => bytes,
        3 => {
            let text = String::from_utf8(bytes).ok()?;
            text.replacen("\"prefab\"", "\"was_prefab\"", 1).into()
        }
        4 => {
            let text = String::from_utf8(bytes).ok()?;
            text.replacen("\"id\":\"e0\"", "\"id\":\"e0\",\"prefab\":\"units/u0\"", 1)
                .into()
        }
        _ => bytes.get(..bytes.len() / 2)?.to_vec(),
    };
    fs::write(root.join(&a), new).ok()?;
    Some(a)
}

/// A generated project with prefabs and boot levels (see
/// [`add_prefabs_and_boot_levels`]) and, one time in two, a redirect log (see
/// [`add_redirects`]); returns its files.
fn generate_with_redirects(rng: &mut Rng, root: &Path) -> Vec<String> {
    generate(rng, root);
    add_prefabs_and_boot_levels(rng, root);
    let files = |root: &Path| -> Vec<String> {
        (open(root).index().files())
            .map(|f| f.path.to_string())
            .collect()
    };
    if rng.chance(50) {
        add_redirects(rng, root, &files(root));
    }
    files(root)
}

/// Writes a redirect log moving a few paths, some to files of the project, so that
/// references to them are stale.
fn add_redirects(rng: &mut Rng, root: &Path, files: &[String]) {
    let mut log = String::new();
    for _ in 0..rng.below(4) {
        let new = rng.pick(files);
        // The generated files write "missing/thing", and so do the edits.
        let old = if rng.chance(50) {
            "missing/thing".to_owned()
        } else {
            format!("{}/{}", rng.pick(FOLDERS), rng.pick(NAMES))
        };
        let old = match extension(new) {
            Some((_, ext)) if rng.chance(70) => format!("{old}.{ext}"),
            _ => old,
        };
        log.push_str(&format!("{old} -> {new}\n"));
    }
    fs::write(root.join("kiln.redirects"), log).unwrap();
}

/// Whether `path` could be a path of the project: relative, without empty, `.`,
/// `..` or hidden segments.
fn could_be_in_project(path: &str) -> bool {
    !path.is_empty()
        && path
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != ".." && !s.starts_with('.'))
}

/// Where the redirect log's moves, replayed in order, leave the file that was at
/// each old path (docs/references.md): a move takes whatever is at its path then,
/// so a path moved a second time moves what arrived there since, not the file
/// that left. Plainly, in quadratic time.
fn replay_log(lines: &[(String, String)]) -> BTreeMap<String, String> {
    let mut place: BTreeMap<String, String> = BTreeMap::new();
    for (from, to) in lines {
        for at in place.values_mut().filter(|at| *at == from) {
            *at = to.clone();
        }
        place.entry(from.clone()).or_insert_with(|| to.clone());
    }
    place.retain(|origin, at| origin != at);
    place
}

/// The (old, new) a stale reference should be mended with, by the docs
/// (references.md, "stale path"): the redirect log leads exactly one old path the
/// text may mean to one existing file of a type its field accepts, or a text
/// without extension named several files that all moved to one new path without
/// extension.
fn oracle_stale(
    text: &str,
    ty: Option<&str>,
    log: &BTreeMap<String, String>,
    files: &BTreeSet<String>,
) -> Option<String> {
    // `log`: where each old path's file went (see [`replay_log`]).
    let olds: Vec<String> = match ty {
        Some("*") => vec![text.to_owned()],
        Some(ty) => vec![format!("{text}.{ty}")],
        None if log.contains_key(text) => vec![text.to_owned()],
        None => log
            .keys()
            .filter(|old| extension(old).is_some_and(|(base, _)| base == text))
            .cloned()
            .collect(),
    };
    let accepts = |new: &str| match ty {
        None | Some("*") => true,
        Some(ty) => extension(new).is_some_and(|(_, e)| e == ty),
    };
    let mut news: Vec<String> = olds
        .iter()
        .filter_map(|old| log.get(old).cloned())
        .filter(|new| files.contains(new) && accepts(new))
        .collect();
    news.sort();
    news.dedup();
    let base = |p: &str| extension(p).map(|(b, _)| b.to_owned());
    match news.as_slice() {
        [one] => Some(one.clone()),
        [first, rest @ ..] if ty.is_none() && rest.iter().all(|n| base(n) == base(first)) => {
            base(first)
        }
        _ => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// On random projects (with declared rules one time in two) and redirect
    /// logs: `check` reports no error about a reference that `deps` says resolves,
    /// and reports as stale exactly the references the documented rule can mend,
    /// each with the new path the rule gives.
    #[test]
    fn check_agrees_with_deps_and_misses_no_mendable_stale_reference(seed in any::<u64>()) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut rng = Rng(seed);
        // (Without prefabs and levels: the oracle knows only the schemas of
        // materials and the project file.)
        generate(&mut rng, root);
        // Files that moved together, or apart, and a file of cues naming them as
        // a branch made before the moves would.
        let pairs = [("together", "together"), ("apart_a", "apart_b")];
        let mut cues = serde_json::Map::new();
        let mut log = String::new();
        for (k, (a, b)) in pairs.iter().enumerate().filter(|_| rng.chance(70)) {
            for (folder, ext) in [(a, "sound"), (b, "wav")] {
                fs::create_dir_all(root.join(folder)).unwrap();
                fs::write(root.join(format!("{folder}/cue{k}.{ext}")), "{}").unwrap();
                log.push_str(&format!("sfx/cue{k}.{ext} -> {folder}/cue{k}.{ext}\n"));
            }
            cues.insert(format!("cue{k}"), Value::String(format!("sfx/cue{k}")));
        }
        fs::write(root.join("cues.json"), Value::Object(cues).to_string()).unwrap();
        // References that name nothing, each given a line leading somewhere: of
        // the type its field wants, or not.
        let files: Vec<String> = oracle_files(root).into_iter().collect();
        let unresolved: Vec<OracleString> = oracle_strings(root, &oracle_files(root))
            .into_iter()
            .filter(|s| match resolve(&s.text, s.ty.as_deref(), &oracle_files(root)) {
                None => s.ty.is_none(),
                Some(Points::Missing(_)) => true,
                _ => false,
            })
            .collect();
        for _ in 0..rng.below(5) {
            if unresolved.is_empty() || files.is_empty() {
                break;
            }
            let s = rng.pick(&unresolved);
            let new = rng.pick(&files);
            let old = match (s.ty.as_deref(), extension(new)) {
                (Some("*"), _) => s.text.clone(),
                (Some(ty), _) => format!("{}.{ty}", s.text),
                (None, Some((_, ext))) if rng.chance(60) => format!("{}.{ext}", s.text),
                (None, _) => s.text.clone(),
            };
            log.push_str(&format!("{old} -> {new}\n"));
        }
        if rng.chance(50) {
            fs::write(root.join("kiln.redirects"), &log).unwrap();
        } else {
            add_redirects(&mut rng, root, &files);
            let mut all = fs::read_to_string(root.join("kiln.redirects")).unwrap();
            all.push_str(&log);
            fs::write(root.join("kiln.redirects"), all).unwrap();
        }
        let checker = open(root);
        let findings = checker.findings();
        let deps = checker_references(&checker);
        for f in &findings {
            let Some(place) = f.place() else { continue };
            let key = (place.file.to_string(), place.pointer.clone());
            let points = deps.get(&key).map(|(_, p)| p);
            // A field Kiln compiles (a material's, the project file's, as the
            // oracle knows them) refuses a non-canonical spelling that resolves:
            // that error is by design. Any other reference that resolves is fine.
            let compiled = match extension(&place.file) {
                Some((_, "material")) => place.pointer == "/texture",
                Some((_, "project")) => place.pointer.starts_with("/boot_levels/"),
                _ => false,
            };
            let contradicted = match f {
                Finding::Missing { .. } | Finding::StaleRedirect { .. } => {
                    matches!(points, Some(Points::Resolved(_)))
                }
                Finding::InvalidReference { .. } => {
                    !compiled && matches!(points, Some(Points::Resolved(_)))
                }
                Finding::Ambiguous { .. } => !matches!(points, Some(Points::Ambiguous(_))),
                Finding::NonCanonicalReference { .. } => !matches!(points, Some(Points::Resolved(_))),
                _ => false,
            };
            prop_assert!(!contradicted, "{f} but deps says {points:?}");
        }
        let lines: Vec<(String, String)> = fs::read_to_string(root.join("kiln.redirects"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once(" -> "))
            .map(|(a, b)| (a.trim().to_owned(), b.trim().to_owned()))
            // A line naming a path that cannot be in the project is ignored.
            .filter(|(a, b)| could_be_in_project(a) && could_be_in_project(b))
            .collect();
        let log = replay_log(&lines);
        let files = oracle_files(root);
        let mut expected: BTreeMap<(String, String), String> = BTreeMap::new();
        for s in oracle_strings(root, &files) {
            let names_nothing = match resolve(&s.text, s.ty.as_deref(), &files) {
                None => s.ty.is_none(),
                Some(Points::Missing(_)) => true,
                _ => false,
            };
            // Only a string that could be a path is a candidate at all.
            if !names_nothing || (s.ty.is_none() && !could_be_in_project(&s.text)) {
                continue;
            }
            if let Some(new) = oracle_stale(&s.text, s.ty.as_deref(), &log, &files) {
                expected.insert((s.file, s.pointer), new);
            }
        }
        let found: BTreeMap<(String, String), String> = findings
            .iter()
            .filter_map(|f| match f {
                Finding::StaleRedirect { place, new, .. } => {
                    Some(((place.file.to_string(), place.pointer.clone()), new.clone()))
                }
                _ => None,
            })
            .collect();
        let expected_keys: BTreeSet<_> = expected.keys().collect();
        let found_keys: BTreeSet<_> = found.keys().collect();
        prop_assert_eq!(found_keys, expected_keys, "log {:?}", log);
    }

    /// The index finds exactly the references the oracle finds.
    #[test]
    fn the_index_agrees_with_the_oracle(seed in any::<u64>()) {
        let dir = tempfile::tempdir().unwrap();
        generate(&mut Rng(seed), dir.path());
        let checker = open(dir.path());
        prop_assert_eq!(checker_references(&checker), oracle(dir.path()));
    }

    /// Random moves keep every reference right, change only reference bytes, and
    /// their inverses, applied in reverse, restore the project byte for byte.
    #[test]
    fn moves_keep_references_and_inverses_restore_everything(seed in any::<u64>()) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut rng = Rng(seed);
        generate(&mut rng, root);
        let mut checker = open(root);
        let original = tree(root);
        let mut undo: Vec<Operation> = Vec::new();
        for _ in 0..(1 + rng.below(4)) {
            let request = random_request(&mut rng, root, &checker);
            let before = oracle(root);
            let before_tree = tree(root);
            // Planned by a checker that files only the references that can name
            // the moved files, as `kiln mv` working alone does, and by one that
            // keeps the whole lookup, as a running editor does.
            let alone = ops::plan(&open(root), &request);
            checker.lookup();
            let plan = match ops::plan(&checker, &request) {
                Ok(plan) => plan,
                Err(CheckerError::Refused { .. } | CheckerError::MoveRefused { .. }) => {
                    prop_assert_eq!(&tree(root), &before_tree, "a refused plan changed files");
                    prop_assert!(alone.is_err(), "{request:?} refused only with the whole lookup");
                    continue;
                }
                Err(e) => return Err(TestCaseError::fail(format!("{request:?}: {e}"))),
            };
            let alone = alone.ok();
            prop_assert_eq!(alone.as_ref(), Some(&plan), "{:?}", request);
            if plan.is_empty() {
                continue;
            }
            let inverse = ops::apply(&mut checker, &plan)
                .map_err(|e| TestCaseError::fail(format!("{request:?}: {e}")))?;
            undo.push(inverse);
            check_move(&before, &before_tree, &plan, root)?;
            // The index, kept current by the move, still agrees with the oracle.
            prop_assert_eq!(checker_references(&checker), oracle(root));
            lookup_agrees_with_graph(&checker, &format!("after {request:?}"))?;
        }
        while let Some(inverse) = undo.pop() {
            let plan = inverse
                .plan(&checker)
                .map_err(|e| TestCaseError::fail(format!("undo {inverse:?}: {e}")))?;
            ops::apply(&mut checker, &plan)
                .map_err(|e| TestCaseError::fail(format!("undo {inverse:?}: {e}")))?;
        }
        let restored = tree(root);
        prop_assert!(restored == original, "not restored: {}", difference(&original, &restored));
    }

    /// `kiln deps` working alone trusts the cache for all but the file asked about
    /// and the files of the folders its references point into. After random edits
    /// behind the cache, its answer for every file and folder is a full index's.
    #[test]
    fn dependencies_from_the_cache_and_a_few_folders_are_a_full_index_s(seed in any::<u64>()) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut rng = Rng(seed);
        generate(&mut rng, root);
        // The cache, written when the first checker is dropped.
        drop(open(root));
        for _ in 0..1 + rng.below(4) {
            let files: Vec<String> = tree(root)
                .into_keys()
                .filter(|p| {
                    !p.starts_with(".kiln")
                        && fs::symlink_metadata(root.join(p)).is_ok_and(|m| m.is_file())
                })
                .collect();
            random_edit_of(&mut rng, root, &files);
            // A file beside another under the same name with another extension:
            // what a reference written without extension may now also name.
            let picked: Option<&String> = (!files.is_empty()).then(|| rng.pick(&files[..]));
            if let Some((base, _)) = picked.and_then(|p| extension(p)) {
                let twin = format!("{base}.{}", rng.pick(EXTS)).trim_end_matches('.').to_owned();
                if !root.join(&twin).exists() {
                    fs::write(root.join(&twin), "{}").unwrap();
                }
            }
        }
        let asked: BTreeSet<String> = tree(root)
            .into_keys()
            .filter(|p| !p.starts_with(".kiln"))
            .collect();
        let alone: Vec<_> = asked
            .iter()
            .map(|p| {
                let checker = Checker::open_for_dependencies_of(
                    root,
                    Arc::new(Registry::with_builtins()),
                    &BuildOptions::default(),
                    p,
                )
                .unwrap();
                (checker.files_under(p), checker.dependencies_of(p))
            })
            .collect();
        let full = open(root);
        for (p, (files, deps)) in asked.iter().zip(alone) {
            prop_assert_eq!(files, full.files_under(p), "files under {}", p);
            prop_assert_eq!(deps, full.dependencies_of(p), "dependencies of {}", p);
        }
    }

    /// The lookup, kept current through edits made outside Kiln, answers as a graph
    /// built from scratch.
    #[test]
    fn the_lookup_kept_current_answers_as_a_graph_built_from_scratch(seed in any::<u64>()) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut rng = Rng(seed);
        generate(&mut rng, root);
        let mut checker = open(root);
        lookup_agrees_with_graph(&checker, "at start")?;
        for step in 0..6 {
            let paths = random_edit(&mut rng, root, &checker);
            checker.refresh(&paths).unwrap();
            lookup_agrees_with_graph(&checker, &format!("step {step}: {paths:?}"))?;
        }
    }

    /// `kiln check` resolves every reference once into numbers, without the graph;
    /// its findings, on random projects with prefabs and boot levels and after
    /// random edits outside Kiln, are the graph's.
    #[test]
    fn the_checks_resolution_agrees_with_the_graph(seed in any::<u64>()) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut rng = Rng(seed);
        generate(&mut rng, root);
        add_prefabs_and_boot_levels(&mut rng, root);
        age_files(root);
        let mut checker = open(root);
        resolution_agrees_with_graph(&checker, "at start")?;
        for step in 0..3 {
            let paths = random_edit(&mut rng, root, &checker);
            checker.refresh(&paths).unwrap();
            resolution_agrees_with_graph(&checker, &format!("step {step}: {paths:?}"))?;
        }
        // Its cache, written when it is dropped, loaded again: scans still encoded.
        drop(checker);
        let reopened = open(root);
        prop_assert!(
            reopened.index().files().any(|f| !f.scan_is_decoded()),
            "nothing was loaded from the cache"
        );
        resolution_agrees_with_graph(&reopened, "opened from the cache")?;
    }

    /// A check after files' contents changed, opened from a cache holding the
    /// findings of the project as it was, works out again only what those files
    /// decide where it can; what it reports is what a check from scratch reports,
    /// edit after edit, the cache rewritten or not in between.
    #[test]
    fn a_check_after_contents_changed_finds_what_a_check_from_scratch_finds(
        seed in any::<u64>()
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut rng = Rng(seed);
        // The log too is edited: the findings of every file may follow it.
        let files = generate_with_redirects(&mut rng, root);
        age_files(root);
        let _ = fs::remove_dir_all(root.join(".kiln"));
        open(root).findings();
        for step in 0..4 {
            let mut edited: Vec<String> = (0..1 + rng.below(3))
                .filter_map(|_| random_contents_edit(&mut rng, root, &files))
                .collect();
            let log = root.join("kiln.redirects");
            if rng.chance(25) && let Ok(text) = fs::read_to_string(&log) {
                // A move taken out of the log: references to its old path are
                // stale no more.
                let kept: Vec<&str> = text.lines().skip(1).collect();
                fs::write(&log, kept.join("\n")).unwrap();
                edited.push("kiln.redirects".into());
            }
            set_back(root, &edited, 30 - step * 5);
            let from_cache = open(root).findings();
            // The cache the check left is the next step's start.
            let cache = fs::read(root.join(".kiln/index.bin")).unwrap();
            fs::remove_file(root.join(".kiln/index.bin")).unwrap();
            let from_scratch = open(root).findings();
            fs::write(root.join(".kiln/index.bin"), cache).unwrap();
            prop_assert_eq!(from_cache, from_scratch, "step {}: edited {:?}", step, edited);
        }
    }

    /// A running checker (an editor's, `kiln watch`'s) refreshed after edits
    /// outside Kiln keeps what it knows of the findings over changes of files'
    /// contents; what it reports is what a check from scratch reports, whether it
    /// was asked after each edit or after several.
    #[test]
    fn a_running_checker_finds_after_edits_what_a_check_from_scratch_finds(
        seed in any::<u64>()
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut rng = Rng(seed);
        generate_with_redirects(&mut rng, root);
        let mut checker = open(root);
        checker.findings();
        for step in 0..6 {
            let files: Vec<String> =
                checker.index().files().map(|f| f.path.to_string()).collect();
            let paths: Vec<String> = if rng.chance(75) {
                (0..1 + rng.below(3))
                    .filter_map(|_| random_contents_edit(&mut rng, root, &files))
                    .collect()
            } else {
                random_edit(&mut rng, root, &checker)
            };
            checker.refresh(&paths).unwrap();
            if rng.chance(40) {
                continue;
            }
            let running = checker.findings();
            let _ = fs::remove_file(root.join(".kiln/index.bin"));
            let from_scratch = open(root).findings();
            prop_assert_eq!(running, from_scratch, "step {}: edited {:?}", step, paths);
        }
    }

    /// A first index kept in the cache's encoding (as headless commands build it:
    /// each file encoded by its walker thread as it is scanned, the threads' string
    /// tables joined after the walk) holds the references a decoded one holds, and
    /// a check of it finds the same; and so does the cache it writes.
    #[test]
    fn a_first_index_kept_encoded_holds_what_a_decoded_one_holds(seed in any::<u64>()) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut rng = Rng(seed);
        generate(&mut rng, root);
        add_prefabs_and_boot_levels(&mut rng, root);
        let open_with = |keep_encoded: bool, threads: usize| {
            let options = BuildOptions { keep_encoded, threads, ..BuildOptions::default() };
            Checker::open(root, Arc::new(Registry::with_builtins()), &options).unwrap()
        };
        let decoded = open_with(false, 1);
        let expected = (checker_references(&decoded), decoded.findings());
        drop(decoded);
        let original = tree(root);
        let regular: Vec<&String> = (original.keys())
            .filter(|p| !p.starts_with(".kiln"))
            .filter(|p| fs::symlink_metadata(root.join(p)).is_ok_and(|m| m.is_file()))
            .collect();
        for threads in [1, 3] {
            fs::remove_dir_all(root.join(".kiln")).unwrap();
            let encoded = open_with(true, threads);
            prop_assert!(
                encoded.index().files().all(|f| !f.scan_is_decoded()),
                "kept encoded"
            );
            // Emptied behind its back: what it answers must come from its records
            // (a record that does not read is read again from its file).
            for p in &regular {
                fs::write(root.join(p), "{}").unwrap();
            }
            let findings = encoded.findings();
            prop_assert_eq!(&checker_references(&encoded), &expected.0, "{} threads", threads);
            prop_assert_eq!(&findings, &expected.1, "{} threads", threads);
            drop(encoded);
            for p in &regular {
                if let Some(Some(bytes)) = original.get(*p) {
                    fs::write(root.join(p), bytes).unwrap();
                }
            }
            let reopened = open_with(false, 1);
            prop_assert_eq!(&checker_references(&reopened), &expected.0, "from its cache");
        }
    }
}
