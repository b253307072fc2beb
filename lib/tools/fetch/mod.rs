//! `fetch`: one URL, read for the model. A web page comes back as its main
//! content in markdown, a PDF as its text, JSON, markdown and text as they
//! are, anything else as one line saying what it is; a long result comes
//! in pages, read on with `offset` as `read` does.
//!
//! What it may reach is the run's network policy ([`policy`]), enforced
//! here hop by hop and address by address ([`http`]), whatever the gate
//! decided: the gate only adds that a host the policy does not name is
//! reached after a person said yes. A secret in the URL is refused before
//! anything is sent ([`secrets`]).

pub mod content;
pub mod html;
pub mod http;
pub mod page;
pub mod policy;
pub mod secrets;

use std::net::IpAddr;
use std::sync::OnceLock;
use std::time::Duration;

use clap::Args;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::tool_protocol::{Context, Note, Tool, ToolError, ToolOutput};
use http::{Cut, Fetched};

/// Seconds a fetch may take in all when `--timeout` does not say.
pub const DEFAULT_TIMEOUT_SECS: f64 = 30.0;
/// The longest `--timeout`.
pub const MAX_TIMEOUT_SECS: f64 = 300.0;

/// Arguments of `fetch`.
#[derive(Debug, Clone, Args, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchArgs {
    /// The URL to read: http or https (a URL without a scheme is taken as
    /// https).
    #[arg(value_name = "URL")]
    #[schemars(description = "")]
    pub url: String,
    /// Line of the result to start from (1-indexed), to read on in a long
    /// page; the first result says how long the page is and where to go on.
    #[arg(long)]
    #[serde(default)]
    #[schemars(range(min = 1))]
    #[schemars(description = "First line, from 1.")]
    pub offset: Option<u64>,

    // Flags of the process, never of a call: a call that sets them to
    // anything else is refused, so a model cannot widen what it reaches.
    /// Let HOST be reached whatever it resolves to, loopback and private
    /// addresses included (repeatable): a name (`localhost`), every name
    /// below a domain (`*.corp.example`) or an address (`127.0.0.1`,
    /// `::1`). Without it any public host is reached and the others are
    /// refused; under ag-loop, the run's network policy decides
    /// (ag-loop --allow-host), and these are added to it.
    #[arg(long = "allow-host", value_name = "HOST")]
    #[serde(default)]
    #[schemars(skip)]
    pub allow_host: Vec<String>,
    /// Connect to ADDR for the host HOST instead of resolving it (curl's
    /// --resolve, without the port; repeatable). The address is checked
    /// as a resolved one would be: a name pinned to a private address is
    /// refused unless --allow-host names it.
    #[arg(long, value_name = "HOST:ADDR")]
    #[serde(default)]
    #[schemars(skip)]
    pub resolve: Vec<String>,
    /// Give up after SECS seconds in all, redirects and a slow body
    /// included (default 30, at most 300); what came by then is shown,
    /// with a note.
    #[arg(long, value_name = "SECS")]
    #[serde(default, deserialize_with = "seconds")]
    #[schemars(skip)]
    pub timeout: Option<f64>,
}

/// `--timeout` as the JSONL loop passes a process flag to every call (a
/// string, as it was written), or as a number.
fn seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Secs {
        Number(f64),
        Text(String),
    }
    match Option::<Secs>::deserialize(d)? {
        None => Ok(None),
        Some(Secs::Number(n)) => Ok(Some(n)),
        Some(Secs::Text(t)) => t
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("`timeout` is seconds, not `{t}`"))),
    }
}

/// The `fetch` tool.
pub struct FetchTool;

impl Tool for FetchTool {
    type Args = FetchArgs;
    const NAME: &'static str = "fetch";
    const BIN: &'static str = "ag-fetch";
    const PROCESS_FLAGS: &'static [&'static str] = &["allow_host", "resolve", "timeout"];
    const ABOUT: &'static str = "Read one URL: a web page as markdown, a PDF as text, paginated";
    const LABEL: &'static str = "Fetch URL";
    const DESCRIPTION: &'static str = "Read one URL with a GET. An HTML page comes back as its main \
content in markdown (navigation, header, footer, scripts, styles and ads left out; headings, lists, \
code blocks, tables and links kept, links made absolute), a PDF as its text page by page, JSON, \
markdown and plain text as they are, anything else as one line giving its type and size. A long \
result comes in pages of whole lines (100,000 characters, or what fits in AG_OUTPUT_BUDGET); the \
first says how long the whole is and which `offset` reads on. \
Hosts: any public host, and loopback, private, link-local (169.254.169.254) and other inward \
addresses only for hosts named by --allow-host; a name is resolved once, its addresses are checked \
and the connection goes only to those, and the address connected to is checked again. Under \
ag-loop the run's network policy decides instead (AG_FETCH_HOSTS, set by ag-loop --allow-host and \
--allow-net), and a host it does not name is reached only when ag-loop's gate allowed the call. \
Redirects are followed by hand (at most 5), each hop judged like the first. No cookies, no \
credentials (a URL with a user name or password is refused), no proxy from the environment, no \
header but User-Agent and Accept. A URL holding the value of a provider key (from the environment \
or models.json) is refused before anything is sent. Bounds: 10 MiB of a page or text (32 MiB of a \
PDF), 30 s in all (--timeout), and a result that was cut says so; a page not converted within 10 s \
comes back as its text without markup.";
    const MODEL_DESCRIPTION: &'static str = "Read a web page (as markdown), a PDF (as text), JSON or text from a URL; a long one in pages (the output says how to read on). Hosts outside the run's network policy need the user's approval.";
    const EXIT_STATUS: &'static str =
        "Exit status: 0 success, 1 the fetch failed or was refused, 2 usage or input error.";

    fn run(_ctx: &Context, args: FetchArgs) -> Result<ToolOutput, ToolError> {
        fetch(&args, crate::tools::budget::from_env())
    }
}

/// The flags ag-fetch was started with, parsed again from its own command
/// line, once.
fn process_flags() -> &'static (Vec<String>, Vec<String>, Option<f64>) {
    static FLAGS: OnceLock<(Vec<String>, Vec<String>, Option<f64>)> = OnceLock::new();
    FLAGS.get_or_init(|| {
        // Read flag by flag: in the JSONL loop there is no URL on the
        // command line, and the whole struct would not parse without it.
        let cmd = crate::tool_protocol::tool_command::<FetchTool>().mut_args(|a| a.required(false));
        let Ok(m) = cmd.try_get_matches() else {
            return Default::default();
        };
        let strings = |id: &str| -> Vec<String> {
            m.get_many::<String>(id)
                .map(|v| v.cloned().collect())
                .unwrap_or_default()
        };
        (
            strings("allow_host"),
            strings("resolve"),
            m.get_one::<f64>("timeout").copied(),
        )
    })
}

fn fetch(args: &FetchArgs, budget: Option<usize>) -> Result<ToolOutput, ToolError> {
    let (allow, resolve, timeout) = process_flags();
    if args.allow_host != *allow || args.resolve != *resolve || args.timeout != *timeout {
        let mut call = json!({ "url": args.url });
        if let Some(o) = args.offset {
            call["offset"] = json!(o);
        }
        return Err(ToolError::new(
            "fetch.flags_fixed",
            format!(
                "`allow_host`, `resolve` and `timeout` are fixed when ag-fetch starts (the network policy is the run's, not a call's); call again without them: {call}"
            ),
        ));
    }
    if args.offset == Some(0) {
        return Err(ToolError::new(
            "fetch.bad_offset",
            format!(
                "`offset` is 1-indexed: use offset=1 for the first line: {}",
                json!({"url": args.url, "offset": 1})
            ),
        ));
    }
    let url = policy::parse_url(&args.url).map_err(|m| ToolError::new("fetch.bad_url", m))?;
    if let Some(message) =
        secrets::refusal(&args.url, &crate::llm::keys::Redactor::for_this_machine())
    {
        return Err(ToolError::new(secrets::CODE, message));
    }
    let host = policy::host_of(&url);
    let net = match policy::NetPolicy::from_env(&args.allow_host, &host) {
        Ok(Some(p)) => p,
        Ok(None) => policy::NetPolicy::standalone(&args.allow_host)
            .map_err(|m| ToolError::new("fetch.bad_policy", format!("--allow-host {m}")))?,
        Err(m) => return Err(ToolError::new("fetch.bad_policy", m)),
    };
    let overrides = pinned(&args.resolve)?;
    let total = Duration::from_secs_f64(
        args.timeout
            .unwrap_or(DEFAULT_TIMEOUT_SECS)
            .clamp(0.1, MAX_TIMEOUT_SECS),
    );
    let limits = http::Limits {
        total,
        max_bytes: content::max_bytes,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            ToolError::new(
                "fetch.runtime",
                format!("cannot start the async runtime: {e}"),
            )
        })?;
    let fetched = runtime
        .block_on(http::fetch(&url, net, overrides, &limits))
        .map_err(|f| {
            ToolError::new(f.code, f.message).with_details(json!({"url": url.as_str()}))
        })?;
    let doc = content::document(&fetched).map_err(|m| {
        ToolError::new("fetch.unreadable", format!("`{}`: {m}", fetched.final_url))
            .with_details(json!({"url": url.as_str(), "final_url": fetched.final_url.as_str()}))
    })?;
    render(args, &fetched, doc, budget)
}

/// `--resolve HOST:ADDR` entries, the host written as URLs write it (lower
/// case, punycode), so that it matches the host of a URL.
fn pinned(entries: &[String]) -> Result<http::Overrides, ToolError> {
    let mut out = http::Overrides::new();
    for e in entries {
        let parsed = e.split_once(':').and_then(|(host, addr)| {
            let ip: IpAddr = addr.trim().trim_matches(['[', ']']).parse().ok()?;
            Some((policy::normal_name(host).ok()?, ip))
        });
        let Some((host, ip)) = parsed else {
            return Err(ToolError::new(
                "fetch.bad_resolve",
                format!(
                    "--resolve `{e}` is not HOST:ADDR (a host name, a colon, then an IPv4 or IPv6 address)"
                ),
            ));
        };
        out.insert(host, ip);
    }
    Ok(out)
}

/// Characters of a page kept back from the budget for the notes, which
/// fetch's are longer than most (what was cut, where to read on).
const NOTES_ROOM: usize = 600;

fn render(
    args: &FetchArgs,
    fetched: &Fetched,
    doc: content::Document,
    budget: Option<usize>,
) -> Result<ToolOutput, ToolError> {
    let (lines, broken) = page::lines(&doc.text);
    let total = lines.len();
    let offset = args.offset.unwrap_or(1) as usize;
    let max_chars = budget.map_or(page::PAGE_CHARS, |b| {
        crate::tools::budget::for_body(b)
            .saturating_sub(NOTES_ROOM)
            .max(1_000)
    });
    let Some(p) = page::page(&lines, offset, max_chars) else {
        return Err(ToolError::new(
            "fetch.offset_past_end",
            format!(
                "offset {offset} is past the end of `{}`, which is {total} line{} long. Use an offset from 1 to {}: {}",
                fetched.final_url,
                if total == 1 { "" } else { "s" },
                total.max(1),
                json!({"url": args.url, "offset": total.max(1)})
            ),
        )
        .with_details(json!({"url": fetched.url.as_str(), "total_lines": total})));
    };
    let last = p.offset + p.count.max(1) - 1;
    let next = (last < total).then_some(last + 1);
    let mut notes: Vec<Note> = Vec::new();
    match &fetched.cut {
        Some(Cut::Size(max)) => notes.push(Note::warning(format!(
            "Only the first {} of the body were read{}; the text ends where the download stopped.",
            crate::tools::bash::human_bytes(*max as u64),
            fetched
                .content_length
                .map(|n| format!(" (it is {})", crate::tools::bash::human_bytes(n)))
                .unwrap_or_default()
        ))),
        Some(Cut::Time(t)) => notes.push(Note::warning(format!(
            "The server was still sending after {} s, fetch's time limit; the text ends where the download stopped ({} read).",
            t.as_secs_f64(),
            crate::tools::bash::human_bytes(fetched.body.len() as u64)
        ))),
        Some(Cut::Broken(why)) => notes.push(Note::warning(format!(
            "The connection broke after {}: {why}; the text ends there.",
            crate::tools::bash::human_bytes(fetched.body.len() as u64)
        ))),
        None => {}
    }
    let kind = doc.kind;
    if kind != content::Kind::Other {
        let what = match kind {
            content::Kind::Html => "markdown",
            content::Kind::Pdf => "PDF text",
            _ => "text",
        };
        let chars = doc.text.chars().count();
        match next {
            Some(n) if offset == 1 => notes.push(Note::warning(format!(
                "The result is {total} lines ({chars} characters) of {what}; showing lines 1-{last}. Call fetch again with offset={n} to read on: {}",
                json!({"url": args.url, "offset": n})
            ))),
            Some(n) => notes.push(Note::plain(format!(
                "Showing lines {offset}-{last} of {total}. Use offset={n} to read on."
            ))),
            None if offset > 1 => notes.push(Note::plain(format!(
                "Showing lines {offset}-{last} of {total}: the end."
            ))),
            None => {}
        }
        if broken > 0 {
            notes.push(Note::plain(format!(
                "{broken} line{} longer than {} characters {} broken into lines of that length to page {}.",
                if broken == 1 { "" } else { "s" },
                page::MAX_LINE_CHARS,
                if broken == 1 { "was" } else { "were" },
                if broken == 1 { "it" } else { "them" }
            )));
        }
        if kind == content::Kind::Html && doc.text.trim().is_empty() {
            notes.push(Note::plain(
                "The page has no text of its own: it may be drawn by JavaScript, which fetch does not run. Look for an API, a feed or a plain version of it.",
            ));
        }
    }
    if !fetched.redirects.is_empty() {
        notes.push(Note::plain(format!("Redirected to {}.", fetched.final_url)));
    }
    notes.extend(doc.notes.iter().cloned().map(Note::plain));
    let mut details = json!({
        "url": fetched.url.as_str(),
        "final_url": fetched.final_url.as_str(),
        "content_type": fetched.content_type,
        "kind": kind.name(),
        "bytes": fetched.body.len(),
        "total_lines": total,
        "offset": offset,
        "lines_read": p.count,
        "truncated": next.is_some(),
    });
    if let Some(n) = next {
        details["next_offset"] = json!(n);
    }
    if let Some(t) = &doc.title {
        details["title"] = json!(t);
    }
    if let Some(f) = doc.found {
        details["main_content"] = json!(f);
    }
    if !fetched.redirects.is_empty() {
        details["redirects"] = json!(fetched.redirects);
    }
    if let Some(cut) = &fetched.cut {
        details["cut"] = match cut {
            Cut::Size(max) => {
                json!({"reason": "size", "max_bytes": max, "content_length": fetched.content_length})
            }
            Cut::Time(t) => json!({"reason": "time", "seconds": t.as_secs_f64()}),
            Cut::Broken(why) => json!({"reason": "broken", "error": why}),
        };
    }
    let cut_short = fetched.cut.is_some() || next.is_some();
    let out = ToolOutput::new(p.text, details).with_notes(notes);
    // A result that is not the whole says so first, so that the model
    // does not take it for the whole (as read's first page does).
    Ok(if cut_short { out.notes_first() } else { out })
}
