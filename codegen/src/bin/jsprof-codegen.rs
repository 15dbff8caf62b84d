//! `jsprof-codegen [ROOT] [--check]`: writes the generated bindings of the repository at ROOT
//! (default: the current directory), or with `--check` fails if a checked-in file is stale.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    let root = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or_else(|| std::path::PathBuf::from("."), std::path::PathBuf::from);
    let outputs = match jsprof_codegen::generate_repo(&root) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("jsprof-codegen: {e}");
            return ExitCode::from(2);
        }
    };
    let mut code = ExitCode::SUCCESS;
    for (path, contents) in outputs {
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == contents {
            println!("{} is up to date", path.display());
            continue;
        }
        if check {
            eprintln!(
                "jsprof-codegen: {} is stale; run ./mach codegen",
                path.display()
            );
            code = ExitCode::from(1);
            continue;
        }
        if let Err(e) = std::fs::write(&path, contents) {
            eprintln!("jsprof-codegen: {}: {e}", path.display());
            return ExitCode::from(2);
        }
        println!("wrote {}", path.display());
    }
    code
}
