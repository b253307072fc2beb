//! An ACP prompt (text, images, resource links, embedded resources) as the
//! content of an ag-loop `prompt` command: text and images stay what they
//! are; a linked resource is named for the model, which reads it with its
//! tools; an embedded resource's text is put inline, marked with its URI.

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

use crate::protocol::{ContentBlock as AgBlock, UserContent};

/// Why a prompt cannot be sent.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum PromptError {
    /// Nothing to send: no block, or text that is only white space.
    #[error(
        "the prompt is empty (no block, or only white space): write what to do, or send an image or a resource"
    )]
    Empty,
    /// Audio, which ag does not announce.
    #[error(
        "audio prompts are not supported (the agent announces `audio: false`): send the text instead"
    )]
    Audio,
}

/// The prompt as ag-loop's `content`: one string when it is all text.
pub fn to_user_content(prompt: &[ContentBlock]) -> Result<UserContent, PromptError> {
    let mut blocks: Vec<AgBlock> = Vec::new();
    for block in prompt {
        match block {
            ContentBlock::Text(t) => push_text(&mut blocks, &t.text),
            ContentBlock::Image(i) if !i.data.is_empty() => blocks.push(AgBlock::Image {
                data: i.data.clone(),
                mime_type: i.mime_type.clone(),
            }),
            ContentBlock::Image(i) => match &i.uri {
                Some(uri) => push_text(&mut blocks, &format!("[image: {uri}]")),
                None => continue,
            },
            ContentBlock::Audio(_) => return Err(PromptError::Audio),
            ContentBlock::ResourceLink(l) => {
                let mut s = format!("[{}]({})", l.name, l.uri);
                if let Some(d) = l.description.as_deref().filter(|d| !d.is_empty()) {
                    s.push_str(&format!(" — {d}"));
                }
                push_text(&mut blocks, &s);
            }
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => push_text(
                    &mut blocks,
                    &format!("<resource uri=\"{}\">\n{}\n</resource>", t.uri, t.text),
                ),
                EmbeddedResourceResource::BlobResourceContents(b) => match b.mime_type.as_deref() {
                    Some(m) if m.starts_with("image/") => blocks.push(AgBlock::Image {
                        data: b.blob.clone(),
                        mime_type: m.to_string(),
                    }),
                    m => push_text(
                        &mut blocks,
                        &format!(
                            "[binary resource {} ({}), not included]",
                            b.uri,
                            m.unwrap_or("unknown type")
                        ),
                    ),
                },
                // Kinds of resource a later protocol version may add.
                #[allow(unreachable_patterns)]
                _ => continue,
            },
            // Kinds of block a later protocol version may add.
            #[allow(unreachable_patterns)]
            _ => continue,
        }
    }
    let content = match blocks.as_slice() {
        [] => return Err(PromptError::Empty),
        [AgBlock::Text { text }] => UserContent::Text(text.clone()),
        _ => UserContent::Blocks(blocks),
    };
    // ag-loop skips a blank prompt without running it; refused here, the
    // editor hears why at once.
    if content.is_blank() {
        return Err(PromptError::Empty);
    }
    Ok(content)
}

/// Adds text, joined to a text block just before it (editors send a
/// mention between two pieces of one sentence as three blocks).
fn push_text(blocks: &mut Vec<AgBlock>, text: &str) {
    if let Some(AgBlock::Text { text: last }) = blocks.last_mut() {
        if !last.ends_with(char::is_whitespace) && !text.starts_with(char::is_whitespace) {
            last.push(' ');
        }
        last.push_str(text);
    } else {
        blocks.push(AgBlock::Text {
            text: text.to_string(),
        });
    }
}

/// The text of a prompt, for slash commands: None when it holds anything
/// but text.
pub fn plain_text(prompt: &[ContentBlock]) -> Option<String> {
    let mut out = String::new();
    for b in prompt {
        match b {
            ContentBlock::Text(t) => out.push_str(&t.text),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        AudioContent, BlobResourceContents, EmbeddedResource, ImageContent, ResourceLink,
        TextContent, TextResourceContents,
    };

    fn text(t: &str) -> ContentBlock {
        ContentBlock::Text(TextContent::new(t))
    }

    #[test]
    fn text_alone_stays_a_string() {
        assert_eq!(
            to_user_content(&[text("fix it")]),
            Ok(UserContent::Text("fix it".into()))
        );
    }

    #[test]
    fn links_and_embedded_text_join_the_sentence() {
        let c = to_user_content(&[
            text("look at"),
            ContentBlock::ResourceLink(ResourceLink::new("main.rs", "file:///p/main.rs")),
            text("and"),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "fn main() {}",
                    "file:///p/lib.rs",
                )),
            )),
        ])
        .unwrap();
        assert_eq!(
            c,
            UserContent::Text(
                "look at [main.rs](file:///p/main.rs) and <resource uri=\"file:///p/lib.rs\">\nfn main() {}\n</resource>".into()
            )
        );
    }

    #[test]
    fn images_stay_images_and_blobs_are_named() {
        let c = to_user_content(&[
            text("what is this"),
            ContentBlock::Image(ImageContent::new("aGVsbG8=", "image/png")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::BlobResourceContents(
                    BlobResourceContents::new("AAAA", "file:///p/x.bin")
                        .mime_type("application/octet-stream".to_string()),
                ),
            )),
        ])
        .unwrap();
        let UserContent::Blocks(b) = c else {
            panic!("{c:?}")
        };
        assert_eq!(b.len(), 3);
        assert!(matches!(&b[1], AgBlock::Image { mime_type, .. } if mime_type == "image/png"));
        assert!(matches!(&b[2], AgBlock::Text { text } if text.contains("x.bin")));
    }

    #[test]
    fn audio_and_empty_prompts_are_refused() {
        assert_eq!(
            to_user_content(&[ContentBlock::Audio(AudioContent::new("AA", "audio/wav"))]),
            Err(PromptError::Audio)
        );
        assert_eq!(to_user_content(&[]), Err(PromptError::Empty));
        assert_eq!(
            to_user_content(&[text("  \n\t"), text(" ")]),
            Err(PromptError::Empty)
        );
        // White space beside an image is no empty prompt.
        assert!(
            to_user_content(&[
                text(" "),
                ContentBlock::Image(ImageContent::new("aGVsbG8=", "image/png"))
            ])
            .is_ok()
        );
    }
}
