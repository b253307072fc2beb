//! A reader of shell command lines, just deep enough to see which commands a
//! line runs and where it redirects output: words after quote removal,
//! commands split at `;`, `&&`, `||`, `&`, `|` and newlines, redirections
//! with their targets, here-documents, and the scripts inside `$(...)`,
//! backticks and `<(...)`. It is not a shell: it never expands variables or
//! globs, and it reads malformed input leniently (an unterminated quote ends
//! at the end of the line) because bash would refuse to run it anyway.

/// One word of a command, after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// The text with quotes and escapes removed. Expansions (`$HOME`,
    /// `${x}`, `$(...)`, backticks) are kept as written.
    pub text: String,
    /// The scripts of the command substitutions (`$(...)`, backticks) and
    /// process substitutions (`<(...)`, `>(...)`) inside the word.
    pub substitutions: Vec<String>,
    /// True when the word's value depends on an expansion (`$` or a
    /// backtick outside single quotes), so `text` is not its real value.
    /// For the delimiter of a here-document whose delimiter is unquoted:
    /// true when its body expands.
    pub expands: bool,
    /// True when any part of the word was quoted or escaped.
    pub quoted: bool,
}

impl Word {
    /// True when a command word is put together at run time: an expansion
    /// (`$x`, `$(...)`, backticks, `${IFS}`), or a glob or brace list that
    /// the shell turns into other words (`/bin/r? -rf /`, `{rm,-rf,/}`).
    pub fn built_at_run_time(&self) -> bool {
        let t = self.text.as_str();
        if self.expands && !self.only_a_directory_variable() {
            return true;
        }
        if matches!(t, "[" | "[[" | "{" | "}") {
            return false;
        }
        if t == "{}" {
            // `find -exec {} \;`: the file found is the command.
            return true;
        }
        let brace = t.find('{').is_some_and(|open| {
            t[open..]
                .find('}')
                .is_some_and(|close| t[open..open + close].contains([',', '.']))
        });
        t.contains(['*', '?']) || (t.contains('[') && t.contains(']')) || brace
    }

    /// True for `$HOME/bin/tool` and `${VENV}/bin/python`: one variable
    /// chooses the directory, and the rest, the program's name among it,
    /// is written out, so the command is known by that name like
    /// `/usr/bin/tool` is.
    pub fn only_a_directory_variable(&self) -> bool {
        if !self.substitutions.is_empty() {
            return false;
        }
        let Some(rest) = self.text.strip_prefix('$') else {
            return false;
        };
        let (name, after) = match rest.strip_prefix('{') {
            Some(braced) => match braced.split_once('}') {
                Some(parts) => parts,
                None => return false,
            },
            None => {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                rest.split_at(end)
            }
        };
        let is_name = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        is_name && after.starts_with('/') && !after.contains(['$', '`']) && after.len() > 1
    }

    /// A plain word, for tests and for words made from other words.
    pub fn plain(text: &str) -> Word {
        Word {
            text: text.to_string(),
            ..Word::default()
        }
    }
}

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `>`, `>>`, `>|`, `&>`, `&>>`, `<>`, `>&file`: opens the target for writing.
    Write,
    /// `<`: reads the target.
    Read,
    /// `>&2`, `<&0`, `>&-`: duplicates or closes a descriptor.
    Duplicate,
    /// `<<DELIM` and `<<-DELIM`: the body is the command's stdin.
    HereDoc,
    /// `<<< word`: the word is the command's stdin.
    HereString,
}

/// One redirection of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// What it does.
    pub kind: RedirectKind,
    /// The operator as written, with its descriptor number (`2>>`).
    pub op: String,
    /// The file, descriptor or here-document delimiter.
    pub target: Word,
    /// What a here-document or here-string feeds to the command's stdin.
    pub body: Option<String>,
}

/// One simple command: its words and redirections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Command {
    /// The words, assignments and command name included.
    pub words: Vec<Word>,
    /// The redirections, in order.
    pub redirects: Vec<Redirect>,
    /// Commands joined by `|` share a pipeline number; every other
    /// separator starts a new one.
    pub pipeline: usize,
    /// How many `(` subshells (or groups) the command is inside.
    pub subshell: usize,
}

impl Parser {
    /// A parser at the start of `text`.
    fn new(text: &str) -> Parser {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            commands: Vec::new(),
            current: Command::default(),
            pipeline: 0,
            subshell: 0,
            heredocs: Vec::new(),
        }
    }
}

/// Splits a command line into simple commands, in order.
pub fn parse(src: &str) -> Vec<Command> {
    let mut p = Parser::new(src);
    p.run();
    p.commands
}

/// A here-document waiting for its body (which starts on the next line).
struct PendingHereDoc {
    command: usize,
    redirect: usize,
    delimiter: String,
    strip_tabs: bool,
    expands: bool,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    commands: Vec<Command>,
    current: Command,
    pipeline: usize,
    subshell: usize,
    heredocs: Vec<PendingHereDoc>,
}

fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    fn run(&mut self) {
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else { break };
            match c {
                '\n' => {
                    self.pos += 1;
                    self.finish(true);
                    self.read_heredoc_bodies();
                }
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                ';' => {
                    // `;`, and `;;` / `;&` that end a `case` branch.
                    self.pos += 1;
                    if matches!(self.peek(), Some(';' | '&')) {
                        self.pos += 1;
                    }
                    self.finish(true);
                }
                '&' if self.peek_at(1) == Some('>') => self.redirect(String::new()),
                '&' => {
                    self.pos += if self.peek_at(1) == Some('&') { 2 } else { 1 };
                    self.finish(true);
                }
                '|' => {
                    if self.peek_at(1) == Some('|') {
                        self.pos += 2;
                        self.finish(true);
                    } else {
                        self.pos += if self.peek_at(1) == Some('&') { 2 } else { 1 };
                        self.finish(false);
                    }
                }
                '(' if self.peek_at(1) == Some('(') && self.arithmetic_ahead() => {}
                '(' | ')' => {
                    // Subshells and function definitions: their commands
                    // are read as if they stood alone, with their depth.
                    self.pos += 1;
                    self.finish(true);
                    if c == '(' {
                        self.subshell += 1;
                    } else {
                        self.subshell = self.subshell.saturating_sub(1);
                    }
                }
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    let word = self.process_substitution();
                    self.current.words.push(word);
                }
                '<' | '>' => self.redirect(String::new()),
                '0'..='9' if self.fd_redirect_ahead() => {
                    let mut fd = String::new();
                    while let Some(d) = self.peek().filter(char::is_ascii_digit) {
                        fd.push(d);
                        self.pos += 1;
                    }
                    self.redirect(fd);
                }
                _ => {
                    let word = self.word();
                    self.current.words.push(word);
                }
            }
        }
        self.finish(true);
        // A here-document whose body never came: nothing is fed.
        self.read_heredoc_bodies();
    }

    /// At `((` where a command starts (or after `for`): reads an
    /// arithmetic command, `(( x > 1 ))`, as the words `((` and its
    /// expression, whose substitutions still count, and says so. bash
    /// takes `((` as arithmetic only when it closes with `))`; with `) )`
    /// it is two subshells, and nothing is read here.
    fn arithmetic_ahead(&mut self) -> bool {
        let at_start = match self.current.words.as_slice() {
            [] => true,
            [w] => w.text == "for",
            _ => false,
        };
        if !at_start || !self.current.redirects.is_empty() {
            return false;
        }
        let start = self.pos;
        self.pos += 2;
        let inner = self.until_closing_paren();
        if self.peek() != Some(')') {
            self.pos = start;
            return false;
        }
        self.pos += 1;
        let mut expr = expansions_of(&inner);
        expr.text = inner.trim().to_string();
        self.current.words.push(Word::plain("(("));
        self.current.words.push(expr);
        true
    }

    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => self.pos += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.pos += 2,
                _ => return,
            }
        }
    }

    /// Ends the current command; `new_pipeline` unless it was joined by `|`.
    fn finish(&mut self, new_pipeline: bool) {
        if !self.current.words.is_empty() || !self.current.redirects.is_empty() {
            let mut done = std::mem::take(&mut self.current);
            done.pipeline = self.pipeline;
            done.subshell = self.subshell;
            self.commands.push(done);
        }
        if new_pipeline {
            self.pipeline += 1;
        }
    }

    /// True at `2>`, `10>>`, `0<`: digits directly followed by a redirection.
    fn fd_redirect_ahead(&self) -> bool {
        let mut i = 0;
        while self.peek_at(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        matches!(self.peek_at(i), Some('<' | '>')) && self.peek_at(i + 1) != Some('(')
    }

    fn redirect(&mut self, fd: String) {
        const OPS: [(&str, RedirectKind); 12] = [
            ("&>>", RedirectKind::Write),
            ("&>", RedirectKind::Write),
            ("<<<", RedirectKind::HereString),
            ("<<-", RedirectKind::HereDoc),
            ("<<", RedirectKind::HereDoc),
            ("<>", RedirectKind::Write),
            ("<&", RedirectKind::Duplicate),
            ("<", RedirectKind::Read),
            (">>", RedirectKind::Write),
            (">|", RedirectKind::Write),
            (">&", RedirectKind::Duplicate),
            (">", RedirectKind::Write),
        ];
        let Some(&(op, mut kind)) = OPS.iter().find(|(op, _)| self.starts_with(op)) else {
            // Not reachable from `run`, which calls this only at `<`, `>` or `&>`.
            self.pos += 1;
            return;
        };
        self.pos += op.chars().count();
        self.skip_blanks();
        let target = match self.peek() {
            Some(c) if !is_meta(c) => self.word(),
            _ => Word::default(),
        };
        // `>&file` (not a descriptor number or `-`) writes to a file, as `&>` does.
        if kind == RedirectKind::Duplicate
            && op == ">&"
            && !target.text.is_empty()
            && !target.text.chars().all(|c| c.is_ascii_digit() || c == '-')
        {
            kind = RedirectKind::Write;
        }
        let body = (kind == RedirectKind::HereString).then(|| target.text.clone());
        if kind == RedirectKind::HereDoc {
            self.heredocs.push(PendingHereDoc {
                command: self.commands.len(),
                redirect: self.current.redirects.len(),
                delimiter: target.text.clone(),
                strip_tabs: op == "<<-",
                expands: !target.quoted,
            });
        }
        self.current.redirects.push(Redirect {
            kind,
            op: format!("{fd}{op}"),
            target,
            body,
        });
    }

    /// Reads the bodies of the here-documents opened on the line just ended.
    fn read_heredoc_bodies(&mut self) {
        for doc in std::mem::take(&mut self.heredocs) {
            let mut lines = Vec::new();
            while self.pos < self.chars.len() {
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                let line: String = self.chars[start..self.pos].iter().collect();
                if self.peek() == Some('\n') {
                    self.pos += 1;
                }
                let line = if doc.strip_tabs {
                    line.trim_start_matches('\t').to_string()
                } else {
                    line
                };
                if line.trim_end_matches('\r') == doc.delimiter {
                    break;
                }
                lines.push(line);
            }
            let body = lines.join("\n");
            // An unquoted delimiter means the body is expanded: the
            // substitutions in it run, whatever the command is.
            let expanded = if doc.expands {
                expansions_of(&body)
            } else {
                Word::default()
            };
            if let Some(r) = self
                .commands
                .get_mut(doc.command)
                .and_then(|c| c.redirects.get_mut(doc.redirect))
            {
                r.target.substitutions.extend(expanded.substitutions);
                r.target.expands |= expanded.expands;
                r.body = Some(body);
            }
        }
    }

    /// `<(...)` or `>(...)` as a word.
    fn process_substitution(&mut self) -> Word {
        let start = self.pos;
        self.pos += 2;
        let inner = self.until_closing_paren();
        Word {
            text: self.chars[start..self.pos].iter().collect(),
            substitutions: vec![inner],
            expands: true,
            quoted: false,
        }
    }

    /// Reads one word up to the next unquoted metacharacter.
    fn word(&mut self) -> Word {
        let mut w = Word::default();
        while let Some(c) = self.peek() {
            match c {
                c if is_meta(c) => break,
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            w.text.push(next);
                            w.quoted = true;
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    self.pos += 1;
                    w.quoted = true;
                    while let Some(c) = self.peek() {
                        self.pos += 1;
                        if c == '\'' {
                            break;
                        }
                        w.text.push(c);
                    }
                }
                '"' => {
                    self.pos += 1;
                    w.quoted = true;
                    self.double_quoted(&mut w, Some('"'));
                }
                '$' => self.dollar(&mut w),
                '`' => self.backtick(&mut w),
                _ => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
        w
    }

    /// The inside of double quotes (or of an expanded here-document body
    /// when `end` is None), after the opening quote.
    fn double_quoted(&mut self, w: &mut Word, end: Option<char>) {
        while let Some(c) = self.peek() {
            if Some(c) == end {
                self.pos += 1;
                return;
            }
            match c {
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(n @ ('$' | '`' | '"' | '\\')) => {
                            w.text.push(n);
                            self.pos += 1;
                        }
                        _ => w.text.push('\\'),
                    }
                }
                '$' => self.dollar(w),
                '`' => self.backtick(w),
                _ => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// `$(...)`, `$((...))`, `${...}`, `$'...'`, `$"..."`, `$name`.
    fn dollar(&mut self, w: &mut Word) {
        match self.peek_at(1) {
            Some('(') => {
                let start = self.pos;
                self.pos += 2;
                let inner = self.until_closing_paren();
                // `$((1 + 2))` is arithmetic; reading its inside as a script
                // is harmless and still finds `$(...)` nested in it.
                w.substitutions.push(inner);
                w.text.extend(&self.chars[start..self.pos]);
                w.expands = true;
            }
            Some('{') => {
                let start = self.pos;
                self.pos += 2;
                let mut depth = 1;
                while let Some(c) = self.peek() {
                    self.pos += 1;
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                w.text.extend(&self.chars[start..self.pos]);
                w.expands = true;
            }
            Some('\'') => {
                self.pos += 2;
                w.quoted = true;
                self.ansi_c_quoted(w);
            }
            Some('"') => {
                self.pos += 2;
                w.quoted = true;
                self.double_quoted(w, Some('"'));
            }
            Some(c) if c.is_ascii_alphanumeric() || "_?#@*!$-".contains(c) => {
                w.text.push('$');
                w.expands = true;
                self.pos += 1;
            }
            _ => {
                w.text.push('$');
                self.pos += 1;
            }
        }
    }

    /// `$'...'` after the quote: backslash escapes as bash reads them.
    fn ansi_c_quoted(&mut self, w: &mut Word) {
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '\'' => return,
                '\\' => {
                    let Some(e) = self.peek() else { return };
                    self.pos += 1;
                    match e {
                        'n' => w.text.push('\n'),
                        't' => w.text.push('\t'),
                        'r' => w.text.push('\r'),
                        'x' => {
                            let hex: String = self.chars[self.pos..]
                                .iter()
                                .take(2)
                                .take_while(|c| c.is_ascii_hexdigit())
                                .collect();
                            self.pos += hex.len();
                            if let Some(ch) =
                                u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
                            {
                                w.text.push(ch);
                            }
                        }
                        '0'..='7' => {
                            let oct: String = self.chars[self.pos - 1..]
                                .iter()
                                .take(3)
                                .take_while(|c| c.is_digit(8))
                                .collect();
                            self.pos += oct.len() - 1;
                            if let Some(ch) =
                                u32::from_str_radix(&oct, 8).ok().and_then(char::from_u32)
                            {
                                w.text.push(ch);
                            }
                        }
                        other => w.text.push(other),
                    }
                }
                _ => w.text.push(c),
            }
        }
    }

    /// A backtick substitution, from the opening backtick.
    fn backtick(&mut self, w: &mut Word) {
        let start = self.pos;
        self.pos += 1;
        let mut inner = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '`' => break,
                '\\' => {
                    if let Some(n) = self.peek() {
                        self.pos += 1;
                        if !matches!(n, '`' | '\\' | '$') {
                            inner.push('\\');
                        }
                        inner.push(n);
                    }
                }
                _ => inner.push(c),
            }
        }
        w.substitutions.push(inner);
        w.text.extend(&self.chars[start..self.pos]);
        w.expands = true;
    }

    /// The text up to the `)` matching an already consumed `(`, which is
    /// consumed too; quotes and nested parentheses are skipped over.
    fn until_closing_paren(&mut self) -> String {
        let start = self.pos;
        let mut depth = 1usize;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '\\' => self.pos += 1,
                '\'' => {
                    while self.peek().is_some_and(|c| c != '\'') {
                        self.pos += 1;
                    }
                    self.pos += 1;
                }
                '"' => {
                    while let Some(c) = self.peek() {
                        self.pos += 1;
                        match c {
                            '\\' => self.pos += 1,
                            '"' => break,
                            _ => {}
                        }
                    }
                }
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        let end = self.pos - 1;
                        return self.chars[start..end].iter().collect();
                    }
                }
                _ => {}
            }
        }
        self.pos = self.pos.min(self.chars.len());
        self.chars[start..].iter().collect()
    }
}

/// Text that the shell expands as if it were inside double quotes (an
/// unquoted here-document body) read as one word: its command
/// substitutions, and whether anything in it expands.
fn expansions_of(text: &str) -> Word {
    let mut p = Parser::new(text);
    let mut w = Word::default();
    p.double_quoted(&mut w, None);
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(src: &str) -> Vec<Vec<String>> {
        parse(src)
            .into_iter()
            .map(|c| c.words.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn quotes_and_escapes_are_removed() {
        assert_eq!(
            words(r#"\rm -r''f "a b" 'c'd e\ f"#),
            vec![vec!["rm", "-rf", "a b", "cd", "e f"]]
        );
        assert_eq!(words("echo $'a\\tb\\x41'"), vec![vec!["echo", "a\tbA"]]);
        assert_eq!(words("echo \"x\\\"y\""), vec![vec!["echo", "x\"y"]]);
    }

    #[test]
    fn separators_split_commands_and_pipes_share_a_pipeline() {
        let cmds = parse("a; b && c || d & e | f |& g\nh");
        let names: Vec<(&str, usize)> = cmds
            .iter()
            .map(|c| (c.words[0].text.as_str(), c.pipeline))
            .collect();
        let pipes: Vec<usize> = names.iter().map(|n| n.1).collect();
        assert_eq!(names.len(), 8);
        assert_eq!(pipes[4], pipes[5]);
        assert_eq!(pipes[5], pipes[6]);
        assert_ne!(pipes[3], pipes[4]);
        assert_ne!(pipes[6], pipes[7]);
        assert_ne!(pipes[0], pipes[1]);
    }

    #[test]
    fn arithmetic_commands_are_one_command_and_keep_their_substitutions() {
        assert_eq!(
            words("(( $x > 1 )) && echo y"),
            vec![vec!["((", "$x > 1"], vec!["echo", "y"]]
        );
        assert_eq!(
            words("for ((i = 0; i < 3; i++)); do ls; done"),
            vec![
                vec!["for", "((", "i = 0; i < 3; i++"],
                vec!["do", "ls"],
                vec!["done"]
            ]
        );
        let cmds = parse("(( $(rm -rf x) ))");
        assert_eq!(cmds[0].words[1].substitutions, vec!["rm -rf x"]);
        // `( (` and `) )` are subshells, whatever the spacing at the start.
        assert_eq!(
            words("((cd x; rm -rf y) )"),
            vec![vec!["cd", "x"], vec!["rm", "-rf", "y"]]
        );
    }

    #[test]
    fn a_directory_variable_before_a_written_name_is_not_a_command_made_at_run_time() {
        let word = |src: &str| parse(src).remove(0).words.remove(0);
        assert!(!word("$HOME/bin/tool --x").built_at_run_time());
        assert!(!word("\"${VENV}/bin/python\" -V").built_at_run_time());
        for made in [
            "$CMD x",
            "$HOME x",
            "$A/$B x",
            "${X:-/bin}/rm x",
            "$(which rm) x",
            "$X/ x",
            "$HOME/r? x",
        ] {
            assert!(word(made).built_at_run_time(), "{made}");
        }
    }

    #[test]
    fn subshells_have_a_depth() {
        let depths: Vec<usize> = parse("a; (b; (c) ; d); e")
            .iter()
            .map(|c| c.subshell)
            .collect();
        assert_eq!(depths, vec![0, 1, 2, 1, 0]);
    }

    #[test]
    fn substitutions_are_collected() {
        let cmds = parse("echo \"$(rm -rf x)\" `ls -l` <(curl u) $((1+2)) ${HOME}");
        let subs: Vec<String> = cmds[0]
            .words
            .iter()
            .flat_map(|w| w.substitutions.clone())
            .collect();
        assert_eq!(subs, vec!["rm -rf x", "ls -l", "curl u", "(1+2)"]);
        assert!(cmds[0].words[5].expands);
        assert_eq!(cmds[0].words[5].text, "${HOME}");
        let nested = parse("a $(b $(c) 'd)') e");
        assert_eq!(nested[0].words[1].substitutions, vec!["b $(c) 'd)'"]);
        assert_eq!(nested[0].words[2].text, "e");
    }

    #[test]
    fn redirections_and_their_targets() {
        let cmds = parse("cmd >out 2>>err.log <in 2>&1 &>all >& f >&- x>/etc/y");
        let c = &cmds[0];
        let shown: Vec<(RedirectKind, &str, &str)> = c
            .redirects
            .iter()
            .map(|r| (r.kind, r.op.as_str(), r.target.text.as_str()))
            .collect();
        assert_eq!(
            shown,
            vec![
                (RedirectKind::Write, ">", "out"),
                (RedirectKind::Write, "2>>", "err.log"),
                (RedirectKind::Read, "<", "in"),
                (RedirectKind::Duplicate, "2>&", "1"),
                (RedirectKind::Write, "&>", "all"),
                (RedirectKind::Write, ">&", "f"),
                (RedirectKind::Duplicate, ">&", "-"),
                (RedirectKind::Write, ">", "/etc/y"),
            ]
        );
        // `x>/etc/y` is the word `x` then a redirection.
        let w: Vec<&str> = c.words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(w, vec!["cmd", "x"]);
    }

    #[test]
    fn here_documents_have_bodies() {
        let cmds = parse("cat <<EOF > out.txt | sh\nrm -rf x\n$(touch y)\nEOF\nls\n");
        assert_eq!(cmds.len(), 3);
        let doc = &cmds[0].redirects[0];
        assert_eq!(doc.kind, RedirectKind::HereDoc);
        assert_eq!(doc.body.as_deref(), Some("rm -rf x\n$(touch y)"));
        assert_eq!(doc.target.substitutions, vec!["touch y"]);
        assert!(doc.target.expands);
        assert!(!parse("sh <<EOF\nls\nEOF\n")[0].redirects[0].target.expands);
        assert_eq!(cmds[1].words[0].text, "sh");
        assert_eq!(cmds[2].words[0].text, "ls");
        // A quoted delimiter: no expansion.
        let quoted = parse("bash <<-'END'\n\techo $(id)\n\tEND\n");
        assert_eq!(quoted[0].redirects[0].body.as_deref(), Some("echo $(id)"));
        assert!(quoted[0].redirects[0].target.substitutions.is_empty());
        let here = parse("bash <<< 'rm -rf /'");
        assert_eq!(here[0].redirects[0].body.as_deref(), Some("rm -rf /"));
    }

    #[test]
    fn comments_continuations_and_malformed_input() {
        assert_eq!(
            words("ls # rm -rf /\necho a\\\nb"),
            vec![vec!["ls"], vec!["echo", "ab"]]
        );
        assert_eq!(
            words("echo 'unterminated"),
            vec![vec!["echo", "unterminated"]]
        );
        assert_eq!(words("echo $(open"), vec![vec!["echo", "$(open"]]);
        assert_eq!(words("a#b"), vec![vec!["a#b"]]);
        assert!(parse("").is_empty());
        assert!(parse(" ;; & ) ( ").is_empty());
        for junk in [
            "\\", "$", "`", "\"", "$'\\", "$'\\x", "$((", "${", "<(", "2>", "<<",
        ] {
            let _ = parse(junk);
        }
    }
}
