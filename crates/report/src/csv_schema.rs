//! The CSV export's columns and their types as a Frictionless Table Schema
//! (<https://specs.frictionlessdata.io/table-schema/>): `export --format
//! csv-schema`. A reader that infers types from values (pandas) loads a
//! column that a run left empty as float64, whatever it holds in other
//! runs; with the schema it loads each column as what it is. The schema
//! itself is built by `csv::schema`, from the columns the export writes.

use serde::Serialize;

/// A column's type, in Table Schema's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    /// Whole numbers: counts, identities, Unix times.
    Integer,
    /// Floats, always written with a decimal point.
    Number,
    /// `true` or `false`.
    Boolean,
    /// Anything else.
    #[serde(rename = "string")]
    Text,
}

/// One column of the table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Field {
    /// The header's name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub ty: ColumnType,
}

/// The table's schema: its columns in order, and the empty cell as missing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TableSchema {
    /// Every column, in the CSV's order.
    pub fields: Vec<Field>,
    /// `[""]`: an empty cell is a missing value.
    #[serde(rename = "missingValues")]
    pub missing_values: Vec<String>,
}
