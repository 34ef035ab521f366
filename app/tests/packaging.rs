//! The release artifacts, as a designer with no Rust gets them: `packaging/package.sh`
//! makes the `.tar.gz` and the `.deb` from the `kiln` these tests were built with;
//! each is installed (the archive unpacked in a temporary folder, the package with
//! dpkg, then removed), and from the installed files only, with neither the
//! repository nor Rust on `PATH`: `kiln new`, `check` and `compile` work, the desktop
//! entry's command opens the new project in the editor under Xvfb, the entry passes
//! `desktop-file-validate`, and in a scratch home `xdg-mime` names Kiln's entry
//! for a `kiln.project`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap()
}

/// Runs `command`; its stdout, or a failure naming what it said.
fn run(command: &mut Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?} could not start: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{command:?} failed: {text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A tool the check needs, from the system (`.ci/run` installs them).
fn tool(name: &str) -> PathBuf {
    for dir in ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] {
        let path = Path::new(dir).join(name);
        if path.is_file() {
            return path;
        }
    }
    panic!("{name} is not installed (.ci/run installs it)");
}

/// The artifacts, made once per test process into `out`.
fn package(out: &Path) -> (PathBuf, PathBuf) {
    let made = run(Command::new(repo().join("packaging/package.sh"))
        .args(["--binary", env!("CARGO_BIN_EXE_kiln"), "--out"])
        .arg(out));
    let mut lines = made.lines().map(PathBuf::from);
    let (archive, deb) = (lines.next().unwrap(), lines.next().unwrap());
    assert!(archive.is_file() && deb.is_file(), "{made}");
    (archive, deb)
}

/// A `PATH` with the installed `kiln` and the system's tools, and no Rust: neither
/// cargo nor rustc is in /usr/bin or /bin here (rustup puts them under ~/.cargo).
fn plain_path(kiln_dir: &Path) -> String {
    format!("{}:/usr/bin:/bin", kiln_dir.display())
}

/// `kiln new`, `check` and `compile` with the `kiln` in `kiln_dir`, in `work`, a
/// folder outside the repository; then the desktop entry `entry`'s command on the
/// new project's `kiln.project` under Xvfb, which must draw the editor's window.
fn use_installed(kiln_dir: &Path, entry: &Path, work: &Path) {
    let path = plain_path(kiln_dir);
    let kiln = |args: &[&str]| {
        run(Command::new("kiln")
            .args(args)
            .current_dir(work)
            .env("PATH", &path)
            .env("HOME", work)
            .env("KILN_CONFIG_DIR", work.join("config"))
            .env_remove("CARGO")
            .env_remove("RUSTC"))
    };
    let version = kiln(&["--version"]);
    assert!(
        version.starts_with("kiln ") && version.contains("commit"),
        "{version}"
    );
    kiln(&["new", "game"]);
    let said = kiln(&["check", "--project", "game"]);
    assert!(said.contains("0 errors"), "{said}");
    kiln(&["compile", "--project", "game"]);
    assert!(work.join("game/build").is_dir());

    // The entry's command, as the desktop runs it for a double-clicked file.
    let text = std::fs::read_to_string(entry).unwrap();
    let exec = text
        .lines()
        .find_map(|l| l.strip_prefix("Exec="))
        .expect("an Exec line");
    let project_file = work.join("game/kiln.project");
    let command = exec.replace("%f", &format!("'{}'", project_file.display()));
    let shot = work.join("window.png");
    run(Command::new(tool("xvfb-run"))
        .args(["-a", "-s", "-screen 0 1600x900x24", "sh", "-c", &command])
        .current_dir(work)
        .env("PATH", &path)
        .env("HOME", work)
        .env("KILN_CONFIG_DIR", work.join("config"))
        .env("KILN_SCREENSHOT", &shot));
    let png = std::fs::read(&shot).expect("the editor drew its window");
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
}

/// What `xdg-mime` names as the default application for a `kiln.project`, in a
/// scratch home whose data folders are `data_dirs`.
fn default_for_kiln_project(home: &Path, data_home: &Path, data_dirs: &str) -> String {
    run(Command::new(tool("xdg-mime"))
        .args(["query", "default", "application/x-kiln-project"])
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", data_home)
        .env("XDG_DATA_DIRS", data_dirs)
        .env_remove("XDG_CURRENT_DESKTOP")
        .env_remove("DESKTOP_SESSION"))
    .trim()
    .to_owned()
}

#[test]
fn the_archive_runs_where_it_is_unpacked_and_puts_kiln_in_the_menu() {
    let dir = tempfile::tempdir().unwrap();
    let (archive, _) = package(&dir.path().join("dist"));
    let unpacked = dir.path().join("opt");
    std::fs::create_dir_all(&unpacked).unwrap();
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&unpacked));
    let top = std::fs::read_dir(&unpacked)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for file in [
        "kiln",
        "install-desktop.sh",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "share/applications/kiln.desktop",
        "share/mime/packages/kiln.xml",
        "share/icons/hicolor/scalable/apps/kiln.svg",
        "share/man/man1/kiln.1",
        "share/man/man1/kiln-check.1",
        "share/bash-completion/completions/kiln",
        "share/zsh/site-functions/_kiln",
        "share/fish/vendor_completions.d/kiln.fish",
        "share/doc/kiln/THIRD-PARTY.txt",
    ] {
        assert!(top.join(file).is_file(), "the archive has no {file}");
    }
    run(Command::new(tool("desktop-file-validate"))
        .arg(top.join("share/applications/kiln.desktop")));

    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    use_installed(&top, &top.join("share/applications/kiln.desktop"), &work);

    // Into the menu of a scratch home: the entry starts this copy of kiln, and a
    // kiln.project opens in it.
    let home = dir.path().join("home");
    let data_home = home.join(".local/share");
    run(Command::new(top.join("install-desktop.sh"))
        .env("HOME", &home)
        .env("XDG_DATA_HOME", &data_home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("PATH", "/usr/bin:/bin"));
    let entry = std::fs::read_to_string(data_home.join("applications/kiln.desktop")).unwrap();
    assert!(
        entry.contains(&format!("Exec=\"{}\" %f", top.join("kiln").display())),
        "{entry}"
    );
    run(Command::new(tool("desktop-file-validate"))
        .arg(data_home.join("applications/kiln.desktop")));
    assert_eq!(
        default_for_kiln_project(&home, &data_home, "/nonexistent"),
        "kiln.desktop"
    );
}

#[test]
fn the_deb_installs_kiln_in_the_usual_places_and_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_, deb) = package(&dir.path().join("dist"));
    let contents = run(Command::new(tool("dpkg-deb")).arg("-c").arg(&deb));
    for file in [
        "./usr/bin/kiln",
        "./usr/share/applications/kiln.desktop",
        "./usr/share/mime/packages/kiln.xml",
        "./usr/share/icons/hicolor/scalable/apps/kiln.svg",
        "./usr/share/man/man1/kiln.1.gz",
        "./usr/share/bash-completion/completions/kiln",
        "./usr/share/doc/kiln/copyright",
    ] {
        assert!(
            contents.contains(file),
            "the package has no {file}: {contents}"
        );
    }
    // Installed for real (the tests run as root in CI), unless a kiln that is not
    // this package's is there already.
    let owner = Command::new(tool("dpkg"))
        .args(["-S", "/usr/bin/kiln"])
        .output()
        .unwrap();
    assert!(
        !Path::new("/usr/bin/kiln").exists() || owner.status.success(),
        "/usr/bin/kiln exists and is no package's: not replacing it"
    );
    run(Command::new(tool("dpkg")).arg("-i").arg(&deb));
    let removed = std::panic::catch_unwind(|| {
        run(Command::new(tool("desktop-file-validate")).arg("/usr/share/applications/kiln.desktop"));
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        use_installed(
            Path::new("/usr/bin"),
            Path::new("/usr/share/applications/kiln.desktop"),
            &work,
        );
        // dpkg's trigger registered the entry for the MIME type: a scratch home
        // with nothing of its own finds it in the system's data.
        let home = dir.path().join("home");
        assert_eq!(
            default_for_kiln_project(&home, &home.join(".local/share"), "/usr/share"),
            "kiln.desktop"
        );
    });
    run(Command::new(tool("dpkg")).args(["-r", "kiln"]));
    assert!(!Path::new("/usr/bin/kiln").exists());
    assert!(!Path::new("/usr/share/applications/kiln.desktop").exists());
    if let Err(panic) = removed {
        std::panic::resume_unwind(panic);
    }
}
