//! Diagnostics as text for the model: one compact line each, with line and column.

use super::{Checked, Diagnostic, FileDiagnostics, Severity};

/// Most diagnostic lines in one text for the model.
const MAX_LINES: usize = 50;

/// One diagnostic on one line: `12:5 error: message [code] (source)`.
fn line(d: &Diagnostic) -> String {
    let message: String = d
        .message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    let code = d
        .code
        .as_ref()
        .map(|c| format!(" [{c}]"))
        .unwrap_or_default();
    format!(
        "{}:{} {}: {message}{code} ({})",
        d.line,
        d.column,
        d.severity.label(),
        d.source
    )
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// What an edit or write appends to its result for the file it changed (shown as
/// `shown`): the errors the change brought (all of them when the file was not checked
/// before), a count of those that were there already, or why no server answered. `None`
/// when there is nothing to say.
pub fn errors_after_write(shown: &str, checked: &Checked, waited_ms: u64) -> Option<String> {
    let errors: Vec<&Diagnostic> = checked
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    let (fresh, old) = match &checked.before {
        Some(before) => split_new(&errors, before),
        None => (errors.clone(), 0),
    };
    let mut out = Vec::new();
    if !fresh.is_empty() {
        let word = if checked.before.is_some() {
            "new error"
        } else {
            "error"
        };
        let mut head = format!(
            "Diagnostics: {} in {shown} after this change",
            plural(fresh.len(), word)
        );
        if old > 0 {
            head.push_str(&format!(
                " ({} from before not listed)",
                plural(old, "more")
            ));
        }
        head.push(':');
        out.push(head);
        for d in fresh.iter().take(MAX_LINES) {
            out.push(line(d));
        }
        if fresh.len() > MAX_LINES {
            out.push(format!("… and {} more", fresh.len() - MAX_LINES));
        }
    } else if old > 0 {
        out.push(format!(
            "Diagnostics: no new errors; {shown} still has {} from before (the diagnostics tool lists them).",
            plural(old, "error")
        ));
    } else if checked.answered.is_empty() && !checked.pending.is_empty() {
        out.push(format!(
            "Diagnostics: {} did not answer within {:.1} s (the diagnostics tool can ask again).",
            checked.pending.join(", "),
            waited_ms as f64 / 1000.0
        ));
    }
    for notice in &checked.notices {
        out.push(format!("Diagnostics: {notice}"));
    }
    (!out.is_empty()).then(|| out.join("\n"))
}

/// The errors `after` has that `before` had not (matched by what they say, not where, since
/// an edit moves lines), and how many it still has from before.
fn split_new<'a>(after: &[&'a Diagnostic], before: &[Diagnostic]) -> (Vec<&'a Diagnostic>, usize) {
    let key = |d: &Diagnostic| {
        (
            d.severity,
            d.message.clone(),
            d.code.clone(),
            d.source.clone(),
        )
    };
    let mut left: Vec<_> = before.iter().map(key).collect();
    let mut fresh = Vec::new();
    let mut old = 0;
    for d in after {
        match left.iter().position(|k| *k == key(d)) {
            Some(i) => {
                left.swap_remove(i);
                old += 1;
            }
            None => fresh.push(*d),
        }
    }
    (fresh, old)
}

/// Diagnostics of several files for the `diagnostics` tool, grouped by file, worst first
/// within each file's position order; `shown` says how a path is written.
pub fn render_report(
    files: &[FileDiagnostics],
    min_severity: Severity,
    shown: impl Fn(&std::path::Path) -> String,
) -> String {
    let mut out = Vec::new();
    let mut lines = 0;
    let mut left = 0;
    let mut total = (0, 0, 0);
    for file in files {
        let kept: Vec<&Diagnostic> = file
            .diagnostics
            .iter()
            .filter(|d| d.severity <= min_severity)
            .collect();
        if kept.is_empty() {
            continue;
        }
        let (e, w, o) = FileDiagnostics {
            path: file.path.clone(),
            diagnostics: kept.iter().map(|d| (*d).clone()).collect(),
        }
        .counts();
        total = (total.0 + e, total.1 + w, total.2 + o);
        out.push(format!("{} ({})", shown(&file.path), summary(e, w, o)));
        for d in kept {
            if lines < MAX_LINES {
                out.push(format!("  {}", line(d)));
                lines += 1;
            } else {
                left += 1;
            }
        }
    }
    if out.is_empty() {
        return "No diagnostics.".to_string();
    }
    if left > 0 {
        out.push(format!(
            "… and {left} more (ask for one file to see all of its)"
        ));
    }
    out.push(format!("Total: {}", summary(total.0, total.1, total.2)));
    out.join("\n")
}

fn summary(errors: usize, warnings: usize, others: usize) -> String {
    let mut parts = vec![plural(errors, "error"), plural(warnings, "warning")];
    if others > 0 {
        parts.push(format!("{others} other"));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn diag(line: u32, severity: Severity, message: &str) -> Diagnostic {
        Diagnostic {
            line,
            column: 5,
            end_line: line,
            end_column: 6,
            severity,
            message: message.to_string(),
            source: "ruff".to_string(),
            code: Some("F821".to_string()),
        }
    }

    #[test]
    fn after_write_lists_errors_only() {
        let checked = Checked {
            diagnostics: vec![
                diag(3, Severity::Error, "Undefined name `y`"),
                diag(4, Severity::Warning, "unused"),
                diag(9, Severity::Error, "two\n  lines\x1b[31m"),
            ],
            answered: vec!["ruff".into()],
            ..Checked::default()
        };
        assert_eq!(
            errors_after_write("a.py", &checked, 3000).unwrap(),
            "Diagnostics: 2 errors in a.py after this change:\n\
             3:5 error: Undefined name `y` [F821] (ruff)\n\
             9:5 error: two / lines[31m [F821] (ruff)"
        );
        let clean = Checked {
            answered: vec!["ruff".into()],
            ..Checked::default()
        };
        assert_eq!(errors_after_write("a.py", &clean, 3000), None);
        let slow = Checked {
            pending: vec!["pyright".into()],
            notices: vec!["pylsp could not start: boom".into()],
            ..Checked::default()
        };
        assert_eq!(
            errors_after_write("a.py", &slow, 2500).unwrap(),
            "Diagnostics: pyright did not answer within 2.5 s (the diagnostics tool can ask again).\n\
             Diagnostics: pylsp could not start: boom"
        );
    }

    #[test]
    fn after_write_tells_new_errors_from_old_ones() {
        let old = diag(3, Severity::Error, "Undefined name `y`");
        let moved = Diagnostic {
            line: 5,
            ..old.clone()
        };
        let fresh = diag(9, Severity::Error, "Undefined name `z`");
        let checked = Checked {
            diagnostics: vec![moved.clone(), fresh.clone()],
            answered: vec!["ruff".into()],
            before: Some(vec![old.clone()]),
            ..Checked::default()
        };
        assert_eq!(
            errors_after_write("a.py", &checked, 3000).unwrap(),
            "Diagnostics: 1 new error in a.py after this change (1 more from before not listed):\n\
             9:5 error: Undefined name `z` [F821] (ruff)"
        );
        let same = Checked {
            diagnostics: vec![moved],
            answered: vec!["ruff".into()],
            before: Some(vec![old.clone(), fresh]),
            ..Checked::default()
        };
        assert_eq!(
            errors_after_write("a.py", &same, 3000).unwrap(),
            "Diagnostics: no new errors; a.py still has 1 error from before (the diagnostics tool lists them)."
        );
    }

    #[test]
    fn report_groups_by_file_and_filters() {
        let files = vec![
            FileDiagnostics {
                path: PathBuf::from("/p/a.py"),
                diagnostics: vec![
                    diag(1, Severity::Error, "bad"),
                    diag(2, Severity::Hint, "meh"),
                ],
            },
            FileDiagnostics {
                path: PathBuf::from("/p/b.py"),
                diagnostics: vec![diag(7, Severity::Warning, "hmm")],
            },
        ];
        let shown = |p: &Path| p.strip_prefix("/p").unwrap().display().to_string();
        assert_eq!(
            render_report(&files, Severity::Warning, shown),
            "a.py (1 error, 0 warnings)\n  1:5 error: bad [F821] (ruff)\n\
             b.py (0 errors, 1 warning)\n  7:5 warning: hmm [F821] (ruff)\n\
             Total: 1 error, 1 warning"
        );
        assert_eq!(
            render_report(&files[1..], Severity::Error, shown),
            "No diagnostics."
        );
    }
}
