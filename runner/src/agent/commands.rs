//! The slash commands a session answers, as ACP's `available_commands_update`: `/compact`,
//! and each prompt of the session's MCP servers.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};
use march_tools::mcp::McpPrompt;

/// The commands, with MCP prompts `prompts`.
pub(crate) fn update(prompts: &[McpPrompt]) -> SessionUpdate {
    let compact = AvailableCommand::new(
        "compact",
        "Summarise the older conversation to free context (optional: what to focus on)",
    )
    .input(AvailableCommandInput::Unstructured(
        UnstructuredCommandInput::new("instructions for the summary"),
    ));
    let mut commands = vec![compact];
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
