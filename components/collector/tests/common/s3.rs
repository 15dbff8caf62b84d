//! A real S3-compatible server for the tests of `--store s3://…`: s3s-fs (crates.io's
//! `s3s-fs`, an S3 server over a directory), which `./mach test` installs and names in
//! `JSPROF_S3S_FS`, on a free port over a temporary root, killed on drop. Each bucket is a
//! directory of the root and each object a file at its key, so a test sees what was
//! uploaded by looking there.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The bucket the tests use.
pub const BUCKET: &str = "jsprof";
const ACCESS_KEY: &str = "jsprof-test";
const SECRET_KEY: &str = "jsprof-test-secret";

pub struct S3 {
    child: Child,
    /// The server's root: `ROOT/BUCKET/KEY` is an object.
    pub root: tempfile::TempDir,
    pub addr: SocketAddr,
}

/// Where s3s-fs is: `$JSPROF_S3S_FS`, else where `./mach test` installs it.
pub fn s3s_fs() -> PathBuf {
    std::env::var_os("JSPROF_S3S_FS").map_or_else(
        || {
            PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                .join(".cache/jsprof/s3-tools/bin/s3s-fs")
        },
        PathBuf::from,
    )
}

impl S3 {
    /// The server. Without s3s-fs the test fails, saying how to install it: a test of the
    /// S3 store that ran against no server would pass without testing anything.
    pub fn start() -> S3 {
        let bin = s3s_fs();
        assert!(
            bin.exists(),
            "s3s-fs is needed at {} ($JSPROF_S3S_FS); ./mach test installs it (cargo install \
             s3s-fs --version 0.14.1 --features binary --locked --root ~/.cache/jsprof/s3-tools)",
            bin.display()
        );
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join(BUCKET)).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(&bin)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--access-key", ACCESS_KEY, "--secret-key", SECRET_KEY])
            .arg(root.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let s3 = S3 { child, root, addr };
        let start = Instant::now();
        while TcpStream::connect(addr).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "s3s-fs does not listen on {addr}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        s3
    }

    /// The environment a process reads the server with (object_store's `from_env`).
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY.to_owned()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
            ("AWS_ENDPOINT_URL", format!("http://{}", self.addr)),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// `s3://BUCKET/PREFIX`.
    pub fn url(&self, prefix: &str) -> String {
        format!("s3://{BUCKET}/{prefix}")
    }

    /// The keys of the objects under `prefix`, sorted (the files under the server's root).
    pub fn keys(&self, prefix: &str) -> Vec<String> {
        let bucket = self.root.path().join(BUCKET);
        let mut out = Vec::new();
        walk(&bucket, &bucket.join(prefix), &mut out);
        out.sort();
        out
    }
}

fn walk(bucket: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            walk(bucket, &path, out);
        } else {
            out.push(
                path.strip_prefix(bucket)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
}

impl Drop for S3 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
