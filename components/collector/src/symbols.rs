//! Uploaded source maps (issue 37, item 2, decision 0059): a release's maps, uploaded with
//! `jsprof sourcemaps upload` (`POST /v1/sourcemaps`), kept with the store, and the frames
//! of every view mapped through them when read.
//!
//! ```text
//! DIR/sourcemaps/PROJECT/RELEASE/index.json   the release's maps ([`Index`])
//! DIR/sourcemaps/PROJECT/RELEASE/NNNN.map     one uploaded map, as it was uploaded
//! ```
//!
//! With the tables in an object store (`--store s3://BUCKET/PREFIX`, objects.rs), each
//! upload is also put at `s3://BUCKET/PREFIX/sourcemaps/PROJECT/RELEASE/…`, the map before
//! the index, once both are fsynced beside the log: so a reader with the bucket alone (no
//! `--data-dir`), or on another machine, maps frames too ([`MapFiles`]).
//!
//! PROJECT and RELEASE are [`dir_name`]s (percent-encoded: no name escapes its directory).
//! Each file is written to a temporary name, fsynced and renamed, then the directory is
//! fsynced; the map before the index that names it, so that an index never names a map
//! that is not whole. A map is named by its path in the uploaded directory: uploading it
//! again replaces it.
//!
//! The store keeps the frames as the page gave them (minified); they are mapped when read
//! ([`Resolver::map`]), so a map uploaded after its traces applies to them. A frame's map,
//! in order:
//! 1. an uploaded map (of any release of the project) whose debug id is the one the trace
//!    gave for the frame's script (Sentry's `debug_meta` images, Datadog's `debugIds`: the
//!    `traces.debug_ids` column), its own release's first;
//! 2. else an uploaded map of the release whose script is the frame's (the URL's path ends
//!    with the script's path in the uploaded directory, or the map's `file`, or the map's
//!    name less `.map`: the longest such name wins);
//! 3. else, for `top --source-maps` only, the fetch under the allow-list (sourcemaps.rs).
//!
//! An uploaded map is read from the store only: nothing it names is fetched. Without a
//! release (`top` without `--release`, `query`'s `frames_mapped`), the maps of every release
//! are candidates, the newest upload first.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow::array::RecordBatch;
use arrow::datatypes::DataType;
use datafusion::prelude::{SessionConfig, SessionContext};
use jsprof_export::model::Frame;
use jsprof_export::sourcemap::Mapped;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::batches::FrameColumns;
use crate::objects::Objects;

/// The uploaded maps of a store.
pub fn maps_dir(store: &Path) -> PathBuf {
    store.join("sourcemaps")
}

/// `name` as one path component: ASCII letters, digits, `-`, `_` and `.` as they are,
/// every other byte `%XX`, and a leading `.` too (so neither `.` nor `..` nor a hidden
/// name); empty is `%`.
pub fn dir_name(name: &str) -> String {
    if name.is_empty() {
        return "%".into();
    }
    let mut out = String::with_capacity(name.len());
    for (i, b) in name.bytes().enumerate() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || (b == b'.' && i > 0) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The inverse of [`dir_name`] (`None`: not one).
pub fn from_dir_name(s: &str) -> Option<String> {
    if s == "%" {
        return Some(String::new());
    }
    let mut bytes = Vec::with_capacity(s.len());
    let mut it = s.bytes();
    while let Some(b) = it.next() {
        if b == b'%' {
            let hex = [it.next()?, it.next()?];
            let hex = std::str::from_utf8(&hex).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
        } else {
            bytes.push(b);
        }
    }
    String::from_utf8(bytes).ok()
}

/// A release's maps: `index.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Index {
    pub maps: Vec<Entry>,
}

/// One uploaded map.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    /// Its path in the uploaded directory (`assets/app.min.js.map`).
    pub name: String,
    /// Its file beside the index.
    pub file: String,
    /// The scripts it maps, as names a frame's URL may end with: the scripts of the
    /// uploaded directory that name it (their path), the map's `file`, its name less `.map`.
    pub scripts: Vec<String>,
    /// Its debug ids (lowercase): the map's `debugId`, its scripts' `//# debugId=`.
    pub debug_ids: Vec<String>,
    pub bytes: u64,
    /// When it was uploaded, ms since the epoch.
    pub uploaded_ms: f64,
}

/// What an upload says besides the map: `POST /v1/sourcemaps?release=R&name=N`, with
/// `script=S` (repeatable) and `debug_id=ID`.
#[derive(Debug, Clone, Default)]
pub struct Upload {
    pub project: String,
    pub release: String,
    pub name: String,
    pub scripts: Vec<String>,
    pub debug_id: Option<String>,
}

/// The members of a map read at upload (the rest is [`Mapped::parse`]'s).
#[derive(Deserialize, Default)]
struct MapHead {
    #[serde(default)]
    file: Option<String>,
    #[serde(default, rename = "debugId")]
    debug_id: Option<String>,
    /// The older spelling (Sentry's first proposal).
    #[serde(default, rename = "debug_id")]
    debug_id_old: Option<String>,
}

/// A debug id as kept: lowercase, hexadecimal digits and dashes, at most 64 characters.
pub fn debug_id(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'))
        .then(|| s.to_ascii_lowercase())
}

/// The `//# debugId=` comment bundlers write into a script (its last one), if well-formed.
pub fn debug_id_comment(script: &str) -> Option<String> {
    script.lines().rev().find_map(|line| {
        let rest = line.trim_start().strip_prefix("//#")?;
        let id = rest.trim_start().strip_prefix("debugId=")?;
        debug_id(id.split_whitespace().next()?)
    })
}

/// A name of the uploaded directory (the map's, a script's): relative, `/`-separated, no
/// `.` or `..` component, at most 1024 bytes, no control character.
pub fn check_name(what: &str, name: &str) -> Result<(), String> {
    let bad = name.is_empty()
        || name.len() > 1024
        || name.starts_with('/')
        || name.chars().any(char::is_control)
        || name
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..");
    if bad {
        return Err(format!(
            "{what} {name:?}: expected a relative path (a/b.js.map), without . or .. or empty components"
        ));
    }
    Ok(())
}

/// Checks `body` is a source map (400's reason if not) and what it says of itself:
/// (its `file`, its debug id).
pub fn check_map(body: &[u8]) -> Result<(Option<String>, Option<String>), String> {
    let base = Url::parse("https://upload.invalid/map.js.map").expect("a URL");
    let parsed = std::panic::catch_unwind(|| Mapped::parse(body, &base, &base))
        .map_err(|_| "not a source map (the parser failed on it)".to_owned())?;
    parsed.map_err(|e| {
        e.strip_prefix("https://upload.invalid/map.js.map: ")
            .unwrap_or(&e)
            .to_owned()
    })?;
    let head: MapHead = serde_json::from_slice(body).unwrap_or_default();
    let id = head.debug_id.or(head.debug_id_old);
    let id = match id {
        None => None,
        Some(s) => Some(debug_id(&s).ok_or_else(|| {
            format!("debugId {s:?}: expected a UUID (hexadecimal digits and dashes)")
        })?),
    };
    Ok((head.file.filter(|f| !f.is_empty() && f.len() <= 1024), id))
}

fn io(path: &Path, e: std::io::Error) -> String {
    format!("{}: {e}", path.display())
}

/// Writes `bytes` to `path` through a temporary name beside it, fsynced, then renamed.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = path.parent().ok_or("no directory")?;
    let tmp = dir.join(format!(
        ".tmp-{}-{}",
        std::process::id(),
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file")
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(path, e));
    }
    crate::wal::sync_dir(dir).map_err(|e| io(dir, e))
}

/// One upload at a time per store (the index is read, changed and written whole).
static UPLOADS: Mutex<()> = Mutex::new(());

/// Keeps the map `body` as `up` says: its file, then the release's index, in `store`, then
/// the same two in `objects` (a store's bucket) if given. `checked` is what [`check_map`]
/// said of it. Returns its entry.
pub fn store_upload(
    store: &Path,
    objects: Option<&Objects>,
    up: &Upload,
    body: &[u8],
    checked: (Option<String>, Option<String>),
    now_ms: f64,
) -> Result<Entry, String> {
    let (file_member, own_id) = checked;
    let rel = format!("{}/{}", dir_name(&up.project), dir_name(&up.release));
    let files = MapFiles::Dir(maps_dir(store));
    let dir = maps_dir(store).join(&rel);
    let _one = UPLOADS.lock().unwrap_or_else(|p| p.into_inner());
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    let index_path = dir.join("index.json");
    let mut index = files.index(&rel)?;
    let mut scripts: Vec<String> = up.scripts.clone();
    if let Some(f) = file_member {
        scripts.push(f);
    }
    if let Some(s) = up.name.strip_suffix(".map") {
        scripts.push(s.to_owned());
    }
    let mut seen = HashSet::new();
    scripts.retain(|s| seen.insert(s.clone()));
    let mut debug_ids: Vec<String> = own_id.into_iter().collect();
    if let Some(id) = up.debug_id.as_deref().and_then(debug_id) {
        if !debug_ids.contains(&id) {
            debug_ids.push(id);
        }
    }
    let file = format!("{:016x}.map", fnv(up.name.as_bytes()));
    write_atomically(&dir.join(&file), body)?;
    let entry = Entry {
        name: up.name.clone(),
        file,
        scripts,
        debug_ids,
        bytes: body.len() as u64,
        uploaded_ms: now_ms,
    };
    index.maps.retain(|e| e.name != up.name);
    index.maps.push(entry.clone());
    let json = serde_json::to_vec_pretty(&index).map_err(|e| e.to_string())?;
    write_atomically(&index_path, &json)?;
    if let Some(o) = objects {
        o.put(&o.map_key(&format!("{rel}/{}", entry.file))?, body.to_vec())?;
        o.put(&o.map_key(&format!("{rel}/index.json"))?, json)?;
    }
    Ok(entry)
}

fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Where a [`Resolver`] reads a store's uploaded maps: its directory (`DIR/sourcemaps`), or,
/// for a store read from its bucket alone, the bucket (`PREFIX/sourcemaps`). Names are
/// relative to there: `PROJECT`, `PROJECT/RELEASE/index.json`.
#[derive(Debug, Clone)]
pub enum MapFiles {
    Dir(PathBuf),
    Bucket(Arc<Objects>),
}

impl MapFiles {
    /// The store's: its directory's if it has one (the collector writes there first), else
    /// its bucket's; `None` for neither.
    pub fn of(store: &crate::store::Store) -> Option<MapFiles> {
        match (&store.dir, &store.objects) {
            (Some(dir), _) => Some(MapFiles::Dir(maps_dir(dir))),
            (None, Some(o)) => Some(MapFiles::Bucket(Arc::clone(o))),
            (None, None) => None,
        }
    }

    /// The directories in `rel` (`""`: the top), by name; none if `rel` is not there.
    fn dirs(&self, rel: &str) -> Result<Vec<String>, String> {
        match self {
            MapFiles::Dir(root) => {
                let dir = root.join(rel);
                match std::fs::read_dir(&dir) {
                    Ok(rd) => Ok(rd
                        .flatten()
                        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                        .collect()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
                    Err(e) => Err(io(&dir, e)),
                }
            }
            MapFiles::Bucket(o) => {
                let (_, dirs) = o.list_dir(&o.map_key(rel)?)?;
                Ok(dirs
                    .iter()
                    .filter_map(|d| d.filename().map(str::to_owned))
                    .collect())
            }
        }
    }

    /// The index of the release at `rel` (`PROJECT/RELEASE`): empty where it has none.
    fn index(&self, rel: &str) -> Result<Index, String> {
        let index_rel = format!("{rel}/index.json");
        match self.read(&index_rel)? {
            None => Ok(Index::default()),
            Some(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| format!("{}: {e}", self.name(&index_rel))),
        }
    }

    /// The bytes of `rel`; `None` if it is not there.
    fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, String> {
        match self {
            MapFiles::Dir(root) => {
                let path = root.join(rel);
                match std::fs::read(&path) {
                    Ok(b) => Ok(Some(b)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(io(&path, e)),
                }
            }
            MapFiles::Bucket(o) => Ok(o.get_if_exists(&o.map_key(rel)?)?.map(|b| b.to_vec())),
        }
    }

    /// Where `rel` is, for a message.
    fn name(&self, rel: &str) -> String {
        match self {
            MapFiles::Dir(root) => root.join(rel).display().to_string(),
            MapFiles::Bucket(o) => format!("{}/sourcemaps/{rel}", o.name()),
        }
    }
}

/// An uploaded map as the resolver knows it.
#[derive(Debug)]
struct Known {
    release: String,
    /// `PROJECT/RELEASE/FILE` in its [`MapFiles`].
    path: String,
    name: String,
    entry: Entry,
}

/// Parsed maps by (map, script URL); `None` for one that failed.
type Parsed = HashMap<(usize, String), Option<Arc<Mapped>>>;

/// The uploaded maps of a store (one project's, or every project's), with the debug ids
/// its traces gave: what maps frames when read.
#[derive(Debug)]
pub struct Resolver {
    files: MapFiles,
    maps: Vec<Known>,
    /// (release, script URL) → the debug ids the traces of that release gave it.
    ids: HashMap<(String, String), Vec<String>>,
    /// Parsed maps, by (map, script URL): `None` for one that failed (warned once).
    parsed: Mutex<Parsed>,
    warnings: Mutex<Vec<String>>,
}

impl Resolver {
    /// The uploaded maps of `project` (every project's: `None`) in `files`; `None` when
    /// there are none (nothing to map).
    pub fn open(files: &MapFiles, project: Option<&str>) -> Result<Option<Resolver>, String> {
        let projects: Vec<String> = match project {
            Some(p) => vec![dir_name(p)],
            None => files.dirs("")?,
        };
        let mut maps = Vec::new();
        for p in projects {
            for r in files.dirs(&p)? {
                let Some(release) = from_dir_name(&r) else {
                    continue;
                };
                let rel = format!("{p}/{r}");
                for entry in files.index(&rel)?.maps {
                    maps.push(Known {
                        release: release.clone(),
                        path: format!("{rel}/{}", entry.file),
                        name: entry.name.clone(),
                        entry,
                    });
                }
            }
        }
        if maps.is_empty() {
            return Ok(None);
        }
        // The newest upload first: where several maps fit equally, it wins.
        maps.sort_by(|a, b| b.entry.uploaded_ms.total_cmp(&a.entry.uploaded_ms));
        Ok(Some(Resolver {
            files: files.clone(),
            maps,
            ids: HashMap::new(),
            parsed: Mutex::new(HashMap::new()),
            warnings: Mutex::new(Vec::new()),
        }))
    }

    /// Reads the debug ids the traces of `ctx` gave (`traces.debug_ids`).
    pub async fn load_debug_ids(&mut self, ctx: &SessionContext) -> Result<(), String> {
        let batches = crate::batches::collect(
            ctx,
            "SELECT DISTINCT release, debug_ids FROM traces_base WHERE debug_ids IS NOT NULL",
        )
        .await?;
        for batch in &batches {
            let c = crate::batches::Columns::of(batch, &[DataType::Utf8, DataType::Utf8])?;
            for r in 0..batch.num_rows() {
                let release = c.str(0, r).unwrap_or_default();
                let Some(json) = c.str(1, r) else { continue };
                let Ok(ids) = serde_json::from_str::<BTreeMap<String, String>>(&json) else {
                    continue;
                };
                for (url, id) in ids {
                    let list = self.ids.entry((release.clone(), url)).or_default();
                    if !list.contains(&id) {
                        list.push(id);
                    }
                }
            }
        }
        Ok(())
    }

    /// What could not be used (a map file that cannot be read or parsed), once each.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The uploaded map for `url` in `release` (any release: `None`), by the order of the
    /// module's doc.
    fn find(&self, release: Option<&str>, url: &str) -> Option<usize> {
        let in_release = |k: &Known| release.is_none_or(|r| k.release == r);
        // 1. By debug id.
        let ids: Vec<&String> = self
            .ids
            .iter()
            .filter(|((r, u), _)| u == url && release.is_none_or(|want| r == want))
            .flat_map(|(_, ids)| ids)
            .collect();
        if !ids.is_empty() {
            let by_id = |k: &Known| k.entry.debug_ids.iter().any(|d| ids.contains(&d));
            let found = self
                .maps
                .iter()
                .position(|k| by_id(k) && in_release(k))
                .or_else(|| self.maps.iter().position(by_id));
            if found.is_some() {
                return found;
            }
        }
        // 2. By the script's name, the longest that fits.
        let path = match Url::parse(url) {
            Ok(u) => u.path().to_owned(),
            Err(_) => url.split(['?', '#']).next().unwrap_or(url).to_owned(),
        };
        let mut best: Option<(usize, usize)> = None;
        for (i, k) in self.maps.iter().enumerate() {
            if !in_release(k) {
                continue;
            }
            for s in &k.entry.scripts {
                let fits = path == *s
                    || path
                        .strip_suffix(s.as_str())
                        .is_some_and(|rest| rest.ends_with('/'));
                if fits && best.is_none_or(|(_, len)| s.len() > len) {
                    best = Some((i, s.len()));
                }
            }
        }
        best.map(|(i, _)| i)
    }

    fn parsed(&self, i: usize, url: &str) -> Option<Arc<Mapped>> {
        let mut cache = self.parsed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = cache.get(&(i, url.to_owned())) {
            return m.clone();
        }
        let k = &self.maps[i];
        let script = Url::parse(url)
            .or_else(|_| Url::parse("file:///").and_then(|b| b.join(url)))
            .ok();
        let result = match script {
            None => Err(format!("{url}: not a URL")),
            Some(script) => {
                // Sources are relative to the map, which sat beside its script.
                let base = k.name.rsplit('/').next().unwrap_or(&k.name);
                let map_url = script.join(base).unwrap_or_else(|_| script.clone());
                self.files
                    .read(&k.path)
                    .and_then(|b| {
                        b.ok_or_else(|| format!("{}: not there", self.files.name(&k.path)))
                    })
                    .and_then(|body| {
                        std::panic::catch_unwind(|| Mapped::parse(&body, &map_url, &script))
                            .unwrap_or_else(|_| Err("the parser failed on it".into()))
                    })
            }
        };
        let mapped = match result {
            Ok(m) => Some(Arc::new(m)),
            Err(why) => {
                self.warnings
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(format!(
                        "uploaded map {} of release {} not used for {url}: {why}",
                        k.name, k.release
                    ));
                None
            }
        };
        cache.insert((i, url.to_owned()), mapped.clone());
        mapped
    }

    /// The original of `frame` through an uploaded map, if one fits and has a mapping there.
    pub fn original(&self, release: Option<&str>, frame: &Frame) -> Option<Frame> {
        let url = frame.resource.as_deref()?;
        frame.line?;
        frame.column?;
        let i = self.find(release, url)?;
        self.parsed(i, url)?.original(frame)
    }

    /// [`Resolver::original`], or the frame as it is.
    pub fn map(&self, release: Option<&str>, frame: Frame) -> Frame {
        self.original(release, &frame).unwrap_or(frame)
    }
}

/// What the aggregations find on a context made by [`crate::query::context`]: its store's
/// uploaded maps, read at the first use.
#[derive(Debug)]
pub struct Symbols {
    files: MapFiles,
    project: Option<String>,
    resolver: tokio::sync::OnceCell<Option<Arc<Resolver>>>,
}

impl Symbols {
    pub fn new(files: MapFiles, project: Option<&str>) -> Symbols {
        Symbols {
            files,
            project: project.map(str::to_owned),
            resolver: tokio::sync::OnceCell::new(),
        }
    }
}

/// `config` with the store's uploaded maps for the aggregations to map frames with (a
/// [`Symbols`]), on an embedded context and on a Ballista one alike: frames are mapped in
/// the client, on the rows a query returns. The maps are read from the store's directory,
/// or from its bucket when it is read without one ([`MapFiles::of`]).
pub fn with_symbols(
    config: SessionConfig,
    store: &crate::store::Store,
    project: Option<&str>,
) -> SessionConfig {
    match MapFiles::of(store) {
        Some(files) => config.with_extension(Arc::new(Symbols::new(files, project))),
        None => config,
    }
}

/// The resolver of `ctx`'s store: `None` without uploaded maps (or on a context made
/// without [`with_symbols`]).
pub async fn resolver(ctx: &SessionContext) -> Result<Option<Arc<Resolver>>, String> {
    let Some(symbols) = ctx.copied_config().get_extension::<Symbols>() else {
        return Ok(None);
    };
    symbols
        .resolver
        .get_or_try_init(|| async {
            match Resolver::open(&symbols.files, symbols.project.as_deref())? {
                None => Ok(None),
                Some(mut r) => {
                    r.load_debug_ids(ctx).await?;
                    Ok(Some(Arc::new(r)))
                }
            }
        })
        .await
        .cloned()
}

/// Result rows with their frames mapped: the columns `function` (or `name`), `resource`,
/// `line` and `column` replaced by the original's where `map` gives one.
pub fn map_batches(
    batches: Vec<RecordBatch>,
    mut map: impl FnMut(Frame) -> Frame,
) -> Result<Vec<RecordBatch>, String> {
    batches
        .iter()
        .map(|batch| {
            let (columns, frames) = FrameColumns::read(batch)?;
            columns.replace(batch, frames.into_iter().map(&mut map).collect())
        })
        .collect()
}

/// The `frames` table's columns, in its stored order.
const FRAMES: &str = "SELECT frame_id, name, resource, line, \"column\" FROM frames";

/// Registers `frames_mapped` on `ctx`: the `frames` table (`frame_id`, `name`,
/// `resource`, `line`, `column`) with each frame mapped through the uploaded maps (any
/// release: the newest upload that fits), as it is where none fits.
///
/// It is a view: `frames` left-joined with the originals of the frames a map changes,
/// which are read and mapped here, in the client. On an embedded context they are an
/// in-memory table; on a Ballista one (`distributed`), whose plans go to the cluster and
/// cannot carry a table provider of this process, they are a `VALUES` list in the plan.
pub async fn register_frames_mapped(ctx: &SessionContext, distributed: bool) -> Result<(), String> {
    use datafusion::logical_expr::{col, lit, when, JoinType, LogicalPlanBuilder};
    let error = |e: datafusion::error::DataFusionError| e.to_string();
    let frames = ctx.sql(FRAMES).await.map_err(error)?;
    let originals = match resolver(ctx).await? {
        Some(resolver) => originals(ctx, &resolver).await?,
        None => Vec::new(),
    };
    let view = if originals.iter().all(|b| b.num_rows() == 0) {
        frames
    } else {
        // The originals' columns, named apart from `frames`' for the join.
        let named = |c: &str| format!("o_{c}");
        let schema = crate::store::schema("frames");
        let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let table = if distributed {
            let mut rows = Vec::new();
            for b in &originals {
                for r in 0..b.num_rows() {
                    let row = b
                        .columns()
                        .iter()
                        .map(|a| datafusion::scalar::ScalarValue::try_from_array(a, r).map(lit))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(error)?;
                    rows.push(row);
                }
            }
            // `VALUES` names its columns column1, column2, …
            let aliases = names
                .iter()
                .enumerate()
                .map(|(i, n)| col(format!("column{}", i + 1)).alias(named(n)));
            let plan = LogicalPlanBuilder::values(rows)
                .and_then(|b| b.project(aliases))
                .and_then(|b| b.build())
                .map_err(error)?;
            datafusion::dataframe::DataFrame::new(ctx.state(), plan)
        } else {
            let renamed = Arc::new(arrow::datatypes::Schema::new(
                schema
                    .fields()
                    .iter()
                    .map(|f| f.as_ref().clone().with_name(named(f.name())))
                    .collect::<Vec<_>>(),
            ));
            let batches = originals
                .into_iter()
                .map(|b| RecordBatch::try_new(renamed.clone(), b.columns().to_vec()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let mem =
                datafusion::datasource::MemTable::try_new(renamed, vec![batches]).map_err(error)?;
            ctx.read_table(Arc::new(mem)).map_err(error)?
        };
        let mut columns = vec![col("frame_id")];
        for n in &names[1..] {
            columns.push(
                when(col(named("frame_id")).is_null(), col(n.as_str()))
                    .otherwise(col(named(n)))
                    .map_err(error)?
                    .alias(n.as_str()),
            );
        }
        frames
            .join(
                table,
                JoinType::Left,
                &["frame_id"],
                &[&named("frame_id")],
                None,
            )
            .and_then(|j| j.select(columns))
            .map_err(error)?
    };
    ctx.register_table("frames_mapped", view.into_view())
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The frames of `ctx`'s `frames` that `resolver` maps, each with its original, in
/// `frames`' schema.
async fn originals(ctx: &SessionContext, resolver: &Resolver) -> Result<Vec<RecordBatch>, String> {
    let batches = crate::batches::collect(ctx, FRAMES).await?;
    let schema = crate::store::schema("frames");
    batches
        .into_iter()
        .map(|b| {
            let columns = b
                .columns()
                .iter()
                .zip(schema.fields())
                .map(|(a, f)| arrow::compute::cast(a, f.data_type()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())?;
            let (columns, frames) = FrameColumns::read(&batch)?;
            let mut mapped = Vec::with_capacity(frames.len());
            let mut changed = Vec::with_capacity(frames.len());
            for frame in frames {
                let original = resolver.original(None, &frame);
                changed.push(original.is_some());
                mapped.push(original.unwrap_or(frame));
            }
            let batch = columns.replace(&batch, mapped)?;
            arrow::compute::filter_record_batch(&batch, &arrow::array::BooleanArray::from(changed))
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// A map of the directory `jsprof sourcemaps upload` uploads, with its scripts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    /// Its path in the directory, `/`-separated.
    pub name: String,
    pub scripts: Vec<String>,
    /// The `//# debugId=` of a script that names it.
    pub debug_id: Option<String>,
}

/// The maps (`*.map`) of `dir` and, for each, the scripts (`*.js`, `*.mjs`, `*.cjs`) whose
/// `//# sourceMappingURL=` names it (relative to the script; an absolute URL by its last
/// path segment), or else the script of its name less `.map`.
pub fn find_maps(dir: &Path) -> Result<Vec<Found>, String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) -> Result<(), String> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| io(dir, e))?
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let Some(name) = e.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let path = format!("{rel}{name}");
            let kind = e.file_type().map_err(|err| io(&e.path(), err))?;
            if kind.is_dir() {
                walk(&e.path(), &format!("{path}/"), out)?;
            } else if kind.is_file() {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, "", &mut files)?;
    let mut found: Vec<Found> = files
        .iter()
        .filter(|f| f.ends_with(".map"))
        .map(|f| Found {
            name: f.clone(),
            ..Found::default()
        })
        .collect();
    let base = Url::parse("file:///d/").expect("a URL");
    for script in files
        .iter()
        .filter(|f| [".js", ".mjs", ".cjs"].iter().any(|e| f.ends_with(e)))
    {
        let text = std::fs::read(dir.join(script)).map_err(|e| io(&dir.join(script), e))?;
        let text = String::from_utf8_lossy(&text);
        let reference = jsprof_export::sourcemap::map_reference_of(|_| None, &text);
        let named = reference.and_then(|r| {
            if r.starts_with("data:") {
                return None;
            }
            if Url::parse(&r).is_ok() {
                let last = r.split(['?', '#']).next()?.rsplit('/').next()?.to_owned();
                let mut fits = found
                    .iter()
                    .filter(|f| f.name.rsplit('/').next() == Some(&last));
                let one = fits.next()?;
                return fits.next().is_none().then(|| one.name.clone());
            }
            let url = base.join(script).ok()?.join(&r).ok()?;
            let path = url.path().strip_prefix("/d/")?;
            Some(crate::params::percent_decode(path))
        });
        let name = named
            .filter(|n| found.iter().any(|f| &f.name == n))
            .or_else(|| {
                let n = format!("{script}.map");
                found.iter().any(|f| f.name == n).then_some(n)
            });
        if let Some(f) = name.and_then(|n| found.iter_mut().find(|f| f.name == n)) {
            f.scripts.push(script.clone());
            if f.debug_id.is_none() {
                f.debug_id = debug_id_comment(&text);
            }
        }
    }
    Ok(found)
}

/// `jsprof sourcemaps upload`: each map of `dir` (with its scripts, [`find_maps`]) posted
/// to the collector at `collector` (`http://HOST:PORT`) for `release`. A line per map; an
/// error names the maps that were not kept.
pub async fn upload_dir(
    collector: &str,
    key: &str,
    release: &str,
    dir: &Path,
) -> Result<Vec<String>, String> {
    let found = find_maps(dir)?;
    if found.is_empty() {
        return Err(format!("{}: no source map (*.map) in it", dir.display()));
    }
    let base = Url::parse(collector)
        .map_err(|e| format!("--collector {collector}: {e}"))?
        .join("/v1/sourcemaps")
        .map_err(|e| e.to_string())?;
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot make the HTTP client: {e}"))?;
    let (mut said, mut failed) = (Vec::new(), Vec::new());
    for f in &found {
        let body = std::fs::read(dir.join(&f.name)).map_err(|e| io(&dir.join(&f.name), e))?;
        let mut url = base.clone();
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("release", release)
                .append_pair("name", &f.name);
            for s in &f.scripts {
                q.append_pair("script", s);
            }
            if let Some(id) = &f.debug_id {
                q.append_pair("debug_id", id);
            }
        }
        let answer = client
            .post(url)
            .bearer_auth(key)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await;
        match answer {
            Err(e) => failed.push(format!("{}: {e}", f.name)),
            Ok(r) => {
                let status = r.status();
                let text = r.text().await.unwrap_or_default();
                if status.is_success() {
                    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                    let list = |k: &str| {
                        v[k].as_array()
                            .map(|a| {
                                a.iter()
                                    .filter_map(|s| s.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            })
                            .unwrap_or_default()
                    };
                    said.push(format!(
                        "{} ({} bytes): scripts {}; debug id {}",
                        f.name,
                        v["bytes"],
                        list("scripts"),
                        Some(list("debug_ids"))
                            .filter(|s| !s.is_empty())
                            .unwrap_or_else(|| "none".into())
                    ));
                } else {
                    failed.push(format!("{}: {status}: {}", f.name, text.trim()));
                }
            }
        }
    }
    if !failed.is_empty() {
        for s in &said {
            eprintln!("jsprof: uploaded {s}");
        }
        return Err(format!(
            "{} of {} maps not kept: {}",
            failed.len(),
            found.len(),
            failed.join("; ")
        ));
    }
    Ok(said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_names_stay_in_their_directory_and_round_trip() {
        for name in [
            "1.2.3",
            "..",
            ".",
            "a/b",
            "",
            "räksmörgås",
            "%2F",
            "v1 beta",
        ] {
            let d = dir_name(name);
            assert!(
                !d.contains('/') && d != "." && d != ".." && !d.starts_with('.'),
                "{d}"
            );
            assert_eq!(from_dir_name(&d).as_deref(), Some(name), "{d}");
        }
        assert_eq!(dir_name("1.2.3"), "1.2.3");
        assert_eq!(dir_name("../x"), "%2E.%2Fx");
    }

    #[test]
    fn debug_id_comments_and_names() {
        let script = "f();\n//# debugId=85314830-023F-4CF1-A267-535F4E37BB17\n//# sourceMappingURL=a.js.map\n";
        assert_eq!(
            debug_id_comment(script).as_deref(),
            Some("85314830-023f-4cf1-a267-535f4e37bb17")
        );
        assert_eq!(debug_id_comment("//# debugId=<script>"), None);
        assert!(check_name("name", "assets/app.js.map").is_ok());
        for bad in [
            "/etc/passwd",
            "../a.map",
            "a//b.map",
            "a/./b.map",
            "",
            "a\nb",
        ] {
            assert!(check_name("name", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn malformed_maps_are_refused_with_a_reason() {
        let e = check_map(b"{\"version\":3,").unwrap_err();
        assert!(e.contains("not a source map"), "{e}");
        let e =
            check_map(br#"{"version":3,"sources":[],"names":[],"mappings":"A","debugId":"x y"}"#)
                .unwrap_err();
        assert!(e.to_ascii_lowercase().contains("debugid"), "{e}");
        let (file, id) = check_map(
            br#"{"version":3,"file":"app.min.js","sources":["a.js"],"names":[],"mappings":"AAAA","debugId":"85314830-023F-4CF1-A267-535F4E37BB17"}"#,
        )
        .unwrap();
        assert_eq!(
            (file.as_deref(), id.as_deref()),
            (
                Some("app.min.js"),
                Some("85314830-023f-4cf1-a267-535f4e37bb17")
            )
        );
    }
}
