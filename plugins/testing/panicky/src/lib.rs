//! A plugin that misbehaves on purpose, for Kiln's tests of the plugin boundary:
//! its component panics in `create` when its `fail` field is true, in `destroy`
//! or `gc` when `fail_in` is 1 or 2, and in `simulate` unless its `nan` field is
//! true, when it writes a translation that is not a number instead. Built with the
//! `panic_in_init` feature, its `init` panics.

use kiln_plugin::{Component, Engine, EntityId, Field, Plugin, Record, World};

#[derive(Debug, Default)]
struct Panicky {
    /// Each instance, and whether it writes NaN instead of panicking.
    entities: Vec<(EntityId, bool)>,
    /// Where a panic was asked for: 1 `destroy`, 2 `gc`.
    fail_in: i64,
}

impl Component for Panicky {
    const NAME: &'static str = "panicky";
    const FIELDS: &'static [Field] = &[
        Field::bool("fail", "false"),
        Field::bool("nan", "false"),
        Field::int("fail_in", "0", 0, 2),
    ];
    fn new() -> Self {
        Panicky::default()
    }
    fn create(&mut self, entities: &[EntityId], records: Vec<Record<'_>>) {
        for (e, mut r) in entities.iter().zip(records) {
            if r.bool() {
                panic!("asked to fail");
            }
            self.entities.push((*e, r.bool()));
            self.fail_in = self.fail_in.max(r.int());
        }
        // Logged from create, not only from init.
        kiln_plugin::log(
            kiln_plugin::abi::KilnLogLevel::Info,
            &format!("panicky created {}", entities.len()),
        );
    }
    fn destroy(&mut self, entity: EntityId) {
        if self.fail_in == 1 {
            panic!("asked to fail in destroy");
        }
        self.entities.retain(|(e, _)| *e != entity);
    }
    fn gc(&mut self, alive: &dyn Fn(EntityId) -> bool) {
        if self.fail_in == 2 {
            panic!("asked to fail in gc");
        }
        self.entities.retain(|(e, _)| alive(*e));
    }
    fn simulate(&mut self, _dt: f32, world: &World<'_>) {
        for (e, nan) in &self.entities {
            if *nan {
                world.set_local_translation(*e, [f32::NAN, 0.0, f32::INFINITY]);
            } else {
                panic!("simulate always panics");
            }
        }
    }
}

#[derive(Debug)]
struct PanickyPlugin;

impl Plugin for PanickyPlugin {
    const NAME: &'static str = "panicky";
    fn init(engine: &Engine) -> Result<Self, String> {
        if cfg!(feature = "panic_in_init") {
            panic!("asked to fail in init");
        }
        engine.register::<Panicky>()?;
        Ok(PanickyPlugin)
    }
}

kiln_plugin::export_plugin!(PanickyPlugin);
