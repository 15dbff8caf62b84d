//! Typed access to query results: a query's batches ([`collect`]) and their columns read as
//! strings, integers or floats ([`Columns`]), for every module that reads DataFusion's
//! answers (aggregate, browse, regressions, symbols). A leaf: it imports no module of the
//! crate.

use arrow::array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::DataType;
use datafusion::prelude::SessionContext;

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
