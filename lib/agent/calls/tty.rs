//! The controlling terminal, for questions to a person: shared by the
//! approvals and by `ask`, neither of which should reach into the other.

/// Asks on the controlling terminal and reads one line from it.
pub(in crate::agent) fn ask_tty(question: &str) -> String {
    use std::io::{BufRead, Write};
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return String::new();
    };
    let mut writer = &tty;
    let _ = writer.write_all(question.as_bytes());
    let _ = writer.flush();
    let mut line = String::new();
    let _ = std::io::BufReader::new(&tty).read_line(&mut line);
    line
}
