//! Play's steps, run on a thread of their own under a watchdog: a plugin's
//! `simulate` or `update` that does not return within the frame budget cannot be
//! interrupted (nothing interrupts a loop from outside it), so the window stops
//! waiting for it instead. The plugin is stopped (never called again; a reload
//! loads a fresh copy), the thread is given up on with the world it holds, and the
//! preview spawns the level again without the plugin's instances, paused.
//!
//! Why one kept thread and not a thread per step: a step is a few hundred
//! microseconds at most in the demo, and spawning a thread each frame would cost
//! about as much as the step; the kept thread waits on a channel between steps.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::Duration;

use kiln_core::{EntityManager, World};
use kiln_plugin_host::{PluginCall, PluginUpdater};

/// The frame budget the editor's Play starts with (Settings → Play changes it): a
/// frame takes milliseconds, and a window that does not answer for two seconds is
/// already too long for a designer to wait.
pub const DEFAULT_FRAME_BUDGET: Duration = Duration::from_secs(2);

/// One step to run: the world goes to the thread and comes back.
struct Job {
    world: World,
    entities: Arc<EntityManager>,
    updaters: Vec<PluginUpdater>,
    dt: f32,
}

/// The thread Play's steps run on.
pub struct SimulationThread {
    jobs: SyncSender<Job>,
    results: Receiver<World>,
    thread: std::thread::ThreadId,
}

impl std::fmt::Debug for SimulationThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimulationThread")
            .field("thread", &self.thread)
            .finish_non_exhaustive()
    }
}

/// How a step ended.
#[derive(Debug)]
pub enum StepEnd {
    /// The world came back.
    Done(World),
    /// The world did not come back within the budget: it is given up with the
    /// thread. The plugin call that was running, stopped, if it was one.
    Hung(Option<PluginCall>),
    /// The thread could not run the step, and the world is handed back unstepped.
    NotRun(World, String),
}

impl SimulationThread {
    /// Starts the thread.
    pub fn start() -> std::io::Result<SimulationThread> {
        let (jobs, job_queue) = sync_channel::<Job>(1);
        let (results_out, results) = sync_channel::<World>(1);
        let handle = std::thread::Builder::new()
            .name("kiln-play".into())
            .spawn(move || run(job_queue, results_out))?;
        Ok(SimulationThread {
            jobs,
            results,
            thread: handle.thread().id(),
        })
    }

    /// Runs one step: each updater, then `world.simulate`, waiting at most `budget`.
    pub fn step(
        &self,
        world: World,
        entities: Arc<EntityManager>,
        updaters: Vec<PluginUpdater>,
        dt: f32,
        budget: Duration,
    ) -> StepEnd {
        let job = Job {
            world,
            entities,
            updaters,
            dt,
        };
        if let Err(refused) = self.jobs.send(job) {
            return StepEnd::NotRun(refused.0.world, "the play thread has ended".into());
        }
        match self.results.recv_timeout(budget) {
            Ok(world) => StepEnd::Done(world),
            Err(RecvTimeoutError::Timeout) => {
                let stopped = kiln_plugin_host::stop_call_in_progress();
                kiln_plugin_host::abandon_thread(self.thread);
                StepEnd::Hung(stopped)
            }
            // The thread ended mid-step (a panic in Kiln's own code): the world
            // went with it.
            Err(RecvTimeoutError::Disconnected) => StepEnd::Hung(None),
        }
    }
}

/// The thread's loop: steps until the editor drops its end, or gives up on it.
fn run(jobs: Receiver<Job>, results: SyncSender<World>) {
    while let Ok(job) = jobs.recv() {
        let Job {
            mut world,
            entities,
            updaters,
            dt,
        } = job;
        for updater in &updaters {
            updater.update(dt);
        }
        world.simulate(dt, &entities);
        // The editor's handle to the entities is its own again before the world
        // comes back (it changes them without copying).
        drop(entities);
        if kiln_plugin_host::this_thread_abandoned() {
            // Given up on: the editor spawned the level again, and dropping this
            // world would call its plugins about entities that are gone.
            std::mem::forget(world);
            return;
        }
        if let Err(unwanted) = results.send(world) {
            std::mem::forget(unwanted.0);
            return;
        }
    }
}
