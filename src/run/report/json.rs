//! `loopc report --json`: the report's document (docs/report.md), pretty
//! printed with a closing line break.

use super::model::Report;

/// The JSON text of `report`.
///
/// Errors: it cannot be encoded (it always can: no map has non-string keys).
pub fn to_json(report: &Report) -> Result<String, String> {
    serde_json::to_string_pretty(report)
        .map(|mut text| {
            text.push('\n');
            text
        })
        .map_err(|e| format!("cannot encode the report: {e}"))
}
