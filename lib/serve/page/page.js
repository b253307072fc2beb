// ag-serve's page. It speaks only ag-serve's HTTP API: the list of
// sessions, one session's events as Server-Sent Events (each event exactly
// as ag-loop wrote it to the session file), and ag-loop's commands. It
// holds no agent logic and never sees a key. Everything shown is built with
// DOM nodes and text, never parsed as HTML.
"use strict";

(() => {
  // The token comes in the URL's fragment (which the browser never sends),
  // or its query. It is kept in this tab's sessionStorage, which only this
  // origin (scheme, host and port) reads, so that a reload goes on without
  // it in the address bar; and it is sent with each request, never as a
  // cookie, which a browser would send to every port of this host.
  const TOKEN_KEY = "ag-serve-token";
  const token = (() => {
    const given = new URLSearchParams(location.hash.slice(1)).get("token")
      || new URLSearchParams(location.search).get("token");
    if (given) {
      sessionStorage.setItem(TOKEN_KEY, given);
      history.replaceState(null, "", location.pathname);
      return given;
    }
    return sessionStorage.getItem(TOKEN_KEY) || "";
  })();

  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  };

  // The name the other clients see on this page's approvals.
  let clientName = sessionStorage.getItem("ag-client");
  if (!clientName) {
    clientName = "page-" + Math.random().toString(16).slice(2, 6);
    sessionStorage.setItem("ag-client", clientName);
  }

  const noToken = "no token: open the URL ag-serve printed when it started (its token is in $AG_HOME/serve/token)";

  async function api(method, path, body) {
    if (!token) throw new Error(noToken);
    const init = {
      method,
      headers: { "x-ag-client": clientName, authorization: "Bearer " + token },
      credentials: "omit",
    };
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const r = await fetch(path, init);
    let data = {};
    try { data = await r.json(); } catch (_) { /* an empty body */ }
    if (!r.ok) throw new Error(data.error || r.status + " " + r.statusText);
    return data;
  }

  function status(text, bad) {
    const s = $("status");
    s.textContent = text || "";
    s.classList.toggle("bad", !!bad);
  }

  function ago(ts) {
    if (!ts) return "";
    const s = Math.max(0, (Date.now() - Date.parse(ts)) / 1000);
    if (s < 60) return Math.round(s) + "s ago";
    if (s < 3600) return Math.round(s / 60) + "m ago";
    if (s < 86400) return Math.round(s / 3600) + "h ago";
    return Math.round(s / 86400) + "d ago";
  }

  const money = (c) => "$" + (c || 0).toFixed(4);
  const stateText = (s) => (s === "waiting_for_approval" ? "needs approval" : s);

  // ------------------------------------------------------------ markdown

  // A small markdown renderer that builds nodes: fences, headings, lists,
  // quotes, paragraphs; code, bold, emphasis and http(s) links inline.
  function inline(text, into) {
    const re = /`([^`]+)`|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/;
    let rest = text;
    while (rest.length) {
      const m = re.exec(rest);
      if (!m) { into.appendChild(document.createTextNode(rest)); break; }
      if (m.index) into.appendChild(document.createTextNode(rest.slice(0, m.index)));
      if (m[1] !== undefined) into.appendChild(el("code", null, m[1]));
      else if (m[2] !== undefined || m[3] !== undefined) into.appendChild(el("strong", null, m[2] ?? m[3]));
      else if (m[4] !== undefined) into.appendChild(el("em", null, m[4]));
      else {
        const a = el("a", null, m[5]);
        a.href = m[6];
        a.rel = "noopener noreferrer";
        a.target = "_blank";
        into.appendChild(a);
      }
      rest = rest.slice(m.index + m[0].length);
    }
    return into;
  }

  function markdown(text) {
    const root = el("div", "md");
    const lines = String(text).split("\n");
    let para = [];
    let list = null;
    const flush = () => {
      if (para.length) {
        const p = el("p");
        para.forEach((l, i) => { if (i) p.appendChild(el("br")); inline(l, p); });
        root.appendChild(p);
        para = [];
      }
    };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const fence = /^\s*```\s*([\w+-]*)\s*$/.exec(line);
      if (fence) {
        flush(); list = null;
        const body = [];
        for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) body.push(lines[i]);
        const pre = el("pre");
        pre.appendChild(el("code", null, body.join("\n")));
        root.appendChild(pre);
        continue;
      }
      const h = /^(#{1,6})\s+(.*)$/.exec(line);
      if (h) {
        flush(); list = null;
        root.appendChild(inline(h[2], el("h" + Math.min(4, h[1].length + 1))));
        continue;
      }
      const item = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(line);
      if (item) {
        flush();
        const kind = /\d/.test(item[1]) ? "ol" : "ul";
        if (!list || list.tagName.toLowerCase() !== kind) { list = el(kind); root.appendChild(list); }
        list.appendChild(inline(item[2], el("li")));
        continue;
      }
      const quote = /^>\s?(.*)$/.exec(line);
      if (quote) {
        flush(); list = null;
        root.appendChild(inline(quote[1], el("blockquote")));
        continue;
      }
      if (!line.trim()) { flush(); list = null; continue; }
      list = null;
      para.push(line);
    }
    flush();
    return root;
  }

  function diffView(text) {
    const box = el("div", "diff");
    for (const l of String(text).split("\n")) {
      let cls = null;
      if (l.startsWith("@@")) cls = "hunk";
      else if (l.startsWith("+") && !l.startsWith("+++")) cls = "add";
      else if (l.startsWith("-") && !l.startsWith("---")) cls = "del";
      box.appendChild(el("div", cls, l || " "));
    }
    return box;
  }

  // ------------------------------------------------------------ sessions

  let sessions = [];
  let current = null; // the session shown: its id, stream and view state

  async function refreshSessions() {
    try {
      const all = $("show-all").checked ? "?all=1" : "";
      sessions = (await api("GET", "/api/sessions" + all)).sessions;
      status("connected as " + clientName);
    } catch (e) {
      status(e.message, true);
      return;
    }
    const ul = $("sessions");
    ul.replaceChildren();
    for (const s of sessions) {
      const li = el("li");
      li.dataset.id = s.id;
      if (current && current.id === s.id) li.classList.add("selected");
      const top = el("div", "row");
      top.appendChild(el("span", "badge " + s.state, stateText(s.state)));
      top.appendChild(el("span", "id", s.id.slice(0, 8)));
      top.appendChild(el("span", "meta", [s.model, money(s.cost), ago(s.last_activity)].filter(Boolean).join(" · ")));
      li.appendChild(top);
      li.appendChild(el("div", "prompt", s.first_prompt || "(no prompt yet)"));
      const where = el("div", "meta", s.cwd + (s.clients ? " · " + s.clients + " attached" : ""));
      li.appendChild(where);
      li.addEventListener("click", () => open(s.id));
      ul.appendChild(li);
    }
    if (current) {
      const s = sessions.find((x) => x.id === current.id);
      if (s) showState(s.state);
    }
  }

  function showState(state) {
    if (!current) return;
    current.state = state;
    const b = $("session-state");
    b.className = "badge " + state;
    b.textContent = stateText(state);
    const live = state !== "ended";
    $("resume").hidden = live;
    $("end").hidden = !live;
    for (const b of document.querySelectorAll("#checkpoint-list button")) {
      b.disabled = state === "working" || state === "waiting_for_approval";
    }
  }

  function open(id) {
    if (current && current.source) current.source.close();
    current = { id, entries: new Map(), answer: null, tools: new Map(), turn: 0, state: null, source: null };
    $("empty").hidden = true;
    $("session").hidden = false;
    $("session-title").textContent = id;
    $("session-meta").textContent = "";
    $("conversation").replaceChildren();
    $("checkpoint-list").replaceChildren();
    for (const li of document.querySelectorAll("#sessions li")) li.classList.toggle("selected", li.dataset.id === id);
    const s = sessions.find((x) => x.id === id);
    showState(s ? s.state : "idle");
    connect(current);
  }

  function connect(view) {
    // The browser reconnects by itself with Last-Event-ID, the offset to go
    // on from, when the stream breaks (or this page fell behind).
    // An EventSource sets no headers: the token goes in its query, to this
    // origin only (no referrer is ever sent).
    const src = new EventSource("/api/sessions/" + encodeURIComponent(view.id) + "/events?client="
      + encodeURIComponent(clientName) + "&token=" + encodeURIComponent(token));
    view.source = src;
    src.onmessage = (m) => { if (current === view) event(view, JSON.parse(m.data)); };
    src.addEventListener("serve", (m) => { if (current === view) serve(view, JSON.parse(m.data)); });
    src.onerror = () => { if (current === view && src.readyState === EventSource.CLOSED) status("the event stream closed", true); };
  }

  // ------------------------------------------------------------ events

  function add(node) {
    const c = $("conversation");
    const stick = c.scrollHeight - c.scrollTop - c.clientHeight < 80;
    c.appendChild(node);
    if (stick) c.scrollTop = c.scrollHeight;
    return node;
  }

  function notice(text, kind) {
    return add(el("div", "entry notice " + (kind || ""), text));
  }

  function contentText(content) {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) return content.filter((b) => b.type === "text").map((b) => b.text).join("\n");
    return "";
  }

  function shortArgs(name, a) {
    if (!a || typeof a !== "object") return "";
    for (const k of ["command", "file_path", "path", "pattern", "message", "url"]) {
      if (typeof a[k] === "string") return a[k];
    }
    const s = JSON.stringify(a);
    return s.length > 160 ? s.slice(0, 160) + "…" : s;
  }

  function tool(view, id, name, args) {
    let t = view.tools.get(id);
    if (t) return t;
    const box = el("div", "entry tool");
    const head = el("div", "head");
    head.appendChild(el("span", "name", name || "tool"));
    head.appendChild(el("span", "args", shortArgs(name, args)));
    const st = el("span", "st running", "running");
    head.appendChild(st);
    box.appendChild(head);
    add(box);
    t = { box, st, ask: null };
    view.tools.set(id, t);
    return t;
  }

  function setStatus(t, text, cls) {
    t.st.textContent = text;
    t.st.className = "st " + cls;
  }

  function assistantBlock(view, index, thinking) {
    let a = view.answer;
    if (!a) {
      a = { box: add(el("div", "entry assistant")), blocks: new Map() };
      view.answer = a;
    }
    let b = a.blocks.get(index);
    if (!b) {
      if (thinking) {
        const d = el("details", "thinking");
        d.appendChild(el("summary", null, "thinking"));
        const pre = el("pre");
        d.appendChild(pre);
        a.box.appendChild(d);
        b = { thinking: true, node: pre, text: "" };
      } else {
        const holder = el("div");
        a.box.appendChild(holder);
        b = { thinking: false, node: holder, text: "", dirty: false };
      }
      a.blocks.set(index, b);
    }
    return b;
  }

  // Markdown is drawn again at most once a frame while text streams.
  let redraw = new Set();
  function scheduleRedraw(b) {
    redraw.add(b);
    if (redraw.size === 1) requestAnimationFrame(() => {
      for (const x of redraw) x.node.replaceChildren(markdown(x.text));
      redraw = new Set();
      const c = $("conversation");
      if (c.scrollHeight - c.scrollTop - c.clientHeight < 200) c.scrollTop = c.scrollHeight;
    });
  }

  function approvalBox(view, t, e) {
    if (t.ask) t.ask.remove();
    const ask = el("div", "ask");
    ask.appendChild(el("div", "reason", e.reason || "this call needs your approval"));
    const answer = async (approved, always) => {
      for (const b of ask.querySelectorAll("button")) b.disabled = true;
      try {
        await api("POST", "/api/sessions/" + view.id + "/commands",
          { type: "approval", tool_call_id: e.tool_call_id, approved, always: always || undefined });
      } catch (err) {
        notice(err.message, "error");
        for (const b of ask.querySelectorAll("button")) b.disabled = false;
      }
    };
    const yes = el("button", "ok", "Approve");
    yes.dataset.approve = e.tool_call_id;
    yes.addEventListener("click", () => answer(true, false));
    ask.appendChild(yes);
    if (e.always) {
      const always = el("button", "ok", "Always: " + e.always);
      always.addEventListener("click", () => answer(true, true));
      ask.appendChild(always);
    }
    const no = el("button", "no", "Deny");
    no.addEventListener("click", () => answer(false, false));
    ask.appendChild(no);
    t.box.appendChild(ask);
    t.ask = ask;
  }

  // The errors a change brought in (details.diagnostics, from the language
// servers), shown beside its diff.
function diagnosticsView(details) {
  const files = details && details.diagnostics && details.diagnostics.files;
  if (!Array.isArray(files) || !files.length) return null;
  const box = el("div", "diagnostics");
  for (const f of files) {
    const late = f.late ? " (late, for an earlier change)" : "";
    const found = f.new || [];
    if (f.status === "checked" && !found.length) {
      box.appendChild(el("div", "ok", f.path + ": no new errors (" + f.server + ")" + late));
    } else if (f.status === "checked") {
      for (const d of found) {
        box.appendChild(el("div", "error", f.path + ":" + d.line + ":" + d.column + ": " + d.message + late));
      }
    } else {
      box.appendChild(el("div", "note", f.path + ": diagnostics " + f.status + (f.reason ? ": " + f.reason : "") + late));
    }
  }
  return box;
}

function findDiff(details) {
    if (!details || typeof details !== "object") return null;
    if (typeof details.diff === "string") return details.diff;
    if (Array.isArray(details.files)) {
      const d = details.files.map((f) => f && f.diff).filter((x) => typeof x === "string");
      if (d.length) return d.join("\n");
    }
    return null;
  }

  function event(view, e) {
    switch (e.type) {
      case "agent_start":
        showState("working");
        break;
      case "message_start":
        if (e.message.role === "user") {
          add(el("div", "entry user", contentText(e.message.content)));
        } else if (e.message.role === "assistant") {
          view.answer = null;
        }
        break;
      case "message_update": {
        const u = e.event || {};
        if (u.type === "text_delta" || u.type === "thinking_delta") {
          const b = assistantBlock(view, u.index || 0, u.type === "thinking_delta");
          b.text += u.delta;
          if (b.thinking) b.node.textContent = b.text;
          else scheduleRedraw(b);
        }
        break;
      }
      case "message_end":
        if (e.message.role === "assistant") {
          // The whole message is the truth: draw each block from it.
          (e.message.content || []).forEach((c, i) => {
            if (c.type === "text" && c.text) {
              const b = assistantBlock(view, i, false);
              b.text = c.text;
              b.node.replaceChildren(markdown(c.text));
            } else if (c.type === "thinking" && c.thinking) {
              const b = assistantBlock(view, i, true);
              b.text = c.thinking;
              b.node.textContent = c.thinking;
            }
          });
          if (e.message.stop_reason === "error" && e.message.error_message) notice(e.message.error_message, "error");
          view.answer = null;
        }
        break;
      case "tool_execution_start":
        tool(view, e.tool_call_id, e.tool_name, e.arguments);
        break;
      case "approval_request": {
        const t = tool(view, e.tool_call_id, e.tool_name, e.arguments);
        setStatus(t, "waiting for approval", "asking");
        approvalBox(view, t, e);
        showState("waiting_for_approval");
        break;
      }
      case "tool_execution_end": {
        const t = tool(view, e.tool_call_id, e.tool_name, null);
        if (t.ask) { t.ask.remove(); t.ask = null; }
        const denied = e.is_error && /denied|not approved|refused/i.test(e.output || "");
        setStatus(t, e.is_error ? (denied ? "denied" : "failed") : "done", e.is_error ? (denied ? "denied" : "error") : "done");
        const diff = findDiff(e.details);
        const out = e.output || "";
        if (diff || out) {
          const d = el("details");
          d.appendChild(el("summary", null, diff ? "diff" : "output (" + out.split("\n").length + " lines)"));
          d.appendChild(diff ? diffView(diff) : el("pre", "out", out));
          d.open = !!diff || out.split("\n").length <= 12;
          t.box.appendChild(d);
        }
        const diags = diagnosticsView(e.details);
        if (diags) t.box.appendChild(diags);
        if (current === view && view.state === "waiting_for_approval") showState("working");
        break;
      }
      case "agent_end": {
        view.answer = null;
        const u = e.usage || {};
        const cost = u.cost && typeof u.cost.total === "number" ? money(u.cost.total) : "";
        const line = [e.outcome !== "finished" ? e.outcome : "", e.error || "", cost].filter(Boolean).join(" · ");
        add(el("div", "entry run-end", line));
        showState("idle");
        refreshSessions();
        break;
      }
      case "interrupted":
        notice("interrupted", "warning");
        break;
      case "notify":
        notice(e.message, e.level === "info" ? "" : "warning");
        break;
      case "error":
        notice(e.message, "error");
        break;
      case "compaction":
        notice("the conversation was shortened: " + e.replaced + " older messages summarised, " + e.kept + " kept");
        break;
      case "checkpoint":
        checkpoint(view, e);
        break;
      case "turn_start":
        view.turn += 1;
        break;
      case "turn_end":
        // A tool's pictures (ag-browser's screenshots) under its call.
        for (const r of e.tool_results || []) {
          const shots = (r.content || []).filter((b) => b.type === "image" && b.data);
          if (!shots.length) continue;
          const t = tool(view, r.tool_call_id, r.tool_name, null);
          for (const b of shots) {
            const img = el("img", "shot");
            img.src = "data:" + b.mime_type + ";base64," + b.data;
            img.alt = r.tool_name + " image";
            t.box.appendChild(img);
          }
        }
        break;
      case "tool_execution_update":
        break;
      case "note":
        notice(e.message);
        break;
      case "withdrawn":
        notice("withdrawn: " + e.reason);
        break;
      case "settings":
        notice("model " + e.model + (e.reasoning ? ", reasoning " + e.reasoning : ""));
        break;
      default:
        notice("event " + e.type);
    }
  }

  function serve(view, m) {
    switch (m.type) {
      case "attached":
        $("session-meta").textContent = "as " + m.client + (m.live_from ? " · " + m.live_from + " events before" : "");
        showState(m.state);
        break;
      case "approval_answered": {
        const t = view.tools.get(m.tool_call_id);
        if (t) {
          if (t.ask) { t.ask.remove(); t.ask = null; }
          setStatus(t, (m.approved ? "approved by " : "denied by ") + m.by, m.approved ? "running" : "denied");
        }
        showState("working");
        break;
      }
      case "session_ended":
        showState("ended");
        if (m.stderr) notice(m.stderr, "warning");
        view.source.close();
        break;
      case "ending":
        notice("the session was told to end");
        break;
      case "dropped":
        notice("this page fell behind; catching up", "warning");
        break;
      case "refused":
        notice(m.message, "error");
        break;
    }
  }

  function checkpoint(view, e) {
    const li = el("li");
    li.dataset.turn = e.turn;
    const files = [];
    if (e.added && e.added.length) files.push("+" + e.added.length);
    if (e.changed && e.changed.length) files.push("~" + e.changed.length);
    if (e.deleted && e.deleted.length) files.push("-" + e.deleted.length);
    li.appendChild(el("div", null, "before turn " + e.turn));
    li.appendChild(el("div", "meta", [new Date(e.timestamp).toLocaleTimeString(), files.join(" ")].filter(Boolean).join(" · ")));
    const b = el("button", null, "Rewind to here");
    b.dataset.rewind = e.turn;
    let armed = false;
    b.addEventListener("click", async () => {
      if (!armed) {
        armed = true;
        b.textContent = "Put the files back and go on from before turn " + e.turn + "?";
        b.classList.add("no");
        return;
      }
      b.disabled = true;
      await rewind(view, e.turn, false);
    });
    li.appendChild(b);
    $("checkpoint-list").appendChild(li);
    b.disabled = view.state === "working" || view.state === "waiting_for_approval";
  }

  async function rewind(view, turn, force) {
    try {
      const r = await api("POST", "/api/sessions/" + view.id + "/rewind", { turn, force });
      await refreshSessions();
      open(r.session);
      for (const n of r.notes || []) notice(n, "ok");
    } catch (err) {
      notice(err.message, "error");
      if (/force|changed|lost/i.test(err.message) && !force) {
        const again = el("button", "no", "Record those changes first, then rewind");
        again.addEventListener("click", () => rewind(view, turn, true));
        add(again);
      }
      for (const b of document.querySelectorAll("#checkpoint-list button")) b.disabled = false;
    }
  }

  // ------------------------------------------------------------ commands

  async function send(type) {
    if (!current) return;
    const box = $("prompt");
    const text = box.value;
    if (type !== "interrupt" && !text.trim()) return;
    try {
      const body = type === "interrupt" ? { type } : { type, content: text };
      await api("POST", "/api/sessions/" + current.id + "/commands", body);
      if (type !== "interrupt") box.value = "";
    } catch (e) {
      notice(e.message, "error");
    }
  }

  $("prompt-form").addEventListener("submit", (e) => { e.preventDefault(); send("prompt"); });
  $("steer").addEventListener("click", () => send("steer"));
  $("interrupt").addEventListener("click", () => send("interrupt"));
  $("prompt").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); send("prompt"); }
  });
  $("resume").addEventListener("click", async () => {
    if (!current) return;
    try {
      const r = await api("POST", "/api/sessions/" + current.id + "/resume", {});
      await refreshSessions();
      open(r.session);
    } catch (e) { notice(e.message, "error"); }
  });
  $("end").addEventListener("click", async () => {
    if (!current) return;
    try { await api("POST", "/api/sessions/" + current.id + "/end"); } catch (e) { notice(e.message, "error"); }
  });
  $("new-session").addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = {};
    const cwd = $("new-cwd").value.trim();
    const args = $("new-args").value.trim();
    const prompt = $("new-prompt").value;
    if (cwd) body.cwd = cwd;
    if (args) body.args = args.split(/\s+/);
    if (prompt.trim()) body.prompt = prompt;
    try {
      const r = await api("POST", "/api/sessions", body);
      $("new-prompt").value = "";
      await refreshSessions();
      open(r.session);
    } catch (err) { status(err.message, true); }
  });
  $("show-all").addEventListener("change", refreshSessions);

  // ------------------------------------------------------------ fanout

  async function refreshFanout() {
    let data;
    try { data = await api("GET", "/api/fanout"); } catch (_) { return false; }
    $("tab-fanout").hidden = false;
    const tbody = $("fanout-rows");
    tbody.replaceChildren();
    for (const r of data.results || []) {
      const tr = el("tr");
      const cell = (text, cls) => { const td = el("td", cls, text); tr.appendChild(td); return td; };
      cell(r.id);
      cell(r.outcome, r.outcome === "finished" ? "outcome-finished" : "outcome-bad");
      cell(r.exit ?? "", "num");
      cell(money(r.cost), "num");
      cell(typeof r.seconds === "number" ? r.seconds.toFixed(1) : "", "num");
      cell(r.diff_bytes ? r.diff_bytes + " bytes" + (r.diff_truncated ? " (cut)" : "") : "", "num");
      const s = cell("");
      if (r.session) {
        const b = el("button", null, String(r.session).slice(0, 8));
        b.addEventListener("click", () => { showTab("sessions"); open(r.session); });
        s.appendChild(b);
      }
      cell(r.dir);
      cell(r.error || "");
      tbody.appendChild(tr);
    }
    const sum = data.summary;
    $("fanout-summary").textContent = sum && sum.tasks !== undefined
      ? sum.tasks + " tasks · " + Object.entries(sum.outcomes || {}).map(([k, v]) => k + " " + v).join(", ") + " · " + money(sum.cost)
      : (data.results || []).length + " results so far";
    return true;
  }

  function showTab(name) {
    $("view-sessions").hidden = name !== "sessions";
    $("view-fanout").hidden = name !== "fanout";
    $("tab-sessions").classList.toggle("active", name === "sessions");
    $("tab-fanout").classList.toggle("active", name === "fanout");
    if (name === "fanout") refreshFanout();
  }
  $("tab-sessions").addEventListener("click", () => showTab("sessions"));
  $("tab-fanout").addEventListener("click", () => showTab("fanout"));

  refreshSessions();
  refreshFanout();
  setInterval(refreshSessions, 2000);
  setInterval(() => { if (!$("view-fanout").hidden) refreshFanout(); }, 5000);
})();
