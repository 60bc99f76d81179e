//! Diagnostics in the workspace: what each project's language servers report (through
//! `_march/diagnostics` from its runners), counted in the status bar and listed in a
//! diagnostics pane, from which a diagnostic opens in `$EDITOR` or in the diff pane.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use march_panes::diagnostics::{Counts, DiagnosticItem, DiagnosticsView, FileItems, Severity};
use march_runner::client::{Diagnostic, DiagnosticsNotification, HostEvent};

use super::Workspace;
use super::editor::Editing;
use super::layout::{Axis, PaneId};
use super::pane::Pane;

/// Notices kept per project.
const NOTICES_KEPT: usize = 5;

/// What a project's language servers reported last.
#[derive(Debug, Default, Clone)]
pub struct ProjectDiagnostics {
    /// Per file, its current diagnostics (files without any are dropped).
    files: BTreeMap<PathBuf, Vec<Diagnostic>>,
    /// The latest notices (a server missing, crashed or disabled), oldest first.
    notices: Vec<String>,
}

impl ProjectDiagnostics {
    fn items(&self) -> Vec<FileItems> {
        self.files
            .iter()
            .map(|(path, list)| FileItems {
                path: path.clone(),
                items: list.iter().map(item).collect(),
            })
            .collect()
    }
}

fn item(d: &Diagnostic) -> DiagnosticItem {
    use march_runner::client::Severity as S;
    DiagnosticItem {
        line: d.line,
        column: d.column,
        severity: match d.severity {
            S::Error => Severity::Error,
            S::Warning => Severity::Warning,
            S::Information => Severity::Information,
            S::Hint => Severity::Hint,
        },
        message: d.message.clone(),
        source: d.source.clone(),
        code: d.code.clone(),
    }
}

impl Workspace {
    /// A runner reported diagnostics (or a notice) for a project. Whether a diagnostics pane
    /// or the status bar shows something new.
    pub(super) fn diagnostics_event(&mut self, n: DiagnosticsNotification) -> bool {
        let project = self.reviews.diagnostics_of(&n.project);
        match n.event {
            HostEvent::Diagnostics(file) => {
                // Every runner of the project forwards the same news: skip what is known.
                let known = project.files.get(&file.path);
                if known.map_or(file.diagnostics.is_empty(), |d| *d == file.diagnostics) {
                    return false;
                }
                if file.diagnostics.is_empty() {
                    project.files.remove(&file.path);
                } else {
                    project.files.insert(file.path, file.diagnostics);
                }
            }
            HostEvent::Notice { message } => {
                if project.notices.contains(&message) {
                    return false;
                }
                self.status_note = Some(format!("language servers: {message}"));
                project.notices.push(message);
                let excess = project.notices.len().saturating_sub(NOTICES_KEPT);
                project.notices.drain(..excess);
            }
        }
        let (items, notices) = (project.items(), project.notices.clone());
        for pane in self.panes.values_mut() {
            if let Pane::Diagnostics { project, view } = pane
                && *project == n.project
            {
                view.set_files(items.clone());
                view.set_notices(notices.clone());
            }
        }
        true
    }

    /// Errors, warnings and others the language servers report for `project`.
    /// Called for every frame's status bar: counts in place, copying nothing.
    pub fn diagnostic_counts(&self, project: &Path) -> Counts {
        use march_runner::client::Severity as S;
        let mut counts = Counts::default();
        let all = self.reviews.diagnostics(project).into_iter();
        for d in all.flat_map(|p| p.files.values().flatten()) {
            match d.severity {
                S::Error => counts.errors += 1,
                S::Warning => counts.warnings += 1,
                S::Information | S::Hint => counts.others += 1,
            }
        }
        counts
    }

    /// Opens the diagnostics pane of the focused pane's project below it, or focuses the one
    /// already open.
    pub fn open_diagnostics(&mut self) {
        let project = self.focused_project();
        let existing =
            self.find_pane(|p| matches!(p, Pane::Diagnostics { project: p, .. } if *p == project));
        self.focus_or_open(existing, Axis::Vertical, |ws, pane| {
            let view = ws.diagnostics_view(&project);
            ws.panes.insert(pane, Pane::Diagnostics { project, view });
        });
    }

    /// A diagnostics view of `project`, showing what its servers reported so far.
    pub(super) fn diagnostics_view(&self, project: &Path) -> DiagnosticsView {
        let title = format!("diagnostics · {}", super::project_name(project));
        let mut view = DiagnosticsView::new(&title, project);
        if let Some(known) = self.reviews.diagnostics(project) {
            view.set_files(known.items());
            view.set_notices(known.notices.clone());
        }
        view
    }

    /// The view of diagnostics pane `id`.
    pub fn diagnostics_mut(&mut self, id: PaneId) -> Option<&mut DiagnosticsView> {
        match self.panes.get_mut(&id)? {
            Pane::Diagnostics { view, .. } => Some(view),
            _ => None,
        }
    }

    /// Opens the file of diagnostics pane `id`'s selected diagnostic at its line in
    /// `$VISUAL` / `$EDITOR` (vi when neither is set), in a shell pane beside it. What was
    /// opened, or why nothing was.
    pub fn edit_diagnostic(&mut self, id: PaneId) -> Result<String, String> {
        let Some(Pane::Diagnostics { project, view }) = self.panes.get(&id) else {
            return Err("not a diagnostics pane".to_string());
        };
        let (path, item) = view.selected_item().ok_or("no diagnostic selected")?;
        let (project, path, line) = (project.clone(), path.to_path_buf(), item.line);
        let shown = path.strip_prefix(&project).unwrap_or(&path).display();
        let done = format!("editing {shown} at line {line}");
        let editing = Editing::Diagnostic(path.clone());
        self.open_editor(&project, &path, Some(line), editing)?;
        Ok(done)
    }

    /// An editor run for a diagnostic in `file` of `project` is done: the file is checked
    /// again and the project's uncommitted changes diffed again.
    pub(super) fn editor_done(&mut self, project: &Path, file: &Path) {
        self.refresh_diagnostics_of(project, file);
        self.refresh_uncommitted(project);
    }

    /// Shows the selected diagnostic's file in the diff pane of a session that changed it
    /// (the focused tab's sessions first). Why not, when no session did.
    pub fn diff_of_diagnostic(&mut self, id: PaneId) -> Result<(), String> {
        let Some(Pane::Diagnostics { view, .. }) = self.panes.get(&id) else {
            return Err("not a diagnostics pane".to_string());
        };
        let (path, _) = view.selected_item().ok_or("no diagnostic selected")?;
        let path = path.to_path_buf();
        let key = self
            .session_that_changed(&path)
            .ok_or_else(|| format!("no session changed {}", path.display()))?;
        self.open_diff_of(key, Some(&path));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::changes::FileChange;
    use crate::workspace::pane::PaneKind;
    use crate::workspace::test_workspace;
    use march_panes::theme::Theme;
    use march_runner::client::FileDiagnostics;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    fn diag(line: u32, severity: march_runner::client::Severity) -> Diagnostic {
        Diagnostic {
            line,
            column: 1,
            end_line: line,
            end_column: 2,
            severity,
            message: format!("problem on {line}"),
            source: "ruff".to_string(),
            code: None,
        }
    }

    fn file(project: &Path, name: &str, diagnostics: Vec<Diagnostic>) -> DiagnosticsNotification {
        DiagnosticsNotification {
            project: project.to_path_buf(),
            event: HostEvent::Diagnostics(FileDiagnostics {
                path: project.join(name),
                diagnostics,
            }),
        }
    }

    fn screen(ws: &mut Workspace) -> String {
        let area = Rect::new(0, 0, 80, 20);
        let mut buf = Buffer::empty(area);
        let theme = Theme::default();
        let hl = march_panes::highlight::Highlighter::new();
        ws.render(area, &mut buf, &theme, &hl, false);
        (0..area.height)
            .map(|y| {
                (0..area.width)
                    .map(|x| buf[(x, y)].symbol())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn reports_are_kept_per_project_counted_and_shown() {
        use march_runner::client::Severity as S;
        let project = Path::new("/work/p");
        let (mut ws, _rx) = test_workspace(project);
        assert!(ws.diagnostics_event(file(
            project,
            "a.py",
            vec![diag(3, S::Error), diag(1, S::Warning)]
        )));
        // The project's second runner says the same: nothing new.
        assert!(!ws.diagnostics_event(file(
            project,
            "a.py",
            vec![diag(3, S::Error), diag(1, S::Warning)]
        )));
        assert!(ws.diagnostics_event(file(project, "b.py", vec![diag(9, S::Error)])));
        assert_eq!(
            ws.diagnostic_counts(project),
            Counts {
                errors: 2,
                warnings: 1,
                others: 0
            }
        );
        assert_eq!(
            ws.diagnostic_counts(Path::new("/elsewhere")),
            Counts::default()
        );

        ws.open_diagnostics();
        let pane = ws.focused();
        assert_eq!(ws.pane_kind(pane), Some(PaneKind::Diagnostics));
        assert_eq!(ws.focused_project(), project);
        let text = screen(&mut ws);
        assert!(text.contains("diagnostics · p · 2 E 1 W 0 other"), "{text}");
        assert!(text.contains("a.py  1 E  1 W"), "{text}");
        assert!(text.contains("problem on 9"), "{text}");

        // A fix clears b.py; a notice arrives, once.
        assert!(ws.diagnostics_event(file(project, "b.py", vec![])));
        assert!(!ws.diagnostics_event(file(project, "b.py", vec![])));
        let notice = DiagnosticsNotification {
            project: project.to_path_buf(),
            event: HostEvent::Notice {
                message: "pyright could not start".into(),
            },
        };
        assert!(ws.diagnostics_event(notice.clone()));
        assert!(!ws.diagnostics_event(notice));
        // It also shows once in the status bar.
        assert_eq!(
            ws.take_status_note().as_deref(),
            Some("language servers: pyright could not start")
        );
        assert_eq!(ws.take_status_note(), None);
        let text = screen(&mut ws);
        assert!(!text.contains("problem on 9"), "{text}");
        assert!(text.contains("! pyright could not start"), "{text}");
        assert_eq!(ws.diagnostic_counts(project).errors, 1);
        // Opening it again focuses the same pane.
        let count = ws.pane_count();
        ws.focus_number(0);
        ws.open_diagnostics();
        assert_eq!((ws.focused(), ws.pane_count()), (pane, count));
    }

    #[tokio::test]
    async fn a_diagnostic_opens_the_diff_of_the_session_that_changed_its_file() {
        use agent_client_protocol::v1::schema::SessionId;
        use march_runner::client::Severity as S;
        let project = Path::new("/work/q");
        let (mut ws, mut bus) = test_workspace(project);
        let key = ws.focused_session().unwrap();
        ws.focused_slot().unwrap().session_id = Some(SessionId::new("s9"));
        ws.changes.record(
            "s9",
            FileChange::new("c1", &project.join("a.py"), Some("x\n"), "y\n"),
        );
        ws.changes.record(
            "s9",
            FileChange::new("c2", &project.join("z.py"), Some("1\n"), "2\n"),
        );
        ws.diagnostics_event(file(project, "z.py", vec![diag(1, S::Error)]));
        ws.diagnostics_event(file(project, "other.py", vec![diag(2, S::Error)]));
        ws.open_diagnostics();
        let pane = ws.focused();
        // Nothing selected yet is the first item: other.py, which no session changed.
        assert_eq!(
            ws.diff_of_diagnostic(pane).unwrap_err(),
            "no session changed /work/q/other.py"
        );
        ws.diagnostics_mut(pane).unwrap().move_selection(1);
        ws.diff_of_diagnostic(pane).unwrap();
        bus.settle(&mut ws).await;
        let diff = ws.focused();
        assert_eq!(ws.pane_kind(diff), Some(PaneKind::Diff));
        assert_eq!(ws.pane(diff).and_then(Pane::session), Some(key));
        assert_eq!(ws.diff_mut(diff).unwrap().selected().unwrap().path, "z.py");
    }
}
