//! Skills, as pi has them: a directory with a `SKILL.md` (frontmatter `name`, `description`
//! and optional fields, then instructions) that the model reads when a task calls for it.
//! The system prompt lists the visible ones (only when the read tool is there to read them);
//! `/skill:NAME ARGS` puts one into the prompt.
//!
//! Found in the user's `<config>/skills/`, `~/.agents/skills/`, `~/.pi/agent/skills/` and
//! `~/.claude/skills/`, and in the project's `.march/skills/`, `.agents/skills/`,
//! `.pi/skills/` and `.claude/skills/` of every directory from the project up to its git
//! root. A `SKILL.md` is found at any depth; a plain `.md` at the top of March's and pi's own
//! skill directories is a skill too. The first skill of a name wins; an invalid one is
//! reported and skipped.

use std::path::{Path, PathBuf};

use crate::context::project_context::repository_root;
use crate::prompt_templates::split_frontmatter;

/// Longest name.
const MAX_NAME: usize = 64;
/// Longest description.
const MAX_DESCRIPTION: usize = 1024;
/// Longest `compatibility`.
const MAX_COMPATIBILITY: usize = 500;
/// How deep below a skills directory a `SKILL.md` is looked for (symlinks are followed, so
/// a loop must end somewhere).
const MAX_DEPTH: usize = 6;

/// A skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name (`/skill:NAME`).
    pub name: String,
    /// When to use it.
    pub description: String,
    /// Its file.
    pub path: PathBuf,
    /// The directory its relative references start from.
    pub base_dir: PathBuf,
    /// Left out of the system prompt (`disable-model-invocation: true`): used only when the
    /// user names it.
    pub hidden: bool,
    /// The other frontmatter fields, kept as written (`license`, `allowed-tools`, …).
    pub fields: Vec<(String, String)>,
    /// Where it was found, for `/skills`: `user`, `project`.
    pub scope: &'static str,
}

/// A directory skills are looked for in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDir {
    /// The directory.
    pub path: PathBuf,
    /// Whether a plain `.md` at its top is a skill.
    pub loose_files: bool,
    /// `user` or `project`.
    pub scope: &'static str,
}

/// The directories, in order: the user's, then the project's from `cwd` up to its git root.
pub fn skill_dirs(config_dir: &Path, home: Option<&Path>, cwd: &Path) -> Vec<SkillDir> {
    let dir = |path: PathBuf, loose_files: bool, scope| SkillDir {
        path,
        loose_files,
        scope,
    };
    let mut dirs = vec![dir(config_dir.join("skills"), true, "user")];
    if let Some(home) = home {
        dirs.push(dir(home.join(".agents/skills"), false, "user"));
        dirs.push(dir(home.join(".pi/agent/skills"), true, "user"));
        dirs.push(dir(home.join(".claude/skills"), false, "user"));
    }
    let root = repository_root(cwd).unwrap_or_else(|| cwd.to_path_buf());
    for d in cwd.ancestors().take_while(|d| d.starts_with(&root)) {
        dirs.push(dir(d.join(".march/skills"), true, "project"));
        dirs.push(dir(d.join(".agents/skills"), false, "project"));
        dirs.push(dir(d.join(".pi/skills"), true, "project"));
        dirs.push(dir(d.join(".claude/skills"), false, "project"));
    }
    dirs
}

/// Why a name is not one: at most 64 of `a-z`, `0-9` and `-`, no hyphen first, last or twice.
fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it has no name")
    } else if name.len() > MAX_NAME {
        Some("its name is longer than 64 characters")
    } else if !name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        Some("its name may have only a-z, 0-9 and -")
    } else if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        Some("its name starts or ends with a hyphen, or has two in a row")
    } else {
        None
    }
}

/// The skill in `path` (its directory's name when the frontmatter names none), or why not.
fn parse(
    path: &Path,
    base_dir: &Path,
    fallback: &str,
    scope: &'static str,
) -> Result<Skill, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot be read: {e}"))?;
    let (front, _) = split_frontmatter(&text);
    let field = |key: &str| {
        front
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    let name = field("name").unwrap_or(fallback).to_string();
    if let Some(problem) = name_problem(&name) {
        return Err(format!("{problem} (`{name}`)"));
    }
    let description = field("description").unwrap_or_default().to_string();
    if description.is_empty() {
        return Err("it has no description".to_string());
    }
    if description.chars().count() > MAX_DESCRIPTION {
        return Err("its description is longer than 1024 characters".to_string());
    }
    if field("compatibility").is_some_and(|c| c.chars().count() > MAX_COMPATIBILITY) {
        return Err("its compatibility is longer than 500 characters".to_string());
    }
    let hidden = field("disable-model-invocation") == Some("true");
    let fields = front
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "name" | "description"))
        .cloned()
        .collect();
    Ok(Skill {
        name,
        description,
        path: path.to_path_buf(),
        base_dir: base_dir.to_path_buf(),
        hidden,
        fields,
        scope,
    })
}

/// The skills under `dirs` and what was wrong with the ones skipped; blocking.
pub fn load(dirs: &[SkillDir]) -> (Vec<Skill>, Vec<String>) {
    let mut skills: Vec<Skill> = Vec::new();
    let mut problems = Vec::new();
    for dir in dirs {
        let mut files = Vec::new();
        find(&dir.path, dir.loose_files, MAX_DEPTH, &mut files);
        files.sort();
        for (path, base_dir, fallback) in files {
            match parse(&path, &base_dir, &fallback, dir.scope) {
                Ok(skill) if skills.iter().any(|s| s.name == skill.name) => {
                    tracing::debug!(skill = %skill.name, path = %path.display(), "a skill of that name came first");
                }
                Ok(skill) => skills.push(skill),
                Err(why) => problems.push(format!("skill {} skipped: {why}", path.display())),
            }
        }
    }
    (skills, problems)
}

/// The skill files under `dir`: each `SKILL.md` with its directory, and (`loose`) the
/// top's plain `.md` files; as (file, base directory, name when the file gives none).
fn find(dir: &Path, loose: bool, depth: usize, out: &mut Vec<(PathBuf, PathBuf, String)>) {
    let Some(depth) = depth.checked_sub(1) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let name_of = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            let skill = path.join("SKILL.md");
            if skill.is_file() {
                out.push((skill, path.clone(), name_of(&path)));
            } else {
                find(&path, false, depth, out);
            }
        } else if loose
            && let Some(stem) = name_of(&path).strip_suffix(".md")
            && stem != "SKILL"
        {
            out.push((path.clone(), dir.to_path_buf(), stem.to_string()));
        }
    }
}

/// `&`, `<`, `>` and quotes escaped.
fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// The system prompt's skills block: the visible skills, and how to use them; empty when
/// none is visible.
pub fn prompt_block(skills: &[Skill]) -> String {
    let visible: Vec<&Skill> = skills.iter().filter(|s| !s.hidden).collect();
    if visible.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "The following skills provide specialized instructions for specific tasks. Use the \
         read tool to load a skill's file when the task matches its description; resolve \
         relative paths in a skill against the directory of its file.\n\n<available_skills>\n",
    );
    for s in visible {
        out.push_str(&format!(
            "  <skill>\n    <name>{}</name>\n    <description>{}</description>\n    \
             <location>{}</location>\n  </skill>\n",
            xml(&s.name),
            xml(&s.description),
            xml(&s.path.to_string_lossy())
        ));
    }
    out.push_str("</available_skills>");
    out
}

/// The prompt `text` with the skill it names put in, when it is `/skill:NAME ARGS` for one
/// of `skills` (the file read again, so an edit shows at once); blocking.
pub fn expand(text: &str, skills: &[Skill]) -> Option<Result<String, String>> {
    let command = text.strip_prefix("/skill:")?;
    let (name, args) = command
        .split_once(char::is_whitespace)
        .unwrap_or((command, ""));
    let skill = skills.iter().find(|s| s.name == name)?;
    let body = match std::fs::read_to_string(&skill.path) {
        Ok(text) => split_frontmatter(&text).1.trim().to_string(),
        Err(e) => {
            return Some(Err(format!(
                "skill {name}: {} cannot be read: {e}",
                skill.path.display()
            )));
        }
    };
    let mut out = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{body}\n</skill>",
        xml(&skill.name),
        xml(&skill.path.to_string_lossy()),
        skill.base_dir.display()
    );
    let args = args.trim();
    if !args.is_empty() {
        out.push_str("\n\n");
        out.push_str(args);
    }
    Some(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: PathBuf, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn names_follow_the_spec() {
        assert_eq!(name_problem("pdf-tools"), None);
        assert_eq!(name_problem("a1"), None);
        for bad in ["", "-a", "a-", "a--b", "PDF", "a_b", &"a".repeat(65)] {
            assert!(name_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn skills_are_found_validated_and_the_first_of_a_name_wins() {
        let dir = tempfile::tempdir().unwrap();
        let (config, home, repo) = (
            dir.path().join("config"),
            dir.path().join("home"),
            dir.path().join("repo"),
        );
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        let cwd = repo.join("sub");
        write(
            config.join("skills/pdf/SKILL.md"),
            "---\nname: pdf\ndescription: Work with PDF files\nlicense: MIT\n---\nUse pdftotext.",
        );
        write(
            config.join("skills/notes.md"),
            "---\ndescription: Take notes\n---\nbody",
        );
        write(
            home.join(".claude/skills/deep/nested/SKILL.md"),
            "---\ndescription: Nested one\n---\nx",
        );
        // Loose files count only in March's and pi's own directories.
        write(
            home.join(".agents/skills/loose.md"),
            "---\ndescription: no\n---\n",
        );
        write(
            repo.join(".march/skills/pdf/SKILL.md"),
            "---\nname: pdf\ndescription: The project's pdf\n---\n",
        );
        write(
            cwd.join(".pi/skills/bad/SKILL.md"),
            "---\nname: Bad_Name\ndescription: x\n---\n",
        );
        write(
            cwd.join(".agents/skills/mute/SKILL.md"),
            "---\nname: mute\n---\n",
        );
        write(
            cwd.join(".claude/skills/quiet/SKILL.md"),
            "---\ndescription: Only when asked\ndisable-model-invocation: true\n---\n",
        );
        // A link back up makes a loop, which ends.
        std::os::unix::fs::symlink(
            home.join(".agents/skills"),
            home.join(".agents/skills/cycle"),
        )
        .unwrap();
        // Above the git root: not the project's.
        write(
            dir.path().join(".march/skills/outside/SKILL.md"),
            "---\ndescription: outside\n---\n",
        );
        let (skills, problems) = load(&skill_dirs(&config, Some(&home), &cwd));
        let names: Vec<(&str, &str)> = skills.iter().map(|s| (s.name.as_str(), s.scope)).collect();
        assert_eq!(
            names,
            [
                ("notes", "user"),
                ("pdf", "user"),
                ("nested", "user"),
                ("quiet", "project")
            ]
        );
        let pdf = &skills[1];
        assert_eq!(pdf.description, "Work with PDF files");
        assert_eq!(pdf.fields, [("license".to_string(), "MIT".to_string())]);
        assert_eq!(pdf.base_dir, config.join("skills/pdf"));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems
                .iter()
                .any(|p| p.contains("Bad_Name") && p.contains("a-z"))
        );
        assert!(
            problems
                .iter()
                .any(|p| p.contains("mute") && p.contains("no description"))
        );

        // The prompt lists the visible ones only, escaped.
        let block = prompt_block(&skills);
        assert!(block.contains("<name>pdf</name>") && block.contains("<available_skills>"));
        assert!(!block.contains("quiet"), "{block}");
        assert!(block.contains(&format!("<location>{}</location>", pdf.path.display())));
        assert!(prompt_block(&[]).is_empty());

        // `/skill:` puts the body in, with the arguments after it.
        let expanded = expand("/skill:pdf extract page 2", &skills)
            .unwrap()
            .unwrap();
        assert_eq!(
            expanded,
            format!(
                "<skill name=\"pdf\" location=\"{}\">\nReferences are relative to {}.\n\nUse \
                 pdftotext.\n</skill>\n\nextract page 2",
                pdf.path.display(),
                pdf.base_dir.display()
            )
        );
        assert!(
            expand("/skill:quiet", &skills)
                .unwrap()
                .unwrap()
                .ends_with("</skill>")
        );
        assert!(expand("/skill:none", &skills).is_none());
        assert!(expand("/pdf", &skills).is_none());
        assert_eq!(xml("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
    }
}
