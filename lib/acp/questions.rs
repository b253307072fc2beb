//! What ag-acp asks the editor: whether a call may run (ag-gate's
//! approvals, as `session/request_permission`), and the model's questions
//! (ag's `ask` tool).
//! ag-loop emits a `question` event and waits for an `answer` command; ACP
//! has a request made for it, `elicitation/create`, whose form mode ag-acp
//! uses when the editor announces `elicitation.form`: a free-text field,
//! and, for a question with choices, a choice among them beside it (the
//! model's choices never rule out an answer of the person's own, as in
//! ag-loop). An editor without forms is asked a question with choices
//! through `session/request_permission`, one option per choice; a
//! free-text question is then only shown (a notice), and ag-loop's
//! `--ask-timeout` moves the run on. An editor that declines, cancels or
//! fails answers nothing, which ag-loop tells the model as "the user gave
//! no answer".

use std::path::Path;
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, CreateElicitationResponse, ElicitationAction,
    ElicitationContentValue, ElicitationFormMode, ElicitationSchema, ElicitationScope,
    ElicitationSessionScope, EnumOption, PermissionOption, PermissionOptionKind,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    StringPropertySchema, ToolCallId, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind,
};
use serde_json::Value;

use super::tools;

/// The form field of the person's own answer.
const OWN: &str = "answer";
/// The form field of a choice among the model's options.
const CHOICE: &str = "choice";
/// The permission option id of a choice: this prefix and its number from 1.
const OPTION: &str = "choice-";

/// ag-loop's `--ask-timeout`, how long a question of the model's waits:
/// as long as a permission request where the editor is asked by a form
/// (`permission`; None waits for ever), a minute where a free-text
/// question is only shown. None added when the flags after `--` give their
/// own (ag-loop takes the flag once).
pub fn ask_timeout(forms: bool, permission: Option<Duration>, loop_args: &[String]) -> Vec<String> {
    let own = loop_args
        .iter()
        .any(|a| a == "--ask-timeout" || a.starts_with("--ask-timeout="));
    let wait = if forms {
        permission.map(|t| t.as_secs())
    } else {
        Some(60)
    };
    match wait {
        Some(secs) if !own => vec!["--ask-timeout".to_string(), secs.to_string()],
        _ => Vec::new(),
    }
}

/// The form asking `question` (with its `options`) in a session, tied to
/// the `ask` call.
pub fn form(
    session: &str,
    call: &str,
    question: &str,
    options: &[String],
) -> CreateElicitationRequest {
    let scope = ElicitationScope::Session(
        ElicitationSessionScope::new(session.to_string())
            .tool_call_id(ToolCallId::new(call.to_string())),
    );
    let schema = if options.is_empty() {
        ElicitationSchema::new().property(
            OWN,
            StringPropertySchema::new().title("Your answer".to_string()),
            true,
        )
    } else {
        let choices = options
            .iter()
            .map(|o| EnumOption::new(o.clone(), o.clone()))
            .collect::<Vec<_>>();
        ElicitationSchema::new()
            .property(
                CHOICE,
                StringPropertySchema::new()
                    .title("Choose".to_string())
                    .one_of(choices),
                false,
            )
            .property(
                OWN,
                StringPropertySchema::new()
                    .title("Or answer in your own words".to_string())
                    .description("Taken instead of the choice when given".to_string()),
                false,
            )
    };
    CreateElicitationRequest::new(
        ElicitationFormMode::new(scope, schema),
        format!("The agent asks: {question}"),
    )
}

/// The answer in the editor's reply to [`form`]: the person's own words,
/// else the choice; empty when they declined, cancelled or left both out.
pub fn form_answer(reply: &CreateElicitationResponse) -> String {
    let ElicitationAction::Accept(accept) = &reply.action else {
        return String::new();
    };
    let Some(content) = &accept.content else {
        return String::new();
    };
    let text = |key: &str| match content.get(key) {
        Some(ElicitationContentValue::String(s)) => s.trim().to_string(),
        _ => String::new(),
    };
    let own = text(OWN);
    if own.is_empty() { text(CHOICE) } else { own }
}

/// The permission request for a call ag-gate wants a person to approve:
/// allow once, allow always (when ag-gate offers a rule to remember) and
/// reject.
pub fn approval(
    session: &str,
    call: &str,
    tool: &str,
    arguments: &Value,
    reason: &str,
    always: Option<&str>,
    cwd: &Path,
) -> RequestPermissionRequest {
    let mut options = vec![PermissionOption::new(
        "allow",
        "Allow once",
        PermissionOptionKind::AllowOnce,
    )];
    if let Some(a) = always {
        options.push(PermissionOption::new(
            "always",
            format!("Always allow {a}"),
            PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(PermissionOption::new(
        "reject",
        "Reject",
        PermissionOptionKind::RejectOnce,
    ));
    let update = ToolCallUpdate::new(
        call.to_string(),
        ToolCallUpdateFields::new()
            .title(format!("{} ({reason})", tools::title(tool, arguments)))
            .kind(tools::kind(tool))
            .status(ToolCallStatus::Pending)
            .locations(tools::locations(tool, arguments, cwd))
            .raw_input(arguments.clone()),
    );
    RequestPermissionRequest::new(session.to_string(), update, options)
}

/// The permission request offering a question's `options` (not empty), for
/// an editor without forms.
pub fn choices(
    session: &str,
    call: &str,
    question: &str,
    options: &[String],
) -> RequestPermissionRequest {
    let offered = options
        .iter()
        .enumerate()
        .map(|(i, o)| {
            PermissionOption::new(
                format!("{OPTION}{}", i + 1),
                o.clone(),
                PermissionOptionKind::AllowOnce,
            )
        })
        .collect();
    let ask = ToolCallUpdate::new(
        call.to_string(),
        ToolCallUpdateFields::new()
            .title(format!("The agent asks: {question}"))
            .kind(ToolKind::Think)
            .status(ToolCallStatus::Pending),
    );
    RequestPermissionRequest::new(session.to_string(), ask, offered)
}

/// The answer in the editor's reply to [`choices`]: the option chosen,
/// empty when it cancelled or chose none of them.
pub fn choice_answer(reply: &RequestPermissionResponse, options: &[String]) -> String {
    let RequestPermissionOutcome::Selected(s) = &reply.outcome else {
        return String::new();
    };
    s.option_id
        .0
        .strip_prefix(OPTION)
        .and_then(|n| n.parse::<usize>().ok())
        .and_then(|n| options.get(n.checked_sub(1)?))
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{ElicitationAcceptAction, SelectedPermissionOutcome};
    use serde_json::json;
    use std::collections::BTreeMap;

    fn filled(pairs: &[(&str, &str)]) -> BTreeMap<String, ElicitationContentValue> {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    ElicitationContentValue::String(v.to_string()),
                )
            })
            .collect()
    }

    fn accept(pairs: &[(&str, &str)]) -> CreateElicitationResponse {
        CreateElicitationResponse::new(ElicitationAction::Accept(
            ElicitationAcceptAction::new().content(filled(pairs)),
        ))
    }

    #[test]
    fn the_wait_for_an_answer_follows_what_the_editor_can_do() {
        let t = Some(Duration::from_secs(600));
        assert_eq!(ask_timeout(true, t, &[]), ["--ask-timeout", "600"]);
        assert!(ask_timeout(true, None, &[]).is_empty());
        assert_eq!(ask_timeout(false, None, &[]), ["--ask-timeout", "60"]);
        let own = ["--max-cost".to_string(), "--ask-timeout=5".to_string()];
        assert!(ask_timeout(false, t, &own).is_empty());
        assert!(ask_timeout(true, t, &["--ask-timeout".into(), "9".into()]).is_empty());
    }

    #[test]
    fn a_free_text_question_is_one_required_field() {
        let r = serde_json::to_value(form("s", "c", "Which port?", &[])).unwrap();
        assert_eq!(r["mode"], "form");
        assert_eq!(r["sessionId"], "s");
        assert_eq!(r["toolCallId"], "c");
        assert_eq!(r["requestedSchema"]["required"], json!(["answer"]));
        assert!(r["message"].as_str().unwrap().contains("Which port?"));
    }

    #[test]
    fn choices_are_offered_beside_an_own_answer() {
        let opts = vec!["red".to_string(), "blue".to_string()];
        let r = serde_json::to_value(form("s", "c", "Colour?", &opts)).unwrap();
        let props = &r["requestedSchema"]["properties"];
        assert_eq!(props["choice"]["oneOf"][1]["const"], "blue");
        assert_eq!(props["answer"]["type"], "string");
        assert!(r["requestedSchema"].get("required").is_none(), "{r}");
        assert_eq!(form_answer(&accept(&[("choice", "blue")])), "blue");
        assert_eq!(
            form_answer(&accept(&[("choice", "blue"), ("answer", " green ")])),
            "green"
        );
        assert_eq!(form_answer(&accept(&[])), "");
        let declined = CreateElicitationResponse::new(ElicitationAction::Decline);
        assert_eq!(form_answer(&declined), "");
    }

    #[test]
    fn a_chosen_permission_option_is_its_choice() {
        let opts = vec!["yes".to_string(), "no".to_string()];
        let req = serde_json::to_value(choices("s", "c", "Go on?", &opts)).unwrap();
        assert_eq!(req["options"][1]["name"], "no");
        let id = req["options"][1]["optionId"].as_str().unwrap().to_string();
        let pick = |id: &str| {
            RequestPermissionResponse::new(RequestPermissionOutcome::Selected(
                SelectedPermissionOutcome::new(id.to_string()),
            ))
        };
        assert_eq!(choice_answer(&pick(&id), &opts), "no");
        // A hostile or confused client's option ids pick nothing.
        for bad in ["choice-0", "choice-3", "choice-x", "allow"] {
            assert_eq!(choice_answer(&pick(bad), &opts), "", "{bad}");
        }
        let cancelled = RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled);
        assert_eq!(choice_answer(&cancelled, &opts), "");
    }
}
