//! `march usage`: the tokens and cost of every session's model calls, read from the
//! transcripts, per project and model. A call is one a model answered, even in part: a
//! request that failed before any answer (a refused connection, an error status) is not
//! counted (`march_core::usage` decides).

use anyhow::anyhow;
use march_core::paths::MarchPaths;
use march_core::usage::{UsageByProject, UsageIndex, UsageTotals, local_day_start_ms};
use serde_json::json;

use crate::cli::UsageArgs;

/// Run `march usage`.
pub fn run(paths: &MarchPaths, args: &UsageArgs) -> anyhow::Result<()> {
    let since = match args.since.as_deref().map(str::trim) {
        None => None,
        Some("today") => Some(local_day_start_ms(None).map_err(|e| anyhow!(e))?),
        Some(date) => Some(local_day_start_ms(Some(date)).map_err(|e| anyhow!(e))?),
    };
    let mut index = UsageIndex::new();
    index.refresh(&[paths.sessions_dir()]);
    let totals = index.totals(since);
    let text = if args.json {
        format!("{}\n", as_json(&totals, args.since.as_deref()))
    } else {
        as_table(&totals)
    };
    print!("{text}");
    Ok(())
}

/// One project's models and their sum.
struct ProjectUsage<'a> {
    project: &'a str,
    models: Vec<(&'a str, &'a UsageTotals)>,
    total: UsageTotals,
}

/// The totals grouped by project (in path order), and the grand total.
fn by_project(totals: &UsageByProject) -> (Vec<ProjectUsage<'_>>, UsageTotals) {
    let mut projects: Vec<ProjectUsage<'_>> = Vec::new();
    let mut grand = UsageTotals::default();
    for ((project, model), t) in totals {
        if projects.last().is_none_or(|p| p.project != project) {
            projects.push(ProjectUsage {
                project,
                models: Vec::new(),
                total: UsageTotals::default(),
            });
        }
        if let Some(p) = projects.last_mut() {
            p.models.push((model, t));
            p.total.merge(t);
        }
        grand.merge(t);
    }
    (projects, grand)
}

/// Each project's models (and their sum when more than one), then the grand total.
fn as_table(totals: &UsageByProject) -> String {
    if totals.is_empty() {
        return "No model calls recorded.\n".to_string();
    }
    let row = |project: &str, model: &str, t: &UsageTotals| {
        vec![
            project.to_string(),
            model.to_string(),
            t.calls.to_string(),
            t.input.to_string(),
            t.output.to_string(),
            t.cache_read.to_string(),
            t.cache_write.to_string(),
            format!("${:.4}", t.cost),
        ]
    };
    let (projects, grand) = by_project(totals);
    let mut rows = Vec::new();
    for p in &projects {
        for (i, (model, t)) in p.models.iter().enumerate() {
            rows.push(row(if i == 0 { p.project } else { "" }, model, t));
        }
        if p.models.len() > 1 {
            rows.push(row("", "(all models)", &p.total));
        }
    }
    rows.push(row("TOTAL", "", &grand));
    crate::table::render(
        &[
            "PROJECT",
            "MODEL",
            "CALLS",
            "INPUT",
            "OUTPUT",
            "CACHE READ",
            "CACHE WRITE",
            "COST",
        ],
        &rows,
    )
}

fn totals_json(t: &UsageTotals) -> serde_json::Value {
    json!({
        "calls": t.calls,
        "input": t.input,
        "output": t.output,
        "cacheRead": t.cache_read,
        "cacheWrite": t.cache_write,
        "cost": t.cost,
    })
}

fn as_json(totals: &UsageByProject, since: Option<&str>) -> serde_json::Value {
    let (projects, grand) = by_project(totals);
    let projects: Vec<serde_json::Value> = projects
        .iter()
        .map(|p| {
            let models: Vec<serde_json::Value> = p
                .models
                .iter()
                .map(|(model, t)| {
                    let mut entry = totals_json(t);
                    entry["model"] = json!(model);
                    entry
                })
                .collect();
            json!({"project": p.project, "models": models, "total": totals_json(&p.total)})
        })
        .collect();
    json!({
        "since": since,
        "currency": "USD",
        "projects": projects,
        "total": totals_json(&grand),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(calls: u64, cost: f64) -> UsageTotals {
        UsageTotals {
            calls,
            input: calls * 100,
            output: calls * 10,
            cost,
            ..UsageTotals::default()
        }
    }

    #[test]
    fn the_table_groups_models_under_their_project_and_sums() {
        let mut totals = UsageByProject::new();
        totals.insert(("/a".into(), "p/m".into()), t(1, 0.5));
        totals.insert(("/a".into(), "p/n".into()), t(2, 0.25));
        totals.insert(("/b".into(), "p/m".into()), t(1, 1.0));
        let table = as_table(&totals);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 6, "{table}");
        assert!(
            lines[1].starts_with("/a") && lines[1].contains("p/m"),
            "{table}"
        );
        assert!(
            lines[2].starts_with(' ') && lines[2].contains("p/n"),
            "{table}"
        );
        assert!(
            lines[3].contains("(all models)") && lines[3].contains("$0.7500"),
            "{table}"
        );
        assert!(lines[4].starts_with("/b"), "{table}");
        assert!(
            lines[5].starts_with("TOTAL") && lines[5].contains("$1.7500"),
            "{table}"
        );
        let json = as_json(&totals, Some("2026-12-01"));
        assert_eq!(json["projects"][0]["total"]["calls"], 3);
        assert_eq!(json["projects"][1]["models"][0]["model"], "p/m");
        assert_eq!(json["total"]["cost"], 1.75);
        assert_eq!(json["since"], "2026-12-01");
        assert_eq!(
            as_table(&UsageByProject::new()),
            "No model calls recorded.\n"
        );
    }
}
