//! One call sent again and again in a single answer: a small model sent
//! the same `read` 180 times in one answer, which took eleven minutes to
//! write and ran 180 times. The calls are counted as the stream completes
//! them; once one comes a fourth time the answer is stopped there, and
//! each call of it runs once (`runner.rs`). Two or three copies run as
//! sent: a model may mean them.

use serde_json::Value;

use crate::protocol::ContentBlock;

/// Copies of one call in one answer that stop it.
pub const STOP_AT: usize = 4;

/// The calls an answer has completed so far, each with how often it came.
#[derive(Default)]
pub struct Counter {
    seen: Vec<(String, Value, usize)>,
}

impl Counter {
    /// Counts a completed call; how often it has now come.
    pub fn push(&mut self, name: &str, arguments: &Value) -> usize {
        match self
            .seen
            .iter_mut()
            .find(|(n, a, _)| n == name && a == arguments)
        {
            Some((_, _, count)) => {
                *count += 1;
                *count
            }
            None => {
                self.seen.push((name.to_string(), arguments.clone(), 1));
                1
            }
        }
    }
}

/// Takes out of `content` each call that an earlier one of the same name
/// and arguments already asks for.
pub fn drop_copies(content: &mut Vec<ContentBlock>) {
    let mut kept: Vec<(String, Value)> = Vec::new();
    content.retain(|b| match b {
        ContentBlock::ToolCall {
            name, arguments, ..
        } => {
            let call = (name.clone(), arguments.clone());
            let first = !kept.contains(&call);
            if first {
                kept.push(call);
            }
            first
        }
        _ => true,
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(id: &str, name: &str, args: Value) -> ContentBlock {
        ContentBlock::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args,
        }
    }

    #[test]
    fn copies_are_counted_and_dropped_but_other_calls_kept() {
        let mut counter = Counter::default();
        let read = json!({"file_path": "a.md"});
        assert_eq!(counter.push("read", &read), 1);
        assert_eq!(counter.push("read", &json!({"file_path": "b.md"})), 1);
        assert_eq!(counter.push("grep", &read), 1);
        assert_eq!(counter.push("read", &read), 2);
        let mut content = vec![
            ContentBlock::Text { text: "x".into() },
            call("1", "read", read.clone()),
            call("2", "read", json!({"file_path": "b.md"})),
            call("3", "read", read.clone()),
            call("4", "grep", read.clone()),
        ];
        drop_copies(&mut content);
        let ids: Vec<&str> = content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolCall { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(ids, ["1", "2", "4"]);
        assert_eq!(content.len(), 4);
    }
}
