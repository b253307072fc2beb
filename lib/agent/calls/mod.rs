//! A tool call from the model's request to its result: the tools offered
//! (and how much of their parameters the model sees) and how each runs,
//! the gates that judge it, the sandbox that confines it, the questions it
//! may put to a person, its progress while it runs, the guard against the
//! same failing call again and again (and the same whole answer), the
//! one against ag's own answer
//! handed back as content, the note for an edit that looks for the
//! request's own words in a file, and the one for a command that writes
//! files and leaves them as they were.

pub mod ask;
pub mod echo;
pub mod gates;
pub mod params;
pub mod prefixes;
pub mod progress;
pub mod repeats;
pub mod request_words;
pub mod same_answer;
pub mod sandbox;
pub mod toolset;
pub mod tty;
pub mod unwritten;
