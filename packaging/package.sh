#!/usr/bin/env bash
# Makes Kiln's release artifacts for this machine's platform (see docs/development.md):
#
#   dist/kiln-VERSION-linux-ARCH.tar.gz  runs where it is unpacked: the binary (which
#       carries the plugin SDK and the project templates), the desktop entry, the MIME
#       type, the icon, the man pages, shell completions and the licences;
#       `install-desktop.sh` in it adds the entry, MIME type and icon to the user's
#       menu (~/.local/share), pointing at the unpacked binary.
#   dist/kiln_VERSION_ARCH.deb  the same in the usual places under /usr; dpkg's
#       triggers register the menu entry, the MIME type and the icon.
#
# Usage: packaging/package.sh [--binary PATH] [--out DIR]
#   --binary  package this `kiln` instead of building one (`cargo build --release`);
#             the tests package the binary they were built with.
#   --out     where the artifacts go (default: dist/ in the repository).
#
# Hand-written rather than cargo-deb: the .deb and the archive share one staged
# tree, the man pages and completions come from the binary's own clap definitions
# (`kiln generate-docs`), and dpkg-deb is on every Debian machine already.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
binary=""
out="$repo/dist"
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "package.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

if [ -z "$binary" ]; then
    (cd "$repo" && cargo build --release -p kiln --bin kiln)
    binary="$repo/target/release/kiln"
fi
[ -x "$binary" ] || { echo "package.sh: $binary is not an executable" >&2; exit 2; }

# "kiln 0.1.0 (commit 1a2b3c4d 2026-11-28)" -> 0.1.0
version="$("$binary" --version | awk 'NR == 1 { print $2 }')"
case "$(uname -m)" in
    x86_64) arch=x86_64; deb_arch=amd64 ;;
    aarch64) arch=aarch64; deb_arch=arm64 ;;
    *) arch="$(uname -m)"; deb_arch="$(dpkg --print-architecture 2>/dev/null || uname -m)" ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
# Shipped without its debug information (a release build keeps it for profiling):
# a tenth of the size.
cp "$binary" "$work/kiln"
strip --strip-debug "$work/kiln" 2>/dev/null || true

# The shared tree: what goes under /usr in the .deb, and beside the binary in the
# archive.
share="$work/share"
mkdir -p "$share/applications" "$share/mime/packages" "$share/icons/hicolor/scalable/apps" \
    "$share/doc/kiln"
cp "$repo/packaging/kiln.desktop" "$share/applications/kiln.desktop"
cp "$repo/packaging/kiln.xml" "$share/mime/packages/kiln.xml"
cp "$repo/packaging/kiln.svg" "$share/icons/hicolor/scalable/apps/kiln.svg"
"$work/kiln" generate-docs --out "$share"
cp "$repo/LICENSE-MIT" "$repo/LICENSE-APACHE" "$repo/README.md" "$share/doc/kiln/"
# The licences of what the binary is built from, as cargo knows them.
if command -v cargo >/dev/null; then
    (cd "$repo" && cargo tree -p kiln -e normal --prefix none --format '{p}: {l}' 2>/dev/null) \
        | sed 's/ (.*)//' | sort -u > "$share/doc/kiln/THIRD-PARTY.txt" || true
fi

# The archive.
name="kiln-$version-linux-$arch"
tree="$work/$name"
mkdir -p "$tree"
cp "$work/kiln" "$tree/kiln"
cp -r "$share" "$tree/share"
cp "$repo/LICENSE-MIT" "$repo/LICENSE-APACHE" "$tree/"
cp "$repo/packaging/install-desktop.sh" "$tree/install-desktop.sh"
chmod 755 "$tree/kiln" "$tree/install-desktop.sh"
tar -C "$work" -czf "$out/$name.tar.gz" --owner=0 --group=0 "$name"

# The .deb.
root="$work/deb"
mkdir -p "$root/usr/bin" "$root/DEBIAN"
cp "$work/kiln" "$root/usr/bin/kiln"
cp -r "$share" "$root/usr/share"
# Debian's places for man pages and the copyright file.
gzip -9n "$root"/usr/share/man/man1/*.1
mv "$root/usr/share/doc/kiln/LICENSE-MIT" "$root/usr/share/doc/kiln/copyright"
cat "$repo/LICENSE-APACHE" >> "$root/usr/share/doc/kiln/copyright"
size="$(du -sk "$root/usr" | cut -f1)"
cat > "$root/DEBIAN/control" <<EOF
Package: kiln
Version: $version
Architecture: $deb_arch
Maintainer: The Kiln developers <kiln@example.com>
Installed-Size: $size
Depends: libc6, libgcc-s1
Recommends: libvulkan1, mesa-vulkan-drivers, libgl1, libegl1, libxkbcommon0, git
Suggests: gcc, cargo
Section: devel
Priority: optional
Homepage: https://example.com/kiln
Description: level editor for a data-oriented engine
 Kiln shows a level's entity scene graph, edits its components, keeps every
 path-based asset reference correct when assets are renamed or moved, and
 previews the level live, recompiling and respawning it as files change.
 It carries its plugin SDK and project templates; plugins in C or Rust are
 built with a compiler when one is installed, or loaded prebuilt.
EOF
chmod -R u+rwX,go+rX,go-w "$root"
dpkg-deb --root-owner-group --build "$root" "$out/kiln_${version}_${deb_arch}.deb" >/dev/null

echo "$out/$name.tar.gz"
echo "$out/kiln_${version}_${deb_arch}.deb"
