//! `ProfilerTrace` pieces for tests: the frames, stacks and samples that the export, intake
//! and collector tests build their traces from.
//!
//! A crate of its own, and only ever a dev-dependency: it depends on `jsprof-profiler`
//! alone (the trace's types), so a test of `jsprof-export` or `jsprof-intake` takes it
//! without a second copy of the crate under test, and no feature of a shipped crate is
//! switched on for the tests only (which would build that crate, and all above it, twice:
//! once for the binaries and once for the tests).

#![forbid(unsafe_code)]

use jsprof_profiler::{ProfilerFrame, ProfilerSample, ProfilerStack};

/// A frame named `name`, at `line`:`column` of resource `resource_id` (each `None`: absent).
pub fn frame(
    name: &str,
    resource_id: Option<u64>,
    line: Option<u64>,
    column: Option<u64>,
) -> ProfilerFrame {
    ProfilerFrame {
        name: name.into(),
        resource_id,
        line,
        column,
    }
}

/// The stack of frame `frame_id` under stack `parent_id` (`None`: a root).
pub fn stack(frame_id: u64, parent_id: Option<u64>) -> ProfilerStack {
    ProfilerStack {
        frame_id,
        parent_id,
    }
}

/// One stack per frame, in frame order: stack `i` is frame `i` under stack `parents[i]`.
/// `stacks(&[None, Some(0)])` is frame 0 (stack 0) calling frame 1 (stack 1).
pub fn stacks(parents: &[Option<u64>]) -> Vec<ProfilerStack> {
    (0u64..)
        .zip(parents)
        .map(|(frame_id, &parent_id)| stack(frame_id, parent_id))
        .collect()
}

/// A sample at `timestamp` of stack `stack_id` (`None`: no stack), without a marker.
pub fn sample(timestamp: f64, stack_id: Option<u64>) -> ProfilerSample {
    ProfilerSample {
        marker: None,
        stack_id,
        timestamp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_follow_the_frames() {
        assert_eq!(
            stacks(&[None, Some(0), Some(0)]),
            [stack(0, None), stack(1, Some(0)), stack(2, Some(0))]
        );
    }
}
