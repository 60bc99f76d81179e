//! `march models`: providers, where their credentials come from, their models, and optionally
//! what each server says it serves.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use march_core::model::{CredentialSource, Model, ModelRegistry, ProviderInfo, RegistryError};
use march_core::paths::MarchPaths;

use crate::cli::ModelsArgs;

/// How long each provider gets to answer `GET /models`.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(3);

/// What discovery found for one provider.
enum Discovery {
    /// Not attempted: no credentials.
    Skipped,
    /// The server listed these models.
    Found(Vec<Model>),
    /// A local server that is not running: a normal state, not a failure.
    NotRunning(String),
    /// Discovery failed.
    Failed(String),
}

/// One provider as shown to the user.
struct Row<'a> {
    info: &'a ProviderInfo,
    credentials: CredentialSource,
    discovery: Option<Discovery>,
}

/// Run `march models`.
pub fn run(paths: &MarchPaths, args: &ModelsArgs) -> anyhow::Result<()> {
    let registry = Arc::new(ModelRegistry::load(paths).context("cannot load the model registry")?);
    let discoveries = if args.discover {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        runtime.block_on(discover_all(&registry))
    } else {
        Vec::new()
    };
    // Without --discover the iterator is empty and every row gets `None`.
    let mut discoveries = discoveries.into_iter();
    let rows: Vec<Row> = registry
        .providers()
        .iter()
        .map(|info| Row {
            info,
            credentials: registry.credential_source(&info.name),
            discovery: discoveries.next(),
        })
        .collect();
    let auth_file = registry.auth_file().display().to_string();
    let out = if args.json {
        to_json(&rows, &auth_file)
    } else {
        to_text(&rows, &auth_file, args.discover)
    };
    print!("{out}");
    Ok(())
}

/// Query every provider that has credentials or is local, concurrently; one result per
/// provider, in registry order.
async fn discover_all(registry: &Arc<ModelRegistry>) -> Vec<Discovery> {
    let providers = registry.providers();
    let mut results: Vec<Discovery> = providers.iter().map(|_| Discovery::Skipped).collect();
    let mut tasks = tokio::task::JoinSet::new();
    for (index, info) in providers.iter().enumerate() {
        if !registry.credential_source(&info.name).is_usable() {
            continue;
        }
        let registry = Arc::clone(registry);
        let name = info.name.clone();
        let local = info.local;
        tasks.spawn(async move {
            let result = registry.discover(&name, DISCOVERY_TIMEOUT).await;
            tracing::info!(provider = %name, ok = result.is_ok(), "model discovery");
            let discovery = match result {
                Ok(models) => Discovery::Found(models),
                Err(RegistryError::Unreachable { url, .. }) if local => Discovery::NotRunning(url),
                Err(e) => Discovery::Failed(e.to_string()),
            };
            (index, discovery)
        });
    }
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((index, discovery)) => {
                if let Some(slot) = results.get_mut(index) {
                    *slot = discovery;
                }
            }
            // A task that panicked cannot say which provider it was; the log has it.
            Err(e) => tracing::error!("a discovery task failed: {e}"),
        }
    }
    results
}

fn credentials_text(source: &CredentialSource, auth_file: &str) -> String {
    match source {
        CredentialSource::AuthFile => "ok (auth.json)".into(),
        CredentialSource::Env(var) => format!("ok (env {var})"),
        CredentialSource::NotNeeded => "not needed (local)".into(),
        CredentialSource::Missing(Some(var)) => {
            format!("missing: set {var} or add it to {auth_file}")
        }
        CredentialSource::Missing(None) => format!("missing: add it to {auth_file}"),
    }
}

fn yes_no(flag: bool) -> &'static str {
    if flag { "yes" } else { "no" }
}

/// `1047576` → `1,047,576`, so context windows are readable at a glance.
fn thousands(n: u64) -> String {
    let digits = n.to_string().into_bytes();
    let groups: Vec<&str> = digits
        .rchunks(3)
        .rev()
        .filter_map(|group| std::str::from_utf8(group).ok())
        .collect();
    groups.join(",")
}

const HEADERS: [&str; 5] = ["model", "context", "max out", "reasoning", "images"];

/// The aligned text listing.
fn to_text(rows: &[Row], auth_file: &str, discover: bool) -> String {
    // Column widths are shared by all providers so the whole listing lines up.
    let all_models = rows.iter().flat_map(|row| {
        let found = match &row.discovery {
            Some(Discovery::Found(models)) => models.as_slice(),
            _ => &[],
        };
        row.info.models.iter().chain(found)
    });
    let mut widths = HEADERS.map(str::len);
    for model in all_models {
        let cells = model_cells(model);
        for (width, cell) in widths.iter_mut().zip(&cells) {
            *width = (*width).max(cell.len());
        }
    }
    let name_width = rows.iter().map(|r| r.info.name.len()).max().unwrap_or(0);

    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let info = row.info;
        let _ = writeln!(
            out,
            "{:<name_width$}  {:<18}  {}",
            info.name,
            info.api.as_str(),
            info.base_url
        );
        let _ = writeln!(
            out,
            "  credentials: {}",
            credentials_text(&row.credentials, auth_file)
        );
        if info.models.is_empty() {
            let hint = if discover {
                "no known models"
            } else {
                "no known models; `march models --discover` asks the server"
            };
            let _ = writeln!(out, "  ({hint})");
        } else {
            write_table(&mut out, &info.models, &widths);
        }
        match &row.discovery {
            None => {}
            Some(Discovery::Skipped) => {
                let _ = writeln!(out, "  discovery: skipped (no credentials)");
            }
            Some(Discovery::NotRunning(url)) => {
                let _ = writeln!(out, "  discovery: no server running at {url}");
            }
            Some(Discovery::Failed(error)) => {
                let _ = writeln!(out, "  discovery failed: {error}");
            }
            Some(Discovery::Found(models)) if models.is_empty() => {
                let _ = writeln!(out, "  discovered: no models");
            }
            Some(Discovery::Found(models)) => {
                let _ = writeln!(out, "  discovered {} models:", models.len());
                write_table(&mut out, models, &widths);
            }
        }
    }
    out
}

fn model_cells(model: &Model) -> [String; 5] {
    [
        model.id.clone(),
        thousands(model.context_window),
        thousands(model.max_tokens),
        yes_no(model.reasoning).into(),
        yes_no(model.images).into(),
    ]
}

fn write_table(out: &mut String, models: &[Model], widths: &[usize; 5]) {
    let [w_id, w_ctx, w_max, w_reason, _] = *widths;
    let mut line = |cells: [&str; 5]| {
        // Numbers are right-aligned; trailing spaces are trimmed.
        let text = format!(
            "  {:<w_id$}  {:>w_ctx$}  {:>w_max$}  {:<w_reason$}  {}",
            cells[0], cells[1], cells[2], cells[3], cells[4]
        );
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(HEADERS);
    for model in models {
        let cells = model_cells(model);
        line(cells.each_ref().map(String::as_str));
    }
}

/// A minimal JSON value: enough for this report without a serializer dependency in the app.
enum Json {
    Null,
    Bool(bool),
    Int(u64),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(&'static str, Json)>),
}

impl Json {
    fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    fn opt_str(s: Option<&str>) -> Json {
        s.map_or(Json::Null, Json::str)
    }

    /// Pretty-print with two-space indentation.
    fn write(&self, out: &mut String, indent: usize) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(n) => {
                let _ = write!(out, "{n}");
            }
            // Display never uses exponents, so it is valid JSON; non-finite values are not.
            Json::Float(x) if x.is_finite() => {
                let _ = write!(out, "{x}");
            }
            Json::Float(_) => out.push_str("null"),
            Json::Str(s) => write_json_string(out, s),
            Json::Array(items) if items.is_empty() => out.push_str("[]"),
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    push_indent(out, indent + 1);
                    item.write(out, indent + 1);
                }
                out.push('\n');
                push_indent(out, indent);
                out.push(']');
            }
            Json::Object(fields) if fields.is_empty() => out.push_str("{}"),
            Json::Object(fields) => {
                out.push('{');
                for (i, (key, value)) in fields.iter().enumerate() {
                    out.push_str(if i == 0 { "\n" } else { ",\n" });
                    push_indent(out, indent + 1);
                    write_json_string(out, key);
                    out.push_str(": ");
                    value.write(out, indent + 1);
                }
                out.push('\n');
                push_indent(out, indent);
                out.push('}');
            }
        }
    }
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n("  ", indent));
}

fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn model_json(model: &Model) -> Json {
    Json::Object(vec![
        ("id", Json::str(&model.id)),
        ("name", Json::str(&model.name)),
        ("context_window", Json::Int(model.context_window)),
        ("max_tokens", Json::Int(model.max_tokens)),
        ("reasoning", Json::Bool(model.reasoning)),
        ("images", Json::Bool(model.images)),
        (
            "cost",
            Json::Object(vec![
                ("input", Json::Float(model.cost.input)),
                ("output", Json::Float(model.cost.output)),
                ("cache_read", Json::Float(model.cost.cache_read)),
                ("cache_write", Json::Float(model.cost.cache_write)),
            ]),
        ),
    ])
}

fn models_json(models: &[Model]) -> Json {
    Json::Array(models.iter().map(model_json).collect())
}

fn credentials_json(source: &CredentialSource, auth_file: &str) -> Json {
    let (status, from, env) = match source {
        CredentialSource::AuthFile => ("ok", Some("auth_file"), None),
        CredentialSource::Env(var) => ("ok", Some("env"), Some(var.as_str())),
        CredentialSource::NotNeeded => ("not_needed", None, None),
        CredentialSource::Missing(var) => ("missing", None, var.as_deref()),
    };
    Json::Object(vec![
        ("status", Json::str(status)),
        ("source", Json::opt_str(from)),
        ("env", Json::opt_str(env)),
        ("text", Json::str(credentials_text(source, auth_file))),
    ])
}

fn discovery_json(discovery: &Discovery) -> Json {
    let (status, detail) = match discovery {
        Discovery::Skipped => ("skipped", None),
        Discovery::Found(models) => ("ok", Some(("models", models_json(models)))),
        Discovery::NotRunning(url) => ("not_running", Some(("url", Json::str(url)))),
        Discovery::Failed(error) => ("error", Some(("error", Json::str(error)))),
    };
    let mut fields = vec![("status", Json::str(status))];
    fields.extend(detail);
    Json::Object(fields)
}

/// The JSON report: the same content as the text listing.
fn to_json(rows: &[Row], auth_file: &str) -> String {
    let providers = rows
        .iter()
        .map(|row| {
            let info = row.info;
            let mut fields = vec![
                ("name", Json::str(&info.name)),
                ("api", Json::str(info.api.as_str())),
                ("base_url", Json::str(&info.base_url)),
                ("local", Json::Bool(info.local)),
                ("credentials", credentials_json(&row.credentials, auth_file)),
                ("models", models_json(&info.models)),
            ];
            if let Some(discovery) = &row.discovery {
                fields.push(("discovery", discovery_json(discovery)));
            }
            Json::Object(fields)
        })
        .collect();
    let report = Json::Object(vec![
        ("auth_file", Json::str(auth_file)),
        ("providers", Json::Array(providers)),
    ]);
    let mut out = String::new();
    report.write(&mut out, 0);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_047_576), "1,047,576");
    }

    #[test]
    fn json_strings_are_escaped() {
        let mut out = String::new();
        Json::Object(vec![
            ("a", Json::str("q\"b\\n\nt\u{1}é")),
            (
                "b",
                Json::Array(vec![Json::Int(1), Json::Float(0.5), Json::Null]),
            ),
            ("c", Json::Array(vec![])),
        ])
        .write(&mut out, 0);
        assert_eq!(
            out,
            "{\n  \"a\": \"q\\\"b\\\\n\\nt\\u0001é\",\n  \"b\": [\n    1,\n    0.5,\n    null\n  ],\n  \"c\": []\n}"
        );
    }

    #[test]
    fn credential_texts() {
        let auth = "/h/auth.json";
        assert_eq!(
            credentials_text(&CredentialSource::Env("OPENAI_API_KEY".into()), auth),
            "ok (env OPENAI_API_KEY)"
        );
        assert_eq!(
            credentials_text(&CredentialSource::AuthFile, auth),
            "ok (auth.json)"
        );
        assert_eq!(
            credentials_text(&CredentialSource::NotNeeded, auth),
            "not needed (local)"
        );
        assert_eq!(
            credentials_text(&CredentialSource::Missing(Some("X_KEY".into())), auth),
            "missing: set X_KEY or add it to /h/auth.json"
        );
    }
}
