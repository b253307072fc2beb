//! TEMPORARY local compile aid (never committed): the interface helper-4 builds.
use crate::protocol::*;
pub struct Llm;
pub struct LlmOptions {
    pub api_key: Option<String>,
    pub base_url: Option<String>,
    pub ag_home: Option<std::path::PathBuf>,
}
#[derive(Debug, thiserror::Error)]
#[error("x")]
pub struct LlmError;
impl Llm {
    pub fn new(_o: LlmOptions) -> Result<Llm, LlmError> {
        Ok(Llm)
    }
    pub async fn stream(
        &self,
        _r: &LlmRequest,
        _s: &mut (dyn FnMut(LlmEvent) + Send),
        _c: &tokio_util::sync::CancellationToken,
    ) -> AssistantMessage {
        AssistantMessage::default()
    }
}
pub struct ModelInfo {
    pub context_window: u64,
}
impl Llm {
    pub fn model_info(&self, _m: &str) -> Option<ModelInfo> {
        None
    }
}
