// From https://w3c.github.io/hr-time/#dom-domhighrestimestamp (only what the engine uses).
typedef double DOMHighResTimeStamp;
