//! Deterministic tests of the sampler core: fake time, fake agents, no threads, fixed seeds.
//! Every file drives the same [`Harness`](harness::Harness), one file a topic.

mod harness;

mod accuracy;
mod budget;
mod forced;
mod markers;
mod plan;
mod proposals;
mod sessions;
mod stacks;
