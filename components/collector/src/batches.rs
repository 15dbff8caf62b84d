//! Typed access to query results: a query's batches ([`collect`]) and their columns read as
//! strings, integers or floats ([`Columns`]), for every module that reads DataFusion's
//! answers (aggregate, browse, regressions, symbols). A leaf: it imports no module of the
//! crate.

use arrow::array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::DataType;
use datafusion::prelude::SessionContext;
use jsprof_export::model::Frame;

use std::sync::Arc;

/// The batches of `sql`'s answer.
pub(crate) async fn collect(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>, String> {
    let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    df.collect().await.map_err(|e| e.to_string())
}

/// Column `i` of `batch`, cast to `to` (DataFusion may hand strings as views, sums as
/// other widths).
fn column(batch: &RecordBatch, i: usize, to: &DataType) -> Result<ArrayRef, String> {
    arrow::compute::cast(batch.column(i), to).map_err(|e| e.to_string())
}

/// Typed access to the columns of one result batch.
pub(crate) struct Columns {
    columns: Vec<ArrayRef>,
}

impl Columns {
    /// `types`: what each column is read as, in order.
    pub fn of(batch: &RecordBatch, types: &[DataType]) -> Result<Columns, String> {
        let columns = types
            .iter()
            .enumerate()
            .map(|(i, t)| column(batch, i, t))
            .collect::<Result<_, _>>()?;
        Ok(Columns { columns })
    }

    pub fn str(&self, c: usize, row: usize) -> Option<String> {
        let a = self.columns[c].as_any().downcast_ref::<StringArray>()?;
        (!a.is_null(row)).then(|| a.value(row).to_owned())
    }

    pub fn int(&self, c: usize, row: usize) -> Option<i64> {
        let a = self.columns[c].as_any().downcast_ref::<Int64Array>()?;
        (!a.is_null(row)).then(|| a.value(row))
    }

    pub fn float(&self, c: usize, row: usize) -> Option<f64> {
        let a = self.columns[c].as_any().downcast_ref::<Float64Array>()?;
        (!a.is_null(row)).then(|| a.value(row))
    }
}

/// The frame columns of a result batch (`function` or `name`, `resource`, `line`, `column`),
/// for the mappings that replace each row's frame with its original (uploaded maps,
/// `top --source-maps`' fetch).
pub(crate) struct FrameColumns {
    indices: [usize; 4],
}

impl FrameColumns {
    /// Where `batch`'s frame columns are, and each row's frame.
    pub fn read(batch: &RecordBatch) -> Result<(FrameColumns, Vec<Frame>), String> {
        let schema = batch.schema();
        let column = |names: &[&str]| {
            names
                .iter()
                .find_map(|n| schema.index_of(n).ok())
                .ok_or_else(|| format!("no {} column to map", names[0]))
        };
        let indices = [
            column(&["function", "name"])?,
            column(&["resource"])?,
            column(&["line"])?,
            column(&["column"])?,
        ];
        let c = Columns::of(
            &batch.project(&indices).map_err(|e| e.to_string())?,
            &[
                DataType::Utf8,
                DataType::Utf8,
                DataType::Int64,
                DataType::Int64,
            ],
        )?;
        let frames = (0..batch.num_rows())
            .map(|row| {
                let whole = |i| c.int(i, row).and_then(|v| u64::try_from(v).ok());
                Frame {
                    name: c.str(0, row).unwrap_or_default(),
                    resource: c.str(1, row),
                    line: whole(2),
                    column: whole(3),
                }
            })
            .collect();
        Ok((FrameColumns { indices }, frames))
    }

    /// `batch` with its frame columns replaced by `frames` (one per row, in order), each
    /// column of the type it had.
    pub fn replace(&self, batch: &RecordBatch, frames: Vec<Frame>) -> Result<RecordBatch, String> {
        let schema = batch.schema();
        let (mut n, mut r, mut l, mut c) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for f in frames {
            n.push(Some(f.name));
            r.push(f.resource);
            l.push(f.line.and_then(|v| i64::try_from(v).ok()));
            c.push(f.column.and_then(|v| i64::try_from(v).ok()));
        }
        let new: [ArrayRef; 4] = [
            Arc::new(StringArray::from(n)),
            Arc::new(StringArray::from(r)),
            Arc::new(Int64Array::from(l)),
            Arc::new(Int64Array::from(c)),
        ];
        let mut arrays: Vec<ArrayRef> = batch.columns().to_vec();
        for (i, a) in self.indices.into_iter().zip(new) {
            arrays[i] =
                arrow::compute::cast(&a, schema.field(i).data_type()).map_err(|e| e.to_string())?;
        }
        RecordBatch::try_new(schema, arrays).map_err(|e| e.to_string())
    }
}
