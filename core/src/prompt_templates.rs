//! Prompt templates, as pi has them: Markdown files whose name is a slash command
//! (`review.md` is `/review`), with optional frontmatter (`description`, `argument-hint`),
//! expanded with the command's arguments (`$1`, `$2`, …, `$@` and `$ARGUMENTS`, `${@:N}` and
//! `${@:N:L}` as in bash) before the prompt reaches the model.
//!
//! Found in March's `prompts/` (the config directory's, then the project's `.march/prompts/`)
//! and where pi and Claude Code keep theirs (`~/.pi/agent/prompts/`, `~/.claude/commands/`,
//! and the project's `.pi/prompts/` and `.claude/commands/`), so existing collections work. A
//! subdirectory's templates keep their file name as the command and show the directory in
//! their source (`(project:frontend)`). The first template of a name wins.

use std::path::{Path, PathBuf};

/// How deep below a prompts directory templates are looked for (symlinks are followed, so a
/// loop must end somewhere).
const MAX_DEPTH: usize = 6;

/// A description longer than this (taken from the first line) is cut.
const FIRST_LINE_DESCRIPTION: usize = 60;

/// Whose a template is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateScope {
    /// The user's, for every project.
    User,
    /// The project's.
    Project,
}

/// A prompt template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    /// The command, without `/`.
    pub name: String,
    /// What it does, for completion (the frontmatter's, else its first line).
    pub description: String,
    /// What its arguments are (`argument-hint`), if it says.
    pub argument_hint: Option<String>,
    /// The text after the frontmatter.
    pub content: String,
    /// Where it was found, as pi says it: `(user)`, `(project:frontend)`.
    pub source: String,
    /// Its file.
    pub path: PathBuf,
}

impl PromptTemplate {
    /// Whether the text uses arguments at all.
    pub fn takes_arguments(&self) -> bool {
        self.argument_hint.is_some() || self.content.contains('$')
    }
}

/// The frontmatter's `key: value` pairs and the text after it (all of it when there is no
/// frontmatter, or it is not closed).
pub fn split_frontmatter(text: &str) -> (Vec<(String, String)>, &str) {
    let Some(rest) = text.strip_prefix("---") else {
        return (Vec::new(), text);
    };
    let Some(end) = rest.find("\n---") else {
        return (Vec::new(), text);
    };
    let block = &rest[..end];
    let body = rest[end + 4..].trim();
    let pairs = block
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            let key = key.trim_end();
            let plain = !key.is_empty()
                && !line.starts_with(char::is_whitespace)
                && key
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
            plain.then(|| (key.to_string(), unquote(value.trim()).to_string()))
        })
        .collect();
    (pairs, body)
}

/// A YAML scalar's text without the quotes around it.
fn unquote(value: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return inner;
        }
    }
    value
}

/// The command's arguments: split at spaces and tabs, quotes (single or double) keeping
/// spaces in one argument and not kept themselves (pi's rules).
pub fn parse_args(text: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ' ' || c == '\t' => {
                if !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                }
            }
            None => current.push(c),
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

/// `content` with its placeholders replaced by `args` in one pass, so an argument's own
/// `$1` or `$@` is never replaced in turn: `$N` the Nth (empty past the last), `$@` and
/// `$ARGUMENTS` all of them joined with spaces, `${@:N}` those from the Nth on, `${@:N:L}`
/// L of them from the Nth.
pub fn substitute(content: &str, args: &[String]) -> String {
    let from = |start: usize, len: Option<usize>| -> String {
        let start = start.max(1) - 1;
        let rest = args.get(start..).unwrap_or(&[]);
        let taken = match len {
            Some(len) => &rest[..len.min(rest.len())],
            None => rest,
        };
        taken.join(" ")
    };
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 1..];
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            let n: usize = tail[..digits].parse().unwrap_or(0);
            if let Some(arg) = n.checked_sub(1).and_then(|i| args.get(i)) {
                out.push_str(arg);
            }
            rest = &tail[digits..];
        } else if let Some(after) = tail.strip_prefix('@') {
            out.push_str(&from(1, None));
            rest = after;
        } else if let Some(after) = tail.strip_prefix("ARGUMENTS") {
            out.push_str(&from(1, None));
            rest = after;
        } else if let Some((range, after)) = tail
            .strip_prefix("{@:")
            .and_then(|t| t.split_once('}'))
            .and_then(|(range, after)| Some((slice_of(range)?, after)))
        {
            out.push_str(&from(range.0, range.1));
            rest = after;
        } else {
            out.push('$');
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// `N` or `N:L` of `${@:N:L}`.
fn slice_of(range: &str) -> Option<(usize, Option<usize>)> {
    match range.split_once(':') {
        Some((start, len)) => Some((start.parse().ok()?, Some(len.parse().ok()?))),
        None => Some((range.parse().ok()?, None)),
    }
}

/// The prompt `text` expanded, when it is `/NAME ARGS` for one of `templates`.
pub fn expand(text: &str, templates: &[PromptTemplate]) -> Option<String> {
    let command = text.strip_prefix('/')?;
    let (name, args) = command.split_once(' ').unwrap_or((command, ""));
    let template = templates.iter().find(|t| t.name == name)?;
    Some(substitute(&template.content, &parse_args(args)))
}

/// The directories templates are read from, in order: the user's (`config_dir`'s
/// `prompts/`, then pi's and Claude Code's under `home`), then the project's.
pub fn template_dirs(
    config_dir: &Path,
    home: Option<&Path>,
    project: &Path,
) -> Vec<(PathBuf, TemplateScope)> {
    let mut dirs = vec![(config_dir.join("prompts"), TemplateScope::User)];
    if let Some(home) = home {
        dirs.push((home.join(".pi/agent/prompts"), TemplateScope::User));
        dirs.push((home.join(".claude/commands"), TemplateScope::User));
    }
    for sub in [".march/prompts", ".pi/prompts", ".claude/commands"] {
        dirs.push((project.join(sub), TemplateScope::Project));
    }
    dirs
}

/// Every template under `dirs` (the first of a name wins); blocking. Unreadable files and
/// directories are skipped (logged).
pub fn load(dirs: &[(PathBuf, TemplateScope)]) -> Vec<PromptTemplate> {
    let mut out: Vec<PromptTemplate> = Vec::new();
    for (dir, scope) in dirs {
        let mut found = Vec::new();
        read_dir(dir, *scope, "", MAX_DEPTH, &mut found);
        found.sort_by(|a, b| a.path.cmp(&b.path));
        for template in found {
            if !out.iter().any(|t| t.name == template.name) {
                out.push(template);
            }
        }
    }
    out
}

fn read_dir(
    dir: &Path,
    scope: TemplateScope,
    subdir: &str,
    depth: usize,
    out: &mut Vec<PromptTemplate>,
) {
    let Some(depth) = depth.checked_sub(1) else {
        return;
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            tracing::warn!(dir = %dir.display(), "prompt templates not read: {e}");
            return;
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            let sub = if subdir.is_empty() {
                name
            } else {
                format!("{subdir}:{name}")
            };
            read_dir(&path, scope, &sub, depth, out);
            continue;
        }
        let Some(command) = name.strip_suffix(".md") else {
            continue;
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                tracing::warn!(file = %path.display(), "prompt template not read: {e}");
                continue;
            }
        };
        out.push(parse(command, &text, scope, subdir, path.clone()));
    }
}

/// A template from its file's text.
fn parse(
    name: &str,
    text: &str,
    scope: TemplateScope,
    subdir: &str,
    path: PathBuf,
) -> PromptTemplate {
    let (front, body) = split_frontmatter(text);
    let field = |key: &str| {
        front
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let scope = match scope {
        TemplateScope::User => "user",
        TemplateScope::Project => "project",
    };
    let source = if subdir.is_empty() {
        format!("({scope})")
    } else {
        format!("({scope}:{subdir})")
    };
    let description = field("description").unwrap_or_else(|| {
        let first = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let mut cut: String = first.chars().take(FIRST_LINE_DESCRIPTION).collect();
        if first.chars().count() > FIRST_LINE_DESCRIPTION {
            cut.push_str("...");
        }
        cut
    });
    let description = if description.is_empty() {
        source.clone()
    } else {
        format!("{description} {source}")
    };
    PromptTemplate {
        name: name.to_string(),
        description,
        argument_hint: field("argument-hint"),
        content: body.to_string(),
        source,
        path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn arguments_split_at_blanks_and_quotes_keep_spaces() {
        assert_eq!(parse_args("a b\tc"), args(&["a", "b", "c"]));
        assert_eq!(
            parse_args(r#"Button "onClick handler" 'it is' x"#),
            args(&["Button", "onClick handler", "it is", "x"])
        );
        assert_eq!(
            parse_args(r#"say "it's fine""#),
            args(&["say", "it's fine"])
        );
        assert_eq!(parse_args("  "), Vec::<String>::new());
        assert_eq!(parse_args(r#""""#), Vec::<String>::new());
        // An unclosed quote runs to the end.
        assert_eq!(parse_args(r#"a "b c"#), args(&["a", "b c"]));
    }

    #[test]
    fn placeholders_follow_pis_rules() {
        let a = args(&["foo", "bar", "baz"]);
        assert_eq!(substitute("Test: $ARGUMENTS", &a), "Test: foo bar baz");
        assert_eq!(substitute("Test: $@", &a), "Test: foo bar baz");
        assert_eq!(
            substitute("$1 then $3 then $2", &a),
            "foo then baz then bar"
        );
        // Past the last argument: empty.
        assert_eq!(substitute("[$4]", &a), "[]");
        assert_eq!(substitute("[$0]", &a), "[]");
        assert_eq!(substitute("$10", &args(&["a"; 10])), "a");
        // Bash's slices.
        assert_eq!(substitute("${@:2}", &a), "bar baz");
        assert_eq!(substitute("${@:2:1}", &a), "bar");
        assert_eq!(substitute("${@:1:2}", &a), "foo bar");
        assert_eq!(substitute("${@:5}", &a), "");
        assert_eq!(substitute("${@:3:9}", &a), "baz");
        // Not placeholders: kept.
        assert_eq!(
            substitute("costs $ and ${HOME} and ${@:x}", &a),
            "costs $ and ${HOME} and ${@:x}"
        );
        assert_eq!(substitute("$", &a), "$");
    }

    #[test]
    fn arguments_are_never_substituted_again() {
        let a = args(&["$2", "$@", "${@:1}"]);
        assert_eq!(substitute("$1|$2|$3", &a), "$2|$@|${@:1}");
        assert_eq!(substitute("$@", &a), "$2 $@ ${@:1}");
    }

    #[test]
    fn a_prompt_expands_only_for_a_template_of_its_name() {
        let t = parse(
            "component",
            "---\ndescription: Create a component\nargument-hint: NAME FEATURES…\n---\nCreate $1 with: ${@:2}\n",
            TemplateScope::Project,
            "",
            PathBuf::from("/p/.march/prompts/component.md"),
        );
        assert_eq!(t.description, "Create a component (project)");
        assert_eq!(t.argument_hint.as_deref(), Some("NAME FEATURES…"));
        let all = [t];
        assert_eq!(
            expand(r#"/component Button "click handler" disabled"#, &all).as_deref(),
            Some("Create Button with: click handler disabled")
        );
        assert_eq!(
            expand("/component", &all).as_deref(),
            Some("Create  with: ")
        );
        assert_eq!(expand("/other x", &all), None);
        assert_eq!(expand("component x", &all), None);
    }

    #[test]
    fn templates_are_found_in_every_place_and_the_first_of_a_name_wins() {
        let dir = tempfile::tempdir().unwrap();
        let (config, home, project) = (
            dir.path().join("config"),
            dir.path().join("home"),
            dir.path().join("project"),
        );
        let write = |path: PathBuf, text: &str| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            config.join("prompts/review.md"),
            "---\ndescription: Review it\n---\nReview $@",
        );
        write(
            home.join(".claude/commands/explain.md"),
            "Explain this code in plain words, please, for a newcomer to the project\n",
        );
        write(project.join(".march/prompts/review.md"), "project review");
        write(
            project.join(".pi/prompts/frontend/button.md"),
            "---\nunclosed frontmatter",
        );
        write(project.join(".claude/commands/notes.txt"), "not a template");
        let found = load(&template_dirs(&config, Some(&home), &project));
        let summary: Vec<(&str, &str)> = found
            .iter()
            .map(|t| (t.name.as_str(), t.description.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("review", "Review it (user)"),
                (
                    "explain",
                    "Explain this code in plain words, please, for a newcomer to ... (user)"
                ),
                ("button", "--- (project:frontend)"),
            ]
        );
        // The user's review won over the project's.
        assert_eq!(found[0].content, "Review $@");
        // An unclosed frontmatter is text.
        assert_eq!(found[2].content, "---\nunclosed frontmatter");
    }
}
