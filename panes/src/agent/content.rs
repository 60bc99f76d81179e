//! ACP content made into transcript text: every string sanitised, non-text content as a
//! short placeholder.

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource, ToolCallContent};

use super::transcript::ToolBody;
use crate::sanitize::{sanitize, sanitize_line, sanitize_output};

/// The text a content block shows, sanitised; non-text content as a short placeholder.
pub(crate) fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => sanitize(&t.text).into_owned(),
        // Its size and format when it reads as a picture (a tool's result, say).
        ContentBlock::Image(i) => crate::picture::Picture::from_base64(&i.data).map_or_else(
            |_| format!("[image {}]", sanitize_line(&i.mime_type)),
            |p| p.label(),
        ),
        ContentBlock::Audio(a) => format!("[audio {}]", sanitize_line(&a.mime_type)),
        ContentBlock::ResourceLink(l) => {
            format!("[{}]({})", sanitize_line(&l.name), sanitize_line(&l.uri))
        }
        ContentBlock::Resource(r) => match &r.resource {
            EmbeddedResourceResource::TextResourceContents(t) => sanitize(&t.text).into_owned(),
            EmbeddedResourceResource::BlobResourceContents(b) => {
                format!("[resource {}]", sanitize_line(&b.uri))
            }
            _ => "[resource]".to_string(),
        },
        _ => String::new(),
    }
}

/// What a tool call content item shows; none for kinds March does not draw.
pub(crate) fn tool_body(content: &ToolCallContent) -> Option<ToolBody> {
    match content {
        ToolCallContent::Content(c) => Some(ToolBody::Text(match &c.content {
            ContentBlock::Text(t) => sanitize_output(&t.text).into_owned(),
            other => block_text(other),
        })),
        ToolCallContent::Diff(d) => Some(ToolBody::Diff {
            path: sanitize_line(&d.path.to_string_lossy()).into_owned(),
            old: d
                .old_text
                .as_deref()
                .map(|t| sanitize_output(t).into_owned()),
            new: sanitize_output(&d.new_text).into_owned(),
        }),
        ToolCallContent::Terminal(t) => Some(ToolBody::Terminal(
            sanitize_line(&t.terminal_id.0).into_owned(),
        )),
        _ => None,
    }
}
