//! A plugin whose component panics: in `create` when its `fail` field is true, and
//! in `simulate` always. Kiln's tests load it to check that a panic stays on the
//! plugin's side of the boundary.

use kiln_plugin::{Component, Engine, EntityId, Field, Plugin, Record, World};

#[derive(Debug, Default)]
struct Panicky {
    entities: Vec<EntityId>,
}

impl Component for Panicky {
    const NAME: &'static str = "panicky";
    const FIELDS: &'static [Field] = &[Field::bool("fail", "false")];
    fn new() -> Self {
        Panicky::default()
    }
    fn create(&mut self, entities: &[EntityId], records: Vec<Record<'_>>) {
        for (e, mut r) in entities.iter().zip(records) {
            if r.bool() {
                panic!("asked to fail");
            }
            self.entities.push(*e);
        }
    }
    fn destroy(&mut self, entity: EntityId) {
        self.entities.retain(|e| *e != entity);
    }
    fn gc(&mut self, alive: &dyn Fn(EntityId) -> bool) {
        self.entities.retain(|e| alive(*e));
    }
    fn simulate(&mut self, _dt: f32, _world: &World<'_>) {
        panic!("simulate always panics");
    }
}

#[derive(Debug)]
struct PanickyPlugin;

impl Plugin for PanickyPlugin {
    const NAME: &'static str = "panicky";
    fn init(engine: &Engine) -> Result<Self, String> {
        engine.register::<Panicky>()?;
        Ok(PanickyPlugin)
    }
}

kiln_plugin::export_plugin!(PanickyPlugin);
