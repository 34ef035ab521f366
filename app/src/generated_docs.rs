//! `kiln generate-docs --out DIR`: the man pages and the shell completions, made from
//! the same clap definitions as `--help`, so that they cannot drift from it. The
//! packaging script (`packaging/package.sh`) ships what this writes.

use std::path::Path;

use anyhow::Context as _;
use clap::CommandFactory as _;

use crate::cli::Cli;

/// Writes below `out` (a `share/` folder of an install): `man/man1/kiln.1` and a
/// page per command (`kiln-check.1`...), and the completions of bash, zsh and fish
/// where those shells look for them.
pub fn write(out: &Path) -> anyhow::Result<()> {
    let man = out.join("man/man1");
    std::fs::create_dir_all(&man).with_context(|| format!("creating {}", man.display()))?;
    // As clap_mangen advises: the command is not built first (that would add
    // pages for `help`).
    clap_mangen::generate_to(Cli::command(), &man)
        .with_context(|| format!("writing the man pages to {}", man.display()))?;
    for (shell, place) in [
        (
            clap_complete::Shell::Bash,
            "bash-completion/completions/kiln",
        ),
        (clap_complete::Shell::Zsh, "zsh/site-functions/_kiln"),
        (
            clap_complete::Shell::Fish,
            "fish/vendor_completions.d/kiln.fish",
        ),
    ] {
        let path = out.join(place);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder)
                .with_context(|| format!("creating {}", folder.display()))?;
        }
        let mut text = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "kiln", &mut text);
        kiln_core::write_atomic(&path, &text)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
