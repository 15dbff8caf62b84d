//! The collector's intakes (issue 27): each upload format decoded into one model, refused
//! with a status and a reason when it is not one. Split from `jsprof-collector` so that the
//! fuzz targets (fuzz/targets: `intake_jsprof`, `intake_datadog`, `intake_sentry`) build it
//! without DataFusion.

#![forbid(unsafe_code)]

pub mod decode;
pub mod fast;
pub mod fuzz;
pub mod model;
pub mod record;
