//! Writes the dependency-checker benchmark project: `gen-project DIR [quarter]`.
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: gen-project DIR [quarter]");
        return ExitCode::from(2);
    };
    let shape = match args.next().as_deref() {
        Some("quarter") => kiln_benches::project_gen::Shape::QUARTER,
        _ => kiln_benches::project_gen::Shape::FULL,
    };
    match kiln_benches::project_gen::generate(std::path::Path::new(&dir), shape) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
