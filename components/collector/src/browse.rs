//! What the page at `/` of `collect` lists for a person who investigates: the values of the
//! labels it filters and groups by ([`Label`]), the samples by one label's value, the traces
//! a filter picks, and one trace in time order (its samples, their stacks, its long tasks).
//! Everything is summed in SQL over the samples [`picked_cte`] picks, as `top` sums them
//! (aggregate.rs); at most a bounded number of rows leaves DataFusion.

use std::collections::BTreeMap;

use arrow::datatypes::DataType;
use datafusion::prelude::SessionContext;

use crate::aggregate::{self, call_paths, collect, linked_cte, picked_cte, Columns, Label, Mark};
use crate::aggregate::{TopFilter, MAX_MARKS};

/// The most values of a label listed, and groups shown.
pub const MAX_VALUES: usize = 200;
/// The most samples of one trace shown (the first, in time order).
pub const MAX_TRACE_SAMPLES: usize = 50_000;

/// Each label's values (and the releases) in the store, sorted: what the page's filters
/// offer.
pub async fn label_values(ctx: &SessionContext) -> Result<BTreeMap<String, Vec<String>>, String> {
    let mut out = BTreeMap::new();
    let mut columns = vec![("release".to_owned(), "t.release".to_owned())];
    columns.extend(Label::ALL.map(|l| (l.name().to_owned(), l.sql())));
    for (name, sql) in columns {
        let rows = collect(
            ctx,
            &format!(
                "SELECT DISTINCT v FROM (SELECT {sql} AS v FROM traces t) AS l
                 WHERE v IS NOT NULL ORDER BY v LIMIT {MAX_VALUES}"
            ),
        )
        .await?;
        let mut values = Vec::new();
        for batch in &rows {
            let c = Columns::of(batch, &[DataType::Utf8])?;
            values.extend((0..batch.num_rows()).filter_map(|r| c.str(0, r)));
        }
        out.insert(name, values);
    }
    Ok(out)
}

/// The picked samples of traces with one value of a label.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Group {
    /// NULL: the traces that do not say.
    pub value: Option<String>,
    pub traces: u64,
    pub samples: u64,
    pub with_stack: u64,
    /// The function most samples have as their leaf, and how many.
    pub top_function: Option<String>,
    pub top_self: u64,
}

/// The picked samples grouped by `label`'s value, most samples first.
pub async fn groups(
    ctx: &SessionContext,
    f: &TopFilter,
    label: Label,
) -> Result<Vec<Group>, String> {
    use DataType::{Int64 as I, Utf8 as S};
    let rows = collect(
        ctx,
        &format!(
            "WITH {picked},
             g AS (SELECT {value} AS value, p.trace_id, p.stack_id
                   FROM picked p JOIN traces t ON t.trace_id = p.trace_id),
             leaves AS (SELECT g.value, fr.name, fr.resource, fr.line, fr.\"column\",
                               count(*) AS n
                        FROM g JOIN stacks st ON st.stack_id = g.stack_id
                        JOIN frames fr ON fr.frame_id = st.frame_id
                        GROUP BY g.value, fr.name, fr.resource, fr.line, fr.\"column\"),
             ranked AS (SELECT value, name, resource, line, \"column\", n,
                               row_number() OVER (PARTITION BY value
                                 ORDER BY n DESC, name, resource, line, \"column\") AS rank
                        FROM leaves),
             best AS (SELECT * FROM ranked WHERE rank = 1)
             SELECT s.value, s.traces, s.samples, s.with_stack, best.n,
                    best.name, best.resource, best.line, best.\"column\" FROM (
               SELECT value, count(DISTINCT trace_id) AS traces, count(*) AS samples,
                      count(stack_id) AS with_stack FROM g GROUP BY value) s
             LEFT JOIN best ON best.value IS NOT DISTINCT FROM s.value
             ORDER BY s.samples DESC, s.value LIMIT {MAX_VALUES}",
            picked = picked_cte(f, &[]),
            value = label.sql(),
        ),
    )
    .await?;
    let symbols = crate::symbols::resolver(ctx).await?;
    let mut out = Vec::new();
    for batch in &rows {
        let c = Columns::of(batch, &[S, I, I, I, I, S, S, I, I])?;
        for r in 0..batch.num_rows() {
            // The top function through the uploaded source maps (symbols.rs).
            let top_function = c.str(5, r).map(|name| {
                let position = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok());
                let frame = jsprof_export::Frame {
                    name,
                    resource: c.str(6, r),
                    line: position(c.int(7, r)),
                    column: position(c.int(8, r)),
                };
                match &symbols {
                    Some(s) => s.map(f.release.as_deref(), frame).name,
                    None => frame.name,
                }
            });
            out.push(Group {
                value: c.str(0, r),
                traces: count(c.int(1, r)),
                samples: count(c.int(2, r)),
                with_stack: count(c.int(3, r)),
                top_function,
                top_self: count(c.int(4, r)),
            });
        }
    }
    Ok(out)
}

fn count(v: Option<i64>) -> u64 {
    v.unwrap_or(0).max(0) as u64
}

/// One trace of the list, with its picked samples.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TraceRow {
    /// A string: ids are 64-bit, more than a JavaScript number holds exactly.
    pub id: String,
    pub source: Option<String>,
    pub release: Option<String>,
    pub page_url: Option<String>,
    pub page_name: Option<String>,
    pub user_agent: Option<String>,
    pub view: Option<String>,
    pub environment: Option<String>,
    pub browser: Option<String>,
    /// The picked samples, and those with a stack.
    pub samples: u64,
    pub with_stack: u64,
    /// The first and last picked sample, ms since the epoch.
    pub start_ms: f64,
    pub end_ms: f64,
    /// Long tasks, long animation frames and slow interactions linked to the trace.
    pub events: u64,
}

/// The traces with picked samples, the latest first, `limit` at most.
pub async fn traces(
    ctx: &SessionContext,
    f: &TopFilter,
    limit: usize,
) -> Result<Vec<TraceRow>, String> {
    use DataType::{Float64 as F, Int64 as I, Utf8 as S};
    let rows = collect(
        ctx,
        &format!(
            "WITH {picked}, {marked},
             per AS (SELECT trace_id, count(*) AS n, count(stack_id) AS with_stack,
                            min(timestamp_ms) AS lo, max(timestamp_ms) AS hi
                     FROM picked GROUP BY trace_id),
             ev AS (SELECT trace_id, count(DISTINCT coalesce(id, CAST(lo AS VARCHAR))) AS n
                    FROM marked GROUP BY trace_id)
             SELECT CAST(per.trace_id AS VARCHAR) AS id, t.source, t.release, t.page_url, t.page_name,
                    t.user_agent, {view}, {environment}, {browser},
                    per.n, per.with_stack, per.lo, per.hi, coalesce(ev.n, 0)
             FROM per JOIN traces t ON t.trace_id = per.trace_id
             LEFT JOIN ev ON ev.trace_id = per.trace_id
             ORDER BY per.lo DESC, per.trace_id LIMIT {limit}",
            picked = picked_cte(f, &[]),
            marked = linked_cte("marked", &["long-task", "loaf", "interaction"]),
            view = Label::View.sql(),
            environment = Label::Environment.sql(),
            browser = Label::Browser.sql(),
            limit = limit.max(1),
        ),
    )
    .await?;
    let mut out = Vec::new();
    for batch in &rows {
        let c = Columns::of(batch, &[S, S, S, S, S, S, S, S, S, I, I, F, F, I])?;
        for r in 0..batch.num_rows() {
            out.push(TraceRow {
                id: c.str(0, r).unwrap_or_default(),
                source: c.str(1, r),
                release: c.str(2, r),
                page_url: c.str(3, r),
                page_name: c.str(4, r),
                user_agent: c.str(5, r),
                view: c.str(6, r),
                environment: c.str(7, r),
                browser: c.str(8, r),
                samples: count(c.int(9, r)),
                with_stack: count(c.int(10, r)),
                start_ms: c.float(11, r).unwrap_or(0.0),
                end_ms: c.float(12, r).unwrap_or(0.0),
                events: count(c.int(13, r)),
            });
        }
    }
    Ok(out)
}

/// One sample of a trace: its time (ms since the epoch), weight (ms) and stack (an id of
/// [`Trace::stacks`], none for a sample without a stack).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TraceSample {
    pub t: f64,
    pub w: f64,
    pub stack: Option<String>,
}

/// A stack of a trace: its leaf frame and the stack it was called from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StackNode {
    pub id: String,
    pub parent: Option<String>,
    pub function: String,
    pub resource: Option<String>,
    pub line: Option<u64>,
    pub column: Option<u64>,
}

/// One trace in time order.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Trace {
    pub trace: TraceRow,
    /// Its picked samples in time order, the first [`MAX_TRACE_SAMPLES`].
    pub samples: Vec<TraceSample>,
    /// Whether samples were left out at the end.
    pub truncated: bool,
    /// Every stack the samples have, and their ancestors, parents first.
    pub stacks: Vec<StackNode>,
    /// Its long tasks, long animation frames and slow interactions, by start.
    pub marks: Vec<Mark>,
}

/// The trace `id` (with `f`'s other filters), or `None` if it has no picked sample.
pub async fn trace(ctx: &SessionContext, f: &TopFilter, id: i64) -> Result<Option<Trace>, String> {
    use DataType::{Float64 as F, Int64 as I};
    let f = TopFilter {
        trace_id: Some(id),
        ..f.clone()
    };
    let Some(row) = traces(ctx, &f, 1).await?.into_iter().next() else {
        return Ok(None);
    };
    let picked = picked_cte(&f, &[]);
    let rows = collect(
        ctx,
        &format!(
            "WITH {picked} SELECT timestamp_ms, weight_ms, stack_id FROM picked
             ORDER BY timestamp_ms LIMIT {}",
            MAX_TRACE_SAMPLES + 1
        ),
    )
    .await?;
    let mut samples = Vec::new();
    for batch in &rows {
        let c = Columns::of(batch, &[F, F, I])?;
        for r in 0..batch.num_rows() {
            samples.push(TraceSample {
                t: c.float(0, r).unwrap_or(0.0),
                w: c.float(1, r).unwrap_or(0.0),
                stack: c.int(2, r).map(|s| s.to_string()),
            });
        }
    }
    let truncated = samples.len() > MAX_TRACE_SAMPLES;
    samples.truncate(MAX_TRACE_SAMPLES);
    let stacks = call_paths(
        ctx,
        &format!("{picked}, "),
        "SELECT DISTINCT stack_id FROM picked WHERE stack_id IS NOT NULL",
        row.release.as_deref(),
    )
    .await?
    .into_iter()
    .map(|(id, parent, frame)| StackNode {
        id: id.to_string(),
        parent: parent.map(|p| p.to_string()),
        function: frame.display_name().to_owned(),
        resource: frame.resource,
        line: frame.line,
        column: frame.column,
    })
    .collect();
    let mut marks = aggregate::marks(ctx, &picked, row.start_ms, row.end_ms).await?;
    marks.truncate(MAX_MARKS);
    Ok(Some(Trace {
        trace: row,
        samples,
        truncated,
        stacks,
        marks,
    }))
}
