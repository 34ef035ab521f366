//! Canonical resource paths ("What Is In a Name?"): resources refer to each other by
//! their path from the project root, without extension, in exactly one spelling.
//!
//! A canonical path uses lowercase ASCII letters, digits, `_`, `-` and `.` in its
//! names, `/` between segments, has no empty, `.` or `..` segment and no leading or
//! trailing slash. `textures/flowers/rose` is canonical; `./Textures\flowers//rose` is
//! not, and the error names the canonical form.

use std::fmt;

/// Why a string is not a canonical resource path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("\"{input}\" is not a canonical resource path: {reason}{}", suggestion.as_ref().map(|s| format!(" (did you mean \"{s}\"?)")).unwrap_or_default())]
pub struct PathError {
    /// The rejected text.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
    /// The canonical spelling of the same path, where one exists.
    pub suggestion: Option<String>,
}

/// A validated canonical resource path, without extension.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourcePath(String);

fn valid_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-' | '.')
}

fn check(s: &str) -> Result<(), &'static str> {
    // The common case in one pass, without the reasons' separate ones.
    if ResourcePath::is_canonical(s) {
        return Ok(());
    }
    why_not_canonical(s)
}

/// Whether `segment`, made of canonical characters, may be a path's segment.
fn is_segment(segment: &[u8]) -> bool {
    !matches!(segment, b"" | b"." | b"..")
}

/// Why `s` is not canonical: the rules one by one, each with its reason.
fn why_not_canonical(s: &str) -> Result<(), &'static str> {
    if s.is_empty() {
        return Err("it is empty");
    }
    if s.contains('\\') {
        return Err("it contains a backslash (use /)");
    }
    if s.starts_with('/') || s.as_bytes().get(1) == Some(&b':') {
        return Err("it is absolute (paths start at the project root)");
    }
    if s.ends_with('/') {
        return Err("it ends with a slash");
    }
    for segment in s.split('/') {
        match segment {
            "" => return Err("it has an empty segment (//)"),
            "." => return Err("it has a '.' segment"),
            ".." => return Err("it has a '..' segment"),
            _ => {}
        }
        if segment.chars().any(|c| c.is_ascii_uppercase()) {
            return Err("it has uppercase letters");
        }
        if !segment.chars().all(valid_char) {
            return Err("it has characters other than a-z, 0-9, _, - and .");
        }
    }
    Ok(())
}

/// The canonical spelling of `s`, if lowercasing, turning `\` into `/` and resolving
/// `.`, `..` and empty segments yields a valid path inside the project.
fn suggest(s: &str) -> Option<String> {
    let lowered = s.to_ascii_lowercase().replace('\\', "/");
    if lowered.as_bytes().get(1) == Some(&b':') {
        return None;
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in lowered.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop()?;
            }
            other => segments.push(other),
        }
    }
    let candidate = segments.join("/");
    (check(&candidate).is_ok() && candidate != s).then_some(candidate)
}

/// The canonical spelling of a name typed by a person or brought from elsewhere,
/// for one segment of a path (a file's name without its extension, or a folder's):
/// lowercase, with every run of characters outside `a-z`, `0-9`, `_`, `-` and `.`
/// turned into one `_`, and no `_` or `.` at either end (`"Tree Model (2)"` ->
/// `"tree_model_2"`). Empty when nothing of it is left.
pub fn canonical_segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars().flat_map(char::to_lowercase) {
        if valid_char(c) {
            out.push(c);
        } else if let Some(plain) = unaccented(c) {
            out.push_str(plain);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches(|c| c == '_' || c == '.').to_owned()
}

/// The plain letters of an accented Latin one (`ä` -> `a`, `ß` -> `ss`), so that a
/// name keeps its look when it is made canonical.
fn unaccented(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ą' => "a",
        'æ' => "ae",
        'ç' | 'ć' | 'č' => "c",
        'ď' | 'đ' => "d",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ę' | 'ě' => "e",
        'ì' | 'í' | 'î' | 'ï' | 'ī' => "i",
        'ł' => "l",
        'ñ' | 'ń' | 'ň' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ő' => "o",
        'œ' => "oe",
        'ř' => "r",
        'ś' | 'š' => "s",
        'ß' => "ss",
        'ť' => "t",
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' | 'ű' => "u",
        'ý' | 'ÿ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        _ => return None,
    })
}

/// Whether `ext` is a canonical resource type (a file extension without its dot):
/// the canonical alphabet without `.`, since the type is what follows the last dot
/// (`physics_config`, `sprite_animation`, `png`).
pub fn is_extension(ext: &str) -> bool {
    !ext.is_empty() && ext.chars().all(|c| c != '.' && valid_char(c))
}

impl ResourcePath {
    /// Whether `s` is a canonical path: what [`ResourcePath::parse`] accepts,
    /// without allocating (the checker asks it of every reference).
    pub fn is_canonical(s: &str) -> bool {
        // One pass over the bytes: a segment may not be empty, `.` or `..`.
        let mut segment_start = 0;
        for (i, b) in s.bytes().enumerate() {
            if b == b'/' {
                if !is_segment(&s.as_bytes()[segment_start..i]) {
                    return false;
                }
                segment_start = i + 1;
            } else if !valid_char(char::from(b)) {
                // A byte of a multi-byte character is no ASCII character either.
                return false;
            }
        }
        is_segment(&s.as_bytes()[segment_start..])
    }

    /// Validates `s` as a canonical path.
    pub fn parse(s: &str) -> Result<Self, PathError> {
        match check(s) {
            Ok(()) => Ok(ResourcePath(s.to_owned())),
            Err(reason) => Err(PathError {
                input: s.to_owned(),
                reason,
                suggestion: suggest(s),
            }),
        }
    }

    /// The path text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The path with `.ext` appended: the file's path relative to the project root.
    pub fn with_extension(&self, ext: &str) -> String {
        format!("{}.{ext}", self.0)
    }

    /// Splits a project-relative file path such as `materials/bark.material` into its
    /// canonical path and resource type (the text after the last dot of the file name).
    pub fn split_file(file: &str) -> Result<(ResourcePath, String), PathError> {
        let name_start = file.rfind('/').map_or(0, |i| i + 1);
        match file[name_start..].rfind('.') {
            Some(dot) if dot > 0 => {
                let dot = name_start + dot;
                let ext = &file[dot + 1..];
                let path = ResourcePath::parse(&file[..dot]).map_err(|mut e| {
                    e.input = file.to_owned();
                    e.suggestion = e
                        .suggestion
                        .map(|s| format!("{s}.{}", ext.to_ascii_lowercase()));
                    e
                })?;
                if !is_extension(ext) {
                    return Err(PathError {
                        input: file.to_owned(),
                        reason: "its extension has characters other than a-z, 0-9, _ and -",
                        suggestion: suggest(file).filter(|s| s != file),
                    });
                }
                Ok((path, ext.to_owned()))
            }
            _ => Err(PathError {
                input: file.to_owned(),
                reason: "it has no extension (the extension is the resource type)",
                suggestion: None,
            }),
        }
    }
}

impl fmt::Display for ResourcePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ResourcePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// The runtime name of a resource: the 64-bit FNV-1a hash of `path.type` (for example
/// of the bytes `materials/bark.material`). Compiled blobs store these instead of
/// strings. [`ResourceId::NONE`] (zero) means "no resource".
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ResourceId(pub u64);

impl ResourceId {
    /// No resource.
    pub const NONE: ResourceId = ResourceId(0);

    /// The id of `path` with resource type `resource_type`.
    pub fn of(path: &ResourcePath, resource_type: &str) -> Self {
        let mut h = fnv1a64(path.as_str().as_bytes(), 0xcbf2_9ce4_8422_2325);
        h = fnv1a64(b".", h);
        ResourceId(fnv1a64(resource_type.as_bytes(), h))
    }
}

impl fmt::Debug for ResourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ResourceId({:016x})", self.0)
    }
}

/// 64-bit FNV-1a, continued from `hash`.
pub(crate) fn fnv1a64(bytes: &[u8], mut hash: u64) -> u64 {
    for &b in bytes {
        hash ^= b as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01B3);
    }
    hash
}

/// 32-bit FNV-1a: how a component type name becomes its `component_identifier`.
pub fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for &b in bytes {
        hash ^= b as u32;
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_paths_pass() {
        for p in ["textures/flowers/rose", "a", "a.b/c-d_e/0"] {
            assert_eq!(ResourcePath::parse(p).unwrap().as_str(), p);
        }
    }

    #[test]
    fn names_from_elsewhere_get_a_canonical_spelling() {
        for (name, canonical) in [
            ("Tree Model (2)", "tree_model_2"),
            ("bark", "bark"),
            ("  Ölbaum Äste  ", "olbaum_aste"),
            ("Straße", "strasse"),
            ("日本", ""),
            ("..hidden", "hidden"),
            ("a--b__c", "a--b__c"),
            ("***", ""),
        ] {
            let got = canonical_segment(name);
            assert_eq!(got, canonical, "{name}");
            assert!(got.is_empty() || ResourcePath::is_canonical(&got), "{got}");
        }
    }

    #[test]
    fn non_canonical_paths_name_the_canonical_form() {
        let cases = [
            ("./Textures\\flowers//rose", Some("textures/flowers/rose")),
            ("models/../textures/rose", Some("textures/rose")),
            ("Textures/Rose", Some("textures/rose")),
            ("textures/rose/", Some("textures/rose")),
            ("/textures/rose", Some("textures/rose")),
            ("../outside", None),
            ("c:/windows", None),
            ("has space", None),
            ("", None),
        ];
        for (input, suggestion) in cases {
            let err = ResourcePath::parse(input).unwrap_err();
            assert_eq!(err.suggestion.as_deref(), suggestion, "{input}: {err}");
            if let Some(s) = suggestion {
                assert!(err.to_string().contains(s));
            }
        }
    }

    proptest::proptest! {
        /// The one-pass test agrees with the rules checked one by one, on strings
        /// made mostly of the characters that decide (`/`, `.`, case, `\\`, `:`).
        #[test]
        fn the_one_pass_test_agrees_with_the_rules(s in "[a-cA\\\\/.:_ 0é-]{0,12}") {
            proptest::prop_assert_eq!(
                ResourcePath::is_canonical(&s),
                why_not_canonical(&s).is_ok(),
                "{:?}",
                s
            );
        }
    }

    #[test]
    fn split_file_takes_the_last_extension() {
        let (p, ext) = ResourcePath::split_file("textures/rose.hi.png").unwrap();
        assert_eq!((p.as_str(), ext.as_str()), ("textures/rose.hi", "png"));
        assert!(ResourcePath::split_file("textures/rose").is_err());
        assert!(ResourcePath::split_file("textures/.png").is_err());
        for file in [
            "global.physics_config",
            "walk.sprite_animation",
            "a/b.x-1",
            "a/b.2d",
        ] {
            let (p, ext) = ResourcePath::split_file(file).unwrap();
            assert_eq!(format!("{p}.{ext}"), file);
        }
        assert!(ResourcePath::split_file("a/b.Png").is_err());
        assert!(ResourcePath::split_file("a/b.p g").is_err());
        let e = ResourcePath::split_file("Textures/Rose.png").unwrap_err();
        assert_eq!(e.suggestion.as_deref(), Some("textures/rose.png"));
    }

    #[test]
    fn hashes_match_published_fnv_vectors() {
        assert_eq!(fnv1a32(b"a"), 0xe40c292c);
        assert_eq!(fnv1a64(b"a", 0xcbf2_9ce4_8422_2325), 0xaf63dc4c8601ec8c);
        let p = ResourcePath::parse("materials/bark").unwrap();
        assert_eq!(
            ResourceId::of(&p, "material").0,
            fnv1a64(b"materials/bark.material", 0xcbf2_9ce4_8422_2325)
        );
    }
}
