//! `jsprof`: loads a page (a file path or an http(s) URL), runs its scripts in SpiderMonkey
//! the way a browser does, and prints its console output.
//!
//! Exit codes: 0 when the page ran (even if its scripts threw: those errors are reported on
//! stderr), 2 when it could not be loaded or the command line is wrong.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use jsprof_net::{url_from_input, Loader, LoaderConfig};
use jsprof_script::{run_page, Prefs, RunOptions};

/// Run a web page's JavaScript in SpiderMonkey, like a browser would.
#[derive(Debug, Parser)]
#[command(name = "jsprof", version)]
struct Args {
    /// The page: a file path or a file:, http: or https: URL.
    page: String,
    /// Set a preference (repeatable), e.g. --pref profiler.base_interval_ms=10.
    #[arg(long = "pref", value_name = "NAME=VALUE")]
    prefs: Vec<String>,
    /// Stop after this many seconds even if timers or loads remain.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Trust the CA certificate(s) in this PEM file for https.
    #[arg(long, value_name = "PEM")]
    certificate_path: Option<PathBuf>,
    /// Resolve this host name to 127.0.0.1 (repeatable), e.g. web-platform.test.
    #[arg(long = "host-override", value_name = "HOST")]
    host_overrides: Vec<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = run(args);
    jsprof_script::shutdown();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("jsprof: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let mut prefs = Prefs::default();
    for p in &args.prefs {
        prefs.set_from_arg(p).map_err(|e| e.to_string())?;
    }
    let timeout = match args.timeout {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(format!(
                "--timeout {t}: expected a positive number of seconds"
            ))
        }
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => None,
    };
    let loader = Loader::new(&LoaderConfig {
        certificate_path: args.certificate_path,
        host_overrides: args.host_overrides,
        timeout: None,
    })
    .map_err(|e| e.to_string())?;
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let url = url_from_input(&args.page, &cwd).map_err(|e| e.to_string())?;
    let report = run_page(
        &url,
        &RunOptions {
            loader,
            prefs,
            timeout,
        },
    )
    .map_err(|e| e.to_string())?;
    if report.timed_out {
        eprintln!("jsprof: stopped at --timeout with work left");
    }
    Ok(())
}
