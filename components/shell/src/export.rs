//! `jsprof convert` and `jsprof report`, and the export formats of `--profile-out` and
//! `--trace-out`: traces merged by function identity and written in the formats profilers
//! are read in (`jsprof_export`).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use jsprof_export::files::{export_extensions, title_of, write_profile};
use jsprof_export::input;
use jsprof_export::sourcemap::SourceMaps;
use jsprof_export::{Format, Keep, Profile};

/// Convert traces jsprof wrote to the formats profilers are read in.
#[derive(Debug, Parser)]
#[command(name = "jsprof convert")]
pub struct ConvertArgs {
    /// Traces: files (a ProfilerTrace as JSON or .json.gz, a --trace-out array, a
    /// --profile-out file), directories (their .json and .json.gz files) or glob patterns.
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<String>,
    /// The output file; its name chooses the format (.cpuprofile, .speedscope.json,
    /// .trace.json, .pb.gz, .folded, .svg) unless --format does.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// The format: cpuprofile, speedscope, firefox, pprof, folded, trace-event or svg.
    #[arg(long, value_name = "F")]
    format: Option<String>,
    /// Map frames through the scripts' source maps (`//# sourceMappingURL=`, or a SourceMap
    /// response header) to their original names, files and positions.
    #[arg(long)]
    source_maps: bool,
}

/// Write a self-contained HTML report of traces jsprof wrote.
#[derive(Debug, Parser)]
#[command(name = "jsprof report")]
pub struct ReportArgs {
    /// Traces, as for `jsprof convert`.
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<String>,
    /// The HTML file to write.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Map frames through the scripts' source maps, as for `jsprof convert`.
    #[arg(long)]
    source_maps: bool,
}

/// Reads and merges `inputs`, with a progress bar on a terminal and source maps if asked.
fn merged(inputs: &[String], keep: Keep, source_maps: bool) -> Result<Profile, String> {
    let paths = input::expand(inputs)?;
    let mut profile = Profile::new(keep);
    let bar = (std::io::stderr().is_terminal() && paths.len() > 1).then(|| {
        let bar = indicatif::ProgressBar::new(paths.len() as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{spinner} merging {pos}/{len} files [{bar:40}] {elapsed_precise} (eta {eta})",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    });
    let mut progress = |done: usize, _total: usize| {
        if let Some(bar) = &bar {
            bar.set_position(done as u64);
        }
    };
    let mut maps = source_maps.then(SourceMaps::new);
    let mut map = |f| match &mut maps {
        Some(maps) => maps.map(f),
        None => f,
    };
    let result = input::merge(&paths, &mut profile, &mut map, &mut progress);
    for w in maps.iter().flat_map(|m| m.warnings()) {
        eprintln!("jsprof: source maps: {w}");
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result.map(|()| profile)
}

/// `jsprof convert`.
pub fn convert(args: ConvertArgs) -> Result<ExitCode, String> {
    let format = match &args.format {
        Some(name) => Format::from_name(name).ok_or_else(|| {
            format!("--format {name}: unknown format; one of cpuprofile, speedscope, firefox, pprof, folded, trace-event, svg")
        })?,
        None => Format::from_path(&args.output).ok_or_else(|| {
            format!(
                "{}: cannot tell the format from this name; use {}, or --format (firefox writes the Firefox Profiler's .json or .json.gz)",
                args.output.display(),
                export_extensions()
            )
        })?,
    };
    let profile = merged(&args.inputs, format.keep(), args.source_maps)?;
    let title = match args.inputs.as_slice() {
        [one] => title_of(Path::new(one)),
        _ => format!("{} traces", profile.trace_count()),
    };
    write_profile(&args.output, &profile, &title, |p, t, out| {
        format.write(p, t, out)
    })?;
    eprintln!(
        "jsprof: {} trace(s), {} samples, {} functions written to {} ({})",
        profile.trace_count(),
        profile.sample_count(),
        profile.frames().len(),
        args.output.display(),
        format.name()
    );
    Ok(ExitCode::SUCCESS)
}

/// `jsprof report`.
pub fn report(args: ReportArgs) -> Result<ExitCode, String> {
    let profile = merged(&args.inputs, Keep::Counts, args.source_maps)?;
    let title = match args.inputs.as_slice() {
        [one] => title_of(Path::new(one)),
        _ => format!("{} traces", profile.trace_count()),
    };
    write_profile(&args.output, &profile, &title, |p, t, out| {
        jsprof_export::report::write(p, t, out)
    })?;
    eprintln!(
        "jsprof: report of {} trace(s), {} samples written to {}",
        profile.trace_count(),
        profile.sample_count(),
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}
