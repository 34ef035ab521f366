//! Deterministic data for the benchmarks in `benches/`: generated levels and
//! hierarchies, so every peer is measured on the same input.

use std::fmt::Write;

/// A level of `n` entities, each with a transform, a mesh, a point mass and a name;
/// every tenth entity is a root, the others children of the previous root.
pub fn level_json(n: usize) -> String {
    let mut s = String::from("{\"entities\": [\n");
    for i in 0..n {
        let parent = if i % 10 == 0 {
            String::new()
        } else {
            format!(", \"parent\": \"e{}\"", i - i % 10)
        };
        let _ = writeln!(
            s,
            "{{\"id\": \"e{i}\", \"name\": \"Entity {i}\"{parent}, \"components\": {{\
             \"transform\": {{\"position\": [{}, 0, {}], \"rotation\": [0, {}, 0]}}, \
             \"mesh\": {{\"mesh\": \"meshes/cube\", \"material\": \"materials/m{}\"}}, \
             \"point_mass\": {{\"mass\": 2, \"velocity\": [1, 0, 0]}}}}}}{}",
            i % 100,
            i / 100,
            i % 360,
            i % 8,
            if i + 1 < n { "," } else { "" }
        );
    }
    s.push_str("]}\n");
    s
}

/// Parent of each node of a tree with `fanout` children per node and `depth` levels
/// below the root, in depth-first (parents first) order; `u32::MAX` for the root.
pub fn tree_parents(fanout: usize, depth: usize) -> Vec<u32> {
    fn visit(parent: u32, level: usize, fanout: usize, depth: usize, out: &mut Vec<u32>) {
        let me = out.len() as u32;
        out.push(parent);
        if level < depth {
            for _ in 0..fanout {
                visit(me, level + 1, fanout, depth, out);
            }
        }
    }
    let mut out = Vec::new();
    visit(u32::MAX, 0, fanout, depth, &mut out);
    out
}

/// A deterministic pseudo-random sequence (xorshift), for picking nodes.
pub fn picks(count: usize, below: usize, mut seed: u64) -> Vec<usize> {
    (0..count)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % below as u64) as usize
        })
        .collect()
}

pub mod project_gen;

/// Writes a project with one level of `n` entities (every tenth a root with nine
/// children, each with a transform and a mesh), for the editor benchmarks.
pub fn write_editor_project(dir: &std::path::Path, n: usize) -> std::io::Result<String> {
    use std::fs;
    fs::create_dir_all(dir.join("levels"))?;
    fs::create_dir_all(dir.join("meshes"))?;
    fs::create_dir_all(dir.join("materials"))?;
    fs::write(dir.join("kiln.project"), "{}")?;
    fs::write(
        dir.join("meshes/cube.mesh"),
        "{\"shape\": \"cube\", \"size\": [0.8, 0.8, 0.8]}",
    )?;
    for k in 0..8 {
        fs::write(
            dir.join(format!("materials/m{k}.material")),
            format!("{{\"color\": [0.{k}, 0.6, 0.8, 1]}}"),
        )?;
    }
    let mut s = String::from("{\"entities\": [\n");
    let side = (n as f64).sqrt().ceil() as usize;
    for i in 0..n {
        let parent = if i % 10 == 0 {
            String::new()
        } else {
            format!(", \"parent\": \"e{}\"", i - i % 10)
        };
        let (x, z) = if i % 10 == 0 {
            ((i % side) as f32 * 1.5, (i / side) as f32 * 1.5)
        } else {
            ((i % 10) as f32 * 0.1, 1.0)
        };
        let _ = writeln!(
            s,
            "{{\"id\": \"e{i}\", \"name\": \"Entity {i}\"{parent}, \"components\": {{\"transform\": {{\"position\": [{x}, 0, {z}]}}, \"mesh\": {{\"mesh\": \"meshes/cube\", \"material\": \"materials/m{}\"}}}}}}{}",
            i % 8,
            if i + 1 < n { "," } else { "" }
        );
    }
    s.push_str("]}\n");
    fs::write(dir.join("levels/big.level"), s)?;
    Ok("levels/big.level".into())
}
