//! Confining the commands an agent runs with the kernel's Landlock LSM: `read-only` (no
//! writes but to devices such as `/dev/null`), `workspace-write` (writes under the project
//! and the temporary directories) and `full` (no confinement). Network, when off, is TCP
//! `connect` and `bind` refused (Landlock ABI 4, Linux 6.7); Landlock does not confine UDP.
//!
//! A command is confined by a launcher, `march sandbox --mode M --write DIR -- PROGRAM…`
//! (the same binary): it takes the rules on itself ([`confine_and_exec`]) and then becomes
//! the program, which cannot undo them. March has no unsafe code, so nothing runs between
//! fork and exec. The executor checks the policy first ([`SandboxPolicy::prepare`]), so a
//! mode the kernel cannot enforce is an error that says so, never a silent run without it.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetStatus, path_beneath_rules,
};

/// The newest Landlock ABI whose file rights are asked for (best effort past the first).
const FS_ABI: ABI = ABI::V5;
/// Device files any command may write (output thrown away, terminals).
const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// How far an agent's commands are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Nothing may be written but devices.
    ReadOnly,
    /// Writes under the project and the temporary directories only.
    #[default]
    WorkspaceWrite,
    /// No confinement.
    Full,
}

impl SandboxMode {
    /// Its name in the config and the pane (`workspace-write`).
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::Full => "full",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SandboxMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-only" => Ok(SandboxMode::ReadOnly),
            "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
            "full" => Ok(SandboxMode::Full),
            other => Err(format!(
                "unknown sandbox mode {other:?} (read-only, workspace-write or full)"
            )),
        }
    }
}

/// Why a mode cannot be enforced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The kernel has no Landlock (too old, or not enabled).
    #[error(
        "this kernel cannot confine commands (no Landlock: Linux 5.13 or later with it enabled)"
    )]
    Unsupported,
    /// Network confinement needs Landlock ABI 4.
    #[error(
        "this kernel cannot keep commands off the network (Landlock ABI 4, Linux 6.7, is needed)"
    )]
    NoNetworkRules,
    /// Confinement was switched off in the config (`[sandbox] mechanism = "none"`).
    #[error("confinement is switched off ([sandbox] mechanism = \"none\")")]
    Disabled,
    /// A rule could not be made.
    #[error("the sandbox's rules could not be made: {0}")]
    Rules(String),
}

/// What confines a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// The mode.
    pub mode: SandboxMode,
    /// Where `workspace-write` lets commands write (the project; the temporary
    /// directories are added).
    pub writable: Vec<PathBuf>,
    /// Whether commands may open TCP connections.
    pub network: bool,
    /// Whether the kernel's mechanism is used (`false` says every mode is unenforceable).
    pub enforce: bool,
    /// The program that confines itself and runs the command (`march`, whose `sandbox`
    /// command reads [`Self::launch`]'s arguments).
    pub launcher: Option<PathBuf>,
}

/// A session's sandbox, shared by its executors and its permission gate: the policy (whose
/// mode the user may change while the session runs) and the tool calls the user let run
/// outside it, once each.
#[derive(Debug, Clone)]
pub struct Sandbox {
    shared: Arc<SandboxShared>,
}

#[derive(Debug)]
struct SandboxShared {
    policy: RwLock<SandboxPolicy>,
    /// Ids of calls let out and not yet run: a release is used up by the call's command, so
    /// an id the model repeats later is confined again.
    released: Mutex<HashSet<String>>,
    /// Ids of calls whose command ran outside (their failure note must not blame the
    /// sandbox); read once, by the note.
    ran_outside: Mutex<HashSet<String>>,
}

impl From<SandboxPolicy> for Sandbox {
    fn from(policy: SandboxPolicy) -> Self {
        Sandbox {
            shared: Arc::new(SandboxShared {
                policy: RwLock::new(policy),
                released: Mutex::new(HashSet::new()),
                ran_outside: Mutex::new(HashSet::new()),
            }),
        }
    }
}

impl Sandbox {
    /// The current mode.
    pub fn mode(&self) -> SandboxMode {
        self.shared.policy.read().mode
    }

    /// Switch the mode for commands started from now on.
    pub fn set_mode(&self, mode: SandboxMode) {
        self.shared.policy.write().mode = mode;
    }

    /// Let the tool call `call_id` run its command outside the sandbox, once (the user
    /// allowed it). A call without an id cannot be told apart from another: never let out.
    pub fn release(&self, call_id: &str) {
        if !call_id.is_empty() {
            self.shared.released.lock().insert(call_id.to_string());
        }
    }

    /// The policy a command of the tool call `call_id` runs under: `full` for a call let
    /// out, whose release this uses up.
    pub fn policy_for(&self, call_id: Option<&str>) -> SandboxPolicy {
        let mut policy = self.shared.policy.read().clone();
        if let Some(id) = call_id.filter(|id| self.shared.released.lock().remove(*id)) {
            policy.mode = SandboxMode::Full;
            self.shared.ran_outside.lock().insert(id.to_string());
        }
        policy
    }

    /// Why the current mode cannot be enforced here, if it cannot.
    pub fn unenforceable(&self) -> Option<SandboxError> {
        self.shared.policy.read().prepare().err()
    }

    /// Whether commands may open TCP connections.
    pub fn network(&self) -> bool {
        self.shared.policy.read().network
    }

    /// The note for a failed command of the call `call_id` (see [`denial_note`]).
    pub fn failure_note(&self, call_id: Option<&str>, output: &str) -> Option<String> {
        if call_id.is_some_and(|id| self.shared.ran_outside.lock().remove(id)) {
            return None;
        }
        let policy = self.shared.policy.read().clone();
        denial_note(policy.mode, policy.network, output)
    }
}

/// A policy made into rules, ready for a child to take on.
pub struct Prepared {
    ruleset: Option<RulesetCreated>,
}

impl fmt::Debug for Prepared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prepared")
            .field("confines", &self.ruleset.is_some())
            .finish()
    }
}

impl SandboxPolicy {
    /// `mode` for a project at `root`, network off, enforced.
    pub fn new(mode: SandboxMode, root: &Path) -> SandboxPolicy {
        SandboxPolicy {
            mode,
            writable: vec![root.to_path_buf()],
            network: false,
            enforce: true,
            launcher: None,
        }
    }

    /// The launcher and its arguments up to the program to run (which follows them), for
    /// a confining mode; `None` for `full` or without a launcher.
    pub fn launch(&self) -> Option<(PathBuf, Vec<std::ffi::OsString>)> {
        if self.mode == SandboxMode::Full {
            return None;
        }
        let launcher = self.launcher.clone()?;
        let mut args: Vec<std::ffi::OsString> =
            vec!["sandbox".into(), "--mode".into(), self.mode.as_str().into()];
        for dir in &self.writable {
            args.push("--write".into());
            args.push(dir.as_os_str().to_os_string());
        }
        if self.network {
            args.push("--network".into());
        }
        args.push("--".into());
        Some((launcher, args))
    }

    /// Makes the rules (in the parent: this opens the directories the rules name).
    pub fn prepare(&self) -> Result<Prepared, SandboxError> {
        if self.mode == SandboxMode::Full {
            return Ok(Prepared { ruleset: None });
        }
        if !self.enforce {
            return Err(SandboxError::Disabled);
        }
        let rules = |e: landlock::RulesetError| SandboxError::Rules(e.to_string());
        let mut ruleset = landlock::Ruleset::default()
            // The first ABI's rights are the least a confinement is.
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(ABI::V1))
            .map_err(|_| SandboxError::Unsupported)?
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(FS_ABI))
            .map_err(rules)?;
        if !self.network {
            ruleset = ruleset
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessNet::from_all(ABI::V4))
                .map_err(|_| SandboxError::NoNetworkRules)?;
        }
        let mut writable: Vec<PathBuf> = Vec::new();
        if self.mode == SandboxMode::WorkspaceWrite {
            writable.extend(self.writable.iter().cloned());
            writable.push(std::env::temp_dir());
            writable.push(PathBuf::from("/tmp"));
            writable.push(PathBuf::from("/var/tmp"));
        }
        writable.retain(|p| p.exists());
        let devices: Vec<&str> = DEVICES
            .iter()
            .copied()
            .filter(|d| Path::new(d).exists())
            .collect();
        let created = ruleset
            .create()
            .map_err(|_| SandboxError::Unsupported)?
            .add_rules(path_beneath_rules(["/"], AccessFs::from_read(FS_ABI)))
            .map_err(rules)?
            .add_rules(path_beneath_rules(&writable, AccessFs::from_all(FS_ABI)))
            .map_err(rules)?
            .add_rules(path_beneath_rules(
                &devices,
                AccessFs::from_read(FS_ABI) | AccessFs::from_write(FS_ABI),
            ))
            .map_err(rules)?;
        Ok(Prepared {
            ruleset: Some(created),
        })
    }
}

impl Prepared {
    /// Confines the calling process and what it runs from now on.
    pub fn enforce(mut self) -> Result<(), SandboxError> {
        let Some(ruleset) = self.ruleset.take() else {
            return Ok(());
        };
        match ruleset.restrict_self() {
            Ok(status) if status.ruleset != RulesetStatus::NotEnforced => Ok(()),
            Ok(_) => Err(SandboxError::Unsupported),
            Err(e) => Err(SandboxError::Rules(e.to_string())),
        }
    }
}

/// Confines this process by `policy`, then becomes `program` with `args`; returns only on
/// failure, saying why.
pub fn confine_and_exec(
    policy: &SandboxPolicy,
    program: &std::ffi::OsStr,
    args: &[std::ffi::OsString],
) -> String {
    use std::os::unix::process::CommandExt as _;
    if let Err(e) = policy.prepare().and_then(Prepared::enforce) {
        return e.to_string();
    }
    let error = std::process::Command::new(program).args(args).exec();
    format!("cannot run {}: {error}", program.to_string_lossy())
}

/// A note for the model and the user when a confined command failed in a way the sandbox
/// may have caused; `None` when its output shows no refusal.
pub fn denial_note(mode: SandboxMode, network: bool, output: &str) -> Option<String> {
    if mode == SandboxMode::Full {
        return None;
    }
    let refused = [
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
    ]
    .iter()
    .any(|words| output.contains(words));
    if !refused {
        return None;
    }
    let writes = match mode {
        SandboxMode::ReadOnly => "no writes",
        _ => "writes only under the project and the temporary directories",
    };
    let net = if network { "" } else { " and no network" };
    Some(format!(
        "[The command ran in the {mode} sandbox ({writes}{net}); the refusal above is likely \
         the sandbox's.]"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_read_and_print_by_their_names() {
        for mode in [
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite,
            SandboxMode::Full,
        ] {
            assert_eq!(mode.as_str().parse::<SandboxMode>(), Ok(mode));
        }
        assert!("none".parse::<SandboxMode>().is_err());
    }

    #[test]
    fn a_switched_off_mechanism_is_said_not_pretended() {
        let mut policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, Path::new("/tmp"));
        policy.enforce = false;
        assert_eq!(policy.prepare().unwrap_err(), SandboxError::Disabled);
        // Full needs no mechanism.
        policy.mode = SandboxMode::Full;
        assert!(policy.prepare().is_ok());
    }

    #[test]
    fn a_refusal_in_the_output_gets_a_note() {
        let note = denial_note(
            SandboxMode::WorkspaceWrite,
            false,
            "touch: cannot touch '/etc/x': Permission denied",
        )
        .unwrap();
        assert!(note.contains("workspace-write sandbox"), "{note}");
        assert!(denial_note(SandboxMode::WorkspaceWrite, false, "all good").is_none());
        assert!(denial_note(SandboxMode::Full, false, "Permission denied").is_none());
    }
}

#[cfg(test)]
mod executor_tests {
    use super::*;
    use crate::exec::{CommandExecutor, CommandRequest, ExecError, LocalExecutor};

    #[tokio::test]
    async fn a_sandbox_that_cannot_be_enforced_runs_nothing_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let mut policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, dir.path());
        policy.enforce = false;
        let marker = dir.path().join("ran");
        let request = CommandRequest {
            command: format!("touch {}", marker.display()),
            cwd: dir.path().to_path_buf(),
            timeout: None,
            tool_call_id: None,
        };
        let result = LocalExecutor::sandboxed(policy)
            .run(
                request,
                tokio_util::sync::CancellationToken::new(),
                Box::new(|_| {}),
            )
            .await;
        let Err(ExecError::Sandbox(e)) = result else {
            panic!("ran unconfined: {result:?}");
        };
        assert_eq!(e, SandboxError::Disabled);
        assert!(!marker.exists());
        assert!(
            ExecError::Sandbox(e)
                .to_string()
                .contains("cannot be enforced"),
            "said plainly"
        );
    }
}
