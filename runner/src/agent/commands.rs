//! The slash commands a session answers, as ACP's `available_commands_update`: `/compact`,
//! the user's and the project's prompt templates, and each prompt of the session's MCP
//! servers; told to the client again whenever they change.

use parking_lot::Mutex;

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};
use march_core::prompt_templates::PromptTemplate;
use march_core::skills::Skill;
use march_tools::mcp::McpPrompt;

use super::port::ClientPort;

/// A session's slash commands.
#[derive(Debug, Default)]
pub(crate) struct SlashCommands {
    /// Its prompt templates, read when it opened.
    templates: Vec<PromptTemplate>,
    /// Its skills, read when it opened, and why others were skipped.
    skills: Vec<Skill>,
    skill_problems: Vec<String>,
    /// The command names the client was last told of.
    announced: Mutex<Vec<String>>,
}

/// Names March answers itself; a template of such a name is not offered.
const OWN: [&str; 2] = ["compact", "skills"];

impl SlashCommands {
    /// The commands of a session with `templates` and `skills` (and the `problems` of the
    /// skills skipped).
    pub(crate) fn new(
        templates: Vec<PromptTemplate>,
        skills: Vec<Skill>,
        problems: Vec<String>,
    ) -> Self {
        let templates = templates
            .into_iter()
            .filter(|t| {
                !OWN.contains(&t.name.as_str())
                    && !t.name.starts_with("mcp__")
                    && !t.name.starts_with("skill:")
            })
            .collect();
        for problem in &problems {
            tracing::warn!("{problem}");
        }
        SlashCommands {
            templates,
            skills,
            skill_problems: problems,
            announced: Mutex::new(Vec::new()),
        }
    }

    /// Its skills.
    pub(crate) fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// What `/skills` says: every skill, where it came from, and the ones skipped.
    pub(crate) fn skills_listing(&self) -> String {
        if self.skills.is_empty() && self.skill_problems.is_empty() {
            return "No skills: put a directory with a SKILL.md in <config>/skills/ or the \
                    project's .march/skills/ (pi's and Claude Code's skill directories are read \
                    too)."
                .to_string();
        }
        let mut out = String::from("Skills (/skill:NAME uses one):\n");
        for s in &self.skills {
            let hidden = if s.hidden { ", only when named" } else { "" };
            out.push_str(&format!(
                "- {}: {} ({}{hidden}: {})\n",
                s.name,
                s.description,
                s.scope,
                s.path.display()
            ));
        }
        for problem in &self.skill_problems {
            out.push_str(&format!("- {problem}\n"));
        }
        out.trim_end().to_string()
    }

    /// Its prompt templates.
    pub(crate) fn templates(&self) -> &[PromptTemplate] {
        &self.templates
    }

    /// The full list, with MCP prompts `prompts`.
    pub(crate) fn update(&self, prompts: &[McpPrompt]) -> SessionUpdate {
        let compact = AvailableCommand::new(
            "compact",
            "Summarise the older conversation to free context (optional: what to focus on)",
        )
        .input(AvailableCommandInput::Unstructured(
            UnstructuredCommandInput::new("instructions for the summary"),
        ));
        let mut commands = vec![
            compact,
            AvailableCommand::new(
                "skills",
                "List the skills the agent can use, and where each is from",
            ),
        ];
        for skill in &self.skills {
            commands.push(
                AvailableCommand::new(format!("skill:{}", skill.name), skill.description.clone())
                    .input(AvailableCommandInput::Unstructured(
                        UnstructuredCommandInput::new("what to do with it (optional)"),
                    )),
            );
        }
        for template in &self.templates {
            let mut command =
                AvailableCommand::new(template.name.clone(), template.description.clone());
            if template.takes_arguments() {
                let hint = template
                    .argument_hint
                    .clone()
                    .unwrap_or_else(|| "arguments".to_string());
                command = command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(hint),
                ));
            }
            commands.push(command);
        }
        for prompt in prompts {
            let description = if prompt.description.is_empty() {
                format!("Prompt {} of MCP server {}", prompt.remote, prompt.server)
            } else {
                prompt.description.clone()
            };
            let mut command = AvailableCommand::new(prompt.command.clone(), description);
            if !prompt.arguments.is_empty() {
                command = command.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(prompt.hint()),
                ));
            }
            commands.push(command);
        }
        SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands))
    }

    /// Tells the client, through `port`, the commands with MCP prompts `prompts`, when they
    /// differ from what it was told last (always, the first time).
    pub(crate) fn announce(&self, port: &dyn ClientPort, prompts: &[McpPrompt], always: bool) {
        let names: Vec<String> = prompts.iter().map(|p| p.command.clone()).collect();
        let mut announced = self.announced.lock();
        if always || *announced != names {
            *announced = names;
            port.notify(self.update(prompts));
        }
    }
}
