//! The one aggregation behind `top`, `flame`, `diff` and the page at `/` of `collect`: the
//! samples a [`TopFilter`] picks, summed by stack in SQL on DataFusion, then by function
//! (self: the stack's leaf; total: every distinct frame on the stack, once per sample) or by
//! call path (the flame graph). No trace is loaded: what leaves DataFusion is one row per
//! distinct stack or function, not per sample.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::DataType;
use datafusion::datasource::MemTable;
use datafusion::prelude::SessionContext;
use jsprof_export::{Bucket, Empty, Frame, Keep, NodeId, Profile, BUCKET_MS};

/// `jsprof top`'s filters.
#[derive(Debug, Clone, Default)]
pub struct TopFilter {
    pub release: Option<String>,
    /// A substring of the page URL.
    pub url: Option<String>,
    /// A substring of the user agent.
    pub user_agent: Option<String>,
    /// Samples at or after, ms since the epoch.
    pub since_ms: Option<f64>,
    /// Samples before, ms since the epoch.
    pub until_ms: Option<f64>,
    /// Only samples inside an event of this kind of the same trace.
    pub during: Option<During>,
    /// Only traces whose label has this value, each ([`Label`]).
    pub labels: Vec<(Label, String)>,
    /// Only this trace's samples.
    pub trace_id: Option<i64>,
    pub limit: usize,
}

/// A label of a trace the page filters and groups by: each is one SQL expression over the
/// `traces` view (alias `t`), NULL where the trace does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// The `view` label (Datadog's view names, the snippet's own), else the page's name from
    /// the SDK's view or transaction (`page_name`).
    View,
    /// The `environment` label (Sentry, the snippet), else `env` (Datadog's tag).
    Environment,
    /// The browser's family from the user agent: Edge, Opera, Firefox, Chrome, Safari or
    /// other.
    Browser,
}

impl Label {
    pub const ALL: [Label; 3] = [Label::View, Label::Environment, Label::Browser];
    pub const NAMES: &'static str = "view, environment or browser";

    pub fn parse(s: &str) -> Result<Label, String> {
        Label::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| format!("{s}: expected {}", Label::NAMES))
    }

    pub fn name(self) -> &'static str {
        match self {
            Label::View => "view",
            Label::Environment => "environment",
            Label::Browser => "browser",
        }
    }

    /// The label's value for the trace `t` (a row of the `traces` view).
    pub fn sql(self) -> String {
        match self {
            Label::View => format!("coalesce({}, t.page_name)", label_value("view")),
            Label::Environment => format!(
                "coalesce({}, {})",
                label_value("environment"),
                label_value("env")
            ),
            Label::Browser => "CASE WHEN t.user_agent IS NULL OR t.user_agent = '' THEN NULL
                 WHEN strpos(t.user_agent, 'Edg/') > 0 THEN 'Edge'
                 WHEN strpos(t.user_agent, 'OPR/') > 0 THEN 'Opera'
                 WHEN strpos(t.user_agent, 'Firefox/') > 0 THEN 'Firefox'
                 WHEN strpos(t.user_agent, 'Chrome/') > 0 OR strpos(t.user_agent, 'Chromium/') > 0 THEN 'Chrome'
                 WHEN strpos(t.user_agent, 'Safari/') > 0 THEN 'Safari'
                 ELSE 'other' END"
                .into(),
        }
    }
}

/// The value of `key` in the trace's labels (a JSON object of strings, as the store keeps
/// them), its JSON escapes undone (`\"` is `"`; `\n` and `\uXXXX` keep only their letters).
fn label_value(key: &str) -> String {
    format!(
        r#"regexp_replace(regexp_match(t.labels, '"{key}":"((?:[^"\\]|\\.)*)"')[1], '\\(.)', '${{1}}', 'g')"#
    )
}

/// `--during`: the kind of event a sample's time must fall inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum During {
    /// A long task (Long Tasks API).
    LongTask,
    /// A Long Animation Frame.
    Loaf,
    /// A slow interaction (Event Timing, the INP candidates; Sentry's INP spans;
    /// Datadog's views' INP).
    Interaction,
}

impl During {
    pub const NAMES: &'static str = "long-task, loaf or interaction";

    pub fn parse(s: &str) -> Result<During, String> {
        match s {
            "long-task" => Ok(During::LongTask),
            "loaf" => Ok(During::Loaf),
            "interaction" => Ok(During::Interaction),
            _ => Err(format!("{s}: expected {}", During::NAMES)),
        }
    }

    /// The events table's kinds it takes. A long task is a Long Tasks API entry or a Long
    /// Animation Frame: where the browser has LoAF, Datadog's SDK reports those as its long
    /// tasks, and a frame of 50 ms or more holds the long task that made it so.
    pub fn kinds(self) -> &'static [&'static str] {
        match self {
            During::LongTask => &["long-task", "loaf"],
            During::Loaf => &["loaf"],
            During::Interaction => &["interaction"],
        }
    }
}

/// The CTE `name`: each event of `kinds` with the trace it belongs to (`trace_id`, `kind`,
/// `name`, `id`, `lo` and `hi`, ms since the epoch): its own trace where it came with one;
/// else each trace of the same project and session whose samples it overlaps (a RUM
/// batch's long tasks, a Sentry envelope's spans, sent apart from the profile).
pub fn linked_cte(name: &str, kinds: &[&str]) -> String {
    let list: Vec<String> = kinds.iter().map(|k| quote(k)).collect();
    let list = list.join(", ");
    format!(
        "{name} AS (
           SELECT e.trace_id, e.kind, e.name, e.event_id AS id, e.start_ms AS lo,
                  e.start_ms + e.duration_ms AS hi
           FROM events e WHERE e.kind IN ({list}) AND e.trace_id IS NOT NULL
           UNION ALL
           SELECT t.trace_id, e.kind, e.name, e.event_id AS id, e.start_ms AS lo,
                  e.start_ms + e.duration_ms AS hi
           FROM events e JOIN traces_base t ON t.project = e.project AND t.session = e.session
           WHERE e.kind IN ({list}) AND e.trace_id IS NULL
             AND e.start_ms <= t.end_ms AND e.start_ms + e.duration_ms >= t.start_ms)"
    )
}

pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The CTE `picked`: the samples of the store `f` selects (its release, if any, or else
/// those of `releases` when not empty), with their trace, release, stack (NULL: none),
/// time (ms since the epoch) and weight (ms). With `during`, [`linked_cte`] comes first,
/// and a sample is picked only if its time falls inside (ends included) an event of that
/// kind linked to its trace.
pub fn picked_cte(f: &TopFilter, releases: &[&str]) -> String {
    let mut sample_where = Vec::new();
    if let Some(r) = &f.release {
        sample_where.push(format!("s.release = {}", quote(r)));
    } else if !releases.is_empty() {
        let list: Vec<String> = releases.iter().map(|r| quote(r)).collect();
        sample_where.push(format!("s.release IN ({})", list.join(", ")));
    }
    if let Some(t) = f.since_ms {
        sample_where.push(format!("s.timestamp_ms >= {t:?}"));
    }
    if let Some(t) = f.until_ms {
        sample_where.push(format!("s.timestamp_ms < {t:?}"));
    }
    let mut trace_where = Vec::new();
    if let Some(u) = &f.url {
        trace_where.push(format!("strpos(t.page_url, {}) > 0", quote(u)));
    }
    if let Some(u) = &f.user_agent {
        trace_where.push(format!("strpos(t.user_agent, {}) > 0", quote(u)));
    }
    for (label, value) in &f.labels {
        trace_where.push(format!("{} = {}", label.sql(), quote(value)));
    }
    if let Some(id) = f.trace_id {
        sample_where.push(format!("s.trace_id = {id}"));
    }
    if !trace_where.is_empty() {
        sample_where.push(format!(
            "s.trace_id IN (SELECT t.trace_id FROM traces t WHERE {})",
            trace_where.join(" AND ")
        ));
    }
    let mut linked = String::new();
    if let Some(d) = f.during {
        linked = format!("{}, ", linked_cte("linked", d.kinds()));
        sample_where.push(
            "EXISTS (SELECT 1 FROM linked l WHERE l.trace_id = s.trace_id
                     AND s.timestamp_ms >= l.lo AND s.timestamp_ms <= l.hi)"
                .into(),
        );
    }
    if sample_where.is_empty() {
        sample_where.push("TRUE".into());
    }
    format!(
        "{linked}picked AS (
           SELECT s.trace_id, s.release, s.stack_id, s.timestamp_ms, s.weight_ms
           FROM samples s WHERE {})",
        sample_where.join(" AND ")
    )
}

/// The CTEs `by_stack` (samples and ms by stack, the NULL stack included) and `by_frame`
/// (by frame: `total_ms`/`total_n` of the samples with the frame anywhere on their stack,
/// once per sample; `self_ms`/`self_n` of those whose stack's leaf it is), after
/// [`picked_cte`]; with `by_release`, each also by release.
///
/// `by_frame` reads `by_stack` once. DataFusion inlines a CTE at each reference, so a
/// second reference would scan and aggregate the samples again: self and total come from
/// one join, the leaf being one of the stack's distinct frames (`stack_frames`). Every
/// stack has one leaf, so the sum of `self_*` over the frames is that of the samples with
/// a stack.
pub fn function_ctes(by_release: bool) -> String {
    let (k, bk) = if by_release {
        ("release, ", "b.release, ")
    } else {
        ("", "")
    };
    format!(
        "by_stack AS (
           SELECT {k}stack_id, sum(weight_ms) AS ms, count(*) AS n FROM picked GROUP BY {k}stack_id),
         by_frame AS (
           SELECT {bk}sf.frame_id, sum(b.ms) AS total_ms, sum(b.n) AS total_n,
                  sum(CASE WHEN st.frame_id = sf.frame_id THEN b.ms ELSE 0 END) AS self_ms,
                  sum(CASE WHEN st.frame_id = sf.frame_id THEN b.n ELSE 0 END) AS self_n
           FROM by_stack b JOIN stacks st ON st.stack_id = b.stack_id
                JOIN stack_frames sf ON sf.stack_id = b.stack_id
           GROUP BY {bk}sf.frame_id)"
    )
}

/// The SQL of `jsprof top`: self time (samples whose leaf is the function) and total time
/// (samples with the function anywhere on their stack, once per sample), by function;
/// shares are of the samples with a stack (the sum of self time over the functions).
pub fn top_sql(f: &TopFilter) -> String {
    format!(
        "WITH {picked}, {functions},
         shares AS (SELECT *, sum(self_ms) OVER () AS all_ms FROM by_frame)
         SELECT fr.name AS function, fr.resource, fr.line, fr.\"column\",
                round(s.self_ms, 1) AS self_ms,
                round(100 * s.self_ms / s.all_ms, 2) AS self_pct,
                round(s.total_ms, 1) AS total_ms,
                round(100 * s.total_ms / s.all_ms, 2) AS total_pct,
                s.total_n AS samples
         FROM shares s JOIN frames fr ON fr.frame_id = s.frame_id
         ORDER BY self_ms DESC, total_ms DESC, function, fr.resource, fr.line, fr.\"column\"
         LIMIT {limit}",
        picked = picked_cte(f, &[]),
        functions = function_ctes(false),
        limit = f.limit.max(1),
    )
}

pub(crate) use crate::batches::{collect, Columns};

/// One function's row of `top`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TopRow {
    pub function: String,
    pub resource: Option<String>,
    pub line: Option<i64>,
    pub column: Option<i64>,
    pub self_ms: f64,
    pub self_pct: f64,
    pub total_ms: f64,
    pub total_pct: f64,
    pub samples: i64,
}

/// `top`'s rows, typed (for the page's `/api/top`), their frames mapped through the
/// uploaded source maps (symbols.rs).
pub async fn top_rows(ctx: &SessionContext, f: &TopFilter) -> Result<Vec<TopRow>, String> {
    use DataType::{Float64 as F, Int64 as I, Utf8 as S};
    let symbols = crate::symbols::resolver(ctx).await?;
    let mut out = Vec::new();
    for batch in collect(ctx, &top_sql(f)).await? {
        let c = Columns::of(&batch, &[S, S, I, I, F, F, F, F, I])?;
        for r in 0..batch.num_rows() {
            let mut frame = frame_of(&c, 0, r);
            if let Some(s) = &symbols {
                frame = s.map(f.release.as_deref(), frame);
            }
            let position = |v: Option<u64>| v.and_then(|v| i64::try_from(v).ok());
            out.push(TopRow {
                function: frame.name,
                resource: frame.resource,
                line: position(frame.line),
                column: position(frame.column),
                self_ms: c.float(4, r).unwrap_or(0.0),
                self_pct: c.float(5, r).unwrap_or(0.0),
                total_ms: c.float(6, r).unwrap_or(0.0),
                total_pct: c.float(7, r).unwrap_or(0.0),
                samples: c.int(8, r).unwrap_or(0),
            });
        }
    }
    Ok(out)
}

/// Samples by function and release, for `diff`: `(release, frame) → (self, total)`, and
/// each release's samples with a stack.
#[derive(Debug, Default)]
pub struct ReleaseCounts {
    pub functions: HashMap<(String, Frame), (u64, u64)>,
    pub samples: HashMap<String, u64>,
}

/// Frames are mapped through the uploaded source maps of their release (symbols.rs); two
/// frames that map to one original function are summed.
pub async fn release_counts(
    ctx: &SessionContext,
    f: &TopFilter,
    releases: &[&str],
) -> Result<ReleaseCounts, String> {
    use DataType::{Int64 as I, Utf8 as S};
    let symbols = crate::symbols::resolver(ctx).await?;
    let sql = format!(
        "WITH {}, {}
         SELECT b.release, fr.name, fr.resource, fr.line, fr.\"column\", b.self_n, b.total_n
         FROM by_frame b JOIN frames fr ON fr.frame_id = b.frame_id",
        picked_cte(f, releases),
        function_ctes(true)
    );
    let mut out = ReleaseCounts::default();
    for batch in collect(ctx, &sql).await? {
        let c = Columns::of(&batch, &[S, S, S, I, I, I, I])?;
        for r in 0..batch.num_rows() {
            let release = c.str(0, r).unwrap_or_default();
            let mut frame = frame_of(&c, 1, r);
            if let Some(s) = &symbols {
                frame = s.map(Some(&release), frame);
            }
            let (self_n, total_n) = (count(c.int(5, r)), count(c.int(6, r)));
            // Each sample with a stack is its leaf's self sample once (`function_ctes`).
            *out.samples.entry(release.clone()).or_insert(0) += self_n;
            let sum = out.functions.entry((release, frame)).or_insert((0, 0));
            sum.0 += self_n;
            sum.1 += total_n;
        }
    }
    Ok(out)
}

fn count(v: Option<i64>) -> u64 {
    v.unwrap_or(0).max(0) as u64
}

/// The frame in columns `at..at + 4` (name, resource, line, column).
fn frame_of(c: &Columns, at: usize, row: usize) -> Frame {
    let position = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok());
    Frame {
        name: c.str(at, row).unwrap_or_default(),
        resource: c.str(at + 1, row),
        line: position(c.int(at + 2, row)),
        column: position(c.int(at + 3, row)),
    }
}

/// The timeline of [`profile`] ([`Keep::Counts`]'s 10 ms buckets from each trace's first
/// sample) ends here: a trace claiming a longer span (timestamps come from pages) has its
/// later samples in the last bucket, so a hostile trace cannot make the timeline huge.
const MAX_BUCKETS: i64 = 360_000;

/// The picked samples merged into one [`Profile`] by call path, as `jsprof convert` and
/// `jsprof report` merge traces: the flame graph's and the report's input. With `summary`,
/// also the facts the report shows (traces, duration, interval, timeline).
pub async fn profile(
    ctx: &SessionContext,
    f: &TopFilter,
    summary: bool,
) -> Result<Profile, String> {
    use DataType::Int64 as I;
    let picked = picked_cte(f, &[]);
    // Samples by stack: one row per distinct stack.
    let sampled = collect(
        ctx,
        &format!(
            "WITH {picked}, {}
             SELECT stack_id, n FROM by_stack",
            function_ctes(false)
        ),
    )
    .await?;
    let mut counts: HashMap<i64, u64> = HashMap::new();
    let mut profile = Profile::new(Keep::Counts);
    for batch in &sampled {
        let c = Columns::of(batch, &[I, I])?;
        for r in 0..batch.num_rows() {
            let n = count(c.int(1, r));
            match c.int(0, r) {
                Some(stack) => {
                    counts.insert(stack, n);
                }
                // The store keeps no markers: a sample without a stack is idle.
                None => profile.add_empty_samples(Empty::Idle, n),
            }
        }
    }
    if counts.is_empty() {
        if summary {
            add_summary(ctx, &picked, &mut profile).await?;
        }
        return Ok(profile);
    }
    let schema = sampled
        .first()
        .map(|b| b.schema())
        .ok_or("the stack query returned no batch")?;
    let mem = MemTable::try_new(schema, vec![sampled]).map_err(|e| e.to_string())?;
    ctx.register_table("sampled", Arc::new(mem))
        .map_err(|e| e.to_string())?;
    let paths = call_paths(
        ctx,
        "",
        "SELECT stack_id FROM sampled WHERE stack_id IS NOT NULL",
        f.release.as_deref(),
    )
    .await;
    let _ = ctx.deregister_table("sampled");
    let mut nodes: HashMap<i64, NodeId> = HashMap::new();
    for (stack, parent, frame) in paths? {
        let parent = match parent {
            None => None,
            Some(p) => Some(*nodes.get(&p).ok_or_else(|| {
                format!("stack {stack}: its parent {p} is not in the store before it")
            })?),
        };
        let node = profile.call_path(parent, frame);
        nodes.insert(stack, node);
    }
    for (stack, n) in counts {
        let node = nodes
            .get(&stack)
            .ok_or_else(|| format!("stack {stack} of a sample is not in the store"))?;
        profile.add_samples(*node, n);
    }
    if summary {
        add_summary(ctx, &picked, &mut profile).await?;
    }
    Ok(profile)
}

/// Every stack on the way from each stack `seed` selects (a query of one column,
/// `stack_id`, after the CTEs `ctes`, each followed by a comma) to its root, parents first:
/// (stack, parent, frame), the frame mapped through the uploaded source maps of `release`
/// (any release's: `None`; symbols.rs).
pub(crate) async fn call_paths(
    ctx: &SessionContext,
    ctes: &str,
    seed: &str,
    release: Option<&str>,
) -> Result<Vec<(i64, Option<i64>, Frame)>, String> {
    use DataType::{Int64 as I, Utf8 as S};
    let symbols = crate::symbols::resolver(ctx).await?;
    let paths = collect(
        ctx,
        &format!(
            "WITH RECURSIVE {ctes}anc AS (
               {seed}
               UNION
               SELECT st.parent_id AS stack_id FROM anc JOIN stacks st ON st.stack_id = anc.stack_id
               WHERE st.parent_id IS NOT NULL)
             SELECT st.stack_id, st.parent_id, fr.name, fr.resource, fr.line, fr.\"column\"
             FROM anc JOIN stacks st ON st.stack_id = anc.stack_id
             JOIN frames fr ON fr.frame_id = st.frame_id
             ORDER BY st.depth, st.stack_id"
        ),
    )
    .await?;
    let mut out = Vec::new();
    for batch in &paths {
        let c = Columns::of(batch, &[I, I, S, S, I, I])?;
        for r in 0..batch.num_rows() {
            let stack = c.int(0, r).ok_or("a stack without id")?;
            let mut frame = frame_of(&c, 2, r);
            if let Some(s) = &symbols {
                frame = s.map(release, frame);
            }
            out.push((stack, c.int(1, r), frame));
        }
    }
    Ok(out)
}

/// The report's facts of the picked samples: traces, the sum of their spans, the median of
/// their typical sample gaps (each trace's median sample weight), and the timeline.
async fn add_summary(ctx: &SessionContext, picked: &str, p: &mut Profile) -> Result<(), String> {
    use DataType::{Float64 as F, Int64 as I};
    let facts = collect(
        ctx,
        &format!(
            "WITH {picked},
             per_trace AS (
               SELECT trace_id, max(timestamp_ms) - min(timestamp_ms) AS span,
                      approx_median(weight_ms) AS gap
               FROM picked GROUP BY trace_id)
             SELECT count(*), sum(span), median(gap) FROM per_trace"
        ),
    )
    .await?;
    let (mut traces, mut duration, mut interval) = (0, 0.0, None);
    for batch in &facts {
        let c = Columns::of(batch, &[I, F, F])?;
        if batch.num_rows() > 0 {
            traces = count(c.int(0, 0));
            duration = c.float(1, 0).unwrap_or(0.0);
            interval = c.float(2, 0).filter(|g| *g > 0.0);
        }
    }
    let rows = collect(
        ctx,
        &format!(
            "WITH {picked},
             first AS (SELECT trace_id, min(timestamp_ms) AS t0 FROM picked GROUP BY trace_id)
             SELECT CAST(floor((p.timestamp_ms - first.t0) / {BUCKET_MS:?}) AS BIGINT) AS b,
                    count(p.stack_id) AS with_stack, count(*) - count(p.stack_id) AS empty
             FROM picked p JOIN first ON first.trace_id = p.trace_id
             GROUP BY 1"
        ),
    )
    .await?;
    let mut timeline: Vec<Bucket> = Vec::new();
    for batch in &rows {
        let c = Columns::of(batch, &[I, I, I])?;
        for r in 0..batch.num_rows() {
            let b = c.int(0, r).unwrap_or(0).clamp(0, MAX_BUCKETS - 1) as usize;
            if timeline.len() <= b {
                timeline.resize(b + 1, Bucket::default());
            }
            timeline[b].with_stack += count(c.int(1, r));
            timeline[b].empty += count(c.int(2, r));
        }
    }
    p.add_summary(traces, duration, interval, &timeline);
    Ok(())
}

/// Samples over time (ms since the epoch), for the page: `buckets` at most, each a round
/// width (1, 2 or 5 times a power of ten, in ms) wide; and the long tasks, long animation
/// frames and slow interactions of the traces those samples are of ([`MAX_MARKS`] at most,
/// the longest).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Timeline {
    pub from_ms: f64,
    pub bucket_ms: f64,
    pub with_stack: Vec<u64>,
    pub empty: Vec<u64>,
    pub marks: Vec<Mark>,
}

/// An event on the timeline.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Mark {
    /// `long-task`, `loaf` or `interaction`.
    pub kind: String,
    pub name: Option<String>,
    pub start_ms: f64,
    pub duration_ms: f64,
}

/// The most events a timeline marks.
pub const MAX_MARKS: usize = 500;

/// The smallest round width (1, 2 or 5 times a power of ten, at least 1 ms) that cuts
/// `span_ms` into at most `buckets` buckets.
pub fn bucket_width(span_ms: f64, buckets: usize) -> f64 {
    let n = buckets.max(1) as f64;
    let mut step = 1.0;
    loop {
        for m in [1.0, 2.0, 5.0] {
            if (span_ms / (step * m)).floor() + 1.0 <= n {
                return step * m;
            }
        }
        step *= 10.0;
    }
}

pub async fn timeline(
    ctx: &SessionContext,
    f: &TopFilter,
    buckets: usize,
) -> Result<Timeline, String> {
    use DataType::{Float64 as F, Int64 as I};
    let picked = picked_cte(f, &[]);
    let range = collect(
        ctx,
        &format!("WITH {picked} SELECT min(timestamp_ms), max(timestamp_ms) FROM picked"),
    )
    .await?;
    let mut span = None;
    for batch in &range {
        let c = Columns::of(batch, &[F, F])?;
        if batch.num_rows() > 0 {
            if let (Some(lo), Some(hi)) = (c.float(0, 0), c.float(1, 0)) {
                span = Some((lo, hi));
            }
        }
    }
    let Some((lo, hi)) = span else {
        return Ok(Timeline {
            from_ms: f.since_ms.unwrap_or(0.0),
            bucket_ms: 1.0,
            with_stack: Vec::new(),
            empty: Vec::new(),
            marks: Vec::new(),
        });
    };
    let width = bucket_width(hi - lo, buckets);
    let from = (lo / width).floor() * width;
    if !(hi - lo).is_finite() || !width.is_finite() || !from.is_finite() {
        return Err(format!("sample times out of range ({lo} to {hi} ms)"));
    }
    let len = (((hi - from) / width).floor() as usize + 1).min(buckets.max(1) + 1);
    let mut out = Timeline {
        from_ms: from,
        bucket_ms: width,
        with_stack: vec![0; len],
        empty: vec![0; len],
        marks: Vec::new(),
    };
    let rows = collect(
        ctx,
        &format!(
            "WITH {picked}
             SELECT CAST(floor((timestamp_ms - {from:?}) / {width:?}) AS BIGINT) AS b,
                    count(stack_id) AS with_stack, count(*) - count(stack_id) AS empty
             FROM picked GROUP BY 1"
        ),
    )
    .await?;
    for batch in &rows {
        let c = Columns::of(batch, &[I, I, I])?;
        for r in 0..batch.num_rows() {
            let b = c.int(0, r).unwrap_or(0).clamp(0, len as i64 - 1) as usize;
            out.with_stack[b] += count(c.int(1, r));
            out.empty[b] += count(c.int(2, r));
        }
    }
    out.marks = marks(ctx, &picked, from, from + len as f64 * width).await?;
    Ok(out)
}

/// The long tasks, long animation frames and slow interactions of the traces `picked`
/// has samples of, within `[from, to]`: each once (an event both a trace and its RUM
/// batch carry, by its id), the longest first.
pub(crate) async fn marks(
    ctx: &SessionContext,
    picked: &str,
    from: f64,
    to: f64,
) -> Result<Vec<Mark>, String> {
    use DataType::{Float64 as F, Utf8 as S};
    let rows = collect(
        ctx,
        &format!(
            "WITH {picked}, {marked}
             SELECT kind, first_value(name) AS name, min(lo) AS lo, max(hi - lo) AS d
             FROM marked
             WHERE trace_id IN (SELECT DISTINCT trace_id FROM picked)
               AND hi >= {from:?} AND lo <= {to:?}
             GROUP BY kind, coalesce(id, CAST(lo AS VARCHAR))
             ORDER BY d DESC, lo, kind LIMIT {MAX_MARKS}",
            marked = linked_cte("marked", &["long-task", "loaf", "interaction"]),
        ),
    )
    .await?;
    let mut out = Vec::new();
    for batch in &rows {
        let c = Columns::of(batch, &[S, S, F, F])?;
        for r in 0..batch.num_rows() {
            out.push(Mark {
                kind: c.str(0, r).unwrap_or_default(),
                name: c.str(1, r),
                start_ms: c.float(2, r).unwrap_or(0.0),
                duration_ms: c.float(3, r).unwrap_or(0.0),
            });
        }
    }
    out.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_widths_are_round_and_cover_the_span() {
        assert_eq!(bucket_width(0.0, 100), 1.0);
        assert_eq!(bucket_width(99.0, 100), 1.0);
        assert_eq!(bucket_width(100.0, 100), 2.0);
        assert_eq!(bucket_width(1_000.0, 100), 20.0);
        assert_eq!(bucket_width(3_600_000.0, 100), 50_000.0);
        for (span, n) in [(12_345.0, 7), (1e9, 100), (5.0, 1)] {
            let w = bucket_width(span, n);
            assert!(((span / w).floor() as usize) < n, "{span} {n} {w}");
            assert!(
                (span / (w / 2.0)).floor() as usize + 1 > n,
                "{span} {n} {w}"
            );
        }
    }

    #[test]
    fn filter_values_are_quoted() {
        let f = TopFilter {
            release: Some("1.0' OR '1'='1".into()),
            url: Some("a\\'b".into()),
            ..TopFilter::default()
        };
        let sql = picked_cte(&f, &[]);
        assert!(sql.contains("s.release = '1.0'' OR ''1''=''1'"), "{sql}");
        assert!(sql.contains("strpos(t.page_url, 'a\\''b')"), "{sql}");
    }
}
