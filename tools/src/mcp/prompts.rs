//! An MCP server's prompts as slash commands: `/mcp__<server>__<prompt> ARGS` asks the
//! server for the prompt with ARGS filled in, and what it returns is sent as the message.

use march_core::mcp_config::McpServerDef;
use march_core::message::{ImageContent, UserContent};
use rmcp::model::{ContentBlock, GetPromptRequestParams, Role};
use serde_json::{Map, Value};

use super::McpError;
use super::connection::Connection;
use super::tool::{resource_text, tool_name};

/// One prompt of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpPrompt {
    /// The server.
    pub server: String,
    /// The server's name for it.
    pub remote: String,
    /// The slash command, without its `/`: `mcp__<server>__<prompt>`.
    pub command: String,
    /// What it is for.
    pub description: String,
    /// Its arguments in order, with whether each is required.
    pub arguments: Vec<(String, bool)>,
}

impl McpPrompt {
    /// `<a> [b]`: the arguments as the command's hint shows them.
    pub fn hint(&self) -> String {
        self.arguments
            .iter()
            .map(|(name, required)| {
                if *required {
                    format!("<{name}>")
                } else {
                    format!("[{name}]")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The arguments from what the user typed after the command: one word per argument,
    /// the last one taking the rest of the line.
    pub fn arguments_from(&self, text: &str) -> Result<Map<String, Value>, String> {
        let mut out = Map::new();
        let mut rest = text.trim();
        for (i, (name, required)) in self.arguments.iter().enumerate() {
            let value = if i + 1 == self.arguments.len() {
                std::mem::take(&mut rest)
            } else {
                let (word, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                rest = after.trim_start();
                word
            };
            if value.is_empty() {
                if *required {
                    return Err(format!(
                        "/{} needs {}: /{} {}",
                        self.command,
                        name,
                        self.command,
                        self.hint()
                    ));
                }
                continue;
            }
            out.insert(name.clone(), Value::String(value.to_string()));
        }
        Ok(out)
    }
}

/// The server's prompts.
pub(crate) async fn list_prompts(
    def: &McpServerDef,
    connection: &Connection,
) -> Result<Vec<McpPrompt>, McpError> {
    let prompts = connection
        .peer
        .list_all_prompts()
        .await
        .map_err(|e| McpError::Protocol {
            server: def.name.clone(),
            message: format!("prompts/list failed: {e}"),
        })?;
    Ok(prompts
        .into_iter()
        .map(|p| McpPrompt {
            server: def.name.clone(),
            command: tool_name(&def.name, &p.name),
            remote: p.name,
            description: p.description.unwrap_or_default(),
            arguments: p
                .arguments
                .unwrap_or_default()
                .into_iter()
                .map(|a| (a.name, a.required.unwrap_or(false)))
                .collect(),
        })
        .collect())
}

/// Asks the server for `prompt` filled in with `arguments`: the message to send.
pub(crate) async fn get_prompt(
    connection: &Connection,
    prompt: &McpPrompt,
    arguments: Map<String, Value>,
) -> Result<Vec<UserContent>, String> {
    let mut params = GetPromptRequestParams::new(prompt.remote.clone());
    params.arguments = Some(arguments);
    let result = connection.peer.get_prompt(params).await.map_err(|e| {
        format!(
            "MCP server {} could not give prompt {}: {e}",
            prompt.server, prompt.remote
        )
    })?;
    let several_roles = result.messages.iter().any(|m| m.role == Role::Assistant);
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for message in result.messages {
        let text = match message.content {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => {
                images.push(UserContent::Image(ImageContent {
                    data: i.data.clone(),
                    mime_type: i.mime_type.clone(),
                }));
                continue;
            }
            ContentBlock::Resource(r) => resource_text(&r.resource),
            ContentBlock::ResourceLink(link) => format!("[resource {}]", link.uri),
            _ => continue,
        };
        // A conversation (user and assistant turns) is kept readable as one message.
        texts.push(match (several_roles, message.role) {
            (true, Role::Assistant) => format!("Assistant: {text}"),
            (true, _) => format!("User: {text}"),
            (false, _) => text,
        });
    }
    let mut content = vec![UserContent::text(texts.join("\n\n"))];
    content.extend(images);
    Ok(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(arguments: &[(&str, bool)]) -> McpPrompt {
        McpPrompt {
            server: "s".into(),
            remote: "review".into(),
            command: "mcp__s__review".into(),
            description: String::new(),
            arguments: arguments.iter().map(|(n, r)| (n.to_string(), *r)).collect(),
        }
    }

    #[test]
    fn arguments_are_words_and_the_last_takes_the_rest() {
        let p = prompt(&[("file", true), ("focus", false)]);
        assert_eq!(p.hint(), "<file> [focus]");
        let args = p
            .arguments_from("  src/main.rs  error handling please ")
            .unwrap();
        assert_eq!(args["file"], "src/main.rs");
        assert_eq!(args["focus"], "error handling please");
        let args = p.arguments_from("src/main.rs").unwrap();
        assert!(!args.contains_key("focus"));
        let err = p.arguments_from("").unwrap_err();
        assert!(err.contains("needs file"), "{err}");
        assert!(prompt(&[]).arguments_from("ignored").unwrap().is_empty());
    }
}
