//! The JSON span scanner: one pass over a file's bytes that keeps the path of keys
//! and indices to the current value and hands each string value, with its byte
//! span, line and column, to classification. No JSON tree is built.
//!
//! Hand-written because the job needs what a JSON library does not give: the byte
//! span of each string as written (a move patches exactly those bytes and leaves
//! the rest of the file as it was), its line and column, the path to it, and a key
//! given twice found in Kiln's own files, all in one pass with no tree. Its speed
//! (`cargo run --release -p kiln_benches --example scan_speed`) is in
//! BENCHMARKS.md beside `serde_json` skipping the same bytes.

use super::scanner::{Boundary, EntityMarks, Scanner, Schema, Segment};
use super::store::ScanError;

/// Whether `b` matches JSON's number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)?
/// ([eE] [+-]? [0-9]+)?`. Checked by hand: parsing every number of a level as `f64`
/// only to throw it away was a visible share of indexing time.
pub(super) fn valid_number(b: &[u8]) -> bool {
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

/// Whether the valid JSON number `b` is too large for an `f64`, which `kiln
/// compile`'s parser (serde_json) refuses as "number out of range": one parser
/// policy for both commands. Only a number with an exponent, or of more digits
/// than any finite `f64` has, can be; the others are not parsed.
fn out_of_range(b: &[u8]) -> bool {
    let could_be = b.len() > 300 || b.iter().any(|&c| c == b'e' || c == b'E');
    could_be
        && std::str::from_utf8(b)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .is_some_and(|v| v.is_infinite())
}

/// How deeply arrays and objects may nest: serde_json's limit, which `kiln
/// compile` parses with, so that both commands refuse the same files.
const MAX_DEPTH: usize = 126;

impl<'a, 'r> Scanner<'a, 'r> {
    pub(super) fn error(&self, message: &str) -> ScanError {
        let upto = &self.bytes[..self.pos.min(self.bytes.len())];
        let line = memchr::memchr_iter(b'\n', upto).count() as u32 + 1;
        let line_start = memchr::memrchr(b'\n', upto).map_or(0, |i| i + 1);
        ScanError {
            line,
            column: (self.pos - line_start) as u32 + 1,
            message: message.to_owned(),
        }
    }

    /// JSON text is UTF-8; checking the whole file once lets every string be taken
    /// as text without a check of its own.
    pub(super) fn check_utf8(&mut self) -> Result<(), ScanError> {
        match std::str::from_utf8(self.bytes) {
            Ok(text) => {
                self.text = text;
                Ok(())
            }
            Err(e) => {
                self.pos = e.valid_up_to();
                Err(self.error("invalid UTF-8"))
            }
        }
    }

    /// The 1-based line and column (in bytes) of `pos`, on the line
    /// [`Scanner::skip_ws`] reached last (a token's first byte).
    pub(super) fn line_at(&self, pos: usize) -> (u32, u32) {
        (self.line, pos.saturating_sub(self.line_start) as u32 + 1)
    }

    pub(super) fn skip_ws(&mut self) -> Result<(), ScanError> {
        let mut pos = self.pos;
        while let Some(&b) = self.bytes.get(pos) {
            match b {
                b' ' | b'\r' | b'\t' => pos += 1,
                b'\n' => {
                    pos += 1;
                    self.line += 1;
                    self.line_start = pos;
                }
                _ => break,
            }
        }
        self.pos = pos;
        Ok(())
    }

    pub(super) fn value(&mut self, depth: usize) -> Result<(), ScanError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        match self.bytes.get(self.pos) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                let (start, end, escaped) = self.string()?;
                self.string_value(start, end, escaped);
                Ok(())
            }
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => {
                let start = self.pos;
                while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') =
                    self.bytes.get(self.pos)
                {
                    self.pos += 1;
                }
                let number = &self.bytes[start..self.pos];
                if !valid_number(number) {
                    self.pos = start;
                    return Err(self.error("invalid number"));
                }
                if out_of_range(number) {
                    self.pos = start;
                    return Err(self.error("number out of range"));
                }
                Ok(())
            }
            Some(_) => Err(self.error("expected a value")),
            None => Err(self.error("unexpected end of file")),
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), ScanError> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error("expected a value"))
        }
    }

    /// Parses a string token; returns the content range and whether it has escapes.
    /// One pass over its bytes: strings are short (a key, a path), and a search
    /// call per string and a second pass for control characters cost more than
    /// looking at each byte once.
    fn string(&mut self) -> Result<(usize, usize, bool), ScanError> {
        let start = self.pos + 1;
        let mut i = start;
        let mut escaped = false;
        // JSON forbids raw control characters in strings: the first one is
        // reported if the string ends, as a raw line break is where it stands.
        let mut control = None;
        loop {
            match self.bytes.get(i) {
                Some(b'"') => {
                    if let Some(c) = control {
                        self.pos = c;
                        return Err(self.error("control character inside a string"));
                    }
                    // An escape must decode: a file `serde_json` would reject is
                    // not read differently here.
                    if escaped
                        && serde_json::from_slice::<String>(&self.bytes[start - 1..i + 1]).is_err()
                    {
                        self.pos = start - 1;
                        return Err(self.error("invalid escape in a string"));
                    }
                    self.pos = i + 1;
                    return Ok((start, i, escaped));
                }
                Some(b'\\') => {
                    escaped = true;
                    // The escaped byte is never the end of the string nor a line
                    // break, but is a control character if it is one.
                    if self.bytes.get(i + 1).is_some_and(|&b| b < 0x20) {
                        control = control.or(Some(i + 1));
                    }
                    i += 2;
                    if i > self.bytes.len() {
                        self.pos = self.bytes.len();
                        return Err(self.error("unterminated string"));
                    }
                }
                Some(b'\n') => {
                    self.pos = i;
                    return Err(self.error("line break inside a string"));
                }
                Some(&b) if b < 0x20 => {
                    control = control.or(Some(i));
                    i += 1;
                }
                // Plain text, up to the next byte that may be special, in a loop of
                // its own (5% to 10% faster than a turn of the one above per byte).
                Some(_) => {
                    i += 1;
                    while let Some(&b) = self.bytes.get(i) {
                        if b == b'"' || b == b'\\' || b < 0x20 {
                            break;
                        }
                        i += 1;
                    }
                }
                None => {
                    self.pos = self.bytes.len();
                    return Err(self.error("unterminated string"));
                }
            }
        }
    }

    pub(super) fn decode(&self, start: usize, end: usize, escaped: bool) -> Option<String> {
        if escaped {
            serde_json::from_slice::<String>(&self.bytes[start - 1..end + 1]).ok()
        } else {
            self.text.get(start..end).map(str::to_owned)
        }
    }

    fn object(&mut self, depth: usize) -> Result<(), ScanError> {
        self.pos += 1;
        self.skip_ws()?;
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(());
        }
        let first_key = self.keys.len();
        // Kiln's own files only: foreign data (a glTF file too) is read as it is.
        let check_keys = matches!(self.schema, Schema::Entities | Schema::Fields(_));
        loop {
            self.skip_ws()?;
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(self.error("expected a key in double quotes"));
            }
            let key_at = self.pos;
            let (ks, ke, kesc) = self.string()?;
            if check_keys {
                let key = &self.bytes[ks..ke];
                if self.keys[first_key..]
                    .iter()
                    .any(|&(s, e)| &self.bytes[s..e] == key)
                {
                    self.pos = key_at;
                    return Err(self.error(&format!(
                        "duplicate key \"{}\" in one object (the first is ignored; often a merge gone wrong)",
                        String::from_utf8_lossy(key)
                    )));
                }
                self.keys.push((ks, ke));
            }
            self.skip_ws()?;
            if self.bytes.get(self.pos) != Some(&b':') {
                return Err(self.error("expected ':' after the key"));
            }
            self.pos += 1;
            self.skip_ws()?;
            let segment = match (kesc, self.text.get(ks..ke)) {
                (false, Some(key)) => Segment::Key(key),
                _ => Segment::EscapedKey(ks as u32, ke as u32),
            };
            self.path.push(segment);
            self.value(depth + 1)?;
            self.path.pop();
            self.skip_ws()?;
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    self.keys.truncate(first_key);
                    return Ok(());
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<(), ScanError> {
        self.pos += 1;
        // A level's entity list, marked for a later scan of its next version by
        // the entities that changed (see `resume.rs`).
        let marking = depth == 1
            && self.marks.is_some()
            && matches!(self.path.as_slice(), [Segment::Key("entities")]);
        if marking {
            self.mark(|marks, here| marks.open = Some(here));
        }
        self.skip_ws()?;
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            if marking {
                self.mark(|marks, here| marks.close = Some(here));
            }
            return Ok(());
        }
        let mut index = 0u32;
        loop {
            self.skip_ws()?;
            self.path.push(Segment::Index(index));
            self.value(depth + 1)?;
            self.path.pop();
            if marking {
                self.mark(|marks, here| marks.ends.push(here));
            }
            index += 1;
            self.skip_ws()?;
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    if marking {
                        self.mark(|marks, here| marks.close = Some(here));
                    }
                    return Ok(());
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

    /// Where the scanner is, as a [`Boundary`] (between two tokens, so the line
    /// [`Scanner::skip_ws`] reached is the line it is on).
    pub(super) fn here(&self) -> Boundary {
        Boundary {
            pos: self.pos as u32,
            line: self.line,
            line_start: self.line_start as u32,
            records: self.scan.records.len() as u32,
        }
    }

    fn mark(&mut self, f: impl FnOnce(&mut EntityMarks, Boundary)) {
        let here = self.here();
        if let Some(marks) = &mut self.marks {
            f(marks, here);
        }
    }

    pub(super) fn write_pointer(&self, p: &mut String) {
        use std::fmt::Write as _;
        p.clear();
        for seg in &self.path {
            p.push('/');
            match seg {
                Segment::Index(n) => {
                    let _ = write!(p, "{n}");
                }
                Segment::Key(key) => {
                    if key.contains(['~', '/']) {
                        p.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    } else {
                        p.push_str(key);
                    }
                }
                Segment::EscapedKey(s, e) => {
                    let key = self
                        .decode(*s as usize, *e as usize, true)
                        .unwrap_or_default();
                    p.push_str(&key.replace('~', "~0").replace('/', "~1"));
                }
            }
        }
    }
}
