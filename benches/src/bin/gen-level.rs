//! Writes the editor benchmark's project with one level of N entities (two components
//! each, nine in ten with a parent): `gen-level DIR N [compact|canonical]`. The level
//! is `DIR/levels/big.level`, one entity per line (compact), or as the editor saves
//! it (canonical); `kiln compile DIR` and the editor open it.
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(n)) = (args.next(), args.next()) else {
        eprintln!("usage: gen-level DIR ENTITIES [compact|canonical]");
        return ExitCode::from(2);
    };
    let Ok(n) = n.replace('_', "").parse::<usize>() else {
        eprintln!("error: ENTITIES must be a number, not {n:?}");
        return ExitCode::from(2);
    };
    let canonical = args.next().as_deref() == Some("canonical");
    let written =
        kiln_benches::write_editor_project(std::path::Path::new(&dir), n).and_then(|level| {
            if canonical {
                let path = std::path::Path::new(&dir).join(&level);
                let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path)?)?;
                std::fs::write(&path, kiln_core::json_format::to_canonical_string(&doc))?;
            }
            Ok(level)
        });
    match written {
        Ok(level) => {
            println!("{dir}/{level}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {dir}: {e}");
            ExitCode::FAILURE
        }
    }
}
