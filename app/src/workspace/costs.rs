//! What each project's sessions cost, in total and today, read from the transcripts off the
//! UI loop for the supervisor view: after each turn and when the view opens.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use march_core::paths::MarchPaths;
use march_core::session::march_session_dir;
use march_core::usage::{UsageIndex, UsageTotals, local_day_start_ms};
use parking_lot::Mutex;

use super::jobs::{JobDone, Jobs};

/// One project's cost: all of it, and today's (local day).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProjectCost {
    /// Every call of every session.
    pub total: UsageTotals,
    /// Calls made since local midnight.
    pub today: UsageTotals,
}

/// The costs of the workspace's projects, as last read.
#[derive(Default)]
pub struct ProjectCosts {
    /// Files read so far; the job holds it while it reads.
    index: Arc<Mutex<UsageIndex>>,
    by_project: BTreeMap<PathBuf, ProjectCost>,
    /// A read is running.
    reading: bool,
    /// Asked again while one ran: read once more when it is back.
    again: Option<Vec<PathBuf>>,
}

impl ProjectCosts {
    /// Read the costs of `projects` again, off the loop; a request while a read runs is kept
    /// for when it is back, so reads never pile up.
    pub fn refresh(&mut self, jobs: &Jobs, paths: Option<&MarchPaths>, projects: Vec<PathBuf>) {
        let Some(paths) = paths else {
            return;
        };
        if self.reading {
            self.again = Some(projects);
            return;
        }
        self.reading = true;
        let index = self.index.clone();
        let dirs: Vec<PathBuf> = projects
            .iter()
            .map(|p| march_session_dir(paths, p))
            .collect();
        jobs.blocking(move || {
            let mut index = index.lock();
            index.refresh(&dirs);
            let today = local_day_start_ms(None).ok();
            let costs = projects
                .into_iter()
                .map(|project| {
                    let name = project.to_string_lossy().into_owned();
                    let cost = ProjectCost {
                        total: index.project_total(&name, None),
                        today: today.map_or_else(UsageTotals::default, |since| {
                            index.project_total(&name, Some(since))
                        }),
                    };
                    (project, cost)
                })
                .collect();
            JobDone::CostsRead(costs)
        });
    }

    /// A read came back; returns the projects to read again, when that was asked meanwhile.
    pub fn read(&mut self, costs: Vec<(PathBuf, ProjectCost)>) -> Option<Vec<PathBuf>> {
        self.reading = false;
        self.by_project = costs.into_iter().collect();
        self.again.take()
    }

    /// What `project` cost, once read.
    pub fn of(&self, project: &PathBuf) -> Option<ProjectCost> {
        self.by_project.get(project).copied()
    }

    /// Today's cost over every project read.
    pub fn today(&self) -> UsageTotals {
        let mut sum = UsageTotals::default();
        for cost in self.by_project.values() {
            sum.merge(&cost.today);
        }
        sum
    }
}
