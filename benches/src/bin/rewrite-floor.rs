//! The floor `kiln mv` is measured against (issue 13): rewriting the files that
//! reference a moved file, each read, patched, written to a temporary file beside it
//! and renamed over, then the file itself moved. Nothing else: no index, no journal,
//! no check that the text is a reference. A whole process, so that hyperfine times
//! it beside `kiln mv` in one run.
//!
//! ```text
//! rewrite-floor PROJECT FILE-LIST OLD-TEXT NEW-TEXT OLD-PATH NEW-PATH
//! ```
//!
//! `FILE-LIST` holds one project-relative path per line (the files `kiln mv`
//! patches, from `kiln refs --json`); every occurrence of `OLD-TEXT` in them becomes
//! `NEW-TEXT`.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

fn rewrite(root: &Path, list: &str, old: &str, new: &str) -> std::io::Result<usize> {
    let mut count = 0;
    for rel in list.lines().filter(|l| !l.is_empty()) {
        let path = root.join(rel);
        let text = fs::read_to_string(&path)?;
        let patched = text.replace(old, new);
        let temp = path.with_file_name(format!(
            ".{}.floor-tmp",
            path.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        ));
        fs::File::create(&temp)?.write_all(patched.as_bytes())?;
        fs::rename(&temp, &path)?;
        count += 1;
    }
    Ok(count)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [root, list, old, new, from, to] = args.as_slice() else {
        eprintln!("usage: rewrite-floor PROJECT FILE-LIST OLD-TEXT NEW-TEXT OLD-PATH NEW-PATH");
        return ExitCode::from(2);
    };
    let root = Path::new(root);
    let result = fs::read_to_string(list).and_then(|list| {
        let n = rewrite(root, &list, old, new)?;
        fs::rename(root.join(from), root.join(to))?;
        Ok(n)
    });
    match result {
        Ok(n) => {
            println!("rewrote {n} files and moved {from} -> {to}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
