  // Messages between realms and threads (windows, a worker and its creator) cross as text:
  // the transferred ports' pair ids, then the structured clone's bytes (writeClone).
  // Ports in the transfer list move to the other thread: each becomes one end of a pair the
  // engine routes between threads (host.portOpen/portSend/portAttach); its entangled port,
  // which stays here, then sends through the engine.
  const remotePorts = new Map();
  function serialize(value, transfer = []) {
    transfer = Array.from(transfer);
    checkTransfer(transfer);
    // Serialised first: a value that cannot be cloned leaves the ports as they were.
    const data = writeClone(value, transfer);
    const pids = transfer.map((port) => {
      transferredPorts.add(port);
      const st = portState.get(port);
      const pid = host.portOpen();
      const kept = st.other;
      if (kept) {
        portState.get(kept).other = null;
        portState.get(kept).remote = { pid, end: 0 };
        remotePorts.set(`${pid}:0`, kept);
      }
      st.other = null;
      st.closed = true;
      return pid;
    });
    // The ports' pair ids, then the clone's bytes (as Latin-1 characters).
    return `${pids.join(",")};${data}`;
  }
  // A port of this realm that is the far end of pair `pid`.
  function remotePort(pid) {
    const key = `${pid}:1`;
    if (!remotePorts.has(key)) {
      const port = new MessagePort(ILLEGAL);
      portState.get(port).remote = { pid, end: 1 };
      remotePorts.set(key, port);
      host.portAttach(pid, 1);
    }
    return remotePorts.get(key);
  }
  function deserialize(text) {
    const split = text.indexOf(";");
    const pids = split > 0 ? text.slice(0, split).split(",").map(Number) : [];
    const ports = pids.map(remotePort);
    return { data: readClone(text.slice(split + 1), ports), ports };
  }

