//! What a run reads from its spec once: the [`SpecReading`] and the world
//! built on it.
//!
//! A run makes one [`Ground`]: the axes, the plan, each situation's goal,
//! the rollouts and the conduct checks all take it, so the spec's words are
//! read once and its world is built once. The plan reads records and tries
//! goals on [`Ground::calm`], a copy of the run's world without random
//! faults.

use sparring_reading::{ReadError, SpecReading};
use sparring_types::{Spec, WorldOptions};
use sparring_world::World;
use std::sync::Arc;

/// A spec's reading and the world built on it.
#[derive(Clone, Debug)]
pub struct Ground {
    reading: Arc<SpecReading>,
    world: World,
}

impl Ground {
    /// Reads `spec` and builds its world with `options`.
    ///
    /// # Errors
    ///
    /// When the spec's `policy_rules` name a rule its policy does not have.
    pub fn new(spec: &Spec, options: WorldOptions) -> Result<Self, ReadError> {
        Ok(Self::with_reading(
            spec,
            Arc::new(SpecReading::of(spec)?),
            options,
        ))
    }

    /// Builds the world of a spec read already.
    pub fn with_reading(spec: &Spec, reading: Arc<SpecReading>, options: WorldOptions) -> Self {
        let world = World::with_reading(spec, &reading, 0, options);
        Self { reading, world }
    }

    /// The spec's reading.
    pub fn reading(&self) -> &Arc<SpecReading> {
        &self.reading
    }

    /// The run's world, with the run's random fault rate.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// A copy of the run's world without random faults: what the plan reads
    /// records from and tries goals on.
    pub fn calm(&self) -> World {
        self.world.clone().without_random_faults()
    }
}

const _: fn() = || {
    fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<Ground>();
};
