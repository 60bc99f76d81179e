//! The `[lsp]` table of `config.toml`: which language servers check which files.
//!
//! Built-in servers cover Rust, C and C++, Python, TypeScript and JavaScript, and Go. A
//! `[lsp.servers.<name>]` table changes a built-in one field by field, or adds a server.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// The `[lsp]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct LspConfig {
    /// Whether language servers are used at all.
    pub enabled: bool,
    /// How long edit and write wait for fresh diagnostics before answering (milliseconds).
    pub wait_ms: u64,
    /// A server nobody asked anything for this long is shut down (seconds).
    pub idle_shutdown_secs: u64,
    /// `[lsp.servers.<name>]` tables, laid over the built-in servers.
    pub servers: BTreeMap<String, LspServerOverride>,
}

impl Default for LspConfig {
    fn default() -> Self {
        LspConfig {
            enabled: true,
            wait_ms: 3000,
            idle_shutdown_secs: 600,
            servers: BTreeMap::new(),
        }
    }
}

/// One `[lsp.servers.<name>]` table; a field left out keeps the built-in server's value.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LspServerOverride {
    /// The program (looked up in `PATH` unless it is a path).
    pub command: Option<String>,
    /// Its arguments.
    pub args: Option<Vec<String>>,
    /// File name patterns it checks (`*.py`).
    pub file_patterns: Option<Vec<String>>,
    /// Files or directories that mark a root (`Cargo.toml`); the nearest one above a file
    /// wins, and the project directory is the root when there is none.
    pub root_markers: Option<Vec<String>>,
    /// The LSP language id; by default it follows the file's extension.
    pub language_id: Option<String>,
    /// Whether the server is used (`false` turns a built-in one off).
    pub enabled: Option<bool>,
    /// What to send as `initializationOptions`.
    pub initialization_options: Option<toml::Value>,
    /// Environment variables the server gets besides March's own.
    pub env: Option<BTreeMap<String, String>>,
}

/// A language server as it will be started.
#[derive(Debug, Clone, PartialEq)]
pub struct LspServerConfig {
    /// Its name (the table's key): `ruff`, `rust-analyzer`.
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// File name patterns it checks.
    pub file_patterns: Vec<String>,
    /// Root markers, nearest first.
    pub root_markers: Vec<String>,
    /// The language id, when it does not follow the extension.
    pub language_id: Option<String>,
    /// Whether it is used.
    pub enabled: bool,
    /// `initializationOptions`, as JSON.
    pub initialization_options: Option<serde_json::Value>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// Whether it is one of March's built-in servers (a missing built-in program is quietly
    /// skipped; a missing configured one is reported).
    pub built_in: bool,
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The built-in servers, in the order they are tried.
pub fn built_in_servers() -> Vec<LspServerConfig> {
    let server = |name: &str, command: &str, args: &[&str], patterns: &[&str], roots: &[&str]| {
        LspServerConfig {
            name: name.to_string(),
            command: command.to_string(),
            args: strings(args),
            file_patterns: strings(patterns),
            root_markers: strings(roots),
            language_id: None,
            enabled: true,
            initialization_options: None,
            env: BTreeMap::new(),
            built_in: true,
        }
    };
    let python = ["*.py", "*.pyi"];
    let python_roots = [
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        ".git",
    ];
    vec![
        server(
            "rust-analyzer",
            "rust-analyzer",
            &[],
            &["*.rs"],
            &["Cargo.toml"],
        ),
        server(
            "clangd",
            "clangd",
            &[],
            &[
                "*.c", "*.h", "*.cc", "*.cpp", "*.cxx", "*.hh", "*.hpp", "*.hxx",
            ],
            &[
                "compile_commands.json",
                "compile_flags.txt",
                ".clangd",
                ".git",
            ],
        ),
        server(
            "pyright",
            "pyright-langserver",
            &["--stdio"],
            &python,
            &python_roots,
        ),
        server("pylsp", "pylsp", &[], &python, &python_roots),
        server("ruff", "ruff", &["server"], &python, &python_roots),
        server(
            "typescript-language-server",
            "typescript-language-server",
            &["--stdio"],
            &[
                "*.ts", "*.tsx", "*.js", "*.jsx", "*.mjs", "*.cjs", "*.mts", "*.cts",
            ],
            &["tsconfig.json", "jsconfig.json", "package.json", ".git"],
        ),
        server(
            "gopls",
            "gopls",
            &[],
            &["*.go"],
            &["go.work", "go.mod", ".git"],
        ),
    ]
}

impl LspConfig {
    /// The servers to use: the built-in ones with the config's changes, then the config's own.
    pub fn servers(&self) -> Vec<LspServerConfig> {
        let mut servers = built_in_servers();
        for (name, change) in &self.servers {
            match servers.iter_mut().find(|s| &s.name == name) {
                Some(server) => change.apply(server),
                None => {
                    let mut server = LspServerConfig {
                        name: name.clone(),
                        command: name.clone(),
                        args: Vec::new(),
                        file_patterns: Vec::new(),
                        root_markers: Vec::new(),
                        language_id: None,
                        enabled: true,
                        initialization_options: None,
                        env: BTreeMap::new(),
                        built_in: false,
                    };
                    change.apply(&mut server);
                    servers.push(server);
                }
            }
        }
        servers.retain(|s| s.enabled && !s.file_patterns.is_empty());
        servers
    }
}

impl LspServerOverride {
    fn apply(&self, server: &mut LspServerConfig) {
        if let Some(command) = &self.command {
            server.command = command.clone();
            // The user asked for this program: say so when it is missing.
            server.built_in = false;
        }
        if let Some(args) = &self.args {
            server.args = args.clone();
        }
        if let Some(patterns) = &self.file_patterns {
            server.file_patterns = patterns.clone();
        }
        if let Some(roots) = &self.root_markers {
            server.root_markers = roots.clone();
        }
        if let Some(id) = &self.language_id {
            server.language_id = Some(id.clone());
        }
        if let Some(enabled) = self.enabled {
            server.enabled = enabled;
        }
        if let Some(env) = &self.env {
            server.env.clone_from(env);
        }
        if let Some(options) = &self.initialization_options {
            server.initialization_options = serde_json::to_value(options).ok();
        }
    }
}

impl LspServerConfig {
    /// Whether this server checks `path` (matched on the file name).
    pub fn handles(&self, path: &Path) -> bool {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            return false;
        };
        self.file_patterns.iter().any(|p| pattern_matches(p, name))
    }

    /// The language id for `path`.
    pub fn language_id(&self, path: &Path) -> String {
        if let Some(id) = &self.language_id {
            return id.clone();
        }
        language_id_for(path)
    }
}

/// The LSP language id of a file, from its extension.
pub fn language_id_for(path: &Path) -> String {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext {
        "rs" => "rust",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hh" | "hpp" | "hxx" => "cpp",
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "go" => "go",
        other => other,
    }
    .to_string()
}

/// `*` matches any run of characters, `?` one; everything else matches itself.
fn pattern_matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('*', rest)) => (0..=n.len()).any(|i| go(rest, &n[i..])),
            Some(('?', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    go(&p, &n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_cover_the_common_languages() {
        let servers = LspConfig::default().servers();
        let for_file = |f: &str| {
            servers
                .iter()
                .filter(|s| s.handles(Path::new(f)))
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(for_file("src/main.rs"), ["rust-analyzer"]);
        assert_eq!(for_file("a/b.py"), ["pyright", "pylsp", "ruff"]);
        assert_eq!(for_file("x.hpp"), ["clangd"]);
        assert_eq!(for_file("web/app.tsx"), ["typescript-language-server"]);
        assert_eq!(for_file("main.go"), ["gopls"]);
        assert!(for_file("README.md").is_empty());
        assert_eq!(language_id_for(Path::new("a.tsx")), "typescriptreact");
        assert_eq!(language_id_for(Path::new("a.h")), "c");
    }

    #[test]
    fn config_changes_and_adds_servers() {
        let text = r#"
            [lsp]
            wait_ms = 500
            [lsp.servers.pyright]
            enabled = false
            [lsp.servers.ruff]
            command = "/opt/ruff"
            [lsp.servers.zls]
            command = "zls"
            env = { ZLS_LOG = "debug" }
            file_patterns = ["*.zig"]
            root_markers = ["build.zig"]
        "#;
        let config = crate::config::Config::parse(text, Path::new("config.toml")).unwrap();
        assert_eq!(config.lsp.wait_ms, 500);
        let servers = config.lsp.servers();
        assert!(servers.iter().all(|s| s.name != "pyright"));
        let ruff = servers.iter().find(|s| s.name == "ruff").unwrap();
        assert_eq!(ruff.command, "/opt/ruff");
        assert_eq!(ruff.args, ["server"]);
        assert!(!ruff.built_in);
        let zls = servers.iter().find(|s| s.name == "zls").unwrap();
        assert!(zls.handles(Path::new("src/main.zig")));
        assert_eq!(zls.language_id(Path::new("a.zig")), "zig");
        assert_eq!(zls.env["ZLS_LOG"], "debug");
    }

    #[test]
    fn patterns() {
        assert!(pattern_matches("*.py", "a.py"));
        assert!(!pattern_matches("*.py", "a.pyc"));
        assert!(pattern_matches("Makefile", "Makefile"));
        assert!(pattern_matches("?.c", "a.c"));
        assert!(!pattern_matches("?.c", "ab.c"));
    }
}
