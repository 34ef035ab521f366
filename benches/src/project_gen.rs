//! A deterministic generated project for the dependency-checker benchmarks: 20,000
//! JSON resource files (~45 MB) in a few thousand folders, with one material that
//! exactly 1,000 files reference.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

/// The material that exactly [`HERO_REFERENCES`] files reference.
pub const HERO: &str = "materials/shared/hero.material";
/// How many files reference [`HERO`].
pub const HERO_REFERENCES: usize = 1000;

/// Sizes of a generated project.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// `.level` files (about 36 KB each).
    pub levels: usize,
    /// `.unit` files.
    pub units: usize,
    /// `.material` files.
    pub materials: usize,
    /// `.mesh` files.
    pub meshes: usize,
    /// Third-party `.json` files (generic references).
    pub tools: usize,
}

impl Shape {
    /// The benchmark's project: 20,000 files.
    pub const FULL: Shape = Shape {
        levels: 1000,
        units: 3000,
        materials: 8000,
        meshes: 5000,
        tools: 3000,
    };
    /// A quarter of it, to show a rename's cost does not grow with project size.
    pub const QUARTER: Shape = Shape {
        levels: 250,
        units: 750,
        materials: 2000,
        meshes: 1250,
        tools: 750,
    };

    /// Total files (plus `kiln.project`).
    pub fn files(&self) -> usize {
        self.levels + self.units + self.materials + self.meshes + self.tools
    }
}

fn material(i: usize) -> String {
    format!("materials/set_{:03}/m_{i:05}", i / 8)
}
fn mesh(i: usize) -> String {
    format!("meshes/set_{:03}/s_{i:05}", i / 5)
}
fn unit(i: usize) -> String {
    format!("units/kit_{:03}/u_{i:05}", i / 3)
}

fn write(root: &Path, rel: &str, text: &str) -> io::Result<()> {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(path, text)
}

/// Writes the project into `root` (which should be empty).
pub fn generate(root: &Path, shape: Shape) -> io::Result<()> {
    // The files that reference the hero: up to 400 levels, then up to 400 units,
    // then third-party files for the rest.
    let mut level_quota = shape.levels.min(400);
    let mut unit_quota = shape.units.min(400);
    let mut tool_quota = HERO_REFERENCES - level_quota - unit_quota;
    write(root, "kiln.project", "{\"name\": \"generated\"}\n")?;
    write(root, HERO, "{\n  \"color\": [1, 0.8, 0.2, 1]\n}\n")?;
    for i in 0..shape.materials.saturating_sub(1) {
        write(
            root,
            &format!("{}.material", material(i)),
            &format!(
                "{{\n  \"color\": [0.{}, 0.5, 0.5, 1],\n  \"roughness\": 0.5\n}}\n",
                i % 10
            ),
        )?;
    }
    for i in 0..shape.meshes {
        write(
            root,
            &format!("{}.mesh", mesh(i)),
            &format!(
                "{{\n  \"shape\": \"cube\",\n  \"size\": [1, {}, 1]\n}}\n",
                1 + i % 4
            ),
        )?;
    }
    for i in 0..shape.units {
        let mut s = String::from("{\n  \"entities\": [\n");
        for e in 0..4 {
            let mat = if e == 0 && unit_quota > 0 {
                unit_quota -= 1;
                "materials/shared/hero".to_owned()
            } else {
                material((i * 7 + e) % shape.materials.saturating_sub(1).max(1))
            };
            let _ = write!(
                s,
                "    {{\n      \"id\": \"part_{e}\",\n      \"name\": \"Part {e}\",\n{}      \"components\": {{\n        \"mesh\": {{\n          \"mesh\": \"{}\",\n          \"material\": \"{mat}\"\n        }},\n        \"transform\": {{\n          \"position\": [{e}, 0, 0]\n        }}\n      }}\n    }}{}\n",
                if e > 0 {
                    "      \"parent\": \"part_0\",\n"
                } else {
                    ""
                },
                mesh((i * 3 + e) % shape.meshes),
                if e < 3 { "," } else { "" }
            );
        }
        s.push_str("  ]\n}\n");
        write(root, &format!("{}.unit", unit(i)), &s)?;
    }
    for i in 0..shape.levels {
        let mut s = String::from("{\n  \"entities\": [\n");
        let n = 82;
        for e in 0..n {
            let body = if e % 10 == 0 {
                format!(
                    "      \"prefab\": \"{}\",\n      \"components\": {{\n        \"transform\": {{\n          \"position\": [{e}, 0, {i}],\n          \"rotation\": [0, {}, 0]\n        }}\n      }}\n",
                    unit((i * 11 + e) % shape.units),
                    e * 7 % 360
                )
            } else {
                let mat = if e == 1 && level_quota > 0 {
                    level_quota -= 1;
                    "materials/shared/hero".to_owned()
                } else {
                    material((i * 13 + e) % shape.materials.saturating_sub(1).max(1))
                };
                format!(
                    "      \"components\": {{\n        \"mesh\": {{\n          \"mesh\": \"{}\",\n          \"material\": \"{mat}\"\n        }},\n        \"transform\": {{\n          \"position\": [{e}, 0, {i}],\n          \"scale\": [1, 1, 1]\n        }}\n      }}\n",
                    mesh((i * 17 + e) % shape.meshes)
                )
            };
            let _ = write!(
                s,
                "    {{\n      \"id\": \"e{e:03}\",\n      \"name\": \"Entity {e} of level {i}\",\n{}{body}    }}{}\n",
                if e % 10 != 0 {
                    format!("      \"parent\": \"e{:03}\",\n", e - e % 10)
                } else {
                    String::new()
                },
                if e + 1 < n { "," } else { "" }
            );
        }
        s.push_str("  ]\n}\n");
        write(
            root,
            &format!(
                "levels/region_{:02}/zone_{:03}/l_{i:04}.level",
                i / 100,
                i / 4
            ),
            &s,
        )?;
    }
    for i in 0..shape.tools {
        let hero = if tool_quota > 0 {
            tool_quota -= 1;
            format!(", \"{HERO}\"")
        } else {
            String::new()
        };
        write(
            root,
            &format!("tools/export_{:03}/job_{i:05}.json", i / 6),
            &format!(
                "{{\n  \"tool\": \"exporter\",\n  \"inputs\": [\"{}.material\", \"{}\"{hero}],\n  \"notes\": \"generated job {i}\"\n}}\n",
                material(i % shape.materials.saturating_sub(1).max(1)),
                mesh(i % shape.meshes)
            ),
        )?;
    }
    let left = level_quota + unit_quota + tool_quota;
    if left > 0 {
        return Err(io::Error::other(format!(
            "shape too small: {left} hero references left"
        )));
    }
    Ok(())
}
