//! `march config check`: read `config.toml`, the theme and the keymap as the workspace would,
//! and say what is wrong, with file and line.

use std::process::ExitCode;

use march_core::config::Config;
use march_core::model::ModelRegistry;
use march_core::paths::MarchPaths;
use march_panes::theme::load_theme;

use crate::keymap::Keymap;

/// Run `march config check`: 0 when everything loads, 1 when something does not.
pub fn check(paths: &MarchPaths) -> ExitCode {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let config = match Config::load(paths) {
        Ok(config) => Some(config),
        Err(e) => {
            errors.push(e.to_string());
            None
        }
    };
    if let Some(config) = &config {
        if let Some(name) = config.default_agent.as_deref()
            && name != "march"
            && !config.agents.contains_key(name)
        {
            errors.push(format!(
                "{}: default_agent = \"{name}\" names no [agents.{name}] table",
                paths.config_file().display()
            ));
        }
        for (name, agent) in &config.agents {
            if agent.command.trim().is_empty() {
                errors.push(format!(
                    "{}: [agents.{name}] has no command",
                    paths.config_file().display()
                ));
            }
        }
        if let Err(e) = ModelRegistry::load(paths) {
            errors.push(e.to_string());
        }
    }
    let theme_name = config
        .as_ref()
        .and_then(|c| c.theme.clone())
        .unwrap_or_else(|| "dark".to_string());
    let (_, theme_errors) = load_theme(Some(&paths.config_dir), &theme_name);
    for e in theme_errors {
        if e.is_warning() {
            warnings.push(e.to_string());
        } else {
            errors.push(e.to_string());
        }
    }
    let (_, keymap_errors) = Keymap::load(&paths.config_dir);
    errors.extend(keymap_errors.iter().map(ToString::to_string));
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    if errors.is_empty() {
        println!(
            "config ok: {} (theme `{theme_name}`, keymap {})",
            paths.config_file().display(),
            paths.config_dir.join("keymap.toml").display()
        );
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
