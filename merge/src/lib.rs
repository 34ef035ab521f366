//! # kiln_merge
//!
//! Merging Kiln's files three ways, as a git merge driver does (`kiln merge`), and
//! telling what changed between two versions of one (`kiln diff`).
//!
//! - Levels and units merge by authoring id ([`level`]): what one side added,
//!   removed or edited merges with what the other did to other entities; an entity
//!   both edited merges field by field.
//! - Every other JSON file Kiln reads (materials, meshes, `kiln.project`, a
//!   project's own types) merges key by key ([`json`]).
//! - The redirect log merges as a union ([`redirects`]).
//! - A value both sides changed differently is a conflict, written into the file as
//!   a marker ([`kiln_core::conflict`]): the file stays readable, the editor
//!   resolves it, and the compiler and checker refuse it until then.
//! - What Kiln cannot read (a side that does not parse, a file of another kind) is
//!   not merged here: git's line merge does it ([`Outcome::NotKilns`]).
//!
//! ```
//! let base = r#"{"color": [1, 1, 1, 1], "roughness": 0.5}"#;
//! let ours = r#"{"color": [1, 0, 0, 1], "roughness": 0.5}"#;
//! let theirs = r#"{"color": [1, 1, 1, 1], "roughness": 0.9}"#;
//! let kiln_merge::Outcome::Merged { text, conflicts } =
//!     kiln_merge::merge_file("materials/bark.material", base.as_bytes(), ours.as_bytes(), theirs.as_bytes())
//! else { panic!() };
//! assert!(conflicts.is_empty());
//! assert_eq!(text, "{\n  \"color\": [1, 0, 0, 1],\n  \"roughness\": 0.9\n}\n");
//! ```
#![warn(missing_docs)]

pub mod diff;
pub mod json;
pub mod level;
mod order;
pub mod redirects;

use kiln_core::conflict::Conflict;

/// What merging one file came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Merged: the text to write, holding `conflicts` as markers.
    Merged {
        /// The merged file.
        text: String,
        /// Its conflicts, in document order.
        conflicts: Vec<Conflict>,
    },
    /// Not a file Kiln merges, or a side that does not read as one: why.
    NotKilns(String),
}

use kiln_core::project::REDIRECT_FILE;

/// Merges the three versions of the project file `path` (its type is its
/// extension). An empty base is a file both sides added.
pub fn merge_file(path: &str, base: &[u8], ours: &[u8], theirs: &[u8]) -> Outcome {
    let texts = (|| {
        Ok::<_, String>((
            utf8_text(base, "base is")?,
            utf8_text(ours, "ours is")?,
            utf8_text(theirs, "theirs is")?,
        ))
    })();
    let (base, ours, theirs) = match texts {
        Ok(t) => t,
        Err(why) => return Outcome::NotKilns(why),
    };
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == REDIRECT_FILE {
        return Outcome::Merged {
            text: redirects::merge_redirects(base, ours, theirs),
            conflicts: Vec::new(),
        };
    }
    // A side Kiln's own checker would refuse is not merged by meaning: read
    // leniently it would lose content (an empty side reads as "every entity
    // deleted", a value nested past the parser's limit as nothing, a repeated key
    // as its last value). Git's line merge keeps every byte of it.
    for (side, text) in [("base", base), ("ours", ours), ("theirs", theirs)] {
        if let Err(why) = readable(side, text) {
            return Outcome::NotKilns(why);
        }
    }
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    if matches!(ext, "level" | "unit") {
        return match level::merge_level(base, ours, theirs) {
            Ok((text, conflicts)) => Outcome::Merged { text, conflicts },
            Err(why) => Outcome::NotKilns(format!("not a level Kiln can read: {why}")),
        };
    }
    merge_json(base, ours, theirs)
}

/// Whether one side reads as Kiln reads it: JSON, no key twice in an object,
/// nested no deeper than the parser goes, and not empty (only the base may be:
/// git passes an empty base for a file both sides added).
fn readable(side: &str, text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return if side == "base" {
            Ok(())
        } else {
            Err(format!("{side} is empty"))
        };
    }
    kiln_core::json_format::reject_duplicate_keys(text).map_err(|e| {
        format!(
            "{side} is not JSON Kiln reads: line {}, column {}: {e}",
            e.line(),
            e.column()
        )
    })
}

/// `bytes` as text, without a byte-order mark; borrowed, not copied (three
/// versions of a big level are most of what a merge holds). `Err` says `what`
/// is not UTF-8 text.
pub(crate) fn utf8_text<'b>(bytes: &'b [u8], what: &str) -> Result<&'b str, String> {
    let bytes = kiln_core::json_format::bytes_without_bom(bytes);
    std::str::from_utf8(bytes).map_err(|_| format!("{what} not UTF-8 text"))
}

/// Merges JSON files key by key; written canonically.
fn merge_json(base: &str, ours: &str, theirs: &str) -> Outcome {
    let read = |text: &str, side: &str| -> Result<Option<serde_json::Value>, String> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        kiln_core::json_format::reject_duplicate_keys(text)
            .and_then(|()| serde_json::from_str(text))
            .map(Some)
            .map_err(|e| {
                format!(
                    "{side} is not JSON: line {}, column {}: {e}",
                    e.line(),
                    e.column()
                )
            })
    };
    let sides = (|| {
        Ok::<_, String>((
            read(base, "base")?,
            read(ours, "ours")?,
            read(theirs, "theirs")?,
        ))
    })();
    let (b, o, t) = match sides {
        Ok(s) => s,
        Err(why) => return Outcome::NotKilns(why),
    };
    let mut conflicts = Vec::new();
    let merged = json::merge(
        &mut json::Place::default(),
        b.as_ref(),
        o.as_ref(),
        t.as_ref(),
        &mut conflicts,
    );
    let text = merged.map_or_else(String::new, |v| {
        kiln_core::json_format::to_canonical_string(&v)
    });
    Outcome::Merged { text, conflicts }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(ids: &[&str]) -> String {
        let entities: Vec<String> = ids
            .iter()
            .map(|id| format!(r#"{{"id": "{id}"}}"#))
            .collect();
        format!(r#"{{"entities": [{}]}}"#, entities.join(", "))
    }

    fn refused(path: &str, base: &str, ours: &str, theirs: &str) -> String {
        match merge_file(path, base.as_bytes(), ours.as_bytes(), theirs.as_bytes()) {
            Outcome::NotKilns(why) => why,
            other => panic!("merged what Kiln cannot read: {other:?}"),
        }
    }

    /// One side deletes 30,000 parents the other put a child under each of: one
    /// conflict each, in linear time (the parents put back were placed one insert
    /// at a time, quadratic: 75 s at 100,000).
    #[test]
    fn many_deleted_parents_with_children_merge_in_linear_time() {
        let n = 30_000;
        let parents: Vec<String> = (0..n).map(|k| format!("p{k}")).collect();
        let ids: Vec<&str> = parents.iter().map(String::as_str).collect();
        let base = level(&ids);
        let ours = level(&[]);
        let mut theirs: Vec<String> = Vec::new();
        for k in 0..n {
            theirs.push(format!(r#"{{"id": "p{k}"}}"#));
            theirs.push(format!(r#"{{"id": "c{k}", "parent": "p{k}"}}"#));
        }
        let theirs = format!(r#"{{"entities": [{}]}}"#, theirs.join(", "));
        let started = std::time::Instant::now();
        let merged = merge_file(
            "l.level",
            base.as_bytes(),
            ours.as_bytes(),
            theirs.as_bytes(),
        );
        let Outcome::Merged { conflicts, .. } = merged else {
            panic!("{merged:?}");
        };
        assert_eq!(conflicts.len(), n);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn sides_kiln_cannot_read_go_to_the_line_merge_naming_why() {
        let base = level(&["a", "b", "c"]);
        let ours = level(&["a", "b", "c", "d"]);
        // Positive control: readable sides merge.
        assert!(matches!(
            merge_file("l.level", base.as_bytes(), ours.as_bytes(), base.as_bytes()),
            Outcome::Merged { .. }
        ));
        for path in ["l.level", "m.material"] {
            assert_eq!(refused(path, &base, &ours, ""), "theirs is empty");
            assert_eq!(refused(path, &base, " \n", &ours), "ours is empty");
        }
        let twice = r#"{"entities": [{"id": "a", "id": "b"}]}"#;
        assert!(refused("l.level", &base, &ours, twice).contains("duplicate key \"id\""));
        let deep = format!(
            r#"{{"entities": [{{"id": "a", "components": {{"x": {{"v": {}1{}}}}}}}]}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let why = refused("l.level", &base, &deep, &ours);
        assert!(why.starts_with("ours is not JSON Kiln reads"), "{why}");
        assert!(why.contains("recursion limit"), "{why}");
        // An empty base is a file both sides added.
        assert!(matches!(
            merge_file("l.level", b"", ours.as_bytes(), ours.as_bytes()),
            Outcome::Merged { .. }
        ));
    }
}
