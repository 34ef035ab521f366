//! Writes three versions of one big level for the merge benchmark:
//! `gen_merge DIR ENTITIES EDITS` writes `DIR/base.level` (ENTITIES entities, two
//! components each, most with a parent, as the editor writes them), and
//! `DIR/ours.level` and `DIR/theirs.level`, each with EDITS edits of its own: moved
//! entities, renamed ones, added components, new entities and deleted leaves, on
//! different entities, so that the merge is clean.
//!
//! ```sh
//! cargo run --release -p kiln_merge --example gen_merge -- /tmp/merge 100000 1000
//! time kiln merge /tmp/merge/base.level /tmp/merge/ours.level /tmp/merge/theirs.level
//! time git merge-file -p /tmp/merge/ours.level /tmp/merge/base.level /tmp/merge/theirs.level
//! ```
use std::process::ExitCode;

use kiln_core::{EntityDocument, LevelDocument, Registry};
use serde_json::json;

fn entity(k: usize) -> EntityDocument {
    let components = json!({
        "mesh": {"mesh": "meshes/crate", "material": "materials/wood"},
        "transform": {"position": [(k % 100) as f32, 0.0, (k / 100) as f32]}
    });
    EntityDocument {
        id: format!("e{k}"),
        name: format!("Crate {k}"),
        // Nine in ten under a group every hundred entities.
        parent: (!k.is_multiple_of(10)).then(|| format!("e{}", k - k % 10)),
        components: components.as_object().cloned().unwrap_or_default(),
        ..Default::default()
    }
}

/// `doc` with `edits` edits of `side`'s own, on entities `first`, `first + stride`, ...
fn edited(base: &LevelDocument, edits: usize, side: &str, first: usize) -> LevelDocument {
    let mut doc = base.clone();
    let n = doc.entities.len();
    let stride = (n / (edits * 2).max(1)).max(2);
    let mut deleted = Vec::new();
    for e in 0..edits {
        let k = (first + e * stride * 2) % n;
        match e % 5 {
            0 => {
                if let Some(t) = doc.entities[k].components.get_mut("transform") {
                    t["position"] = json!([1.5, 2.0, e as f32]);
                }
            }
            1 => doc.entities[k].name = format!("{side} {e}"),
            2 => {
                doc.entities[k]
                    .components
                    .insert("rotator".into(), json!({"speed": 15.0}));
            }
            3 => {
                let mut new = entity(k);
                new.id = format!("{side}_new_{e}");
                new.name = format!("{side} new {e}");
                doc.entities.insert(k + 1, new);
            }
            // A leaf: its group is the one every tenth.
            _ if !k.is_multiple_of(10) => deleted.push(format!("e{k}")),
            _ => doc.entities[k].name = format!("{side} {e}"),
        }
    }
    doc.entities.retain(|e| !deleted.contains(&e.id));
    doc
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, n, edits] = args.as_slice() else {
        eprintln!("usage: gen_merge DIR ENTITIES EDITS");
        return ExitCode::from(2);
    };
    let (Ok(n), Ok(edits)) = (n.replace('_', "").parse::<usize>(), edits.parse::<usize>()) else {
        eprintln!("error: ENTITIES and EDITS are numbers");
        return ExitCode::from(2);
    };
    let registry = Registry::with_builtins();
    let base = LevelDocument {
        entities: (0..n).map(entity).collect(),
        conflicts: Vec::new(),
    };
    let dir = std::path::Path::new(dir);
    let write = |name: &str, doc: &LevelDocument| {
        std::fs::write(dir.join(name), doc.to_canonical_json(&registry))
    };
    let result = std::fs::create_dir_all(dir)
        .and_then(|()| write("base.level", &base))
        .and_then(|()| write("ours.level", &edited(&base, edits, "ours", 1)))
        .and_then(|()| write("theirs.level", &edited(&base, edits, "theirs", 3)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}: {e}", dir.display());
            ExitCode::FAILURE
        }
    }
}
