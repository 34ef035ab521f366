//! The `kiln` binary: everything lives in the `kiln` library so tests drive the same code.

// Reloading a large level allocates and frees tens of megabytes; glibc's allocator
// handed big blocks back to the kernel and took fresh zeroed pages each time (a quarter
// of a reload in the profile). mimalloc keeps them. Its v2 (the `v2` feature): v3
// peaked at twice the resident memory of a command on a 20,000-file project, for the
// same times. See BENCHMARKS.md.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
fn main() -> std::process::ExitCode {
    kiln::cli::main()
}
