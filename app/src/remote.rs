//! Projects on other machines, reached with the user's own OpenSSH client (its config, keys
//! and agent; no SSH of March's own): a workspace names one `ssh://HOST/PATH`. Its runner is
//! `ssh HOST march runner`, after March's version there is checked in the same connection;
//! its shell panes and `!` commands run through `ssh -t HOST` in its directory.

use std::path::{Path, PathBuf};

use march_core::config::SshConfig;
use march_panes::shell::ShellSpec;
use march_runner::client::RunnerCommand;

/// How a workspace project names another machine's directory.
pub const SCHEME: &str = "ssh://";

/// What the remote check exits with when March is missing there.
const MISSING: i32 = 127;

/// A project on another machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote {
    /// The host, as `ssh` takes it (a name from the SSH config, `user@host`).
    pub host: String,
    /// The project's absolute path there.
    pub path: String,
}

/// `s` quoted for a shell: single quotes, with each `'` and `\\` written outside them
/// (escaped), which sh, bash, fish and csh all read the same way.
pub fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+%".contains(c));
    if plain {
        return s.to_string();
    }
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str(r"'\''"),
            '\\' => out.push_str(r"'\\'"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The remote `march` as a shell word: a leading `~/` stays the home directory there.
fn march_word(march: &str) -> String {
    match march.strip_prefix("~/") {
        Some(rest) => format!("\"$HOME\"/{}", quote(rest)),
        None => quote(march),
    }
}

/// `line` run by `sh` whatever the user's login shell on the host is (ssh hands the command
/// to that shell, which may be fish or csh).
pub fn posix(line: &str) -> String {
    format!("sh -c {}", quote(line))
}

impl Remote {
    /// `ssh://HOST/PATH`.
    pub fn parse(url: &str) -> Result<Remote, String> {
        let bad = || format!("`{url}` is not a remote project: ssh://HOST/PATH");
        let rest = url.strip_prefix(SCHEME).ok_or_else(bad)?;
        let (host, path) = rest.split_once('/').ok_or_else(bad)?;
        if host.is_empty() || host.starts_with('-') || host.contains(char::is_whitespace) {
            return Err(bad());
        }
        let path = format!("/{}", path.trim_end_matches('/'));
        Ok(Remote {
            host: host.to_string(),
            path,
        })
    }

    /// The remote project a workspace project names, if it names one.
    pub fn of(project: &Path) -> Option<Remote> {
        Remote::parse(project.to_str()?).ok()
    }

    /// How the workspace names it.
    pub fn project(&self) -> PathBuf {
        PathBuf::from(format!("{SCHEME}{}{}", self.host, self.path))
    }

    /// `host:name`, for people.
    pub fn name(&self) -> String {
        let name = self.path.rsplit('/').find(|p| !p.is_empty()).unwrap_or("/");
        format!("{}:{name}", self.host)
    }

    /// The arguments of `ssh` running `command` (one shell line) on the host; `tty` for an
    /// interactive program. A runner's connection never prompts (stdin is the protocol) and
    /// notices a dead peer within a minute.
    fn ssh_args(&self, ssh: &SshConfig, tty: bool, command: &str) -> Vec<String> {
        let mut args = ssh.args.clone();
        if tty {
            args.push("-t".to_string());
        } else {
            args.extend(
                [
                    "-T",
                    "-o",
                    "BatchMode=yes",
                    "-o",
                    "ServerAliveInterval=15",
                    "-o",
                    "ServerAliveCountMax=3",
                ]
                .map(String::from),
            );
        }
        args.push("--".to_string());
        args.push(self.host.clone());
        args.push(posix(command));
        args
    }

    /// The runner's command: March's version on the host checked, then `march runner`
    /// there. A missing or different March ends it at once with a message saying so, which
    /// the pane shows as why the agent did not start.
    pub fn runner_command(&self, ssh: &SshConfig) -> RunnerCommand {
        let ours = format!("march {}", env!("CARGO_PKG_VERSION"));
        let host = quote(&self.host);
        let march = march_word(&ssh.march);
        // The messages are printf's arguments, never parsed by the shell again.
        let check = format!(
            "v=$({march} --version 2>/dev/null) || {{ printf 'march is not installed on %s \
             (ran: %s --version); install %s there\\n' {host} {shown} {ours_q} >&2; exit \
             {MISSING}; }}; [ \"$v\" = {ours_q} ] || {{ printf '%s has %s, this is %s: \
             install the same version there\\n' {host} \"$v\" {ours_q} >&2; exit {MISSING}; \
             }}; exec {march} runner",
            shown = quote(&ssh.march),
            ours_q = quote(&ours)
        );
        let mut command = RunnerCommand::new(&ssh.command).args(self.ssh_args(ssh, false, &check));
        // The local end of the connection runs anywhere: the home directory.
        if let Some(home) = std::env::var_os("HOME") {
            command = command.cwd(Path::new(&home));
        }
        command
    }

    /// `spec` (a shell or a command for a PTY whose directory is this project, or one
    /// below it) made to run on the host, in that directory.
    fn wrap(&self, spec: &mut ShellSpec, ssh: &SshConfig) {
        let here = spec.cwd.to_string_lossy().into_owned();
        let below = here
            .strip_prefix(&self.project().to_string_lossy().into_owned())
            .unwrap_or("");
        let dir = format!("{}{below}", self.path);
        // The user's shell here is theirs there too, wherever it is installed.
        let users_shell = spec.program == ShellSpec::user_shell(Path::new("/")).program;
        let program = if users_shell {
            "\"${SHELL:-sh}\"".to_string()
        } else {
            quote(&spec.program)
        };
        let program = if users_shell && spec.args.is_empty() {
            format!("exec {program} -l")
        } else {
            let mut line = format!("exec {program}");
            for arg in &spec.args {
                line.push(' ');
                line.push_str(&quote(arg));
            }
            line
        };
        let env: String = spec
            .env
            .iter()
            .map(|(k, v)| format!("{}={} ", quote(k), quote(v)))
            .collect();
        let line = format!("cd {} && {env}{program}", quote(&dir));
        spec.program.clone_from(&ssh.command);
        spec.args = self.ssh_args(ssh, true, &line);
        spec.env.clear();
        spec.cwd = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
    }
}

/// The projects `[remotes.NAME]` names, by name, as the workspace names them; a URL that is
/// not `ssh://HOST/PATH` is logged and left out.
pub fn named_projects(
    remotes: &std::collections::BTreeMap<String, march_core::config::RemoteProjectConfig>,
) -> Vec<(String, PathBuf)> {
    remotes
        .iter()
        .filter_map(|(name, r)| match Remote::parse(&r.url) {
            Ok(remote) => Some((name.clone(), remote.project())),
            Err(e) => {
                tracing::warn!(remote = %name, "[remotes.{name}] is not used: {e}");
                None
            }
        })
        .collect()
}

/// `spec` as it must run: unchanged for a local directory, through `ssh -t` for a remote
/// project's.
pub fn over_ssh(mut spec: ShellSpec, ssh: &SshConfig) -> ShellSpec {
    if let Some(remote) = Remote::of(&spec.cwd) {
        remote.wrap(&mut spec, ssh);
    }
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_a_host_and_an_absolute_path() {
        let r = Remote::parse("ssh://build1/srv/app/").unwrap();
        assert_eq!(r.host, "build1");
        assert_eq!(r.path, "/srv/app");
        assert_eq!(r.project(), PathBuf::from("ssh://build1/srv/app"));
        assert_eq!(Remote::of(&r.project()), Some(r.clone()));
        assert_eq!(r.name(), "build1:app");
        assert_eq!(
            Remote::parse("ssh://me@host.example/x").unwrap().host,
            "me@host.example"
        );
        for bad in [
            "/srv/app",
            "ssh://",
            "ssh:///srv",
            "ssh://-oProxy=x/srv",
            "ssh://host",
        ] {
            assert!(Remote::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Remote::of(Path::new("/home/me/project")), None);
    }

    #[test]
    fn quoting_keeps_words_whole() {
        assert_eq!(quote("plain/path-1.txt"), "plain/path-1.txt");
        assert_eq!(quote("two words"), "'two words'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(r"a\b"), r"'a'\\'b'");
        assert_eq!(march_word("~/bin/march"), "\"$HOME\"/bin/march");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn a_shell_pane_on_a_remote_project_runs_there_in_its_directory() {
        let ssh = SshConfig {
            args: vec!["-F".into(), "/cfg".into()],
            ..SshConfig::default()
        };
        let remote = Remote::parse("ssh://box/srv/my app").unwrap();
        let mut spec = ShellSpec::user_shell(&remote.project().join("sub"));
        spec = over_ssh(spec, &ssh);
        assert_eq!(spec.program, "ssh");
        assert_eq!(
            spec.args,
            [
                "-F",
                "/cfg",
                "-t",
                "--",
                "box",
                "sh -c 'cd '\\''/srv/my app/sub'\\'' && exec \"${SHELL:-sh}\" -l'"
            ]
        );
        let mut command = ShellSpec::user_shell(&remote.project());
        command.program = "bash".into();
        command.args = vec!["-c".into(), "echo 'hi'".into()];
        let command = over_ssh(command, &ssh);
        assert_eq!(
            command.args.last().unwrap(),
            &posix(r"cd '/srv/my app' && exec bash -c 'echo '\''hi'\'''")
        );
        // A local directory is left alone.
        let local = over_ssh(ShellSpec::user_shell(Path::new("/tmp")), &ssh);
        assert_eq!(local.cwd, PathBuf::from("/tmp"));
    }
}
