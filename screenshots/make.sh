#!/usr/bin/env bash
# Regenerates the README's screenshots: runs the real editor in a virtual X display,
# sets up each scene as a user would, and saves what the window shows.
# Needs: xvfb-run (apt-get install xvfb xauth libgl1-mesa-dri libegl1).
set -euo pipefail
cd "$(dirname "$0")/.."
# KILN_PROFILE=debug uses the debug build (no release build needed; the demo is small).
profile=${KILN_PROFILE:-release}
if [ "$profile" = release ]; then cargo build --release -p kiln; else cargo build -p kiln; fi
bin=$(pwd)/target/$profile/kiln
out=$(pwd)/screenshots
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shoot() { # scene, project folder, file name
    KILN_SCREENSHOT="$out/$3" KILN_SCREENSHOT_SCENE="$1" \
        xvfb-run -a -s "-screen 0 1600x900x24" "$bin" edit "$2"
}

# The copies of the demo below are the user's own: their plugins are trusted (the
# editor would otherwise ask first; see docs/plugins.md#trust).
export KILN_TRUST=1

# A copy of the demo, as a user would make one: its plugins are built there.
cp -r projects/demo "$work/demo"
rm -rf "$work/demo/build" "$work/demo/.kiln"
"$bin" check --project "$work/demo" >/dev/null
shoot main "$work/demo" main-window.png
shoot rename "$work/demo" rename-preview.png
shoot references "$work/demo" find-references.png
shoot prefab "$work/demo" prefab-override.png
shoot asset "$work/demo" asset-inspector.png
shoot delete "$work/demo" delete-asset.png
shoot new-project "$work/demo" new-project.png

# The problems list, on a copy with things to report.
cp -r "$work/demo" "$work/broken"
rm "$work/broken/materials/metal.material"
sed -i 's|"materials/stone"|"Materials\\\\Stone"|' "$work/broken/units/lamp.unit" "$work/broken/levels/forest.level"
printf '{\n  "shape": "cube"\n}\n' > "$work/broken/meshes/unused_crate.mesh"
shoot problems "$work/broken" problems.png
# A level two branches changed differently, merged with git: the Conflicts tab.
cp -r "$work/demo" "$work/team"
(
    cd "$work/team"
    git init -q -b main
    printf '.kiln/\nbuild/\n' > .gitignore
    "$bin" setup-git >/dev/null
    git add -A && git -c user.name=Kiln -c user.email=kiln@example.com commit -qm demo
    git checkout -qb a
    sed -i 's|"position": \[-2, 0.6, 6\]|"position": [-3, 0.6, 6]|; s|"name": "Firefly"|"name": "Glow worm"|' levels/forest.level
    git -c user.name=Kiln -c user.email=kiln@example.com commit -qam a
    git checkout -q main
    sed -i 's|"position": \[-2, 0.6, 6\]|"position": [-2, 0.6, 8]|; s|"name": "Firefly"|"name": "Lantern bug"|' levels/forest.level
    git -c user.name=Kiln -c user.email=kiln@example.com commit -qam main
    git -c user.name=Kiln -c user.email=kiln@example.com merge -q a >/dev/null 2>&1 || true
)
shoot main "$work/team" conflicts.png
echo "screenshots written to $out"
