//! The `find` tool: files and directories by glob, honouring ignore files like `fd`.

use std::io;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use march_core::event::ToolOutcome;
use march_core::tool::{Tool, ToolAnnotations, ToolError, ToolKind, ToolUpdates, call_title};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::args::{optional_count, optional_str, required_str, search_root};
use crate::context::ToolContext;
use crate::listing::{LimitReached, listing_outcome};
use crate::stat::{DirError, open_dir};
use crate::task::run_on_path;

/// Results returned when the call gives no limit.
const DEFAULT_LIMIT: usize = 1000;

/// Finds paths by glob under a directory, skipping what `.gitignore`/`.ignore` exclude.
pub struct FindTool {
    ctx: ToolContext,
    parameters: Value,
}

impl FindTool {
    /// A find tool for the session described by `ctx`.
    pub fn new(ctx: ToolContext) -> Self {
        let parameters = json!({
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"
                },
                "path": {
                    "type": "string",
                    "description": "Directory to search in (default: current directory)"
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Maximum number of results (default: 1000)"
                }
            },
            "required": ["pattern"]
        });
        FindTool { ctx, parameters }
    }
}

#[async_trait]
impl Tool for FindTool {
    fn name(&self) -> &str {
        "find"
    }

    fn description(&self) -> &str {
        "Search for files and directories by glob pattern. A pattern without '/' matches names \
         ('*.rs'); a pattern with '/' matches paths relative to the search directory \
         ('src/**/*.rs'). Returns matching paths relative to the search directory, directories \
         ending in '/'. Respects .gitignore and .ignore; hidden files are included. Output stops \
         at 1000 results or 50KB, whichever comes first."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::READ_ONLY
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some("Find files by glob pattern (respects .gitignore)")
    }

    fn kind(&self, _args: &Value) -> ToolKind {
        ToolKind::Search
    }

    fn title(&self, args: &Value) -> String {
        call_title(self.name(), args.get("pattern").and_then(Value::as_str))
    }

    fn target_paths(&self, args: &Value) -> Vec<PathBuf> {
        vec![search_root(&self.ctx, args)]
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _updates: ToolUpdates,
    ) -> Result<ToolOutcome, ToolError> {
        let pattern = required_str(&args, "pattern")?;
        optional_str(&args, "path")?;
        let limit = optional_count(&args, "limit")?.unwrap_or(DEFAULT_LIMIT);
        let matcher = Matcher::new(pattern).map_err(|e| {
            ToolError::new(format!("Invalid glob pattern \"{pattern}\": {}", e.kind()))
        })?;
        let root = search_root(&self.ctx, &args);
        let found = run_on_path("Searching", &root, &cancel, move |root, cancel| {
            search(root, &matcher, limit, cancel)
        })
        .await?
        .map_err(|e| find_error(e, &root))?;
        Ok(outcome(found, limit))
    }
}

/// What the pattern is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The entry's name (pattern without `/`).
    Name,
    /// The path relative to the search directory.
    Relative,
    /// The absolute path (pattern starting with `/`).
    Absolute,
}

/// A compiled pattern with what it applies to.
#[derive(Debug, Clone)]
struct Matcher {
    glob: GlobMatcher,
    target: Target,
}

impl Matcher {
    /// Compile `pattern` the way pi drives `fd --glob`: a pattern containing `/` is a path
    /// pattern that may start at any depth (`**/` prepended unless anchored), in which `*`
    /// stays within one component; fd's smart case makes an all-lowercase pattern match
    /// case-insensitively.
    fn new(pattern: &str) -> Result<Self, globset::Error> {
        let (glob, target) = if !pattern.contains('/') {
            (pattern.to_string(), Target::Name)
        } else if pattern.starts_with('/') {
            (pattern.to_string(), Target::Absolute)
        } else {
            let p = pattern.strip_prefix("./").unwrap_or(pattern);
            if p.starts_with("**/") {
                (p.to_string(), Target::Relative)
            } else {
                (format!("**/{p}"), Target::Relative)
            }
        };
        let glob = GlobBuilder::new(&glob)
            .literal_separator(target != Target::Name)
            .case_insensitive(!pattern.chars().any(char::is_uppercase))
            .build()?
            .compile_matcher();
        Ok(Matcher { glob, target })
    }

    fn matches(&self, name: &std::ffi::OsStr, relative: &Path, absolute: &Path) -> bool {
        match self.target {
            Target::Name => self.glob.is_match(name),
            Target::Relative => self.glob.is_match(relative),
            Target::Absolute => self.glob.is_match(absolute),
        }
    }
}

/// The matches kept, and whether there were more.
#[derive(Debug)]
struct Found {
    /// Relative POSIX paths, directories ending in `/`, sorted.
    paths: Vec<String>,
    limit_reached: bool,
    /// Entries the walk looked at, to show it stops early.
    scanned: usize,
}

/// Walk `root` and collect up to `limit` matches, stopping as soon as one more is found.
fn search(
    root: &Path,
    matcher: &Matcher,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<Found, DirError> {
    // The walk skips unreadable directories silently; the root itself must be readable.
    open_dir(root)?;
    // Like `fd --hidden`: ignore files apply (even outside a git repository, as pi passes
    // them explicitly), hidden entries are included, links are not followed. `.git` itself
    // is never searched. Entries come in directory order rather than sorted, so a huge
    // directory is never loaded whole just to sort it.
    let walker = WalkBuilder::new(root)
        .hidden(false)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .parents(true)
        .follow_links(false)
        .add_custom_ignore_filename(".fdignore")
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut paths = Vec::new();
    let mut scanned = 0;
    for entry in walker {
        if cancel.is_cancelled() {
            return Err(DirError::Cancelled);
        }
        // Unreadable directories and vanished entries are skipped, as fd does.
        let Ok(entry) = entry else {
            continue;
        };
        if entry.depth() == 0 {
            continue;
        }
        scanned += 1;
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        if !matcher.matches(entry.file_name(), relative, entry.path()) {
            continue;
        }
        let mut shown = relative.to_string_lossy().into_owned();
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            shown.push('/');
        }
        paths.push(shown);
        if paths.len() > limit {
            break;
        }
    }
    let limit_reached = paths.len() > limit;
    paths.truncate(limit);
    paths.sort_unstable();
    Ok(Found {
        paths,
        limit_reached,
        scanned,
    })
}

/// The model-facing text: paths, then pi's notices in one bracket.
fn outcome(found: Found, limit: usize) -> ToolOutcome {
    tracing::debug!(
        scanned = found.scanned,
        matches = found.paths.len(),
        "find walk finished"
    );
    let limit_reached = found.limit_reached.then(|| LimitReached {
        notice: format!(
            "{limit} results limit reached. Use limit={} for more, or refine pattern",
            limit.saturating_mul(2)
        ),
        key: "resultLimitReached",
        limit,
    });
    listing_outcome(
        &found.paths,
        "No files found matching pattern",
        limit_reached,
    )
}

/// The error the model sees, naming the resolved path.
fn find_error(e: DirError, root: &Path) -> ToolError {
    let p = root.display();
    e.into_tool_error(root, |e| match e.kind() {
        io::ErrorKind::PermissionDenied => format!("Cannot search {p}: permission denied"),
        _ => format!("Cannot search {p}: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::ffi::OsStrExt as _;

    use crate::test_support::{
        cancelled, chmod, long_names, permissions_enforced, run_tool, run_tool_with, write_files,
    };
    use crate::truncate::MAX_BYTES;

    async fn run(cwd: &Path, args: Value) -> Result<ToolOutcome, ToolError> {
        run_tool(&FindTool::new(ToolContext::local(cwd)), args).await
    }

    async fn find(cwd: &Path, pattern: &str) -> String {
        run(cwd, json!({"pattern": pattern}))
            .await
            .unwrap()
            .text_content()
    }

    fn sample() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        write_files(
            dir.path(),
            &[
                ("src/main.rs", ""),
                ("src/lib.rs", ""),
                ("src/nested/deep.rs", ""),
                ("README.md", ""),
                ("docs/guide.MD", ""),
                (".hidden/h.rs", ""),
                (".env", ""),
            ],
        );
        dir
    }

    #[tokio::test]
    async fn names_paths_and_smart_case() {
        let dir = sample();
        let d = dir.path();
        assert_eq!(
            find(d, "*.rs").await,
            ".hidden/h.rs\nsrc/lib.rs\nsrc/main.rs\nsrc/nested/deep.rs"
        );
        // All lowercase: case-insensitive; any uppercase: case-sensitive (fd's smart case).
        assert_eq!(find(d, "*.md").await, "README.md\ndocs/guide.MD");
        assert_eq!(find(d, "*.MD").await, "docs/guide.MD");
        // With a slash: relative paths, `*` within one component, any starting depth.
        assert_eq!(find(d, "src/*.rs").await, "src/lib.rs\nsrc/main.rs");
        assert_eq!(
            find(d, "src/**/*.rs").await,
            "src/lib.rs\nsrc/main.rs\nsrc/nested/deep.rs"
        );
        assert_eq!(find(d, "nested/*.rs").await, "src/nested/deep.rs");
        assert_eq!(find(d, "**/nested/*.rs").await, "src/nested/deep.rs");
        assert_eq!(find(d, "./src/main.rs").await, "src/main.rs");
        let abs = format!("{}/src/*.rs", d.display());
        assert_eq!(find(d, &abs).await, "src/lib.rs\nsrc/main.rs");
        // Directories match too and keep a trailing slash.
        assert_eq!(find(d, "nested").await, "src/nested/");
        assert_eq!(find(d, "s*").await, "src/");
        assert_eq!(find(d, ".env").await, ".env");
        // Searching a subdirectory: paths relative to it.
        let out = run(d, json!({"pattern": "*.rs", "path": "src"}))
            .await
            .unwrap();
        assert_eq!(out.text_content(), "lib.rs\nmain.rs\nnested/deep.rs");
        assert_eq!(out.details, Value::Null);
        assert_eq!(find(d, "*.py").await, "No files found matching pattern");
    }

    #[tokio::test]
    async fn gitignore_nesting_negation_ignore_files_and_dot_git() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write_files(
            d,
            &[
                (".gitignore", "*.log\nbuild/\n!keep.log\n*.txt\n"),
                ("a.log", ""),
                ("keep.log", ""),
                ("build/out.rs", ""),
                ("src/build.rs", ""),
                ("sub/.gitignore", "local.rs\n!important.txt\n"),
                ("sub/local.rs", ""),
                ("sub/other.rs", ""),
                ("sub/important.txt", ""),
                ("sub/plain.txt", ""),
                ("other/local.rs", ""),
                (".ignore", "secret.rs\n"),
                ("secret.rs", ""),
                (".fdignore", "fd_only.rs\n"),
                ("fd_only.rs", ""),
                (".git/config", ""),
                (".git/objects/x.rs", ""),
                (".github/ci.yml", ""),
            ],
        );
        assert_eq!(find(d, "*.log").await, "keep.log");
        assert_eq!(
            find(d, "*.rs").await,
            "other/local.rs\nsrc/build.rs\nsub/other.rs"
        );
        assert_eq!(find(d, "*.txt").await, "sub/important.txt");
        // Hidden entries are listed, `.git` never is.
        assert_eq!(
            find(d, ".*").await,
            ".fdignore\n.github/\n.gitignore\n.ignore\nsub/.gitignore"
        );
        assert_eq!(find(d, "config").await, "No files found matching pattern");
        assert_eq!(find(d, "*.yml").await, ".github/ci.yml");
        // Searching inside an ignored tree's parent still applies the parent's rules.
        let out = run(d, json!({"pattern": "*", "path": "sub"}))
            .await
            .unwrap();
        assert_eq!(out.text_content(), ".gitignore\nimportant.txt\nother.rs");
    }

    #[tokio::test]
    async fn result_limit_on_thousands_of_files_stops_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        for d in 0..30 {
            let sub = dir.path().join(format!("d{d:02}"));
            fs::create_dir(&sub).unwrap();
            for f in 0..100 {
                fs::write(sub.join(format!("f{f:03}.txt")), "").unwrap();
            }
        }
        let d = dir.path();
        let out = run(d, json!({"pattern": "*.txt"})).await.unwrap();
        let text = out.text_content();
        let (body, notice) = text.split_once("\n\n").unwrap();
        assert_eq!(body.lines().count(), 1000);
        assert_eq!(
            notice,
            "[1000 results limit reached. Use limit=2000 for more, or refine pattern]"
        );
        assert_eq!(out.details, json!({"resultLimitReached": 1000}));
        let mut sorted: Vec<&str> = body.lines().collect();
        sorted.sort_unstable();
        assert_eq!(sorted, body.lines().collect::<Vec<_>>());
        // Exactly as many matches as the limit: no notice.
        let all = run(d, json!({"pattern": "*.txt", "limit": 3000}))
            .await
            .unwrap();
        assert_eq!(all.text_content().lines().count(), 3000);
        assert!(!all.text_content().contains('['));
        let t = run(d, json!({"pattern": "*.txt", "limit": 2999}))
            .await
            .unwrap()
            .text_content();
        assert!(t.ends_with(
            "\n\n[2999 results limit reached. Use limit=5998 for more, or refine pattern]"
        ));
        // The walk stops right after limit + 1 matches.
        let m = Matcher::new("*.txt").unwrap();
        let found = search(d, &m, 10, &CancellationToken::new()).unwrap();
        assert_eq!(found.paths.len(), 10);
        assert!(found.limit_reached);
        assert!(found.scanned <= 11 + 30, "scanned {}", found.scanned);
    }

    #[tokio::test]
    async fn byte_limit_boundaries() {
        let exact = tempfile::tempdir().unwrap();
        long_names(exact.path(), 200);
        let t = find(exact.path(), "*").await;
        assert_eq!(t.len(), MAX_BYTES);
        assert!(!t.contains('['));

        let over = tempfile::tempdir().unwrap();
        long_names(over.path(), 201);
        let out = run(over.path(), json!({"pattern": "*"})).await.unwrap();
        let t = out.text_content();
        let (body, notice) = t.split_once("\n\n").unwrap();
        assert_eq!(notice, "[50.0KB limit reached]");
        assert_eq!(body.lines().count(), 200);
        assert_eq!(out.details["truncation"]["truncatedBy"], "bytes");
        fs::write(over.path().join(format!("201{}", "z".repeat(251))), "").unwrap();
        let t = run(over.path(), json!({"pattern": "*", "limit": 201}))
            .await
            .unwrap()
            .text_content();
        assert!(t.ends_with(
            "\n\n[201 results limit reached. Use limit=402 for more, or refine pattern. \
             50.0KB limit reached]"
        ));
    }

    #[tokio::test]
    async fn errors_and_odd_names() {
        let dir = sample();
        let d = dir.path();
        fs::write(d.join(std::ffi::OsStr::from_bytes(b"bad\xff.rs")), "").unwrap();
        assert!(find(d, "bad*").await == "bad\u{FFFD}.rs");
        let err = |args: Value| async move { run(d, args).await.unwrap_err().0 };
        assert!(
            err(json!({"pattern": "[a"}))
                .await
                .starts_with("Invalid glob pattern \"[a\": unclosed character class")
        );
        assert_eq!(
            err(json!({"pattern": "*", "path": "nope"})).await,
            format!("Path not found: {}", d.join("nope").display())
        );
        assert_eq!(
            err(json!({"pattern": "*", "path": "README.md"})).await,
            format!("Not a directory: {}", d.join("README.md").display())
        );
        assert_eq!(
            err(json!({})).await,
            "Missing required argument \"pattern\""
        );
        let locked = d.join("locked");
        fs::create_dir(&locked).unwrap();
        chmod(&locked, 0o000);
        let result = run(d, json!({"pattern": "*", "path": "locked"})).await;
        chmod(&locked, 0o755);
        if permissions_enforced() {
            assert_eq!(
                result.unwrap_err().0,
                format!("Cannot search {}: permission denied", locked.display())
            );
        }
        assert!(
            err(json!({"pattern": "*", "limit": 0}))
                .await
                .contains("\"limit\" must be a whole number")
        );
    }

    #[tokio::test]
    async fn declarations_and_cancellation() {
        let dir = sample();
        let t = FindTool::new(ToolContext::local(dir.path()));
        assert_eq!(t.name(), "find");
        assert_eq!(t.annotations(), ToolAnnotations::READ_ONLY);
        assert_eq!(t.parameters()["required"], json!(["pattern"]));
        assert_eq!(
            t.target_paths(&json!({"pattern": "*"})),
            vec![dir.path().to_path_buf()]
        );
        assert_eq!(
            t.target_paths(&json!({"pattern": "*", "path": "src"})),
            vec![dir.path().join("src")]
        );
        let cancel = cancelled();
        let e = run_tool_with(&t, json!({"pattern": "*"}), cancel.clone())
            .await
            .unwrap_err();
        assert_eq!(e.0, "Operation aborted");
        let m = Matcher::new("*").unwrap();
        assert!(matches!(
            search(dir.path(), &m, 10, &cancel),
            Err(DirError::Cancelled)
        ));
    }
}
