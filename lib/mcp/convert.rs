//! Between ag's tool protocol and MCP's: a [`ToolDefinition`] is an MCP
//! tool (name, title, description, input schema), and a [`ToolResult`] is a
//! `CallToolResult`: the output as text content, pictures as image content,
//! `is_error` as `isError`. The details and ag's stable error code travel in
//! `_meta`, so that they survive a round trip through MCP without reaching
//! the model. They are never `structuredContent`: the MCP specification
//! (2025-06-18) has that field carry the result itself, described by the
//! tool's `outputSchema`, and clients such as Claude Code and Codex then
//! show the model the structured content in place of the text. ag's tools
//! declare no output schema, and their details are not what the model
//! needs to read.

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ContentBlock, JsonObject, MetaObject, ResourceContents, Tool, ToolAnnotations,
};
use serde_json::{Map, Value};

use crate::protocol::{ImageData, ToolDefinition, ToolResult};

/// The `_meta` key of a result that carries ag's error code (`read.not_found`).
pub const ERROR_CODE_META: &str = "ag/error_code";

/// The `_meta` key of a result that carries the tool's details.
pub const DETAILS_META: &str = "ag/details";

/// An ag tool as an MCP tool. `read_only` adds the `readOnlyHint`
/// annotation, which lets clients run the tool without asking.
pub fn to_mcp_tool(def: &ToolDefinition, read_only: bool) -> Tool {
    let schema: JsonObject = match &def.parameters {
        Value::Object(m) => m.clone(),
        _ => object_schema(),
    };
    let mut tool = Tool::new(def.name.clone(), def.description.clone(), Arc::new(schema));
    if !def.label.is_empty() {
        tool = tool.with_title(def.label.clone());
    }
    if read_only {
        tool = tool.with_annotations(ToolAnnotations::new().read_only(true));
    }
    tool
}

/// An MCP tool as an ag tool definition. The label is the tool's title when
/// it has one, and the parameters are always an object schema, as model
/// providers require.
pub fn from_mcp_tool(tool: &Tool) -> ToolDefinition {
    let label = tool
        .title
        .clone()
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()))
        .unwrap_or_else(|| tool.name.to_string());
    let mut parameters: JsonObject = tool.input_schema.as_ref().clone();
    if parameters.get("type").and_then(Value::as_str) != Some("object") {
        parameters.insert("type".into(), Value::String("object".into()));
    }
    if !parameters.contains_key("properties") {
        parameters.insert("properties".into(), Value::Object(Map::new()));
    }
    ToolDefinition {
        name: tool.name.to_string(),
        label,
        description: tool.description.as_deref().unwrap_or_default().to_string(),
        parameters: Value::Object(parameters),
    }
}

fn object_schema() -> JsonObject {
    let mut m = Map::new();
    m.insert("type".into(), Value::String("object".into()));
    m.insert("properties".into(), Value::Object(Map::new()));
    m
}

/// An ag tool's result as an MCP result. With `details`, the result's
/// details go in `_meta["ag/details"]`.
pub fn to_mcp_result(result: ToolResult, details: bool) -> CallToolResult {
    let mut content = vec![ContentBlock::text(result.output)];
    content.extend(
        result
            .images
            .into_iter()
            .map(|i| ContentBlock::image(i.data, i.mime_type)),
    );
    let mut out = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    let mut meta = Map::new();
    if details && !result.details.is_null() {
        meta.insert(DETAILS_META.into(), result.details);
    }
    if let Some(code) = result.error_code {
        meta.insert(ERROR_CODE_META.into(), Value::String(code));
    }
    if !meta.is_empty() {
        out.meta = Some(MetaObject(meta));
    }
    out
}

/// An MCP result as an ag tool result: the text of every content block
/// joined by newlines (other kinds of content described in a line of their
/// own), images kept as images, structured content (or, from ag-mcp,
/// `_meta["ag/details"]`) as details. A result with structured content and
/// no text shows the structured content as its output, so that the model
/// sees something.
pub fn from_mcp_result(id: &str, result: CallToolResult) -> ToolResult {
    let mut texts: Vec<String> = Vec::new();
    let mut images: Vec<ImageData> = Vec::new();
    for block in result.content {
        match block {
            ContentBlock::Text(t) => texts.push(t.text),
            ContentBlock::Image(i) => images.push(ImageData {
                data: i.data,
                mime_type: i.mime_type,
            }),
            ContentBlock::Audio(a) => texts.push(format!(
                "[audio ({}), {} bytes of base64 not shown]",
                a.mime_type,
                a.data.len()
            )),
            ContentBlock::Resource(r) => match r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    texts.push(format!("[resource {uri}]\n{text}"));
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => texts.push(format!(
                    "[resource {uri} ({}), {} bytes of base64 not shown]",
                    mime_type.as_deref().unwrap_or("binary"),
                    blob.len()
                )),
                other => texts.push(serde_json::to_string(&other).unwrap_or_default()),
            },
            ContentBlock::ResourceLink(link) => {
                let about = link
                    .description
                    .as_deref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                texts.push(format!(
                    "[resource link {} <{}>{about}]",
                    link.name, link.uri
                ));
            }
            // Content kinds added by later protocol versions.
            #[allow(unreachable_patterns)]
            other => texts.push(serde_json::to_string(&other).unwrap_or_default()),
        }
    }
    let mut output = texts.join("\n");
    let details = match result.structured_content {
        Some(structured) => {
            if output.is_empty() {
                output = structured.to_string();
            }
            structured
        }
        None => result
            .meta
            .as_ref()
            .and_then(|m| m.0.get(DETAILS_META))
            .cloned()
            .unwrap_or(Value::Null),
    };
    let is_error = result.is_error.unwrap_or(false);
    let error_code = result
        .meta
        .as_ref()
        .and_then(|m| m.0.get(ERROR_CODE_META))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| is_error.then(|| "mcp.tool_error".to_string()));
    ToolResult {
        id: Some(id.to_string()),
        output,
        details,
        is_error,
        error_code,
        images,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def() -> ToolDefinition {
        ToolDefinition {
            name: "read".into(),
            label: "Read".into(),
            description: "Reads a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        }
    }

    #[test]
    fn a_definition_survives_the_trip_through_mcp() {
        let tool = to_mcp_tool(&def(), true);
        let wire = serde_json::to_value(&tool).unwrap();
        assert_eq!(wire["name"], "read");
        assert_eq!(wire["title"], "Read");
        assert_eq!(wire["inputSchema"]["required"], json!(["path"]));
        assert_eq!(wire["annotations"]["readOnlyHint"], true);
        assert_eq!(from_mcp_tool(&tool), def());
    }

    #[test]
    fn a_tool_without_title_or_properties_gets_its_name_and_an_object_schema() {
        let tool: Tool =
            serde_json::from_value(json!({"name": "ping", "inputSchema": {}})).unwrap();
        let d = from_mcp_tool(&tool);
        assert_eq!(d.label, "ping");
        assert_eq!(d.description, "");
        assert_eq!(d.parameters, json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn a_result_survives_the_trip_through_mcp() {
        let r = ToolResult {
            id: Some("1".into()),
            output: "no such file".into(),
            details: json!({"path": "a"}),
            is_error: true,
            error_code: Some("read.not_found".into()),
            images: vec![ImageData {
                data: "iVBO".into(),
                mime_type: "image/png".into(),
            }],
        };
        let mcp = to_mcp_result(r.clone(), true);
        let wire = serde_json::to_value(&mcp).unwrap();
        assert_eq!(wire["isError"], true);
        assert_eq!(
            wire["content"][0],
            json!({"type": "text", "text": "no such file"})
        );
        assert_eq!(wire["content"][1]["type"], "image");
        assert!(wire.get("structuredContent").is_none(), "{wire}");
        assert_eq!(wire["_meta"][DETAILS_META], json!({"path": "a"}));
        assert_eq!(wire["_meta"][ERROR_CODE_META], "read.not_found");
        assert_eq!(from_mcp_result("1", mcp), r);
    }

    #[test]
    fn details_are_never_structured_content_and_can_be_left_out() {
        let r = ToolResult {
            id: None,
            output: "1\tfile text".into(),
            details: json!([1, 2]),
            is_error: false,
            error_code: None,
            images: vec![],
        };
        let mcp = to_mcp_result(r.clone(), true);
        assert_eq!(mcp.structured_content, None);
        assert_eq!(mcp.meta.as_ref().unwrap().0[DETAILS_META], json!([1, 2]));
        assert_eq!(from_mcp_result("1", mcp).details, json!([1, 2]));
        let mcp = to_mcp_result(r.clone(), false);
        assert_eq!((mcp.structured_content, mcp.meta), (None, None));
        let mcp = to_mcp_result(
            ToolResult {
                details: Value::Null,
                ..r
            },
            true,
        );
        assert_eq!(mcp.meta, None);
    }

    #[test]
    fn other_content_is_described_and_bare_structured_content_is_shown() {
        let mcp: CallToolResult = serde_json::from_value(json!({
            "content": [
                {"type": "text", "text": "a"},
                {"type": "resource", "resource": {"uri": "file:///x", "text": "body"}},
                {"type": "resource_link", "uri": "file:///y", "name": "y"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
            ],
            "isError": true
        }))
        .unwrap();
        let r = from_mcp_result("9", mcp);
        assert_eq!(
            r.output,
            "a\n[resource file:///x]\nbody\n[resource link y <file:///y>]\n[audio (audio/wav), 4 bytes of base64 not shown]"
        );
        assert!(r.is_error);
        assert_eq!(r.error_code.as_deref(), Some("mcp.tool_error"));

        let mcp: CallToolResult =
            serde_json::from_value(json!({"content": [], "structuredContent": {"sum": 3}}))
                .unwrap();
        let r = from_mcp_result("9", mcp);
        assert_eq!(r.output, r#"{"sum":3}"#);
        assert_eq!(r.details, json!({"sum": 3}));
        assert!(!r.is_error);
    }
}
