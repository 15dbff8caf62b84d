
  // Messages between realms and threads (windows, a worker and its creator) cross as text:
  // the transferred ports' pair ids, then the structured clone's bytes (writeClone).
  // Ports in the transfer list move to the other thread: each becomes one end of a pair the
  // engine routes between threads (host.portOpen/portSend/portAttach); its entangled port,
  // which stays here, then sends through the engine.
  const remotePorts = new MapCtor(); // "pid:end" -> this realm's port for that end
  // `value` serialised with `transfer` (a list of ports).
  function serialize(value, transfer) {
    checkTransfer(transfer);
    // Serialised first: a value that cannot be cloned leaves the ports as they were.
    const data = writeClone(value, transfer);
    let pids = "";
    for (let i = 0; i < transfer.length; i++) {
      const st = platformStateOf(transfer[i], PLATFORM_PORT);
      st.transferred = true;
      const pid = host.portOpen();
      const kept = st.other;
      if (kept !== null) {
        const ks = portOf(kept);
        ks.other = null;
        ks.remote = { __proto__: null, pid, end: 0 };
        MapSet(remotePorts, `${pid}:0`, kept);
      }
      st.other = null;
      st.closed = true;
      pids += (i ? "," : "") + pid;
    }
    // The ports' pair ids, then the clone's bytes (as Latin-1 characters).
    return pids + ";" + data;
  }
  // A port of this realm that is the far end of pair `pid`.
  function remotePort(pid) {
    const key = `${pid}:1`;
    let port = MapGet(remotePorts, key);
    if (port === undefined) {
      port = makePort();
      portOf(port).remote = { __proto__: null, pid, end: 1 };
      MapSet(remotePorts, key, port);
      host.portAttach(pid, 1);
    }
    return port;
  }
  // A message's {data, ports} (a list), from serialize's text.
  function deserialize(text) {
    const split = StringPrototypeIndexOf(text, ";");
    const ports = list();
    if (split > 0) {
      const pids = splitString(StringPrototypeSlice(text, 0, split), ",");
      for (let i = 0; i < pids.length; i++) listPush(ports, remotePort(NumberCtor(pids[i])));
    }
    return { __proto__: null, data: readClone(StringPrototypeSlice(text, split + 1), ports), ports };
  }
