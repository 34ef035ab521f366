//! Paths printed in a command for the user to paste into a shell.

/// `path` as a shell reads it back: quoted when it holds anything but plain
/// characters. For the commands a command prints for the user to run next.
pub fn shell_quoted(path: &std::path::Path) -> String {
    let text = path.display().to_string();
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c));
    if plain {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
