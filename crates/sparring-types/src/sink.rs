//! Where finished rows go.

use crate::Row;

/// Why a [`RowSink`] could not store a row. The message names the place
/// (a file, a table) and fits on one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SinkError(pub String);

/// Where finished rows go. The sink must make a row durable (written and
/// flushed) before it returns, so a crash loses only rows in flight.
/// `sparring-io`'s `RowWriter` is the JSONL file; a `Vec<Row>` keeps rows in
/// memory.
pub trait RowSink: Send {
    /// Stores one row.
    fn write(&mut self, row: &Row) -> Result<(), SinkError>;
}

impl RowSink for Vec<Row> {
    fn write(&mut self, row: &Row) -> Result<(), SinkError> {
        self.push(row.clone());
        Ok(())
    }
}
