//! Opens the project at the given folder and checks it, as `kiln check` does
//! without plugins: what `BENCHMARKS.md` times to compare the two implementations
//! of `kiln_core::os` (build it once as is and once with
//! `--features kiln_core/portable-os`). `--no-cache` removes the index cache first.

use std::path::PathBuf;
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut root = None;
    let mut cold = false;
    for arg in args.by_ref() {
        match arg.as_str() {
            "--no-cache" => cold = true,
            _ => root = Some(PathBuf::from(arg)),
        }
    }
    let root = root.ok_or("usage: open_and_check [--no-cache] PROJECT")?;
    if cold {
        let _ = std::fs::remove_file(root.join(kiln_core::own_folder::INDEX_CACHE));
    }
    let checker = dependency_checker::Checker::open(
        &root,
        Arc::new(kiln_core::Registry::with_builtins()),
        &dependency_checker::BuildOptions::default(),
    )?;
    println!("{} findings", checker.findings().len());
    Ok(())
}
