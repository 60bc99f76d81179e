//! The command line: `march [DIR…]` and its subcommands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// March: a terminal workspace for coding agents.
#[derive(Debug, Parser)]
#[command(name = "march", version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// Project directories to open (default: the current directory).
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

    /// What to do instead of opening the workspace.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List providers, their credentials and models.
    Models(ModelsArgs),
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
}
