//! The `kiln` binary: everything lives in the `kiln` library so tests drive the same code.
fn main() -> std::process::ExitCode {
    kiln::cli::main()
}
