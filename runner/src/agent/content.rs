//! ACP prompt content blocks to the user message the model sees.

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};
use march_core::message::{ImageContent, UserBody, UserContent, UserMessage, now_ms};

use super::errors;

/// The user message for a prompt: text and images as they are, embedded text resources as
/// text naming their URI, links as a mention of the URI. An empty prompt is refused.
pub(crate) fn user_message(prompt: &[ContentBlock]) -> Result<UserMessage, Error> {
    let blocks: Vec<UserContent> = prompt.iter().filter_map(user_content).collect();
    if blocks.is_empty() {
        return Err(errors::invalid_params("the prompt has no content"));
    }
    Ok(UserMessage {
        content: UserBody::Blocks(blocks),
        timestamp: now_ms(),
    })
}

/// Whether `user` holds an image.
pub(crate) fn has_image(user: &UserMessage) -> bool {
    matches!(&user.content, UserBody::Blocks(blocks)
        if blocks.iter().any(|b| matches!(b, UserContent::Image(_))))
}

fn user_content(block: &ContentBlock) -> Option<UserContent> {
    Some(match block {
        ContentBlock::Text(t) => UserContent::text(t.text.clone()),
        ContentBlock::Image(i) => UserContent::Image(ImageContent {
            data: i.data.clone(),
            mime_type: i.mime_type.clone(),
        }),
        ContentBlock::ResourceLink(link) => {
            let name = link.title.as_deref().unwrap_or(&link.name);
            UserContent::text(format!("[Attached resource: {name} <{}>]", link.uri))
        }
        ContentBlock::Resource(embedded) => match &embedded.resource {
            EmbeddedResourceResource::TextResourceContents(r) => UserContent::text(format!(
                "<resource uri=\"{}\">\n{}\n</resource>",
                r.uri, r.text
            )),
            EmbeddedResourceResource::BlobResourceContents(r) => match r.mime_type.as_deref() {
                Some(mime) if mime.starts_with("image/") => UserContent::Image(ImageContent {
                    data: r.blob.clone(),
                    mime_type: mime.to_string(),
                }),
                mime => UserContent::text(format!(
                    "[Attached binary resource <{}> ({}); its content is not shown]",
                    r.uri,
                    mime.unwrap_or("unknown type")
                )),
            },
            _ => return None,
        },
        // Audio is not advertised; a client that sends it anyway gets it noted, not lost silently.
        ContentBlock::Audio(a) => UserContent::text(format!(
            "[Audio attachment ({}) not supported]",
            a.mime_type
        )),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        BlobResourceContents, EmbeddedResource, ImageContent as AcpImage, ResourceLink,
        TextContent, TextResourceContents,
    };

    fn texts(m: &UserMessage) -> Vec<String> {
        m.content
            .blocks()
            .iter()
            .map(|b| match b {
                UserContent::Text(t) => t.text.clone(),
                UserContent::Image(i) => format!("image {}", i.mime_type),
            })
            .collect()
    }

    #[test]
    fn every_block_kind_reaches_the_model() {
        let prompt = vec![
            ContentBlock::Text(TextContent::new("look at this")),
            ContentBlock::Image(AcpImage::new("aGk=", "image/png")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}",
                    "file:///p/main.rs",
                )),
            )),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::BlobResourceContents(
                    BlobResourceContents::new("AAAA", "file:///p/a.png").mime_type("image/jpeg"),
                ),
            )),
            ContentBlock::ResourceLink(ResourceLink::new("lib.rs", "file:///p/lib.rs")),
        ];
        let m = user_message(&prompt).unwrap();
        assert_eq!(
            texts(&m),
            [
                "look at this",
                "image image/png",
                "<resource uri=\"file:///p/main.rs\">\nfn main() {}\n</resource>",
                "image image/jpeg",
                "[Attached resource: lib.rs <file:///p/lib.rs>]",
            ]
        );
    }

    #[test]
    fn empty_prompt_is_refused() {
        let err = user_message(&[]).unwrap_err();
        assert_eq!(err.code, agent_client_protocol::ErrorCode::INVALID_PARAMS);
    }
}
