//! `jsprof scope PORT`: the profiler service's command-line client. It reads commands, one a
//! line, from `-c` (separated by `;`) or else from stdin, and keeps one connection for all
//! of them (a session lives with the connection that started it):
//!
//! ```text
//! windows                          the windows, their frames and URLs
//! start [--url] [--window N] [--interval MS]
//! stop                             stop the session; its timelines
//! events [--mode M] [--depth N] [--types T,…] [--timeline T] [--event ID]
//!        [--interval START:END] [--stacks]
//!                                  an indented tree (ALL) or the reduced events, with
//!                                  total and self ms
//! release                          release the session
//! trace -o FILE                    the sampled trace (ProfilerTrace JSON)
//! continue | quit | wait MS | raw JSON
//! ```

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use serde_json::{json, Value};

/// Talk to `jsprof --profiler-service PORT`.
#[derive(Debug, Parser)]
#[command(name = "jsprof scope")]
pub struct ScopeArgs {
    /// The service's port on 127.0.0.1.
    port: u16,
    /// Commands separated by `;` (without it, read from stdin, one a line).
    #[arg(short = 'c', value_name = "COMMANDS")]
    commands: Option<String>,
}

struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    tag: u64,
    session: Option<u64>,
    timelines: Vec<(u64, u64)>,
}

impl Client {
    /// Sends `command` with `payload`; the response's payload, or the error it says.
    fn call(&mut self, command: &str, payload: Value) -> Result<Value, String> {
        self.tag += 1;
        let request = json!({"command": command, "tag": self.tag, "payload": payload});
        self.send_line(&request.to_string())
    }

    fn send_line(&mut self, line: &str) -> Result<Value, String> {
        writeln!(self.writer, "{line}").map_err(|e| format!("the service: {e}"))?;
        let mut answer = String::new();
        self.reader
            .read_line(&mut answer)
            .map_err(|e| format!("the service: {e}"))?;
        if answer.is_empty() {
            return Err("the service closed the connection".into());
        }
        let response: Value =
            serde_json::from_str(&answer).map_err(|e| format!("the service's answer: {e}"))?;
        match response["status"].as_str() {
            Some("OK") => Ok(response["payload"].clone()),
            status => Err(format!(
                "{}: {}",
                status.unwrap_or("?"),
                response["payload"]["message"].as_str().unwrap_or("")
            )),
        }
    }

    fn session(&self) -> Result<u64, String> {
        self.session.ok_or_else(|| "no session: start one".into())
    }

    fn run(&mut self, line: &str) -> Result<(), String> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&command, args)) = words.split_first() else {
            return Ok(());
        };
        let option = |name: &str| {
            args.iter()
                .position(|a| *a == name)
                .and_then(|i| args.get(i + 1).copied())
        };
        let flag = |name: &str| args.contains(&name);
        let integer = |name: &str| parsed::<u64>(option(name), name);
        let number = |name: &str| parsed::<f64>(option(name), name);
        match command {
            "windows" => {
                let windows = self.call("ListWindows", json!({}))?;
                for w in windows["windowList"].as_array().into_iter().flatten() {
                    println!("window {} {}", w["windowID"], text(&w["url"]));
                    for f in w["frameList"].as_array().into_iter().flatten() {
                        println!(
                            "  frame {} (parent {}) {}",
                            f["frameID"],
                            f["parentFrameID"],
                            text(&f["url"])
                        );
                    }
                }
            }
            "start" => {
                let mut payload = json!({
                    "windowID": integer("--window")?.unwrap_or(1),
                    "startMode": if flag("--url") { "URL" } else { "IMMEDIATE" },
                });
                if let Some(interval) = number("--interval")? {
                    payload["interval"] = json!(interval);
                }
                let started = self.call("StartProfiler", payload)?;
                self.session = started["sessionID"].as_u64();
                println!("session {}", started["sessionID"]);
            }
            "stop" => {
                let session = self.session()?;
                let stopped = self.call("StopProfiler", json!({ "sessionID": session }))?;
                self.timelines = stopped["timelineList"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| Some((t["timelineID"].as_u64()?, t["frameID"].as_u64()?)))
                    .collect();
                for (t, f) in &self.timelines {
                    println!("timeline {t}: frame {f}");
                }
            }
            "events" => {
                let session = self.session()?;
                let mode = option("--mode").unwrap_or("ALL");
                let mode: Value = mode.parse::<u64>().map_or(json!(mode), |n| json!(n));
                let timelines: Vec<(u64, u64)> = match integer("--timeline")? {
                    Some(t) => self
                        .timelines
                        .iter()
                        .copied()
                        .filter(|(id, _)| *id == t)
                        .collect(),
                    None => self.timelines.clone(),
                };
                for (timeline, frame) in timelines {
                    let mut payload = json!({
                        "sessionID": session,
                        "timelineID": timeline,
                        "mode": mode,
                    });
                    if let Some(d) = integer("--depth")? {
                        payload["maxDepth"] = json!(d);
                    }
                    if let Some(id) = integer("--event")? {
                        payload["eventID"] = json!(id);
                    }
                    if let Some(types) = option("--types") {
                        let list: Vec<Value> = types
                            .split(',')
                            .map(|t| t.parse::<u64>().map_or(json!(t), |n| json!(n)))
                            .collect();
                        payload["eventTypeList"] = json!(list);
                    }
                    if let Some(iv) = option("--interval") {
                        let (a, b) = iv.split_once(':').ok_or("--interval START:END, in ms")?;
                        let parse = |v: &str| v.parse::<f64>().map_err(|_| format!("{v}: not ms"));
                        payload["interval"] = json!({"start": parse(a)?, "end": parse(b)?});
                    }
                    if flag("--stacks") {
                        payload["stacks"] = json!(true);
                    }
                    let events = self.call("GetEvents", payload)?;
                    println!("timeline {timeline} (frame {frame})");
                    print_events(events["eventList"].as_array().map_or(&[], |v| v));
                }
            }
            "release" => {
                let session = self.session()?;
                self.call("ReleaseSession", json!({ "sessionID": session }))?;
                self.session = None;
                println!("released");
            }
            "trace" => {
                let session = self.session()?;
                let path = option("-o").ok_or("trace -o FILE")?;
                let trace = self.call("GetTrace", json!({ "sessionID": session }))?;
                let samples = trace["samples"].as_array().map_or(0, Vec::len);
                std::fs::write(PathBuf::from(path), trace.to_string())
                    .map_err(|e| format!("{path}: {e}"))?;
                println!("{samples} samples written to {path}");
            }
            "continue" => {
                self.call("Continue", json!({}))?;
            }
            "quit" => {
                self.call("Quit", json!({}))?;
            }
            "wait" => {
                let ms = args
                    .first()
                    .and_then(|v| v.parse::<u64>().ok())
                    .ok_or("wait MS")?;
                std::thread::sleep(Duration::from_millis(ms));
            }
            "raw" => {
                let rest = line.trim_start()["raw".len()..].trim();
                println!("{}", self.send_line(rest)?);
            }
            other => return Err(format!("unknown command {other:?}")),
        }
        Ok(())
    }
}

/// The value of option `name`, if given, as a `T`.
fn parsed<T: std::str::FromStr>(value: Option<&str>, name: &str) -> Result<Option<T>, String> {
    value
        .map(|v| {
            v.parse::<T>()
                .map_err(|_| format!("{name} {v}: not a valid number"))
        })
        .transpose()
}

fn text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// What an event is, in a few words.
fn summary(e: &Value) -> String {
    if let Some(d) = e.get("threadEvaluation") {
        let mut s = text(&d["kind"]);
        if let Some(t) = d["eventType"].as_str() {
            s += &format!(" {t}");
        }
        if let Some(function) = d["function"].as_str() {
            s += &format!(" {function}()");
        }
        if let Some(script) = d["script"].as_str() {
            s += &format!(" {script}");
        }
        s
    } else if let Some(d) = e.get("scriptCompilation") {
        format!(
            "{} {}",
            text(&d["scriptKind"]),
            d["url"].as_str().unwrap_or("inline")
        )
    } else if let Some(d) = e.get("documentParsing") {
        text(&d["url"])
    } else if let Some(d) = e.get("process") {
        format!("{} {} {} bytes", text(&d["url"]), d["status"], d["bytes"])
    } else if let Some(d) = e.get("generic") {
        format!("gc {} {}", text(&d["kind"]), text(&d["reason"]))
    } else {
        String::new()
    }
}

/// The events, indented by their depth among the events shown.
fn print_events(events: &[Value]) {
    let mut depth: std::collections::HashMap<u64, usize> = Default::default();
    for e in events {
        let id = e["eventID"].as_u64().unwrap_or(0);
        let d = e["parentEventID"]
            .as_u64()
            .and_then(|p| depth.get(&p))
            .map_or(0, |d| d + 1);
        depth.insert(id, d);
        let hits = match e["hits"].as_u64() {
            Some(h) if h > 1 => format!("  hits {h}"),
            _ => String::new(),
        };
        println!(
            "{}{} {}  total {:.3} ms  self {:.3} ms{hits}",
            "  ".repeat(d + 1),
            text(&e["type"]),
            summary(e),
            e["aggregatedTime"].as_f64().unwrap_or(0.0),
            e["time"].as_f64().unwrap_or(0.0),
        );
        for s in e["samples"].as_array().into_iter().flatten() {
            let frames: Vec<String> = s["frames"]
                .as_array()
                .into_iter()
                .flatten()
                .map(text)
                .collect();
            println!(
                "{}sample {:.1} ms: {}",
                "  ".repeat(d + 2),
                s["time"].as_f64().unwrap_or(0.0),
                if frames.is_empty() {
                    "(no stack)".into()
                } else {
                    frames.join(" < ")
                }
            );
        }
    }
}

/// `jsprof scope PORT [-c COMMANDS]`.
pub fn run(args: ScopeArgs) -> Result<ExitCode, String> {
    let stream = TcpStream::connect(("127.0.0.1", args.port))
        .map_err(|e| format!("127.0.0.1:{}: {e}", args.port))?;
    let writer = stream
        .try_clone()
        .map_err(|e| format!("127.0.0.1:{}: {e}", args.port))?;
    let mut client = Client {
        reader: BufReader::new(stream),
        writer,
        tag: 0,
        session: None,
        timelines: Vec::new(),
    };
    let lines: Vec<String> = match &args.commands {
        Some(c) => c.split(';').map(str::to_owned).collect(),
        None => std::io::stdin()
            .lock()
            .lines()
            .map_while(Result::ok)
            .collect(),
    };
    for line in lines {
        client.run(&line)?;
    }
    Ok(ExitCode::SUCCESS)
}
