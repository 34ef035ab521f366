//! An example Kiln plugin written in Rust with the `kiln_plugin` SDK.
//!
//! Component `wind`: sways its entity along `direction` by `strength` metres, `gusts`
//! times a second, around where it was spawned. `leaves` names a material (the
//! dependency checker tracks and patches it like any typed reference). The instances
//! live here as structure of arrays, as Kiln's own managers keep theirs.

use kiln_plugin::{Component, Engine, EntityId, Field, Plugin, Record, World};

/// The wind component's manager.
#[derive(Debug, Default)]
struct Wind {
    entities: Vec<EntityId>,
    direction: Vec<[f32; 3]>,
    strength: Vec<f32>,
    gusts: Vec<f32>,
    /// Where each entity was, relative to its parent, when the wind first touched it.
    rest: Vec<Option<[f32; 3]>>,
    time: f32,
}

impl Wind {
    fn remove(&mut self, i: usize) {
        self.entities.swap_remove(i);
        self.direction.swap_remove(i);
        self.strength.swap_remove(i);
        self.gusts.swap_remove(i);
        self.rest.swap_remove(i);
    }
}

impl Component for Wind {
    const NAME: &'static str = "wind";
    const SPAWN_ORDER: i32 = 45;
    const DOC: &'static str = "Sways the entity in the wind (example plugin, Rust).";
    const FIELDS: &'static [Field] = &[
        Field::vec3("direction", "[1, 0, 0]").doc("Which way it sways."),
        Field::float("strength", "0.5", 0.0, 10.0).doc("How far, in metres."),
        Field::float("gusts", "0.5", 0.0, 20.0).doc("Sways per second."),
        Field::resource("leaves", "material")
            .doc("The material of what it blows (not drawn by the plugin)."),
    ];

    fn new() -> Self {
        Wind::default()
    }

    fn create(&mut self, entities: &[EntityId], records: Vec<Record<'_>>) {
        for (e, mut r) in entities.iter().zip(records) {
            self.entities.push(*e);
            self.direction.push(r.vec3());
            self.strength.push(r.float());
            self.gusts.push(r.float());
            let _leaves = r.resource();
            self.rest.push(None);
        }
    }

    fn destroy(&mut self, entity: EntityId) {
        if let Some(i) = self.entities.iter().position(|e| *e == entity) {
            self.remove(i);
        }
    }

    fn gc(&mut self, alive: &dyn Fn(EntityId) -> bool) {
        let mut i = 0;
        while i < self.entities.len() {
            if alive(self.entities[i]) {
                i += 1;
            } else {
                self.remove(i);
            }
        }
    }

    fn simulate(&mut self, dt: f32, world: &World<'_>) {
        self.time += dt;
        for i in 0..self.entities.len() {
            let e = self.entities[i];
            let rest = match self.rest[i] {
                Some(r) => r,
                // Local, not world: the sway is set as a local translation, and a
                // canopy sits on its trunk.
                None => match world.local_pose(e) {
                    Some(m) => {
                        let r = [m[9], m[10], m[11]];
                        self.rest[i] = Some(r);
                        r
                    }
                    None => continue,
                },
            };
            let phase = (self.time * self.gusts[i] * std::f32::consts::TAU).sin();
            let d = self.direction[i];
            let s = self.strength[i] * phase;
            world.set_local_translation(
                e,
                [rest[0] + d[0] * s, rest[1] + d[1] * s, rest[2] + d[2] * s],
            );
        }
    }
}

/// The plugin.
#[derive(Debug)]
struct WindPlugin;

impl Plugin for WindPlugin {
    const NAME: &'static str = "wind";
    fn init(engine: &Engine) -> Result<Self, String> {
        engine.register::<Wind>()?;
        Ok(WindPlugin)
    }
}

kiln_plugin::export_plugin!(WindPlugin);
