// Answers after the page has nothing else to do, then waits for messages forever: the page
// ends as soon as the worker has nothing left to do.
setTimeout(() => postMessage("late answer"), 150);
