//! Writes the editor benchmark's project with one level of N entities (two components
//! each, nine in ten with a parent): `gen-level DIR N`. The level is
//! `DIR/levels/big.level`; `kiln compile DIR` and the editor open it.
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(n)) = (args.next(), args.next()) else {
        eprintln!("usage: gen-level DIR ENTITIES");
        return ExitCode::from(2);
    };
    let Ok(n) = n.replace('_', "").parse::<usize>() else {
        eprintln!("error: ENTITIES must be a number, not {n:?}");
        return ExitCode::from(2);
    };
    match kiln_benches::write_editor_project(std::path::Path::new(&dir), n) {
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
