//! The command line: `march [DIR…]` and its subcommands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// March: a terminal workspace for coding agents.
#[derive(Debug, Parser)]
#[command(name = "march", version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// Project directories to open (default: the current directory).
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

    /// Start with a fresh layout instead of restoring the one saved for these directories.
    #[arg(long)]
    pub fresh: bool,

    /// Run one prompt headless instead of opening the workspace (`-p`).
    #[command(flatten)]
    pub headless: HeadlessArgs,

    /// What to do instead of opening the workspace.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options of headless mode, `march -p PROMPT`.
#[derive(Debug, Args)]
pub struct HeadlessArgs {
    /// Run PROMPT as one turn through a runner and print the answer, then exit.
    #[arg(
        short = 'p',
        long = "print",
        value_name = "PROMPT",
        conflicts_with = "dirs"
    )]
    pub print: Option<String>,

    /// With -p: print the answer text, or every session update as a JSON line.
    #[arg(long, value_enum, value_name = "FORMAT", requires = "print")]
    pub output: Option<OutputFormat>,

    /// With -p: the model to use, as provider/id (see `march models`).
    #[arg(long, value_name = "PROVIDER/ID", requires = "print")]
    pub model: Option<String>,

    /// With -p: the session's working directory (default: the current directory).
    #[arg(long, value_name = "DIR", requires = "print")]
    pub cwd: Option<PathBuf>,

    /// With -p: run every tool call without asking (otherwise those that would ask are
    /// rejected, since nobody is there to answer).
    #[arg(long, requires = "print")]
    pub yolo: bool,

    /// With -p: the final answer must be a JSON value valid against the JSON Schema in FILE;
    /// only that JSON is printed (exit 1 when no answer matches).
    #[arg(long, value_name = "FILE", requires = "print")]
    pub schema: Option<PathBuf>,

    /// With --schema: how many times a failing answer is asked for again.
    #[arg(long, value_name = "N", requires = "schema")]
    pub schema_retries: Option<u32>,
}

/// What `march -p` prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The answer text as it streams.
    #[default]
    Text,
    /// One JSON object per line: each session update, then a result line.
    Json,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List providers, their credentials and models.
    Models(ModelsArgs),
    /// Serve the Agent Client Protocol on stdin/stdout (for editors and other ACP clients).
    #[command(visible_alias = "acp")]
    Runner,
    /// Search the turns of every session, or rebuild the search index.
    #[command(subcommand)]
    History(HistoryCommand),
    /// Check the config, theme and keymap files.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Print the tokens and cost of every session's model calls, per project and model.
    Usage(UsageArgs),
    /// List, add and remove MCP servers (config.toml; a project's .mcp.json is listed).
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Run a command confined by a sandbox mode (March's runner starts agent commands so).
    #[command(hide = true)]
    Sandbox {
        /// read-only, workspace-write or full.
        #[arg(long)]
        mode: String,
        /// A directory workspace-write lets the command write under (repeatable).
        #[arg(long = "write")]
        write: Vec<PathBuf>,
        /// Let the command open TCP connections.
        #[arg(long)]
        network: bool,
        /// The program and its arguments.
        #[arg(last = true, required = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// The browser daemon that agents' browser tools drive (started on first use).
    #[command(subcommand)]
    Browser(BrowserCommand),
    /// The memory server: serve this machine's memory to others, manage its clients'
    /// tokens, and see how it and the remote memory are.
    #[command(subcommand)]
    Memory(MemoryCommand),
    /// The gateway: messages from outside (an HTTP API, a Telegram bot) into this
    /// workspace's sessions; serves without a subcommand.
    Gateway {
        /// What to do (serve, when none).
        #[command(subcommand)]
        command: Option<GatewayCommand>,
    },
    /// Serve a project's language servers to its runners (runners start it themselves).
    #[command(hide = true)]
    LspHost {
        /// The project directory.
        project: PathBuf,
    },
    /// Start a workspace named NAME on the directories and attach to it.
    New(NewArgs),
    /// Attach this terminal to a running workspace.
    Attach(AttachArgs),
    /// List the running workspaces.
    #[command(visible_alias = "list-sessions")]
    Ls(LsArgs),
    /// Close a workspace: its turns, shells and runners end (its layout is kept).
    Kill(KillArgs),
    /// Close every workspace.
    KillServer(ForceArg),
    /// Show every session of every workspace: attention, model, tokens, cost.
    Status(StatusArgs),
    /// Send a prompt to a session (queued after its turn when one runs).
    Send(SendArgs),
    /// Open an agent pane on a directory in a workspace (on a worktree of its own with
    /// --worktree).
    NewPane(NewPaneArgs),
    /// List the git worktrees March made for agents and what each holds; clean up the ones
    /// left behind.
    Worktrees(WorktreesArgs),
    /// Print a session's transcript as markdown.
    Capture(CaptureArgs),
    /// Write a saved session as a markdown document (tool outputs collapsed, diffs as diff
    /// blocks), from its agent's replay.
    Export(ExportArgs),
    /// Wait until a session's turn ends; the exit status says how, as with `march -p`.
    Wait(TargetArg),
    /// Answer a session's open permission request.
    Answer(AnswerArgs),
    /// Serve one workspace to its terminals (`march` starts it when needed).
    #[command(hide = true)]
    Server(ServerArgs),
}

/// Options of `march export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The session's id (as `march history` and `/resume` show it).
    #[arg(value_name = "SESSION")]
    pub session: String,
    /// Write to this file instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// The session's project directory (default: the current directory).
    #[arg(short = 'C', long = "cwd", value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

/// Options of `march new`.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// The workspace's name (default: its first directory's).
    #[arg(short = 's', long = "name", value_name = "NAME")]
    pub name: Option<String>,
    /// Start with a fresh layout instead of the one saved for these directories.
    #[arg(long)]
    pub fresh: bool,
    /// Its project directories (default: the current directory).
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

/// Options of `march attach`.
#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The workspace (default: the one used most recently).
    #[arg(short = 't', long = "target", value_name = "NAME")]
    pub target: Option<String>,
    /// Watch only: keys typed here do nothing.
    #[arg(short = 'r', long = "read-only")]
    pub read_only: bool,
}

/// Options of `march ls`.
#[derive(Debug, Args)]
pub struct LsArgs {
    /// Print one JSON object per workspace.
    #[arg(long)]
    pub json: bool,
}

/// Options of `march kill`.
#[derive(Debug, Args)]
pub struct KillArgs {
    /// The workspace to close.
    #[arg(short = 't', long = "target", value_name = "NAME", required = true)]
    pub target: String,
    #[command(flatten)]
    pub force: ForceArg,
}

/// Whether to go ahead without asking.
#[derive(Debug, Args)]
pub struct ForceArg {
    /// Close even while turns run, without asking.
    #[arg(long)]
    pub force: bool,
}

/// A session, as `march status` names it: `WORKSPACE:N`, `N` when one workspace runs,
/// or (a prefix of) the agent's session id.
#[derive(Debug, Args)]
pub struct TargetArg {
    /// The session.
    #[arg(short = 't', long = "target", value_name = "SESSION", required = true)]
    pub target: String,
}

/// Options of `march status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print one JSON object per session.
    #[arg(long)]
    pub json: bool,
}

/// Options of `march send`.
#[derive(Debug, Args)]
pub struct SendArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// The prompt.
    #[arg(value_name = "TEXT", required = true)]
    pub text: Vec<String>,
}

/// Options of `march new-pane`.
#[derive(Debug, Args)]
pub struct NewPaneArgs {
    /// The workspace (default: the one of DIR, else the one used most recently).
    #[arg(short = 't', long = "target", value_name = "WORKSPACE")]
    pub target: Option<String>,
    /// The agent from config.toml's `[agents]` (default: the workspace's).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// A first prompt, sent once the session is open.
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,
    /// Run the agent on a new git worktree of the project, on branch BRANCH (default: the
    /// next free `march/N`), made under `[worktrees] dir`.
    #[arg(long, value_name = "BRANCH", num_args = 0..=1, default_missing_value = "")]
    pub worktree: Option<String>,
    /// The project directory.
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

impl NewPaneArgs {
    /// The project directory and the worktree branch asked for (`Some("")`: a default
    /// name). `--worktree DIR` with no DIR after it names the directory, not a branch.
    pub fn dir_and_branch(&self) -> Option<(PathBuf, Option<String>)> {
        match (&self.dir, &self.worktree) {
            (Some(dir), worktree) => Some((dir.clone(), worktree.clone())),
            (None, Some(value)) if !value.is_empty() => {
                Some((PathBuf::from(value), Some(String::new())))
            }
            (None, _) => None,
        }
    }
}

/// Options of `march worktrees`.
#[derive(Debug, Args)]
pub struct WorktreesArgs {
    /// Remove every worktree that holds nothing unmerged and no open pane works in.
    #[arg(long)]
    pub clean: bool,
    /// Remove the worktree at PATH (refused when it holds uncommitted or unmerged work,
    /// unless --force).
    #[arg(long, value_name = "PATH", conflicts_with = "clean")]
    pub remove: Option<PathBuf>,
    /// With --remove: remove it though its work is lost.
    #[arg(long, requires = "remove")]
    pub force: bool,
}

/// Options of `march capture`.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// Only the last N turns (a prompt and what followed).
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
}

/// What `march answer` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AnswerChoice {
    /// Allow the tool call, once.
    Allow,
    /// Reject it.
    Reject,
}

/// Options of `march answer`.
#[derive(Debug, Args)]
pub struct AnswerArgs {
    #[command(flatten)]
    pub target: TargetArg,
    /// The answer.
    #[arg(value_enum)]
    pub choice: AnswerChoice,
}

/// Options of `march server`.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// The workspace's name.
    #[arg(long, value_name = "NAME")]
    pub name: String,
    /// Start with a fresh layout.
    #[arg(long)]
    pub fresh: bool,
    /// Its project directories, canonical.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
}

/// `march config` subcommands.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Read config.toml, the theme and keymap.toml as the workspace would and report every
    /// problem with its file and line (exit status 1 when there is one).
    Check,
}

/// `march browser` subcommands.
#[derive(Debug, Subcommand)]
pub enum BrowserCommand {
    /// Whether the daemon runs, its browser, and each session's tabs.
    Status,
    /// Close the daemon's tabs and the browser it started, and stop it.
    Stop,
    /// Run the daemon in this process until it is idle or stopped (runners start it so).
    Serve,
}

/// `march memory` subcommands.
#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Serve the global memory over HTTP(S) as `[memory.server]` says, until interrupted.
    Serve,
    /// Whether this machine's server runs, and whether `[memory] remote` answers.
    Status,
    /// The tokens of the clients this machine's server hears, and the one it shows a
    /// remote server.
    #[command(subcommand)]
    Token(MemoryTokenCommand),
}

/// `march memory token` subcommands.
#[derive(Debug, Subcommand)]
pub enum MemoryTokenCommand {
    /// Make a token for client NAME (printed once; kept in auth.json).
    Add {
        /// The client's name, as the server's log shows it.
        name: String,
    },
    /// Remove client NAME's token: the server refuses it from its next start.
    Remove {
        /// The client's name.
        name: String,
    },
    /// List the clients that have a token.
    List,
    /// Keep TOKEN as the one shown to the `[memory] remote` server.
    Use {
        /// A token `march memory token add` printed on the server's machine.
        token: String,
    },
}

/// `march gateway` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum GatewayCommand {
    /// Serve as `[gateway]` says, until interrupted.
    Serve,
    /// Whether the gateway runs, what it serves, and what waits in its queue.
    Status,
    /// The tokens of the HTTP API's clients, and the Telegram bot's.
    #[command(subcommand)]
    Token(GatewayTokenCommand),
}

/// `march gateway token` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum GatewayTokenCommand {
    /// Make a token for HTTP client NAME (printed once; kept in auth.json).
    Add {
        /// The client's name: the sender its messages are logged with.
        name: String,
    },
    /// Remove client NAME's token: the gateway refuses it from its next start.
    Remove {
        /// The client's name.
        name: String,
    },
    /// List the HTTP clients that have a token.
    List,
    /// Keep TOKEN (from Telegram's @BotFather) as the bot's: the Telegram adapter runs.
    Telegram {
        /// The bot's token.
        token: String,
    },
}

/// `march mcp` subcommands.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// List the servers of config.toml and of this directory's .mcp.json, each started to
    /// check it (state, tools, what went wrong).
    List(McpListArgs),
    /// Show one server: where it is defined, how it starts, and (started) its tools.
    Get(McpGetArgs),
    /// Add a server to config.toml: `march mcp add NAME -- COMMAND [ARGS...]`, or
    /// `march mcp add NAME --url URL`.
    Add(McpAddArgs),
    /// Remove a server's table from config.toml, keeping the rest of the file.
    Remove(McpNameArg),
}

/// Options of `march mcp list`.
#[derive(Debug, Args)]
pub struct McpListArgs {
    /// Only read the definitions; start nothing.
    #[arg(long)]
    pub no_check: bool,
    /// Print one JSON object per server.
    #[arg(long)]
    pub json: bool,
}

/// Options of `march mcp get`.
#[derive(Debug, Args)]
pub struct McpGetArgs {
    /// The server's name.
    pub name: String,
    /// Only read the definition; start nothing.
    #[arg(long)]
    pub no_check: bool,
}

/// A server's name.
#[derive(Debug, Args)]
pub struct McpNameArg {
    /// The server's name.
    pub name: String,
}

/// Options of `march mcp add`.
#[derive(Debug, Args)]
pub struct McpAddArgs {
    /// Its name: letters, digits, `_` and `-` (its tools are `mcp__NAME__TOOL`).
    pub name: String,
    /// A streamable HTTP endpoint instead of a command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// An environment variable for the server (repeatable).
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// An HTTP header for every request (repeatable).
    #[arg(
        short = 'H',
        long = "header",
        value_name = "NAME: VALUE",
        requires = "url"
    )]
    pub headers: Vec<String>,
    /// The environment variable holding a bearer token for `Authorization`.
    #[arg(long, value_name = "VAR", requires = "url")]
    pub bearer_token_env_var: Option<String>,
    /// Seconds it gets to start.
    #[arg(long, value_name = "SECONDS")]
    pub start_timeout: Option<f64>,
    /// Seconds one tool call may take.
    #[arg(long, value_name = "SECONDS")]
    pub call_timeout: Option<f64>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `march history` subcommands.
#[derive(Debug, Subcommand)]
pub enum HistoryCommand {
    /// Find turns by their words (every word must occur; `word*` matches a prefix), best
    /// first, with a snippet.
    Search(HistorySearchArgs),
    /// Rebuild the index from the session transcripts.
    Reindex,
}

/// Options of `march history search`.
#[derive(Debug, Args)]
pub struct HistorySearchArgs {
    /// The words to look for.
    #[arg(value_name = "QUERY", required = true)]
    pub query: Vec<String>,
    /// Print one JSON object per matching turn.
    #[arg(long)]
    pub json: bool,
    /// Only turns of sessions in this project directory.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Only turns of this session.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only turns at or after this date (2026-11-30 or 2026-11-30T14:00, UTC).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only turns before this date.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// At most this many results.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
}

/// Options of `march usage`.
#[derive(Debug, Args)]
pub struct UsageArgs {
    /// Only calls made on or after this local day (YYYY-MM-DD, or `today`).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Print one JSON object: each project's models and totals, and the grand total.
    #[arg(long)]
    pub json: bool,
}

/// Options of `march models`.
#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// Also ask each usable provider's server which models it serves.
    #[arg(long)]
    pub discover: bool,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_dirs_and_models() {
        let cli = Cli::try_parse_from(["march", "a", "b"]).unwrap();
        assert_eq!(cli.dirs, [PathBuf::from("a"), PathBuf::from("b")]);
        assert!(cli.command.is_none());

        let cli = Cli::try_parse_from(["march", "models", "--discover", "--json"]).unwrap();
        let Some(Command::Models(args)) = cli.command else {
            panic!("expected models");
        };
        assert!(args.discover && args.json);
    }

    #[test]
    fn parses_the_workspace_commands() {
        let cli = Cli::try_parse_from(["march", "new", "-s", "api", "a", "b"]).unwrap();
        let Some(Command::New(new)) = cli.command else {
            panic!("expected new");
        };
        assert_eq!(new.name.as_deref(), Some("api"));
        assert_eq!(new.dirs.len(), 2);
        let cli = Cli::try_parse_from(["march", "attach", "-r", "-t", "api"]).unwrap();
        let Some(Command::Attach(attach)) = cli.command else {
            panic!("expected attach");
        };
        assert!(attach.read_only);
        assert_eq!(attach.target.as_deref(), Some("api"));
        let cli = Cli::try_parse_from(["march", "kill", "-t", "api", "--force"]).unwrap();
        assert!(
            matches!(cli.command, Some(Command::Kill(k)) if k.force.force && k.target == "api")
        );
        assert!(
            Cli::try_parse_from(["march", "kill"]).is_err(),
            "kill needs -t"
        );
        let cli = Cli::try_parse_from(["march", "send", "-t", "api:2", "fix", "it"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Send(s)) if s.text == ["fix", "it"]));
        let cli = Cli::try_parse_from(["march", "answer", "-t", "2", "reject"]).unwrap();
        assert!(
            matches!(cli.command, Some(Command::Answer(a)) if a.choice == AnswerChoice::Reject)
        );
        let cli = Cli::try_parse_from([
            "march", "new-pane", "--agent", "claude", "web", "--prompt", "hi",
        ])
        .unwrap();
        assert!(
            matches!(cli.command, Some(Command::NewPane(n)) if n.agent.as_deref() == Some("claude"))
        );
        let cli = Cli::try_parse_from(["march", "kill-server"]).unwrap();
        assert!(matches!(cli.command, Some(Command::KillServer(f)) if !f.force));
    }

    #[test]
    fn parses_runner_and_its_acp_alias() {
        for name in ["runner", "acp"] {
            let cli = Cli::try_parse_from(["march", name]).unwrap();
            assert!(matches!(cli.command, Some(Command::Runner)), "{name}");
        }
    }

    #[test]
    fn parses_headless_options() {
        let cli = Cli::try_parse_from([
            "march", "-p", "hi", "--output", "json", "--model", "p/m", "--cwd", "/tmp", "--yolo",
        ])
        .unwrap();
        let headless = cli.headless;
        assert_eq!(headless.print.as_deref(), Some("hi"));
        assert_eq!(headless.output, Some(OutputFormat::Json));
        assert_eq!(headless.model.as_deref(), Some("p/m"));
        assert_eq!(headless.cwd, Some(PathBuf::from("/tmp")));
        assert!(headless.yolo);

        // The headless options need -p, and -p takes no directories.
        for args in [
            &["march", "--output", "json"][..],
            &["march", "--yolo"],
            &["march", "-p", "hi", "some-dir"],
        ] {
            let error = Cli::try_parse_from(args).unwrap_err();
            assert_eq!(error.exit_code(), 2, "{args:?}");
        }
    }
}
