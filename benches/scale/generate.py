#!/usr/bin/env python3
"""Writes a large, realistic Kiln project for whole-command measurements.

    python3 benches/scale/generate.py OUT_DIR --files N [--seed S] [--force]

Deterministic: the same N and seed give the same files, byte for byte. Standard
library only (Python 3.11).

Unlike `benches/src/project_gen.rs` (uniform JSON files named `set_NNN/m_NNNNN`,
all of Kiln's own types plus one kind of tool file), this project looks like a
team's: named folders nested two or three deep (at most ~200 files each), files of
varied sizes (about 1.4 KB on average), real PNG textures and glTF models with
their buffers (binary files are about a seventh of the files), prefabs nesting
prefabs, levels overriding prefab materials, and files of other engines' tools:
Bitsquid-style `.sunit` and `.particles` files whose reference fields
`kiln.project` declares, Unity-style and exporter `.json` files holding generic
references (with and without extension), localisation tables, Lua scripts and
Markdown notes. A few names are odd but legal (spaces, capitals, non-ASCII,
several dots); the odd ones (not canonical) are the only findings `kiln check`
should report, as warnings.

Exactly one file, `materials/shared/hub.material`, is referenced by exactly 1,000
other files (levels, prefabs, `.sunit`, `.particles` and tool `.json` files), and
no other file contains the text `materials/shared/hub`, so `rg -l -F` of it finds
the same 1,000 files. The project names no `boot_levels`, so nothing is reported
as unused.
"""

import argparse
import json
import os
import posixpath
import random
import struct
import sys
import time
import zlib

HUB = "materials/shared/hub.material"
HUB_REF = "materials/shared/hub"
HUB_FILES = 1000
# A large level that uses prefabs, several materials and the hub: for `kiln deps`.
DEPS_LEVEL = "levels/main/town_square.level"
DEFAULT_SEED = 5489
MIN_FILES = 300

# Share of the files of each kind (models count twice: a .gltf and its .bin).
SHARES = [
    ("level", 0.035),
    ("unit", 0.14),
    ("material", 0.22),
    ("mesh", 0.13),
    ("texture", 0.11),
    ("model", 0.025),
    ("sunit", 0.07),
    ("export", 0.09),
    ("unity", 0.06),
    ("particles", 0.035),
    ("loc", 0.02),
    ("lua", 0.03),
    ("doc", 0.01),
]

NOUNS = (
    "barrel crate lantern bench fence wall roof door window pillar arch bridge cart "
    "wheel anvil forge chest table chair shelf sign banner torch well statue fountain "
    "rock boulder cliff tree bush fern grass flower mushroom log stump vine reed sword "
    "shield axe bow helmet armor boat dock pier tower gate stair ladder rope net pot "
    "jar basket sack bucket lamp candle book scroll map coin gem key bell clock pipe "
    "valve gear lever crane mill sail mast anchor tent campfire cauldron bottle mug "
    "plate bowl hammer saw plank beam rail chimney awning stall wagon trough"
).split()
ADJECTIVES = (
    "old mossy broken painted rusty small large tall short wide dark bright weathered "
    "polished rough smooth red blue green golden silver iron oak pine birch cedar "
    "northern southern ruined new burnt wet dry frozen dusty carved"
).split()
SURFACES = (
    "stone brick wood metal plaster fabric glass ceramic rust moss sand snow ice "
    "cloth leather paint concrete marble tile bark straw clay copper bronze"
).split()
THEMES = {
    "material": "architecture props vegetation terrain characters vehicles weapons fx "
    "ui interiors water decals".split(),
    "texture": "architecture props vegetation terrain characters vehicles weapons fx "
    "ui interiors water decals".split(),
    "mesh": "architecture props vegetation terrain characters vehicles weapons "
    "interiors".split(),
    "unit": "props architecture vegetation characters vehicles weapons interiors "
    "gameplay lighting".split(),
    "model": "props architecture vegetation characters vehicles weapons".split(),
    "sunit": "props architecture vegetation characters vehicles weapons".split(),
    "particles": "fire smoke water magic impacts weather ambient".split(),
    "export": "maya_exporter substance_batch houdini_scatter lod_builder "
    "texture_baker".split(),
    "unity": "prefabs materials meshes terrain".split(),
    "lua": "gameplay ai ui quests cutscenes tools".split(),
}
REGIONS = "campaign multiplayer tutorial test cinematics dlc_harbor dlc_winter".split()
LANGS = "en de fr es it ja pt_br pl ru zh_hans".split()
SHAPES = ["cube", "sphere", "cylinder", "cone", "plane", "capsule"]
SHARED_MATERIALS = (
    "default_white default_black debug_grid debug_missing water_surface glass_clear "
    "glass_frosted mirror emissive_warm emissive_cold shadow_catcher foliage_base "
    "skin_base hair_base cloth_base metal_base stone_base wood_base"
).split()
LOREM = (
    "the gate opens at dawn and the market fills with traders from the northern "
    "villages while the guards watch the bridge and the bells of the old tower ring "
    "twice for every ship that reaches the harbor before the storm"
).split()
LOCALISED = {
    "de": "Das Tor öffnet sich im Morgengrauen; die Händler füllen den Markt.",
    "fr": "La porte s'ouvre à l'aube ; les marchands remplissent le marché.",
    "es": "La puerta se abre al amanecer; los mercaderes llenan el mercado.",
    "it": "Il cancello si apre all'alba; i mercanti riempiono il mercato.",
    "ja": "夜明けに門が開き、商人たちが市場を満たす。",
    "pt_br": "O portão se abre ao amanhecer; os mercadores enchem o mercado.",
    "pl": "Brama otwiera się o świcie; kupcy wypełniają targ.",
    "ru": "Ворота открываются на рассвете; торговцы заполняют рынок.",
    "zh_hans": "城门在黎明时打开，商人们挤满了集市。",
}
# Odd but legal names (not canonical: `kiln check` warns about each); {i} numbers
# them. Their contents reference nothing or only existing files.
ODD_NAMES = [
    ("docs/Design Notes/Level Flow v{i}.2.md", "doc"),
    ("localization/ja/メニュー_{i}.json", "loc"),
    ("source_art/concept/Ölmühle exterior {i}.png", "texture"),
    ("pipeline/exports/presets/café preset {i}.json", "export"),
    ("textures/ui/icons/Button Pressed ({i}).png", "texture"),
    ("scripts/tools/naïve_pathing_{i}.lua", "lua"),
]

encode_str = json.encoder.encode_basestring  # UTF-8 output, not \u escapes


def num(x):
    if isinstance(x, int):
        return str(x)
    x = round(x, 3)
    if x == int(x):
        return str(int(x))
    return repr(x)


def scalar(v):
    if isinstance(v, str):
        return encode_str(v)
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    return num(v)


def dump(value, ind="  "):
    """JSON in Kiln's canonical layout: objects expanded, arrays of scalars on one
    line (`ind` chooses the indentation, e.g. a tab for other engines' files)."""
    out = []

    def rec(v, lvl):
        if isinstance(v, dict):
            if not v:
                out.append("{}")
                return
            pad = ind * (lvl + 1)
            out.append("{\n")
            first = True
            for k, x in v.items():
                if not first:
                    out.append(",\n")
                first = False
                out.append(pad)
                out.append(encode_str(k))
                out.append(": ")
                rec(x, lvl + 1)
            out.append("\n" + ind * lvl + "}")
        elif isinstance(v, list):
            if not v:
                out.append("[]")
            elif all(not isinstance(x, (dict, list)) for x in v):
                out.append("[" + ", ".join(scalar(x) for x in v) + "]")
            else:
                pad = ind * (lvl + 1)
                out.append("[\n")
                for i, x in enumerate(v):
                    if i:
                        out.append(",\n")
                    out.append(pad)
                    rec(x, lvl + 1)
                out.append("\n" + ind * lvl + "]")
        else:
            out.append(scalar(v))

    rec(value, 0)
    out.append("\n")
    return "".join(out)


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def png(width, height, rows):
    """A PNG file of 8-bit RGB `rows` (bytes, one filter byte 0 per row included)."""

    def chunk(kind, data):
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows, 6))
        + chunk(b"IEND", b"")
    )


class Gen:
    def __init__(self, out, n, seed):
        self.out = out
        self.n = n
        self.rng = random.Random(seed)
        self.made_dirs = set()
        self.files = 0
        self.bytes = 0
        self.binary_files = 0

    # ---- helpers -------------------------------------------------------------

    def write(self, rel, data):
        path = os.path.join(self.out, *rel.split("/"))
        d = os.path.dirname(path)
        if d not in self.made_dirs:
            os.makedirs(d, exist_ok=True)
            self.made_dirs.add(d)
        if isinstance(data, str):
            data = data.encode("utf-8")
        else:
            self.binary_files += 1
        with open(path, "wb") as f:
            f.write(data)
        self.files += 1
        self.bytes += len(data)

    def f(self, lo, hi, digits=2):
        return round(self.rng.uniform(lo, hi), digits)

    def vec(self, lo, hi, digits=2):
        return [self.f(lo, hi, digits) for _ in range(3)]

    def hexid(self, bits=128):
        return "%0*x" % (bits // 4, self.rng.getrandbits(bits))

    def guid(self):
        h = self.hexid()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def word_name(self):
        r = self.rng.random()
        noun = self.rng.choice(NOUNS)
        if r < 0.45:
            base = f"{self.rng.choice(ADJECTIVES)}_{noun}"
        elif r < 0.75:
            base = f"{noun}_{self.rng.randrange(1, 40):02d}"
        elif r < 0.93:
            base = f"{noun}_{self.rng.choice(SURFACES)}"
        elif r < 0.97:
            base = f"{noun}-{self.rng.choice(ADJECTIVES)}"
        else:
            # Several dots: legal, the extension is what follows the last one.
            base = f"{noun}.{self.rng.choice(['lod1', 'v2', 'lod2', 'hd'])}"
        return base

    def plan(self, root, count, themes, lo=20, hi=180, depth3=0.3, words=SURFACES):
        """`count` paths without extension under `root`, in folders
        root/theme/group[/subgroup] holding lo..hi files each."""
        paths = []
        used_groups = {}
        t = 0
        while len(paths) < count:
            theme = themes[t % len(themes)]
            t += 1
            k = used_groups.setdefault(theme, set())
            while True:
                group = self.rng.choice(words)
                if self.rng.random() < 0.5:
                    group = f"{group}_{self.rng.choice(NOUNS)}"
                if self.rng.random() < depth3:
                    group = f"{group}/{self.rng.choice(['set_a', 'set_b', 'old', 'wip', 'v1.2', 'final'])}"
                if group not in k:
                    k.add(group)
                    break
            folder = f"{root}/{theme}/{group}"
            size = min(self.rng.randint(lo, hi), count - len(paths))
            names = set()
            while len(names) < size:
                names.add(self.word_name())
            # Sorted so that the order (and so the output) does not depend on hashing.
            paths.extend(f"{folder}/{nm}" for nm in sorted(names))
        return paths

    # ---- counts --------------------------------------------------------------

    def counts(self):
        n = self.n - 1  # kiln.project
        odd = max(len(ODD_NAMES), self.n // 2500)
        c = {}
        for kind, share in SHARES:
            c[kind] = int(n * share)
        c["model"] = max(c["model"], 2)
        c["odd"] = odd
        c["export"] -= odd
        used = sum(c.values()) + c["model"]  # models are two files each
        c["material"] += n - used
        c["material"] -= len(SHARED_MATERIALS) + 1  # written in materials/shared
        c["mesh"] = max(c["mesh"], c["model"])
        return c

    # ---- resources -----------------------------------------------------------

    def gen_textures(self, count):
        paths = self.plan("textures", count, THEMES["texture"])
        out = []
        for p in paths:
            suffix = self.rng.choice(["albedo", "albedo", "normal", "roughness", "mask"])
            rel = f"{p}_{suffix}"
            self.write(rel + ".png", self.texture())
            out.append(rel)
        return out

    def texture(self):
        rng = self.rng
        size = rng.choice([8, 16, 16, 32])
        r0, g0, b0 = rng.randrange(256), rng.randrange(256), rng.randrange(256)
        if rng.random() < 0.3:
            # Noisy: compresses poorly, like a photo-sourced texture.
            rows = b"".join(b"\x00" + rng.randbytes(size * 3) for _ in range(size))
        else:
            cell = rng.choice([1, 2, 4])
            a = bytes((r0, g0, b0))
            b = bytes(((r0 + 90) % 256, (g0 + 60) % 256, (b0 + 30) % 256))
            rows = b"".join(
                b"\x00"
                + b"".join(a if ((x // cell) + (y // cell)) % 2 else b for x in range(size))
                for y in range(size)
            )
        return png(size, size, rows)

    def gen_materials(self, count, textures):
        shared = [f"materials/shared/{m}" for m in SHARED_MATERIALS]
        self.write(
            HUB,
            dump({"color": [0.72, 0.7, 0.66, 1], "texture": self.rng.choice(textures),
                  "roughness": 0.6}),
        )
        paths = shared + self.plan("materials", count, THEMES["material"])
        for p in paths:
            m = {"color": [self.f(0, 1), self.f(0, 1), self.f(0, 1), 1]}
            if self.rng.random() < 0.8:
                m["texture"] = self.rng.choice(textures)
            if self.rng.random() < 0.7:
                m["roughness"] = self.f(0.05, 1)
            self.write(p + ".material", dump(m))
        return paths  # the hub is not in the pool: only chosen files name it

    def gen_models(self, count, textures):
        """glTF models, each with its own .bin buffer (a box) and images referencing
        textures by URI relative to the model's folder."""
        paths = self.plan("art", count, THEMES["model"], lo=10, hi=60)
        for p in paths:
            folder, name = posixpath.split(p)
            sx, sy, sz = (self.f(0.2, 3) for _ in range(3))
            pos, nrm, uv, idx = [], [], [], []
            for axis in range(3):
                for sign in (-1.0, 1.0):
                    base = len(pos) // 3
                    for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                        v = [0.0, 0.0, 0.0]
                        v[axis] = sign
                        v[(axis + 1) % 3] = float(a)
                        v[(axis + 2) % 3] = float(b)
                        pos += [v[0] * sx / 2, v[1] * sy / 2, v[2] * sz / 2]
                        n = [0.0, 0.0, 0.0]
                        n[axis] = sign
                        nrm += n
                        uv += [(a + 1) / 2, (b + 1) / 2]
                    idx += [base, base + 1, base + 2, base, base + 2, base + 3]
            bin_data = (
                struct.pack(f"<{len(pos)}f", *pos)
                + struct.pack(f"<{len(nrm)}f", *nrm)
                + struct.pack(f"<{len(uv)}f", *uv)
                + struct.pack(f"<{len(idx)}H", *idx)
            )
            self.write(p + ".bin", bin_data)
            images = [self.rng.choice(textures) for _ in range(self.rng.choice([1, 1, 2]))]
            gltf = {
                "asset": {"version": "2.0", "generator": "Kiln scale generator (glTF 2.0)"},
                "scene": 0,
                "scenes": [{"nodes": [0]}],
                "nodes": [{"mesh": 0, "name": name}],
                "meshes": [{"name": name, "primitives": [{
                    "attributes": {"POSITION": 0, "NORMAL": 1, "TEXCOORD_0": 2},
                    "indices": 3, "material": 0}]}],
                "materials": [{"name": f"{name}_mat", "pbrMetallicRoughness": {
                    "baseColorTexture": {"index": 0},
                    "metallicFactor": 0, "roughnessFactor": self.f(0.2, 1)}}],
                "textures": [{"source": i, "sampler": 0} for i in range(len(images))],
                "samplers": [{"magFilter": 9729, "minFilter": 9987}],
                "images": [{"uri": posixpath.relpath(t + ".png", folder)} for t in images],
                "accessors": [
                    {"bufferView": 0, "componentType": 5126, "count": 24, "type": "VEC3",
                     "min": [-sx / 2, -sy / 2, -sz / 2], "max": [sx / 2, sy / 2, sz / 2]},
                    {"bufferView": 1, "componentType": 5126, "count": 24, "type": "VEC3"},
                    {"bufferView": 2, "componentType": 5126, "count": 24, "type": "VEC2"},
                    {"bufferView": 3, "componentType": 5123, "count": 36, "type": "SCALAR"},
                ],
                "bufferViews": [
                    {"buffer": 0, "byteOffset": 0, "byteLength": 288},
                    {"buffer": 0, "byteOffset": 288, "byteLength": 288},
                    {"buffer": 0, "byteOffset": 576, "byteLength": 192},
                    {"buffer": 0, "byteOffset": 768, "byteLength": 72},
                ],
                "buffers": [{"uri": name + ".bin", "byteLength": len(bin_data)}],
            }
            self.write(p + ".gltf", dump(gltf))
        return paths

    def gen_meshes(self, count, models):
        paths = self.plan("meshes", count, THEMES["mesh"])
        for i, p in enumerate(paths):
            if i < len(models):
                m = {"gltf": models[i], "size": [1, 1, 1] if self.rng.random() < 0.7
                     else [self.f(0.5, 2)] * 3}
            else:
                m = {"shape": self.rng.choice(SHAPES), "size": self.vec(0.1, 4)}
            self.write(p + ".mesh", dump(m))
        return paths

    # ---- levels and prefabs --------------------------------------------------

    def mesh_component(self, meshes, materials):
        return {"mesh": self.rng.choice(meshes), "material": self.rng.choice(materials)}

    def extras(self, comps):
        r = self.rng.random()
        if r < 0.05:
            comps["rotator"] = {"axis": [0, 1, 0], "speed": self.f(-180, 180, 1)}
        elif r < 0.09:
            comps["oscillator"] = {"amplitude": [0, self.f(0.05, 0.5), 0],
                                   "frequency": self.f(0.1, 2), "phase": self.f(0, 360, 0)}
        elif r < 0.11:
            comps["point_mass"] = {"mass": self.f(0.5, 50, 1), "velocity": [0, 0, 0]}

    def transform(self, spread, ground=True):
        t = {"position": [self.f(-spread, spread), 0 if ground else self.f(0, 4),
                          self.f(-spread, spread)]}
        r = self.rng.random()
        if r < 0.5:
            t["rotation"] = [0, self.f(0, 360, 0), 0]
        if r > 0.7:
            s = self.f(0.6, 1.6)
            t["scale"] = [s, s, s]
        return t

    def gen_units(self, paths, meshes, materials, hub):
        """Prefabs: a root and parts; some parts are instances of earlier prefabs (no
        cycles). Returns, per prefab, the ids of its parts a level may override."""
        overridable = []
        for i, p in enumerate(paths):
            rng = self.rng
            parts = rng.choice([2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 10, 12])
            root = p.rsplit("/", 1)[1].replace(".", "_").replace("-", "_")
            ents = [{"id": root, "name": root.replace("_", " ").capitalize(),
                     "components": {"transform": {}}}]
            ov = []
            hub_at = rng.randrange(1, parts + 1) if p in hub else -1
            for k in range(1, parts + 1):
                noun = rng.choice(NOUNS)
                eid = f"{noun}_{k}"
                e = {"id": eid, "name": f"{noun.capitalize()} {k}", "parent": root}
                comps = {}
                if i > 0 and k != hub_at and rng.random() < 0.12:
                    e["prefab"] = paths[rng.randrange(max(0, i - 500), i)]
                else:
                    if rng.random() < 0.15:
                        comps["mesh"] = [self.mesh_component(meshes, materials),
                                         self.mesh_component(meshes, materials)]
                        if k == hub_at:
                            comps["mesh"][1]["material"] = HUB_REF
                    else:
                        comps["mesh"] = self.mesh_component(meshes, materials)
                        if k == hub_at:
                            comps["mesh"]["material"] = HUB_REF
                        else:
                            ov.append(eid)
                    self.extras(comps)
                comps["transform"] = self.transform(1.5, ground=False)
                e["components"] = dict(sorted(comps.items()))
                ents.append(e)
            self.write(p + ".unit", dump({"entities": ents}))
            overridable.append(ov)
        return overridable

    def gen_level(self, rel, entities, units, overridable, meshes, materials, hub):
        rng = self.rng
        ents = []
        groups = []
        hub_left = 1 if rel in hub else 0
        n_groups = max(1, entities // rng.randint(8, 20))
        for g in range(n_groups):
            gid = f"{rng.choice(['area', 'block', 'street', 'yard', 'district', 'camp'])}_{g:02d}"
            groups.append(gid)
            ents.append({"id": gid, "name": gid.replace("_", " ").capitalize(),
                         "components": {"transform": self.transform(120)}})
        plain = []
        for k in range(entities - n_groups):
            noun = rng.choice(NOUNS)
            eid = f"{noun}_{k:03d}"
            e = {"id": eid, "name": f"{noun.capitalize()} {k}"}
            if plain and rng.random() < 0.1:
                e["parent"] = rng.choice(plain)
            else:
                e["parent"] = rng.choice(groups)
            comps = {}
            overrides = None
            if rng.random() < 0.35:
                u = rng.randrange(len(units))
                e["prefab"] = units[u]
                if overridable[u] and (hub_left or rng.random() < 0.2):
                    mat = HUB_REF if hub_left else rng.choice(materials)
                    hub_left = 0
                    overrides = {rng.choice(overridable[u]): {"mesh": {"material": mat}}}
            else:
                if rng.random() < 0.1:
                    comps["mesh"] = [self.mesh_component(meshes, materials),
                                     self.mesh_component(meshes, materials)]
                else:
                    comps["mesh"] = self.mesh_component(meshes, materials)
                    if hub_left:
                        comps["mesh"]["material"] = HUB_REF
                        hub_left = 0
                self.extras(comps)
                plain.append(eid)
            comps["transform"] = self.transform(20)
            e["components"] = dict(sorted(comps.items()))
            if overrides:
                e["overrides"] = overrides
            ents.append(e)
        if hub_left:
            ents.append({"id": "hub_marker", "name": "Hub marker", "parent": groups[0],
                         "components": {"mesh": {"mesh": rng.choice(meshes),
                                                 "material": HUB_REF},
                                        "transform": {}}})
        self.write(rel, dump({"entities": ents}))

    def gen_levels(self, count, units, overridable, meshes, materials, hub):
        paths = [DEPS_LEVEL[: -len(".level")]]
        r = 0
        while len(paths) < count:
            region = REGIONS[r % len(REGIONS)]
            zone = f"{region}/{self.rng.choice(['act', 'map', 'zone', 'sector'])}_{r // len(REGIONS) + 1:02d}"
            r += 1
            size = min(self.rng.randint(5, 40), count - len(paths))
            names = set()
            while len(names) < size:
                names.add(self.word_name().replace(".", "_"))
            paths.extend(f"levels/{zone}/{nm}" for nm in sorted(names))
        for i, p in enumerate(paths):
            if i == 0:
                n = 160
            else:
                n = int(min(220, max(6, self.rng.lognormvariate(3.65, 0.6))))
            self.gen_level(p + ".level", n, units, overridable, meshes, materials, hub)
        return paths

    # ---- other engines' and tools' files ----------------------------------

    def gen_sunits(self, paths, meshes, materials, hub):
        """Bitsquid/Stingray-style units, tab-indented; kiln.project declares their
        reference fields (JSON pointers)."""
        for p in paths:
            rng = self.rng
            comps = {}
            n_mesh = rng.randint(1, 3)
            hub_at = rng.randrange(0, n_mesh) if p in hub else -1
            for k in range(n_mesh):
                data = {"mesh_resource": rng.choice(meshes),
                        "material_resource": HUB_REF if k == hub_at else rng.choice(materials),
                        "geometries": [f"g_{rng.choice(NOUNS)}_{j}" for j in range(rng.randint(1, 3))],
                        "cast_shadows": rng.random() < 0.8,
                        "visible": True}
                comps[self.guid()] = {"type": "core/types/mesh_component", "data": data}
            comps[self.guid()] = {"type": "core/types/transform_component", "data": {
                "local_position": self.vec(-2, 2), "local_rotation": [0, 0, 0, 1],
                "local_scale": [1, 1, 1]}}
            if rng.random() < 0.5:
                comps[self.guid()] = {"type": "core/types/actor_component", "data": {
                    "actor": rng.choice(["static", "dynamic", "keyframed"]),
                    "shapes": [{"shape": rng.choice(["box", "sphere", "capsule"]),
                                "material": "default", "size": self.vec(0.1, 3)}],
                    "mass": self.f(1, 200, 1)}}
            doc = {"components": comps,
                   "lods": [{"screen_size": s, "mesh": rng.choice(meshes)}
                            for s in (0.5, 0.2, 0.05)[: rng.randint(1, 3)]],
                   "metadata": {"created_by": "stingray_editor", "version": "1.9.1547",
                                "tags": [rng.choice(ADJECTIVES), rng.choice(NOUNS)],
                                "bounds": {"min": self.vec(-3, 0), "max": self.vec(0, 3)},
                                "notes": " ".join(rng.choice(LOREM) for _ in range(rng.randint(4, 30)))}}
            self.write(p + ".sunit", dump(doc, "\t"))

    def gen_particles(self, paths, materials, textures, hub):
        """Particle systems; kiln.project types their `material` and `texture`
        fields wherever they are."""
        for p in paths:
            rng = self.rng
            n_emit = rng.randint(1, 3)
            hub_at = rng.randrange(0, n_emit) if p in hub else -1
            emitters = []
            for k in range(n_emit):
                emitters.append({
                    "name": f"{rng.choice(['sparks', 'embers', 'smoke', 'drops', 'dust', 'glow'])}_{k}",
                    "rate": rng.randint(5, 400),
                    "lifetime": [self.f(0.1, 1), self.f(1, 4)],
                    "material": HUB_REF if k == hub_at else rng.choice(materials),
                    "texture": rng.choice(textures),
                    "color_over_life": [[1, 1, 1, 1], [self.f(0, 1), self.f(0, 1), self.f(0, 1), 0]],
                    "size_over_life": [self.f(0.05, 0.5), self.f(0.5, 2)],
                    "velocity": self.vec(-1, 3),
                })
            self.write(p + ".particles", dump({"emitters": emitters,
                                               "bounds": self.vec(1, 10),
                                               "loop": rng.random() < 0.7}, "    "))

    def gen_exports(self, paths, meshes, materials, textures, hub):
        """Export jobs of DCC tools: generic references with their extension, some
        minified, some pretty."""
        for p in paths:
            rng = self.rng
            tool = p.split("/")[2]
            outputs = []
            for _ in range(rng.randint(1, 4)):
                kind = rng.random()
                if kind < 0.4:
                    path = rng.choice(meshes) + ".mesh"
                elif kind < 0.7:
                    path = rng.choice(textures) + ".png"
                else:
                    path = rng.choice(materials) + ".material"
                outputs.append({"path": path, "hash": self.hexid(160),
                                "bytes": rng.randint(200, 90000)})
            job = {
                "tool": tool,
                "version": f"{rng.randint(1, 5)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}",
                "job_id": self.guid(),
                "source": f"//depot/art/source/{rng.choice(NOUNS)}/{rng.choice(NOUNS)}_{rng.randint(1, 99)}.ma",
                "outputs": outputs,
                "dependencies": [rng.choice(materials) + ".material"],
                "settings": {"up_axis": "y", "unit_scale": 0.01, "triangulate": True,
                             "generate_tangents": rng.random() < 0.5,
                             "lod_count": rng.randint(0, 4)},
                "log": [f"{rng.choice(LOREM)} {rng.choice(LOREM)} {rng.choice(LOREM)}"
                        for _ in range(rng.randint(2, 10))],
            }
            if p in hub:
                job["dependencies"].append(HUB)
            text = compact(job) + "\n" if rng.random() < 0.4 else dump(job, "    ")
            self.write(p + ".json", text)

    def gen_unity(self, paths, meshes, materials, textures, hub):
        """Unity-bridge asset descriptions: generic references without extension."""
        for p in paths:
            rng = self.rng
            mats = [{"m_Path": rng.choice(materials), "m_Guid": self.hexid()}
                    for _ in range(rng.randint(1, 3))]
            if p in hub:
                mats[rng.randrange(len(mats))]["m_Path"] = HUB_REF
            doc = {
                "fileFormatVersion": 2,
                "guid": self.hexid(),
                "m_Name": p.rsplit("/", 1)[1],
                "m_Mesh": rng.choice(meshes),
                "m_Materials": mats,
                "m_MainTexture": rng.choice(textures),
                "importSettings": {"m_IsReadable": False, "m_ScaleFactor": 1,
                                   "m_ImportBlendShapes": rng.random() < 0.3,
                                   "m_MeshCompression": rng.randint(0, 3)},
                "m_LODs": [{"screenRelativeHeight": h, "m_Mesh": rng.choice(meshes)}
                           for h in (0.6, 0.25, 0.1)[: rng.randint(1, 3)]],
                "userData": "",
                "assetBundleName": rng.choice(["", "core", "props", "levels"]),
            }
            self.write(p + ".json", dump(doc, "  "))

    def loc_text(self, lang):
        if lang == "en":
            return " ".join(self.rng.choice(LOREM) for _ in range(self.rng.randint(3, 12))).capitalize() + "."
        return LOCALISED[lang]

    def gen_loc(self, count):
        for i in range(count):
            lang = LANGS[i % len(LANGS)]
            area = f"{self.rng.choice(THEMES['lua'])}_{i // len(LANGS):03d}"
            table = {f"{area}.{self.rng.choice(NOUNS)}_{k}": self.loc_text(lang)
                     for k in range(self.rng.randint(5, 20))}
            self.write(f"localization/{lang}/{area}.json", dump(table, "    "))

    def gen_lua(self, paths, units, levels):
        for p in paths:
            rng = self.rng
            name = p.rsplit("/", 1)[1].replace(".", "_").replace("-", "_")
            lines = [f"-- {name}: generated gameplay script", f"local {name} = {{}}", ""]
            for k in range(rng.randint(2, 8)):
                fn = f"{rng.choice(['on', 'update', 'spawn', 'check', 'open'])}_{rng.choice(NOUNS)}"
                lines += [f"function {name}.{fn}_{k}(world, unit)",
                          f"    local pos = Unit.local_position(unit, 1)",
                          f"    if pos.y < {rng.randint(-10, 10)} then",
                          f'        World.spawn_unit(world, "{rng.choice(units)}", pos)',
                          "    end",
                          f'    -- {" ".join(rng.choice(LOREM) for _ in range(8))}',
                          "end", ""]
            if rng.random() < 0.3:
                lines.append(f'Level.load("{rng.choice(levels)}")')
            lines.append(f"return {name}")
            self.write(p + ".lua", "\n".join(lines) + "\n")

    def doc_text(self, title):
        rng = self.rng
        paras = [" ".join(rng.choice(LOREM) for _ in range(rng.randint(20, 60))).capitalize() + "."
                 for _ in range(rng.randint(2, 6))]
        return f"# {title}\n\n" + "\n\n".join(paras) + "\n"

    def gen_docs(self, count):
        for i in range(count):
            topic = self.rng.choice(THEMES["lua"])
            self.write(f"docs/{topic}/notes_{i:04d}.md", self.doc_text(f"Notes {i} on {topic}"))

    def gen_odd(self, count, meshes, materials, textures):
        for i in range(count):
            template, kind = ODD_NAMES[i % len(ODD_NAMES)]
            rel = template.format(i=i // len(ODD_NAMES) + 1)
            if kind == "doc":
                self.write(rel, self.doc_text("Level flow"))
            elif kind == "loc":
                self.write(rel, dump({f"menu.item_{k}": LOCALISED["ja"] for k in range(8)}, "    "))
            elif kind == "texture":
                self.write(rel, self.texture())
            elif kind == "export":
                self.write(rel, dump({"preset": "café", "outputs": [
                    self.rng.choice(meshes) + ".mesh", self.rng.choice(textures) + ".png"],
                    "material": self.rng.choice(materials) + ".material"}, "    "))
            else:
                self.write(rel, "-- naïve pathing\nreturn {}\n")

    # ---- the project ---------------------------------------------------------

    def run(self):
        c = self.counts()
        rng = self.rng
        project = {
            "name": f"Kiln scale test ({self.n} files)",
            "references": {
                "particles": {"material": "material", "texture": "png"},
                "sunit": {
                    "/components/*/data/material_resource": "material",
                    "/components/*/data/mesh_resource": "mesh",
                    "/lods/**/mesh": "mesh",
                },
            },
        }
        self.write("kiln.project", dump(project))
        textures = self.gen_textures(c["texture"])
        materials = self.gen_materials(c["material"], textures)
        models = self.gen_models(c["model"], textures)
        meshes = self.gen_meshes(c["mesh"], models)

        # Plan the paths of the files that may name the hub, then choose who does.
        unit_paths = self.plan("units", c["unit"], THEMES["unit"])
        sunit_paths = self.plan("units_stingray", c["sunit"], THEMES["sunit"])
        particle_paths = self.plan("fx", c["particles"], THEMES["particles"], lo=10, hi=80)
        export_paths = self.plan("pipeline/exports", c["export"], THEMES["export"])
        unity_paths = self.plan("external/unity_bridge", c["unity"], THEMES["unity"])
        level_count = c["level"]
        candidates = (unit_paths + sunit_paths + particle_paths + export_paths
                      + unity_paths + [f"level:{i}" for i in range(1, level_count)])
        want = min(HUB_FILES - 1, len(candidates))
        hub = set(rng.sample(candidates, want))
        # Levels are named later; mark them by index, then by path.
        level_marks = {int(x[6:]) for x in hub if x.startswith("level:")}

        overridable = self.gen_units(unit_paths, meshes, materials, hub)
        # Levels: the deps level (index 0) always names the hub.
        level_hub = _LevelHub(level_marks)
        self.gen_levels(level_count, unit_paths, overridable, meshes, materials, level_hub)
        self.gen_sunits(sunit_paths, meshes, materials, hub)
        self.gen_particles(particle_paths, materials, textures, hub)
        self.gen_exports(export_paths, meshes, materials, textures, hub)
        self.gen_unity(unity_paths, meshes, materials, textures, hub)
        self.gen_loc(c["loc"])
        self.gen_lua(self.plan("scripts", c["lua"], THEMES["lua"]), unit_paths,
                     level_hub.paths)
        self.gen_docs(c["doc"])
        self.gen_odd(c["odd"], meshes, materials, textures)
        # Rounding: top up to exactly N files.
        extra = self.n - self.files
        if extra > 0:
            for k in range(extra):
                self.write(f"textures/extra/fill_{k:04d}.png", self.texture())
        return want + 1


class _LevelHub:
    """Membership for levels: by index (the deps level, index 0, always)."""

    def __init__(self, marks):
        self.marks = marks
        self.paths = []

    def __contains__(self, rel):
        i = len(self.paths)
        self.paths.append(rel[: -len(".level")])
        return i == 0 or i in self.marks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--files", type=int, default=20000, help="how many files (default 20000)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--force", action="store_true",
                    help="write into a non-empty OUT_DIR (files of the same names are "
                    "overwritten, others left)")
    args = ap.parse_args()
    if args.files < MIN_FILES:
        ap.error(f"--files must be at least {MIN_FILES}")
    if os.path.isdir(args.out_dir) and os.listdir(args.out_dir) and not args.force:
        print(f"error: {args.out_dir} is not empty (use --force to write into it)",
              file=sys.stderr)
        return 2
    if os.path.exists(args.out_dir) and not os.path.isdir(args.out_dir):
        print(f"error: {args.out_dir} is not a folder", file=sys.stderr)
        return 2
    os.makedirs(args.out_dir, exist_ok=True)
    start = time.monotonic()
    g = Gen(args.out_dir, args.files, args.seed)
    referencing = g.run()
    took = time.monotonic() - start
    folders = set()
    for d in g.made_dirs:
        while d not in folders and d != args.out_dir and len(d) > len(args.out_dir):
            folders.add(d)
            d = os.path.dirname(d)
    print(f"wrote {g.files} files ({g.binary_files} binary), {g.bytes} bytes "
          f"({g.bytes / g.files:.0f} bytes per file) in {len(folders)} folders "
          f"to {args.out_dir} in {took:.1f} s")
    print(f"hub: {HUB} (referenced by {referencing} files)")
    print(f"deps level: {DEPS_LEVEL}")
    if referencing != HUB_FILES:
        print(f"warning: only {referencing} files reference the hub "
              f"(too few files for {HUB_FILES})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
