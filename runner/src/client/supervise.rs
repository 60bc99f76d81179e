//! A runner kept alive: when it crashes (or hangs up) it is started again with exponential
//! backoff, re-initialized, and its open sessions are loaded (or resumed) again. Each step
//! is reported on the event stream.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::connection::{ConnectOptions, Connection, OpenSession};
use super::events::{EventReceiver, EventSender, RunnerEvent};
use super::process::{RunnerCommand, RunnerProcess};
use super::{ClientError, RunnerClient};
use march_core::restart::{RestartCounter, RestartDecision, RestartPolicy};

/// How long a runner being stopped gets to exit on its own before its group is killed.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// Where the supervised runner stands.
#[derive(Debug, Clone)]
enum State {
    /// Running and initialized, its sessions reopened.
    Ready {
        connection: Arc<Connection>,
        pid: u32,
    },
    /// Crashed; being restarted.
    Restarting,
    /// Gave up restarting.
    GaveUp { attempts: u32, reason: String },
    /// Shut down by its owner.
    Stopped,
}

/// A runner restarted with backoff when it crashes. Dropping it kills the runner.
#[derive(Debug)]
pub struct SupervisedRunner {
    state: watch::Receiver<State>,
    /// Dropping (or sending on) this stops the supervisor, which kills the runner.
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl SupervisedRunner {
    /// Starts the runner and initializes it; a failure here is returned, not retried.
    pub async fn start(
        command: RunnerCommand,
        options: ConnectOptions,
        policy: RestartPolicy,
    ) -> Result<(SupervisedRunner, EventReceiver), ClientError> {
        let (events, receiver) = mpsc::unbounded_channel();
        let (process, connection) = start_runner(&command, &options, &events).await?;
        let pid = process.id();
        let connection = Arc::new(connection);
        let (state_tx, state) = watch::channel(State::Ready {
            connection: Arc::clone(&connection),
            pid,
        });
        let (stop, stop_rx) = oneshot::channel();
        let supervisor = Supervisor {
            command,
            options,
            policy,
            events,
            state: state_tx,
            stop: stop_rx,
        };
        let task = tokio::spawn(supervisor.run(process, connection));
        Ok((
            SupervisedRunner {
                state,
                stop: Some(stop),
                task: Some(task),
            },
            receiver,
        ))
    }

    /// The live connection, waiting while a restart is under way.
    pub async fn connection(&self) -> Result<Arc<Connection>, ClientError> {
        let mut state = self.state.clone();
        let settled = state
            .wait_for(|state| !matches!(state, State::Restarting))
            .await
            .map(|state| state.clone());
        match settled {
            Ok(State::Ready { connection, .. }) => Ok(connection),
            Ok(State::GaveUp { attempts, reason }) => Err(ClientError::GaveUp { attempts, reason }),
            Ok(State::Stopped | State::Restarting) | Err(_) => Err(ClientError::ShutDown),
        }
    }

    /// The live connection right now, if the runner is up.
    pub fn current(&self) -> Option<Arc<Connection>> {
        match &*self.state.borrow() {
            State::Ready { connection, .. } => Some(Arc::clone(connection)),
            _ => None,
        }
    }

    /// The process id (and group id) of the live runner, if it is up.
    pub fn pid(&self) -> Option<u32> {
        match &*self.state.borrow() {
            State::Ready { pid, .. } => Some(*pid),
            _ => None,
        }
    }

    /// Stops supervising, closes the connection and kills the runner; waits until it is
    /// reaped.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for SupervisedRunner {
    fn drop(&mut self) {
        // The dropped stop sender wakes the supervisor, which kills and reaps the runner.
        drop(self.stop.take());
    }
}

/// Spawns and initializes one runner, reporting its events to `events`.
async fn start_runner(
    command: &RunnerCommand,
    options: &ConnectOptions,
    events: &EventSender,
) -> Result<(RunnerProcess, Connection), ClientError> {
    let client = RunnerClient::spawn_with_events(command, options, events.clone()).await?;
    let RunnerClient {
        connection,
        process,
    } = client;
    Ok((process, connection))
}

/// Loads (or resumes) each session again on a fresh connection, reporting each outcome.
async fn reopen_all(connection: &Connection, sessions: &[OpenSession], events: &EventSender) {
    for session in sessions {
        let result = connection.reopen(session).await;
        if let Err(error) = &result {
            tracing::warn!(session = %session.session_id, "reopening failed: {error}");
        }
        let _ = events.send(RunnerEvent::SessionReopened {
            session_id: session.session_id.clone(),
            error: result.err().map(|error| error.to_string()),
        });
    }
}

/// The supervisor task's state.
struct Supervisor {
    command: RunnerCommand,
    options: ConnectOptions,
    policy: RestartPolicy,
    events: EventSender,
    state: watch::Sender<State>,
    stop: oneshot::Receiver<()>,
}

/// Why the supervisor's wait ended.
enum Wake {
    Stop,
    Ended,
}

impl Supervisor {
    async fn run(mut self, mut process: RunnerProcess, mut connection: Arc<Connection>) {
        let mut counter = RestartCounter::new(self.policy);
        loop {
            let up_since = Instant::now();
            let wake = tokio::select! {
                _ = &mut self.stop => Wake::Stop,
                _ = process.wait() => Wake::Ended,
                // Hung up while alive: as broken as a crash.
                () = connection.closed() => Wake::Ended,
            };
            if let Wake::Stop = wake {
                self.stopped(connection, process).await;
                return;
            }
            self.state.send_replace(State::Restarting);
            process.kill();
            let exit = process.wait().await;
            tracing::warn!(pid = process.id(), %exit, "runner ended; restarting");
            let sessions = connection.open_sessions();
            drop(connection);
            drop(process);
            let decision = counter.crashed(up_since.elapsed());
            let restarted = match self
                .restart(&mut counter, decision, format!("the runner {exit}"))
                .await
            {
                Some(restarted) => restarted,
                None => return,
            };
            let attempt;
            (process, connection, attempt) = restarted;
            let _ = self.events.send(RunnerEvent::Restarted {
                attempt,
                pid: process.id(),
            });
            let reopen = reopen_all(&connection, &sessions, &self.events);
            let stopped = tokio::select! {
                _ = &mut self.stop => true,
                () = reopen => false,
            };
            if stopped {
                self.stopped(connection, process).await;
                return;
            }
            self.state.send_replace(State::Ready {
                connection: Arc::clone(&connection),
                pid: process.id(),
            });
        }
    }

    /// Shut down by the owner: close the connection (the runner's stdin, when no call
    /// still holds it), give the runner a moment to finish its writes and exit, then kill
    /// the group and reap.
    async fn stopped(&self, connection: Arc<Connection>, mut process: RunnerProcess) {
        self.state.send_replace(State::Stopped);
        drop(connection);
        if tokio::time::timeout(STOP_GRACE, process.wait())
            .await
            .is_err()
        {
            process.kill();
            process.wait().await;
        }
    }

    /// Starts the runner again after the backoff, as often as the counter allows. `None`
    /// when stopped or given up (the state says which).
    async fn restart(
        &mut self,
        counter: &mut RestartCounter,
        mut decision: RestartDecision,
        mut reason: String,
    ) -> Option<(RunnerProcess, Arc<Connection>, u32)> {
        loop {
            let (wait, attempt) = match decision {
                RestartDecision::RestartAfter { wait, attempt } => (wait, attempt),
                RestartDecision::GiveUp { attempts } => {
                    tracing::error!(attempts, "runner keeps crashing; giving up: {reason}");
                    let _ = self.events.send(RunnerEvent::GaveUp {
                        attempts,
                        reason: reason.clone(),
                    });
                    self.state.send_replace(State::GaveUp { attempts, reason });
                    return None;
                }
            };
            tokio::select! {
                _ = &mut self.stop => {
                    self.state.send_replace(State::Stopped);
                    return None;
                }
                () = tokio::time::sleep(wait) => {}
            }
            match start_runner(&self.command, &self.options, &self.events).await {
                Ok((process, connection)) => return Some((process, Arc::new(connection), attempt)),
                Err(error) => {
                    tracing::warn!(attempt, "restarting the runner failed: {error}");
                    reason = error.to_string();
                    decision = counter.start_failed();
                }
            }
        }
    }
}
