//! The output budget a caller gives a tool: `AG_OUTPUT_BUDGET`, in
//! characters, set by ag-loop on every tool call's child. A tool's default
//! output (read's page, bash's kept output, grep's matches) then fits in it
//! whole, with a note saying how to get the rest, instead of reaching the
//! model with a hole that the caller cut in the middle. Without the
//! variable (standalone use) each tool keeps its own defaults.

/// The environment variable.
pub const ENV: &str = "AG_OUTPUT_BUDGET";

/// The smallest budget honoured: below it not even the notes fit, so a
/// smaller value is raised to it.
pub const MIN: usize = 2_000;

/// Characters kept back from a budget for the notes a tool adds after its
/// output (what was cut, where the rest is, the exit code).
pub const NOTES: usize = 1_000;

/// The budget given by the caller, when there is one.
pub fn from_env() -> Option<usize> {
    parse(&std::env::var(ENV).ok()?)
}

/// A budget's value: a positive number of characters.
fn parse(value: &str) -> Option<usize> {
    let n: usize = value.trim().parse().ok()?;
    (n > 0).then(|| n.max(MIN))
}

/// The characters a tool's main output may take within `budget`, leaving
/// room for its notes.
pub fn for_body(budget: usize) -> usize {
    budget.saturating_sub(NOTES).max(MIN / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_positive_numbers_only() {
        assert_eq!(parse("60000"), Some(60_000));
        assert_eq!(parse(" 5000\n"), Some(5_000));
        assert_eq!(parse("10"), Some(MIN));
        assert_eq!(parse("0"), None);
        assert_eq!(parse("-3"), None);
        assert_eq!(parse("lots"), None);
        assert_eq!(for_body(60_000), 59_000);
        assert_eq!(for_body(MIN), MIN / 2);
    }
}
