#!/usr/bin/env bash
# Adds Kiln, unpacked here, to your desktop: the menu entry (starting this folder's
# `kiln`), the MIME type of `kiln.project` files (a double-click opens Kiln) and the
# icon, all under ~/.local/share ($XDG_DATA_HOME). Nothing outside your home is
# written. Run it again after moving the folder; `--remove` takes it all out.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
data="${XDG_DATA_HOME:-$HOME/.local/share}"

if [ "${1:-}" = "--remove" ]; then
    rm -f "$data/applications/kiln.desktop" "$data/mime/packages/kiln.xml" \
        "$data/icons/hicolor/scalable/apps/kiln.svg"
else
    mkdir -p "$data/applications" "$data/mime/packages" "$data/icons/hicolor/scalable/apps"
    # The entry starts this copy of Kiln, wherever it was unpacked.
    sed "s|^Exec=kiln |Exec=\"$here/kiln\" |" "$here/share/applications/kiln.desktop" \
        > "$data/applications/kiln.desktop"
    cp "$here/share/mime/packages/kiln.xml" "$data/mime/packages/kiln.xml"
    cp "$here/share/icons/hicolor/scalable/apps/kiln.svg" \
        "$data/icons/hicolor/scalable/apps/kiln.svg"
fi
# What the desktop reads is rebuilt where the tools are installed.
command -v update-mime-database >/dev/null && update-mime-database "$data/mime" || true
command -v update-desktop-database >/dev/null && update-desktop-database "$data/applications" || true
if [ "${1:-}" != "--remove" ] && command -v xdg-mime >/dev/null; then
    xdg-mime default kiln.desktop application/x-kiln-project || true
fi
if [ "${1:-}" = "--remove" ]; then echo "Kiln is out of your applications menu."; else echo "Kiln is in your applications menu; kiln.project files open in it."; fi
