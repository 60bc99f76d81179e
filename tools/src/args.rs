//! Reading tool-call arguments, with the error texts the model sees for bad ones.

use std::path::PathBuf;

use march_core::tool::ToolError;
use serde_json::Value;

use crate::context::ToolContext;

/// A required string argument.
pub(crate) fn required_str<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    match args.get(key) {
        Some(Value::String(s)) => Ok(s),
        None | Some(Value::Null) => Err(ToolError::new(format!(
            "Missing required argument \"{key}\""
        ))),
        Some(other) => Err(ToolError::new(format!(
            "Argument \"{key}\" must be a string, got {other}"
        ))),
    }
}

/// An optional string argument (absent or null gives `None`).
pub(crate) fn optional_str<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => required_str(args, key).map(Some),
    }
}

/// An optional whole number ≥ 1; models sometimes send `10.0`, which is accepted.
pub(crate) fn optional_count(args: &Value, key: &str) -> Result<Option<usize>, ToolError> {
    let bad = |v: &Value| {
        ToolError::new(format!(
            "Argument \"{key}\" must be a whole number of at least 1, got {v}"
        ))
    };
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v @ Value::Number(n)) => {
            if let Some(u) = n.as_u64() {
                return (u >= 1)
                    .then(|| usize::try_from(u).unwrap_or(usize::MAX))
                    .map(Some)
                    .ok_or_else(|| bad(v));
            }
            match n.as_f64() {
                // Saturating float-to-int cast: absurdly large limits just mean "all".
                Some(f) if f >= 1.0 && f.fract() == 0.0 => Ok(Some(f as usize)),
                _ => Err(bad(v)),
            }
        }
        Some(v) => Err(bad(v)),
    }
}

/// The file a call names in its `path` argument, resolved; none when the argument is missing
/// or not a string (validation reports that later).
pub(crate) fn file_target(ctx: &ToolContext, args: &Value) -> Vec<PathBuf> {
    match args.get("path").and_then(Value::as_str) {
        Some(raw) => vec![ctx.resolve(raw).absolute],
        None => Vec::new(),
    }
}

/// The directory (or file) a search or listing starts from: the `path` argument resolved, or
/// the working directory when it is missing.
pub(crate) fn search_root(ctx: &ToolContext, args: &Value) -> PathBuf {
    let raw = args.get("path").and_then(Value::as_str).unwrap_or(".");
    ctx.resolve(raw).absolute
}
