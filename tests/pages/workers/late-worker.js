// Answers after the page has nothing else to do, stays busy a little (so that the page is
// waiting again when it idles), then waits for messages forever: the page ends as soon as
// the worker has nothing left to do.
setTimeout(() => {
  postMessage("late answer");
  const end = Date.now() + 50;
  while (Date.now() < end);
}, 150);
