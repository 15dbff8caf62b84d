//! `jsprof collect|query|top|flame|diff|regressions|sourcemaps`: field profiles (issue 27).
//! They are served and queried by `jsprof-collector` (components/collector, a workspace of
//! its own so that DataFusion never enters the engine's build), which `./mach build` puts
//! beside `jsprof` in the target dir.
//! This process becomes it (`exec`): its signals, exit code and output are the command's.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

/// The collector binary beside this one.
fn binary() -> Result<std::path::PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find jsprof's own path: {e}"))?;
    Ok(me.with_file_name("jsprof-collector"))
}

/// Replaces this process with `jsprof-collector SUB ARGS…`; returns only if that fails.
pub fn exec(sub: &str, args: &[OsString]) -> ExitCode {
    let bin = match binary() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("jsprof: {e}");
            return ExitCode::from(crate::LOAD_ERROR);
        }
    };
    crate::signals::unblock_for_exec();
    let err = std::process::Command::new(&bin).arg(sub).args(args).exec();
    eprintln!(
        "jsprof: cannot run {} ({err}); `./mach build` builds it beside jsprof",
        bin.display()
    );
    ExitCode::from(crate::LOAD_ERROR)
}
