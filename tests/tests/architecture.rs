//! The crate boundaries of ARCHITECTURE.md §2, checked on the manifests and the sources.
//!
//! Members that do not exist yet are skipped, so the rules can be written before the crates.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use march_e2e::workspace_root;

/// Which of March's crates a crate may depend on.
#[derive(Debug, Clone, Copy)]
enum Allowed {
    /// Only these (normal and build dependencies; dev-dependencies are free).
    Only(&'static [&'static str]),
    /// Anything: the end-to-end tests.
    Any,
}

/// The allowed dependency edges between March's crates (ARCHITECTURE.md §2).
const ALLOWED_EDGES: &[(&str, Allowed)] = &[
    ("march-core", Allowed::Only(&[])),
    ("march-tools", Allowed::Only(&["march-core", "march-wire"])),
    (
        "march-runner",
        Allowed::Only(&["march-core", "march-tools"]),
    ),
    // Panes see ACP schema types from external crates only, never March's runtime.
    ("march-panes", Allowed::Only(&[])),
    (
        "march",
        Allowed::Only(&[
            "march-panes",
            "march-runner",
            "march-core",
            "march-wire",
            "march-gateway",
        ]),
    ),
    // The gateway reaches workspaces only over their control socket.
    (
        "march-gateway",
        Allowed::Only(&["march-core", "march-wire"]),
    ),
    // The server's wire knows no March crate: both ends (the app's server and client) use it.
    ("march-wire", Allowed::Only(&[])),
    ("march-testkit", Allowed::Only(&[])),
    ("march-e2e", Allowed::Any),
];

/// Crates that only tests may use: a dev-dependency anywhere, a normal one only for `Any` crates.
const TEST_ONLY: &[&str] = &["march-testkit"];

/// A rule on the paths source files under some directories may name.
struct SourceRule {
    /// Directories, relative to the workspace root, whose `.rs` files the rule covers.
    dirs: &'static [&'static str],
    /// Path prefixes (matched segment by segment) that may not be named...
    forbidden: &'static [&'static str],
    /// ...unless they also start with one of these.
    allowed: &'static [&'static str],
    /// Why, for the failure message.
    why: &'static str,
}

/// What the shell side (app, panes) may name from the runtime side.
const SOURCE_RULES: &[SourceRule] = &[
    SourceRule {
        dirs: &["app/src", "panes/src"],
        forbidden: &[
            "march_core::agent",
            "march_core::agent_loop",
            "march_core::provider",
            "march_tools",
        ],
        allowed: &[],
        why: "the shell never runs the agent loop, providers or tools; agents arrive over ACP",
    },
    SourceRule {
        dirs: &["app/src"],
        forbidden: &["march_core"],
        allowed: &[
            "march_core::config",
            "march_core::paths",
            "march_core::auth",
            "march_core::model",
            "march_core::atomic_file",
            // Daemons (`march gateway`) stop on SIGTERM and SIGINT.
            "march_core::signals",
            // `march history` searches the index the runners keep.
            "march_core::history",
            "march_core::session::format_iso_ms",
            "march_core::session::parse_iso_ms",
            // `march usage` and the supervisor's project costs read the transcripts' usage.
            "march_core::usage",
            "march_core::session::march_session_dir",
            // Agents' worktrees are grouped per repository as sessions are per project.
            "march_core::session::session_dir",
        ],
        why: "the app uses core for config, paths, credentials, the model registry, atomic \
              writes, the history index and usage reports only (docs/ARCHITECTURE.md)",
    },
    SourceRule {
        dirs: &["app/src"],
        forbidden: &["march_runner"],
        allowed: &[
            "march_runner::client",
            "march_runner::serve",
            "march_runner::serve_lsp_host",
            // `march mcp list | get` start servers, which only the runner side does.
            "march_runner::mcp_check",
            // `march sandbox`, the launcher that confines an agent's commands.
            "march_runner::sandbox_exec",
            // `march browser`: the browser daemon's entry point and commands.
            "march_runner::browser",
            // `march memory`: the memory server's entry point and status.
            "march_runner::memory_server",
        ],
        why: "the app uses only the runner's client and its entry point",
    },
];

fn parse_toml(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("invalid TOML in {}: {e}", path.display()))
}

/// Member directories listed in the root manifest that exist; `dir/*` globs are expanded.
fn member_dirs(root: &Path, root_manifest: &toml::Table) -> Vec<PathBuf> {
    let members = root_manifest
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .cloned()
        .unwrap_or_default();
    let mut dirs = Vec::new();
    for member in members.iter().filter_map(|m| m.as_str()) {
        match member.strip_suffix("/*") {
            Some(parent) => {
                if let Ok(entries) = std::fs::read_dir(root.join(parent)) {
                    dirs.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
                }
            }
            None => dirs.push(root.join(member)),
        }
    }
    dirs.retain(|d| d.join("Cargo.toml").is_file());
    dirs.sort();
    dirs
}

/// The package names of a manifest's dependencies in `kind` (e.g. "dependencies"), including
/// target-specific tables; renames (`package = …`) are resolved, also through the workspace.
fn dependency_names(
    manifest: &toml::Table,
    workspace_deps: &toml::Table,
    kind: &str,
) -> Vec<String> {
    let mut tables: Vec<&toml::Table> = manifest
        .get(kind)
        .and_then(|t| t.as_table())
        .into_iter()
        .collect();
    if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
        tables.extend(
            targets
                .values()
                .filter_map(|t| t.get(kind).and_then(|d| d.as_table())),
        );
    }
    let package_of = |key: &str, spec: &toml::Value| -> String {
        let spec = match spec.get("workspace").and_then(|w| w.as_bool()) {
            Some(true) => workspace_deps.get(key).unwrap_or(spec),
            _ => spec,
        };
        spec.get("package")
            .and_then(|p| p.as_str())
            .unwrap_or(key)
            .to_string()
    };
    tables
        .into_iter()
        .flat_map(|t| t.iter().map(|(key, spec)| package_of(key, spec)))
        .collect()
}

/// Violations of [`ALLOWED_EDGES`] and [`TEST_ONLY`] in one manifest.
fn check_manifest(
    manifest: &toml::Table,
    workspace_deps: &toml::Table,
    march_crates: &BTreeSet<String>,
) -> Vec<String> {
    let Some(name) = manifest
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
    else {
        return Vec::new();
    };
    let Some((_, allowed)) = ALLOWED_EDGES
        .iter()
        .find(|(crate_name, _)| *crate_name == name)
    else {
        return vec![format!(
            "crate `{name}` is missing from ALLOWED_EDGES in tests/tests/architecture.rs \
             (add it there and to ARCHITECTURE.md §2)"
        )];
    };
    let Allowed::Only(allowed) = *allowed else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    for kind in ["dependencies", "build-dependencies"] {
        for dep in dependency_names(manifest, workspace_deps, kind) {
            if TEST_ONLY.contains(&dep.as_str()) {
                problems.push(format!(
                    "`{name}` has `{dep}` in [{kind}]; it may only be a dev-dependency"
                ));
            } else if march_crates.contains(&dep) && !allowed.contains(&dep.as_str()) {
                problems.push(format!(
                    "`{name}` may not depend on `{dep}` (allowed: {})",
                    if allowed.is_empty() {
                        "none of March's crates".to_string()
                    } else {
                        allowed.join(", ")
                    }
                ));
            }
        }
    }
    problems
}

/// Blank out comments and string and char literals, keeping byte offsets and newlines, so
/// only code is matched.
fn code_only(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = bytes.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to.min(bytes.len())] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let end = source[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |p| i + 2 + p + 2);
            blank(&mut out, i, end);
            i = end;
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j);
            i = j + 1;
        } else if rest.starts_with(b"'\\") {
            // An escaped char literal ('\'', '\n', '\u{..}'): it closes at the first quote
            // after the escaped character.
            let end = bytes
                .iter()
                .skip(i + 3)
                .position(|&b| b == b'\'')
                .map_or(bytes.len(), |p| i + 3 + p + 1);
            blank(&mut out, i, end);
            i = end;
        } else if rest[0] == b'\'' && rest.len() > 2 && rest[2] == b'\'' {
            // A one-byte char literal such as '"' (lifetimes never close with a quote).
            blank(&mut out, i, i + 3);
            i += 3;
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn skip_ws(src: &[u8], mut i: usize) -> usize {
    while src.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

fn read_ident(src: &[u8], i: usize) -> (String, usize) {
    let mut end = i;
    while src.get(end).copied().is_some_and(is_ident_byte) {
        end += 1;
    }
    (String::from_utf8_lossy(&src[i..end]).into_owned(), end)
}

/// A path found in the source and the byte offset of its last segment.
type FoundPath = (Vec<String>, usize);

/// Expand the path continuing at `src[i..]` after `prefix` (whose last segment is at `at`),
/// `use` groups included, into full paths; returns where it ended.
fn expand_path(src: &[u8], i: usize, prefix: FoundPath, out: &mut Vec<FoundPath>) -> usize {
    let mut i = skip_ws(src, i);
    if !src[i.min(src.len())..].starts_with(b"::") {
        out.push(prefix);
        return i;
    }
    i = skip_ws(src, i + 2);
    if src.get(i) != Some(&b'{') {
        let (ident, next) = read_ident(src, i);
        if ident.is_empty() {
            // `*` or generics: the path ends here.
            out.push(prefix);
            return next;
        }
        let (mut path, _) = prefix;
        path.push(ident);
        return expand_path(src, next, (path, i), out);
    }
    i += 1;
    loop {
        i = skip_ws(src, i);
        match src.get(i) {
            None => return i,
            Some(b'}') => return i + 1,
            Some(_) => {
                let (ident, next) = read_ident(src, i);
                match ident.as_str() {
                    // `, *`, `,` and friends.
                    "" => i += 1,
                    // `x as y`: skip the alias.
                    "as" => i = read_ident(src, skip_ws(src, next)).1,
                    "self" => i = expand_path(src, next, (prefix.0.clone(), i), out),
                    _ => {
                        let mut path = prefix.0.clone();
                        path.push(ident);
                        i = expand_path(src, next, (path, i), out);
                    }
                }
            }
        }
    }
}

/// Every path (as `a::b::c`) rooted at `root` in `code`, with the 1-based line of its last
/// segment.
fn paths_rooted_at(code: &str, root: &str) -> Vec<(usize, String)> {
    let src = code.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(pos) = code[from..].find(root).map(|p| from + p) {
        from = pos + root.len();
        let before_ok = pos == 0 || !is_ident_byte(src[pos - 1]);
        let after_ok = src.get(from).is_none_or(|&b| !is_ident_byte(b));
        if !before_ok || !after_ok {
            continue;
        }
        let mut paths = Vec::new();
        expand_path(src, from, (vec![root.to_string()], pos), &mut paths);
        found.extend(paths.into_iter().map(|(path, at)| {
            let line = code[..at].matches('\n').count() + 1;
            (line, path.join("::"))
        }));
    }
    found
}

/// Whether `path` starts with `prefix`, whole segments only.
fn has_prefix(path: &str, prefix: &str) -> bool {
    let mut path = path.split("::");
    prefix.split("::").all(|seg| path.next() == Some(seg))
}

/// Violations of [`SOURCE_RULES`] in one file; `rel` is its path relative to the root.
fn check_source(rel: &str, source: &str) -> Vec<String> {
    let code = code_only(source);
    let mut problems = Vec::new();
    for rule in SOURCE_RULES {
        if !rule.dirs.iter().any(|d| rel.starts_with(&format!("{d}/"))) {
            continue;
        }
        let roots: BTreeSet<&str> = rule
            .forbidden
            .iter()
            .filter_map(|f| f.split("::").next())
            .collect();
        for root in roots {
            for (line, path) in paths_rooted_at(&code, root) {
                let forbidden = rule.forbidden.iter().any(|f| has_prefix(&path, f));
                let allowed = rule.allowed.iter().any(|a| has_prefix(&path, a));
                if forbidden && !allowed {
                    problems.push(format!("{rel}:{line}: `{path}`: {}", rule.why));
                }
            }
        }
    }
    problems
}

/// Where a string literal equal to a tool's name may stand in the runner's own code, and why:
/// everything else asks the tool (invariant 2), so the runner never matches a tool's name.
const TOOL_NAME_EXCEPTIONS: &[(&str, &str, &str)] = &[(
    "runner/src/diagnostics.rs",
    "diagnostics",
    "the key of March's diagnostics extension in ACP capabilities, not the tool",
)];

/// The string literals of `source` (comments skipped) with their line numbers.
fn string_literals(source: &str) -> Vec<(usize, String)> {
    let code = code_only(source);
    let (bytes, blanked) = (source.as_bytes(), code.as_bytes());
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        // A quote that survived blanking opens a literal in code (not in a comment).
        if blanked[i] == b'"' && bytes[i] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            let line = source[..i].matches('\n').count() + 1;
            out.push((line, source[i + 1..j.min(bytes.len())].to_string()));
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// The part of a source file before its tests (a `#[cfg(test)]` module closes every file).
fn production_code<'a>(rel: &str, source: &'a str) -> Option<&'a str> {
    if rel.ends_with("/tests.rs") || rel.contains("/tests/") {
        return None;
    }
    Some(source.split("#[cfg(test)]").next().unwrap_or(source))
}

/// Tool-name literals in the runner's production code outside [`TOOL_NAME_EXCEPTIONS`].
fn check_tool_names(rel: &str, source: &str, names: &[&str]) -> Vec<String> {
    if !rel.starts_with("runner/src/") {
        return Vec::new();
    }
    let Some(code) = production_code(rel, source) else {
        return Vec::new();
    };
    string_literals(code)
        .into_iter()
        .filter(|(_, text)| names.contains(&text.as_str()))
        .filter(|(_, text)| {
            !TOOL_NAME_EXCEPTIONS
                .iter()
                .any(|(file, name, _)| *file == rel && name == text)
        })
        .map(|(line, text)| {
            format!(
                "{rel}:{line}: \"{text}\" names a tool: ask the tool (kind, title, target_paths, \
                 its outcome's change) instead of matching its name"
            )
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn crates_depend_only_on_what_they_may() {
    let root = workspace_root();
    let root_manifest = parse_toml(&root.join("Cargo.toml"));
    let workspace_deps = root_manifest
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(|d| d.as_table())
        .cloned()
        .unwrap_or_default();
    let manifests: Vec<(PathBuf, toml::Table)> = member_dirs(&root, &root_manifest)
        .into_iter()
        .map(|dir| {
            let path = dir.join("Cargo.toml");
            let manifest = parse_toml(&path);
            (path, manifest)
        })
        .collect();
    assert!(
        manifests.len() >= 2,
        "no members found under {}",
        root.display()
    );

    let mut march_crates: BTreeSet<String> =
        ALLOWED_EDGES.iter().map(|(n, _)| n.to_string()).collect();
    march_crates.extend(
        manifests
            .iter()
            .filter_map(|(_, m)| m.get("package")?.get("name")?.as_str().map(String::from)),
    );

    let problems: Vec<String> = manifests
        .iter()
        .flat_map(|(path, manifest)| {
            check_manifest(manifest, &workspace_deps, &march_crates)
                .into_iter()
                .map(move |p| format!("{}: {p}", path.display()))
        })
        .collect();
    assert!(
        problems.is_empty(),
        "dependency rules broken:\n{}",
        problems.join("\n")
    );
}

/// Every `.rs` file under `dirs` (relative to the workspace root): its path relative to the
/// root, with `/` separators, and its text.
fn sources_under<'a>(dirs: impl IntoIterator<Item = &'a str>) -> Vec<(String, String)> {
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in dirs {
        rust_files(&root.join(dir), &mut files);
    }
    files
        .into_iter()
        .map(|file| {
            let rel = file
                .strip_prefix(&root)
                .unwrap_or(&file)
                .to_string_lossy()
                .replace('\\', "/");
            let source = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
            (rel, source)
        })
        .collect()
}

#[test]
fn shell_sources_stay_on_their_side() {
    let dirs: BTreeSet<&str> = SOURCE_RULES
        .iter()
        .flat_map(|r| r.dirs.iter().copied())
        .collect();
    let problems: Vec<String> = sources_under(dirs)
        .iter()
        .flat_map(|(rel, source)| check_source(rel, source))
        .collect();
    assert!(
        problems.is_empty(),
        "source rules broken:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_runner_matches_no_tool_name() {
    let sources = sources_under(["runner/src"]);
    assert!(!sources.is_empty());
    let problems: Vec<String> = sources
        .iter()
        .flat_map(|(rel, source)| check_tool_names(rel, source, &march_tools::registry::ALL))
        .collect();
    assert!(
        problems.is_empty(),
        "tool names in the runner:\n{}",
        problems.join("\n")
    );
}

#[test]
fn checker_reports_tool_names() {
    let names = &march_tools::registry::ALL;
    let source = r#"
// "edit" in a comment is fine.
fn kind(name: &str) -> u8 {
    match name {
        "edit" | "write" => 1,
        "editing" => 2,
        _ => 0,
    }
}
#[cfg(test)]
mod tests { const T: &str = "bash"; }
"#;
    let problems = check_tool_names("runner/src/agent/updates.rs", source, names);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].starts_with("runner/src/agent/updates.rs:5: \"edit\""));
    assert!(problems[1].starts_with("runner/src/agent/updates.rs:5: \"write\""));
    // Tests, other crates and the listed exception are free.
    assert!(check_tool_names("runner/src/client/tests.rs", source, names).is_empty());
    assert!(check_tool_names("tools/src/registry.rs", source, names).is_empty());
    let key = "const EXTENSION_KEY: &str = \"diagnostics\";";
    assert!(check_tool_names("runner/src/diagnostics.rs", key, names).is_empty());
    assert_eq!(check_tool_names("runner/src/lib.rs", key, names).len(), 1);
}

#[test]
fn checker_reports_forbidden_edges() {
    let manifest: toml::Table = r#"
[package]
name = "march-core"

[dependencies]
serde = "1"
tools = { package = "march-tools", path = "../tools" }
march-testkit.workspace = true

[target.'cfg(unix)'.build-dependencies]
march-runner = { path = "../runner" }

[dev-dependencies]
march-e2e = { path = "../tests" }
"#
    .parse()
    .unwrap();
    let workspace_deps: toml::Table = "march-testkit = { path = \"testkit\" }\n".parse().unwrap();
    let crates: BTreeSet<String> = [
        "march-core",
        "march-tools",
        "march-runner",
        "march-testkit",
        "march-e2e",
    ]
    .map(String::from)
    .into();
    let problems = check_manifest(&manifest, &workspace_deps, &crates);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    for expected in [
        "`march-core` may not depend on `march-tools`",
        "`march-core` has `march-testkit` in [dependencies]",
        "`march-core` may not depend on `march-runner`",
    ] {
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "{expected}: {problems:#?}"
        );
    }

    let app: toml::Table = "[package]\nname = \"march\"\n[dependencies]\nmarch-core.workspace = true\nmarch-runner = { path = \"r\" }\n[dev-dependencies]\nmarch-testkit.workspace = true\n"
        .parse()
        .unwrap();
    assert!(check_manifest(&app, &workspace_deps, &crates).is_empty());
    let e2e: toml::Table =
        "[package]\nname = \"march-e2e\"\n[dependencies]\nmarch-testkit = \"1\"\n"
            .parse()
            .unwrap();
    assert!(check_manifest(&e2e, &workspace_deps, &crates).is_empty());
    let unknown: toml::Table = "[package]\nname = \"march-new\"\n".parse().unwrap();
    assert!(check_manifest(&unknown, &workspace_deps, &crates)[0].contains("ALLOWED_EDGES"));
}

#[test]
fn checker_reports_forbidden_paths() {
    let source = r#"
use march_core::{config::Config, model::{Model, ModelRegistry}};
use march_core::{
    paths::MarchPaths,
    agent::Agent as A,
};
use march_runner::{client::RunnerClient, serve};
// march_tools::read is only mentioned in a comment.
const S: &str = "march_core::provider in a string";
fn f() { let _ = march_tools::registry(); let q = '"'; march_runner::session::open(); }
"#;
    let problems = check_source("app/src/main.rs", source);
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(problems[0].starts_with("app/src/main.rs:5: `march_core::agent::Agent`"));
    assert!(problems[1].starts_with("app/src/main.rs:10: `march_tools::registry`"));
    // Core's agent is also off the app's allow-list of core modules.
    assert!(problems[2].starts_with("app/src/main.rs:5: `march_core::agent::Agent`"));
    assert!(problems[2].contains("the app uses core for"));
    assert!(problems[3].starts_with("app/src/main.rs:10: `march_runner::session::open`"));
    // The app's use of core is an allow-list: the session store is not on it.
    let store = check_source(
        "app/src/a.rs",
        "use march_core::session::{SessionStore, format_iso_ms};",
    );
    assert_eq!(store.len(), 1, "{store:#?}");
    assert!(store[0].contains("march_core::session::SessionStore"));

    // Panes get the core/tools rule but not the runner rule; other crates get neither.
    let panes = check_source(
        "panes/src/agent.rs",
        "use march_core::provider::Openai;\nuse march_runner::x;\n",
    );
    assert_eq!(panes.len(), 1, "{panes:#?}");
    assert!(check_source("runner/src/lib.rs", "use march_core::agent::Agent;").is_empty());
    // Segment-wise matching: `agent_loop` is its own rule, `agents_md` matches none.
    assert_eq!(
        check_source("panes/src/a.rs", "use march_core::agent_loop::run;").len(),
        1
    );
    assert!(check_source("panes/src/a.rs", "use march_core::agents_md::Load;").is_empty());
    // In the app the allow-list is segment-wise too: `paths` is on it, `paths_extra` not.
    assert!(check_source("app/src/a.rs", "use march_core::paths::MarchPaths;").is_empty());
    assert_eq!(
        check_source("app/src/a.rs", "use march_core::paths_extra::X;").len(),
        1
    );
}
