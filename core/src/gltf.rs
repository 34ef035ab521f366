//! glTF 2.0 files: their `uri` references and the binary container (`.glb`).
//!
//! The `uri` of a glTF file's `buffers` and `images` is a URI reference (RFC 3986):
//! a path relative to the folder of the glTF file, percent-encoded, or a URI with a
//! scheme (`data:` embeds the bytes, `http:` names something elsewhere) that names
//! no file of the project. This module resolves such a path to a project path and
//! writes the path from one file to another as such a URI; resolution is lexical, on
//! project paths only: nothing on disk is read, and a path that climbs above the
//! project root is an error, never a file.
//!
//! A `.glb` file is a 12-byte header (magic `glTF`, version 2, total length) followed
//! by chunks of (length, type, data): first the JSON chunk, padded with spaces to a
//! multiple of 4 bytes, then optionally a `BIN` chunk. [`glb_layout`] checks that
//! structure and finds the JSON, which is scanned like a `.gltf` file; patching
//! rewrites only the JSON chunk ([`repack_glb`]), re-padding it and fixing both
//! lengths, and copies every other chunk byte for byte.

use std::ops::Range;

/// The magic at the start of a binary glTF file.
pub const GLB_MAGIC: &[u8; 4] = b"glTF";
/// The chunk type of the JSON chunk (`JSON` in ASCII, little-endian).
pub const CHUNK_JSON: u32 = 0x4E4F_534A;
/// The chunk type of the binary buffer chunk (`BIN\0`).
pub const CHUNK_BIN: u32 = 0x004E_4942;
/// Size of the file header.
const HEADER: usize = 12;
/// Size of a chunk's header (length and type).
const CHUNK_HEADER: usize = 8;

/// Whether a string of a glTF `uri` field starts with a scheme (`data:`,
/// `http:`, ...): then it names no file of the project. A single letter followed
/// by `:/` or `:\` is a Windows drive, not a scheme: such an absolute path is kept,
/// to be reported.
pub fn has_scheme(uri: &str) -> bool {
    let Some(colon) = uri.find(':') else {
        return false;
    };
    let scheme = &uri[..colon];
    let is_scheme = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    let drive = scheme.len() == 1 && matches!(uri.as_bytes().get(2), Some(b'/' | b'\\'));
    is_scheme && !drive
}

/// The path part of a URI reference: what comes before a query (`?`) or a
/// fragment (`#`).
fn path_part(uri: &str) -> &str {
    uri.find(['?', '#']).map_or(uri, |i| &uri[..i])
}

/// Decodes the `%XX` escapes of a URI path (RFC 3986, section 2.1). Other
/// characters are taken as they are (exporters often write a space unencoded).
pub fn percent_decode(text: &str) -> Result<String, String> {
    // `percent-encoding` passes a `%` without two hex digits through as it is; a
    // URI Kiln patches must not, so that is an error here, said where.
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices('%') {
        let hex = |k: usize| bytes.get(k).is_some_and(u8::is_ascii_hexdigit);
        if !(hex(i + 1) && hex(i + 2)) {
            return Err(format!(
                "\"%\" at byte {i} is not followed by two hex digits"
            ));
        }
    }
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .map(|decoded| decoded.into_owned())
        .map_err(|_| "its %-escapes do not decode to UTF-8 text".to_owned())
}

/// What a URI path segment leaves as it is: unreserved characters (RFC 3986:
/// letters, digits, `-`, `.`, `_`, `~`).
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes one file or folder name for a URI path: unreserved characters
/// stay as they are, every other byte is `%XX`.
fn percent_encode_segment(segment: &str, out: &mut String) {
    out.extend(percent_encoding::utf8_percent_encode(segment, SEGMENT));
}

/// The folder of a project file, as its path segments (empty at the root).
fn folder_of(file: &str) -> Vec<&str> {
    let mut segments: Vec<&str> = file.split('/').collect();
    segments.pop();
    segments
}

/// The project path the `uri` of the glTF file `from_file` names, or why it names
/// none (it leaves the project, is absolute, or does not decode). Purely lexical.
pub fn resolve_uri(from_file: &str, uri: &str) -> Result<String, String> {
    let path = path_part(uri);
    if path.is_empty() {
        return Err("names no file (an empty path)".into());
    }
    if path.starts_with('/') {
        return Err("is an absolute path; a glTF URI is relative to the glTF file's folder".into());
    }
    if has_scheme_like_drive(path) {
        return Err(
            "is an absolute Windows path; a glTF URI is relative to the glTF file's folder".into(),
        );
    }
    if path.contains('\\') {
        return Err("contains a backslash (URIs separate folders with /)".into());
    }
    let decoded = percent_decode(path)?;
    if decoded.contains('\0') {
        return Err("contains a NUL character".into());
    }
    if decoded.ends_with('/') {
        return Err("names a folder, not a file".into());
    }
    let mut segments = folder_of(from_file);
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Err("leads outside the project".into());
                }
            }
            s => segments.push(s),
        }
    }
    if segments.is_empty() {
        return Err("names the project folder, not a file".into());
    }
    Ok(segments.join("/"))
}

/// `C:/...` or `C:\...`.
fn has_scheme_like_drive(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'/' | b'\\')
}

/// The relative, percent-encoded URI that names the project file `to_file` from the
/// glTF file `from_file` (`../textures/my%20bark.png`).
pub fn relative_uri(from_file: &str, to_file: &str) -> String {
    let from = folder_of(from_file);
    let to: Vec<&str> = to_file.split('/').collect();
    let folders = to.len().saturating_sub(1);
    let common = from
        .iter()
        .zip(&to[..folders])
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = "../".repeat(from.len() - common);
    for (k, segment) in to[common..].iter().enumerate() {
        if k > 0 {
            out.push('/');
        }
        percent_encode_segment(segment, &mut out);
    }
    out
}

/// The text a glTF `uri` that is now `old_uri` gets when it must name `to_file` from
/// the glTF file at `from_file`: the relative URI, keeping a leading `./` and a
/// query or fragment the old text had.
pub fn replacement_uri(from_file: &str, to_file: &str, old_uri: &str) -> String {
    let mut uri = relative_uri(from_file, to_file);
    if old_uri.starts_with("./") && !uri.starts_with("../") {
        uri.insert_str(0, "./");
    }
    uri.push_str(&old_uri[path_part(old_uri).len()..]);
    uri
}

/// Whether a file of a glTF type is the binary container: named `.glb`, or starting
/// with its magic.
pub fn is_binary(ext: &str, bytes: &[u8]) -> bool {
    ext.eq_ignore_ascii_case("glb") || bytes.starts_with(GLB_MAGIC)
}

/// Where a valid binary glTF file keeps its JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlbLayout {
    /// Byte range of the JSON chunk's data (padding included).
    pub json: Range<usize>,
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Checks the structure of a binary glTF file (header, then whole chunks, the first
/// one JSON) and returns where its JSON is; or what is wrong, in words.
pub fn glb_layout(bytes: &[u8]) -> Result<GlbLayout, String> {
    let len = bytes.len();
    if !bytes.starts_with(GLB_MAGIC) {
        return Err(if len < GLB_MAGIC.len() {
            format!("truncated: {len} bytes, shorter than the 12-byte header")
        } else {
            "it does not start with the binary glTF magic \"glTF\"".into()
        });
    }
    let (Some(version), Some(total)) = (u32_at(bytes, 4), u32_at(bytes, 8)) else {
        return Err(format!(
            "truncated: {len} bytes, shorter than the 12-byte header"
        ));
    };
    if version != 2 {
        return Err(format!(
            "it is version {version} of binary glTF; Kiln reads version 2"
        ));
    }
    if total as usize != len {
        return Err(format!(
            "the header says the file has {total} bytes, it has {len} (truncated, or data after its end)"
        ));
    }
    let (Some(json_len), Some(json_type)) = (u32_at(bytes, HEADER), u32_at(bytes, HEADER + 4))
    else {
        return Err("truncated: there is no JSON chunk after the header".into());
    };
    if json_type != CHUNK_JSON {
        return Err(format!(
            "the first chunk has type 0x{json_type:08X}, not JSON (0x{CHUNK_JSON:08X})"
        ));
    }
    let start = HEADER + CHUNK_HEADER;
    let json_len = json_len as usize;
    if !json_len.is_multiple_of(4) {
        return Err(format!(
            "the JSON chunk's length {json_len} is not a multiple of 4"
        ));
    }
    let end = start
        .checked_add(json_len)
        .filter(|&end| end <= len)
        .ok_or_else(|| {
            format!(
                "truncated: the JSON chunk says it has {json_len} bytes, {} follow",
                len - start
            )
        })?;
    // The other chunks (the BIN chunk, extensions' chunks) must be whole.
    let mut at = end;
    while at < len {
        let (Some(chunk_len), Some(_)) = (u32_at(bytes, at), u32_at(bytes, at + 4)) else {
            return Err(format!(
                "truncated: the chunk header at byte {at} is cut off"
            ));
        };
        let data = at + CHUNK_HEADER;
        at = data
            .checked_add(chunk_len as usize)
            .filter(|&e| e <= len)
            .ok_or_else(|| {
                format!(
                    "truncated: the chunk at byte {at} says it has {chunk_len} bytes, {} follow",
                    len - data
                )
            })?;
    }
    Ok(GlbLayout { json: start..end })
}

/// The binary glTF file `original` with its JSON chunk replaced by that of
/// `patched`: `patched` is `original` with bytes replaced inside the JSON chunk's
/// data only. The new JSON is padded with spaces to a multiple of 4 bytes, the
/// chunk's length and the header's total length are set to match, and every byte
/// after the JSON chunk is copied from `original` unchanged.
///
/// Trailing spaces are padding or insignificant JSON whitespace, which cannot be
/// told apart: the JSON keeps its trailing spaces in whole groups of four and gets
/// the fewest more that align it. That is the minimal padding for JSON that does not
/// end in spaces (what writers produce), and it makes patching back give the
/// original bytes whatever the JSON ended with.
pub fn repack_glb(original: &[u8], patched: &[u8]) -> Result<Vec<u8>, String> {
    let layout = glb_layout(original)?;
    let json_end = (layout.json.end + patched.len())
        .checked_sub(original.len())
        .filter(|&e| e >= layout.json.start && e <= patched.len())
        .ok_or("the patch does not fit the JSON chunk")?;
    let json = patched
        .get(layout.json.start..json_end)
        .ok_or("the patch does not fit the JSON chunk")?;
    let trailing = json.iter().rev().take_while(|&&b| b == b' ').count();
    let content = &json[..json.len() - trailing];
    let padded = content.len().next_multiple_of(4) + (trailing & !3);
    let rest = &original[layout.json.end..];
    let total = layout.json.start + padded + rest.len();
    let too_big = || format!("the file would be {total} bytes, more than binary glTF allows");
    let padded_u32 = u32::try_from(padded).map_err(|_| too_big())?;
    let total_u32 = u32::try_from(total).map_err(|_| too_big())?;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&original[..8]);
    out.extend_from_slice(&total_u32.to_le_bytes());
    out.extend_from_slice(&padded_u32.to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(content);
    out.resize(layout.json.start + padded, b' ');
    out.extend_from_slice(rest);
    Ok(out)
}

/// A binary glTF file of `json` (padded with spaces) and, optionally, a BIN chunk
/// (tests, and tools that write one).
pub fn glb(json: &str, bin: Option<&[u8]>) -> Vec<u8> {
    let mut json = json.as_bytes().to_vec();
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    let mut out = Vec::new();
    out.extend_from_slice(GLB_MAGIC);
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(&json);
    if let Some(bin) = bin {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(bin);
    }
    let total = out.len() as u32;
    out[8..12].copy_from_slice(&total.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_escapes_are_decoded_per_rfc_3986() {
        assert_eq!(percent_decode("my%20tex.png").unwrap(), "my tex.png");
        assert_eq!(percent_decode("a%2fb%25c").unwrap(), "a/b%c");
        assert_eq!(percent_decode("caf%C3%A9.png").unwrap(), "café.png");
        // `+` is a plus in a path (a space only in form data); raw spaces are taken.
        assert_eq!(percent_decode("a+b c.png").unwrap(), "a+b c.png");
        for bad in ["50%", "a%2", "a%zz.png", "%C3.png"] {
            assert!(percent_decode(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn uris_resolve_relative_to_the_gltf_folder_and_never_above_the_root() {
        let r = |from: &str, uri: &str| resolve_uri(from, uri);
        assert_eq!(
            r("models/tree.gltf", "tree.bin"),
            Ok("models/tree.bin".into())
        );
        assert_eq!(
            r("models/tree.gltf", "../textures/my%20bark.png"),
            Ok("textures/my bark.png".into())
        );
        assert_eq!(
            r("models/a/tree.gltf", "./../b/./x.png?v=2#frag"),
            Ok("models/b/x.png".into())
        );
        assert_eq!(r("tree.gltf", "t.png"), Ok("t.png".into()));
        for (from, uri, why) in [
            ("tree.gltf", "../outside.png", "outside the project"),
            (
                "models/tree.gltf",
                "../../../etc/passwd",
                "outside the project",
            ),
            (
                "models/tree.gltf",
                "a/../../../x.png",
                "outside the project",
            ),
            (
                "models/tree.gltf",
                "%2E%2E/%2E%2E/x.png",
                "outside the project",
            ),
            ("models/tree.gltf", "/etc/passwd", "absolute path"),
            (
                "models/tree.gltf",
                "C:/textures/x.png",
                "absolute Windows path",
            ),
            ("models/tree.gltf", "textures\\x.png", "backslash"),
            ("models/tree.gltf", "x%zz.png", "hex digits"),
            ("models/tree.gltf", "..", "project folder"),
            ("models/tree.gltf", "textures/", "folder"),
        ] {
            let err = r(from, uri).unwrap_err();
            assert!(err.contains(why), "{uri}: {err}");
        }
    }

    #[test]
    fn schemes_name_no_file() {
        for uri in [
            "data:application/octet-stream;base64,AAAA",
            "DATA:image/png;base64,",
            "http://example.com/t.png",
            "https:t.png",
            "file:///etc/passwd",
            "urn:x-kiln:t",
        ] {
            assert!(has_scheme(uri), "{uri}");
        }
        for uri in [
            "t.png",
            "a/b:c.png",
            "./c:d.png",
            "C:/t.png",
            "c:\\t.png",
            ":x",
        ] {
            assert!(!has_scheme(uri), "{uri}");
        }
    }

    #[test]
    fn relative_uris_are_percent_encoded_paths_from_the_gltf_folder() {
        assert_eq!(
            relative_uri("models/tree.gltf", "models/tree.bin"),
            "tree.bin"
        );
        assert_eq!(
            relative_uri("models/trees/oak.gltf", "textures/bark wood.png"),
            "../../textures/bark%20wood.png"
        );
        assert_eq!(
            relative_uri("oak.gltf", "tex/100%_é#1?.png"),
            "tex/100%25_%C3%A9%231%3F.png"
        );
        // A file named like a folder of the path is not mistaken for it.
        assert_eq!(relative_uri("a/b/m.gltf", "a/b"), "../b");
        assert_eq!(relative_uri("a/m.gltf", "a/a:b.png"), "a%3Ab.png");
        assert_eq!(relative_uri("a/m.gltf", "a/x~y-z_.png"), "x~y-z_.png");
        // Whatever is written, it resolves back to the file.
        for (from, to) in [
            ("m.gltf", "a b/c%d.png"),
            ("x/y/m.gltf", "x/z/ü.bin"),
            ("x/y/m.gltf", "t.png"),
        ] {
            assert_eq!(
                resolve_uri(from, &relative_uri(from, to)),
                Ok(to.to_owned())
            );
        }
        assert_eq!(
            replacement_uri("m/a.gltf", "m/b.png", "./a.png?x#y"),
            "./b.png?x#y"
        );
        assert_eq!(replacement_uri("m/a.gltf", "b.png", "./a.png"), "../b.png");
    }

    #[test]
    fn glb_structure_is_checked_and_problems_are_named() {
        let good = glb(r#"{"asset":{"version":"2.0"}}"#, Some(&[1, 2, 3, 4]));
        let layout = glb_layout(&good).unwrap();
        assert_eq!(layout.json.start, 20);
        assert_eq!(&good[layout.json.clone()][..9], br#"{"asset":"#);
        // Every truncation is an error that says so, never a panic.
        for len in 0..good.len() {
            let err = glb_layout(&good[..len]).unwrap_err();
            assert!(
                err.contains("truncated") || err.contains("header says"),
                "{len}: {err}"
            );
        }
        let mut v1 = good.clone();
        v1[4] = 1;
        assert!(glb_layout(&v1).unwrap_err().contains("version 1"));
        let mut not_json = good.clone();
        not_json[16..20].copy_from_slice(&CHUNK_BIN.to_le_bytes());
        assert!(glb_layout(&not_json).unwrap_err().contains("not JSON"));
        assert!(
            glb_layout(b"PK\x03\x04 a zip")
                .unwrap_err()
                .contains("magic")
        );
        let mut long_chunk = good.clone();
        long_chunk[12..16].copy_from_slice(&4000u32.to_le_bytes());
        assert!(
            glb_layout(&long_chunk)
                .unwrap_err()
                .contains("JSON chunk says it has 4000 bytes")
        );
        let mut long_bin = good.clone();
        let bin_at = layout.json.end;
        long_bin[bin_at..bin_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(glb_layout(&long_bin).unwrap_err().contains("chunk at byte"));
        let mut odd = good.clone();
        odd[12..16].copy_from_slice(&((layout.json.len() - 1) as u32).to_le_bytes());
        assert!(glb_layout(&odd).unwrap_err().contains("multiple of 4"));
    }

    #[test]
    fn repacking_pads_the_json_and_fixes_both_lengths() {
        let bin: Vec<u8> = (0..=255).collect();
        // 24 bytes of JSON: no padding.
        let json = r#"{"buffers":[{"uri":"a"}]}"#;
        let original = glb(json, Some(&bin));
        for new_uri in ["", "ab", "abc", "abcd", "abcde"] {
            let mut patched = original.clone();
            let at = 20 + json.find("\"a\"").unwrap() + 1;
            patched.splice(at..at + 1, new_uri.bytes());
            let out = repack_glb(&original, &patched).unwrap();
            let expected = glb(
                &json.replace("\"a\"", &format!("\"{new_uri}\"")),
                Some(&bin),
            );
            assert_eq!(out, expected, "{new_uri}");
            let layout = glb_layout(&out).unwrap();
            assert_eq!(layout.json.len() % 4, 0);
            assert_eq!(&out[layout.json.end + 8..], &bin[..], "BIN chunk intact");
            // And back: the original, byte for byte.
            let mut back = out.clone();
            back.splice(at..at + new_uri.len(), b"a".iter().copied());
            assert_eq!(repack_glb(&out, &back).unwrap(), original);
        }
    }

    #[test]
    fn json_ending_in_spaces_is_patched_back_to_its_original_bytes() {
        let bin = [5u8; 8];
        for tail in 0..9 {
            let json = format!("{{\"images\":[{{\"uri\":\"a\"}}]}}{}", " ".repeat(tail));
            let original = glb(&json, Some(&bin));
            let at = 20 + json.find("\"a\"").unwrap() + 1;
            for new_uri in ["", "ab", "abc", "abcd", "abcde"] {
                let mut patched = original.clone();
                patched.splice(at..at + 1, new_uri.bytes());
                let out = repack_glb(&original, &patched).unwrap();
                let layout = glb_layout(&out).unwrap();
                assert_eq!(layout.json.len() % 4, 0);
                assert_eq!(&out[layout.json.end + 8..], &bin[..]);
                let text = std::str::from_utf8(&out[layout.json.clone()]).unwrap();
                assert_eq!(
                    text.trim_end(),
                    json.trim_end().replace("\"a\"", &format!("\"{new_uri}\""))
                );
                let mut back = out.clone();
                back.splice(at..at + new_uri.len(), b"a".iter().copied());
                assert_eq!(
                    repack_glb(&out, &back).unwrap(),
                    original,
                    "{tail} {new_uri}"
                );
            }
        }
    }
}
