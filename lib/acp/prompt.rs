//! An ACP prompt (text, images, resource links, embedded resources) as an
//! ag-loop `prompt` command: text and images stay what they are, in
//! `content`; a linked resource is named for the model, which reads it with
//! its tools, and an embedded resource's text is given marked with its URI.
//! Those two are the editor's data, not the person's words: they go in the
//! command's `data`, which ag-loop never reads for `@PATH` mentions (a word
//! inside an embedded file must not attach another), and the sentence keeps
//! a numbered reference where each stood.

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

/// A prompt as ag-loop takes it.
#[derive(Debug, PartialEq)]
pub struct Prompt {
    /// What the person wrote (and the images): one string when it is all text.
    pub content: UserContent,
    /// The linked and embedded resources, each a text block after the
    /// prompt, never read for mentions.
    pub data: Vec<AgBlock>,
}

/// The prompt as ag-loop's `content` and `data`.
pub fn to_user_content(prompt: &[ContentBlock]) -> Result<Prompt, PromptError> {
    let mut blocks: Vec<AgBlock> = Vec::new();
    let mut data: Vec<AgBlock> = Vec::new();
    // A resource's place in the sentence, and the block that holds it.
    let mut refer = |blocks: &mut Vec<AgBlock>, text: String| {
        let label = format!("[resource {}]", data.len() + 1);
        push_text(blocks, &label);
        data.push(AgBlock::Text {
            text: format!("{label}: {text}"),
        });
    };
    for block in prompt {
        match block {
            ContentBlock::Text(t) => push_text(&mut blocks, &t.text),
            ContentBlock::Image(i) if !i.data.is_empty() => blocks.push(AgBlock::Image {
                data: i.data.clone(),
                mime_type: i.mime_type.clone(),
            }),
            ContentBlock::Image(i) => match &i.uri {
                Some(uri) => refer(&mut blocks, format!("[image: {uri}]")),
                None => continue,
            },
            ContentBlock::Audio(_) => return Err(PromptError::Audio),
            ContentBlock::ResourceLink(l) => {
                let mut s = format!("[{}]({})", l.name, l.uri);
                if let Some(d) = l.description.as_deref().filter(|d| !d.is_empty()) {
                    s.push_str(&format!(" — {d}"));
                }
                refer(&mut blocks, s);
            }
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => refer(
                    &mut blocks,
                    format!("<resource uri=\"{}\">\n{}\n</resource>", t.uri, t.text),
                ),
                EmbeddedResourceResource::BlobResourceContents(b) => match b.mime_type.as_deref() {
                    Some(m) if m.starts_with("image/") => blocks.push(AgBlock::Image {
                        data: b.blob.clone(),
                        mime_type: m.to_string(),
                    }),
                    m => refer(
                        &mut blocks,
                        format!(
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
    Ok(Prompt { content, data })
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
            Ok(Prompt {
                content: UserContent::Text("fix it".into()),
                data: Vec::new()
            })
        );
    }

    /// The editor's data is kept apart from the person's words: ag-loop
    /// reads only the words for `@PATH` mentions.
    #[test]
    fn links_and_embedded_text_are_referred_to_and_given_as_data() {
        let c = to_user_content(&[
            text("look at"),
            ContentBlock::ResourceLink(ResourceLink::new("main.rs", "file:///p/main.rs")),
            text("and"),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "see @../outside.txt",
                    "file:///p/README.md",
                )),
            )),
        ])
        .unwrap();
        assert_eq!(
            c.content,
            UserContent::Text("look at [resource 1] and [resource 2]".into())
        );
        assert_eq!(
            c.data,
            [
                AgBlock::Text {
                    text: "[resource 1]: [main.rs](file:///p/main.rs)".into()
                },
                AgBlock::Text {
                    text: "[resource 2]: <resource uri=\"file:///p/README.md\">\nsee @../outside.txt\n</resource>".into()
                },
            ]
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
        let UserContent::Blocks(b) = c.content else {
            panic!("{c:?}")
        };
        assert_eq!(b.len(), 3);
        assert!(matches!(&b[1], AgBlock::Image { mime_type, .. } if mime_type == "image/png"));
        assert!(matches!(&b[2], AgBlock::Text { text } if text == "[resource 1]"));
        assert!(matches!(&c.data[0], AgBlock::Text { text } if text.contains("x.bin")));
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
