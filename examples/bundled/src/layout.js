// layout.js: a force-directed layout of the records' tree, the page's hot spot.

/** Pushes every pair of boxes apart, in proportion to their sizes. */
function repelBoxes(boxes, strength) {
  let moved = 0;
  for (let i = 0; i < boxes.length; i++) {
    const a = boxes[i];
    for (let j = i + 1; j < boxes.length; j++) {
      const b = boxes[j];
      const dx = b.x - a.x;
      const dy = b.y - a.y;
      const distanceSquared = dx * dx + dy * dy + 0.01;
      const force = (strength * (a.width + b.width)) / distanceSquared;
      const fx = dx * force;
      const fy = dy * force;
      a.vx -= fx;
      a.vy -= fy;
      b.vx += fx;
      b.vy += fy;
      moved += Math.abs(fx) + Math.abs(fy);
    }
  }
  return moved;
}

/** Pulls each box towards its parent, like a spring. */
function attractToParents(boxes, stiffness) {
  for (const box of boxes) {
    if (box.parent < 0) continue;
    const parent = boxes[box.parent];
    box.vx += (parent.x - box.x) * stiffness;
    box.vy += (parent.y - box.y) * stiffness;
  }
}

/** Lays the records out: `iterations` steps of forces, then the bounding box. */
export function computeLayout(records, iterations) {
  const boxes = records.map((r, index) => ({
    id: r.id,
    width: r.width,
    height: r.height,
    parent: r.parent,
    x: Math.cos(index) * index,
    y: Math.sin(index) * index,
    vx: 0,
    vy: 0,
  }));
  let energy = 0;
  for (let step = 0; step < iterations; step++) {
    energy = repelBoxes(boxes, 0.5);
    attractToParents(boxes, 0.01);
    for (const box of boxes) {
      box.x += box.vx * 0.1;
      box.y += box.vy * 0.1;
      box.vx *= 0.8;
      box.vy *= 0.8;
    }
  }
  return { boxes, energy, bounds: measureBounds(boxes) };
}

/** The smallest rectangle holding every box. */
export function measureBounds(boxes) {
  let left = Infinity;
  let top = Infinity;
  let right = -Infinity;
  let bottom = -Infinity;
  for (const box of boxes) {
    left = Math.min(left, box.x);
    top = Math.min(top, box.y);
    right = Math.max(right, box.x + box.width);
    bottom = Math.max(bottom, box.y + box.height);
  }
  return { left, top, right, bottom };
}
