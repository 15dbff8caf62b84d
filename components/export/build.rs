//! Generates pprof's `profile.proto` types (`perftools.profiles`) with `prost-build`, parsed
//! by `protox` (pure Rust: no `protoc` binary needed). See `src/pprof.rs`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/profile.proto");
    let descriptors = protox::compile(["profile.proto"], ["proto"])?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}
