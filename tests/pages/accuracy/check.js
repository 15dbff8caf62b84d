// The accuracy pages' bookkeeping: when each phase of the page's loop ran (A, the function
// under test, or B, the other), by the page's own clock, and what the trace says about them.
//
// A sample's timestamp is its tick, on the page's clock. So every sample, with a stack or
// without one (a tick the page's thread could not answer in time, on a loaded machine), says
// where the page was at its tick; and a sample's stack must be the one of its tick.
class Phases {
  constructor() {
    this.spans = []; // [start, end, isA], in order
  }

  add(start, end, isA) {
    this.spans.push([start, end, isA]);
  }

  // What `check` reports (the test compares them):
  // - wallA: the share of the phases' wall-clock time spent in A (the truth of the split);
  // - ticks, ticksInA: the samples whose timestamp falls in a phase, and those in A: their
  //   share must be wallA (one random tick per block: no aliasing);
  // - stacked, stackedInA, onStackA: the samples with a stack whose timestamp falls in a
  //   phase more than MARGIN ms from its edges; those in A; those with nameA on their stack
  //   (B's function, or neither, otherwise): the two shares must agree;
  // - samples: all the trace's samples.
  check(trace, nameA, nameB) {
    const MARGIN = 0.2; // two steps of the 100 µs clock
    const onStack = (s, name) => {
      for (let id = s.stackId; id !== undefined; id = trace.stacks[id].parentId) {
        if (trace.frames[trace.stacks[id].frameId].name === name) return true;
      }
      return false;
    };
    let wall = [0, 0];
    for (const [start, end, isA] of this.spans) wall[isA ? 0 : 1] += end - start;
    let ticks = 0, ticksInA = 0, stacked = 0, stackedInA = 0, onStackA = 0, onStackB = 0;
    let i = 0;
    for (const s of trace.samples) { // in timestamp order, as the spans
      const t = s.timestamp;
      while (i < this.spans.length && this.spans[i][1] < t) i++;
      if (i === this.spans.length) break;
      const [start, end, isA] = this.spans[i];
      if (t < start) continue;
      ticks++;
      if (isA) ticksInA++;
      if (s.stackId === undefined || t < start + MARGIN || t > end - MARGIN) continue;
      stacked++;
      if (isA) stackedInA++;
      if (onStack(s, nameA)) onStackA++;
      else if (onStack(s, nameB)) onStackB++;
    }
    return { samples: trace.samples.length, wallA: wall[0] / (wall[0] + wall[1]), ticks, ticksInA,
      stacked, stackedInA, onStackA, onStackB };
  }
}
