//! The editor's model is held in parts that do not know the editor: `impl Editor`
//! is in `model/mod.rs` (dispatch, and what the panels read) and `model/served.rs`
//! (commands typed in a terminal) only, and no other file of the model names
//! `Editor`. Read from the sources, so that the layout `docs/development.md`
//! describes is checked on every run.

use std::path::Path;

/// Whether `text` names the `Editor` type (not a variant or a longer name that
/// starts with it, such as `ChangedBy::Editor` or `EditorPlugins`).
fn names_editor(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for pattern in [
            "impl Editor",
            "for Editor",
            "super::Editor",
            "&Editor",
            "&mut Editor",
            "Editor::",
        ] {
            let mut from = 0;
            while let Some(at) = code[from..].find(pattern) {
                let start = from + at;
                let end = start + pattern.len();
                let before_ok = start == 0
                    || !code[..start]
                        .ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
                    || pattern.starts_with("super::");
                let after_ok = !code[end..].starts_with(|c: char| c.is_alphanumeric() || c == '_');
                if before_ok && after_ok {
                    found.push(format!("{}: {}", n + 1, line.trim()));
                }
                from = end;
            }
        }
        if code.trim_start().starts_with("use super::{") && code.contains("Editor,") {
            found.push(format!("{}: {}", n + 1, line.trim()));
        }
    }
    found
}

#[test]
fn no_part_of_the_model_knows_the_editor() {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/editor/model");
    let mut files: Vec<_> = std::fs::read_dir(&model)
        .expect("the model's folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    assert!(files.len() > 10, "{files:?}");
    let mut wrong = Vec::new();
    let mut in_mod = 0;
    for file in &files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(file).expect("a source file");
        let named = names_editor(&text);
        match name.as_str() {
            "mod.rs" => in_mod = named.len(),
            "served.rs" => {}
            _ => wrong.extend(named.into_iter().map(|l| format!("{name}:{l}"))),
        }
    }
    // A positive control: the reading finds the editor where it is.
    assert!(in_mod >= 2, "mod.rs's impl blocks were not found");
    assert!(
        wrong.is_empty(),
        "parts that name the editor:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_reading_tells_the_editor_from_names_that_start_with_it() {
    assert_eq!(names_editor("impl Editor {").len(), 1);
    assert_eq!(names_editor("use super::{Editor, Effect};").len(), 1);
    assert!(names_editor("impl EditorPlugins {").is_empty());
    assert!(names_editor("ChangedBy::Editor { document_edited }").is_empty());
    assert!(names_editor("// impl Editor in a comment").is_empty());
}
