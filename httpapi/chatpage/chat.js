// Agora chat console: vanilla JS, no build step, no dependencies.
//   <div data-agora-chat></div><script src="/chat.js"></script>
// mounts itself, or call Agora.chat("#el"). It talks only to the same
// origin's /agent/conversations. Agent output is put on the page as text
// nodes — Markdown is parsed into elements built one by one, never into
// HTML strings — so nothing an agent writes can run.
(function () {
  "use strict";
  const api = "/agent/conversations";

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Inline Markdown: `code`, **bold**, *em*, [text](http(s) URL).
  function inline(parent, text) {
    const re = /(`[^`]+`)|(\*\*[^*]+\*\*)|(\*[^*\s][^*]*\*)|(\[[^\]]+\]\([^)\s]+\))/g;
    let last = 0, m;
    while ((m = re.exec(text)) !== null) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      const t = m[0];
      if (m[1]) parent.appendChild(el("code", "", t.slice(1, -1)));
      else if (m[2]) parent.appendChild(el("strong", "", t.slice(2, -2)));
      else if (m[3]) parent.appendChild(el("em", "", t.slice(1, -1)));
      else {
        const label = t.slice(1, t.indexOf("]"));
        const href = t.slice(t.indexOf("](") + 2, -1);
        if (/^https?:\/\//i.test(href)) {
          const a = el("a", "", label);
          a.href = href;
          a.rel = "noopener noreferrer";
          a.target = "_blank";
          parent.appendChild(a);
        } else {
          parent.appendChild(document.createTextNode(t)); // javascript: and the like stay text
        }
      }
      last = m.index + t.length;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  // Block Markdown: fenced code, lists, tables, paragraphs.
  function markdown(text) {
    const root = el("div", "md");
    const lines = text.split("\n");
    for (let i = 0; i < lines.length; ) {
      const line = lines[i];
      if (/^```/.test(line)) {
        const code = [];
        for (i++; i < lines.length && !/^```/.test(lines[i]); i++) code.push(lines[i]);
        i++;
        const pre = el("pre");
        pre.appendChild(el("code", "", code.join("\n")));
        root.appendChild(pre);
      } else if (/^\s*([-*]|\d+\.)\s+/.test(line)) {
        const ordered = /^\s*\d+\./.test(line);
        const list = el(ordered ? "ol" : "ul");
        for (; i < lines.length && /^\s*([-*]|\d+\.)\s+/.test(lines[i]); i++) {
          const li = el("li");
          inline(li, lines[i].replace(/^\s*([-*]|\d+\.)\s+/, ""));
          list.appendChild(li);
        }
        root.appendChild(list);
      } else if (/^\s*\|.*\|\s*$/.test(line) && i + 1 < lines.length && /^\s*\|[\s:|-]+\|\s*$/.test(lines[i + 1])) {
        const cells = (l) => l.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
        const table = el("table");
        const head = el("tr");
        for (const c of cells(line)) { const th = el("th"); inline(th, c); head.appendChild(th); }
        table.appendChild(head);
        for (i += 2; i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i]); i++) {
          const tr = el("tr");
          for (const c of cells(lines[i])) { const td = el("td"); inline(td, c); tr.appendChild(td); }
          table.appendChild(tr);
        }
        root.appendChild(table);
      } else if (line.trim() === "") {
        i++;
      } else {
        const p = el("p");
        const para = [];
        for (; i < lines.length && lines[i].trim() !== "" && !/^```/.test(lines[i]) && !/^\s*([-*]|\d+\.)\s+/.test(lines[i]); i++) para.push(lines[i]);
        inline(p, para.join("\n"));
        root.appendChild(p);
      }
    }
    return root;
  }

  function chat(target) {
    const host = typeof target === "string" ? document.querySelector(target) : target;
    host.classList.add("agora-chat");
    host.textContent = "";
    const bar = el("header", "bar");
    const title = el("strong", "title", "Agent chat");
    const picker = el("select", "picker");
    picker.title = "Conversations";
    const newBtn = el("button", "new", "+ new");
    newBtn.type = "button";
    newBtn.title = "Start another conversation";
    const status = el("span", "status");
    const cancel = el("button", "cancel", "Stop");
    cancel.type = "button";
    cancel.hidden = true;
    bar.append(title, picker, newBtn, status, cancel);
    const log = el("section", "log");
    log.setAttribute("aria-live", "polite");
    const form = el("form", "composer");
    const input = el("textarea", "input");
    input.rows = 3;
    input.placeholder = "Ask the agent… (Enter sends, Shift+Enter starts a new line)";
    const send = el("button", "send", "⏎");
    send.type = "submit";
    send.title = "Send";
    form.append(input, send);
    host.append(bar, log, form);

    // hint stands in an empty conversation: what this is and what a
    // message does.
    function hint() {
      if (log.querySelector(".msg, .tools")) return;
      log.appendChild(el("div", "hint", "Ask the coding agent — the Claude Code CLI, working in this application's directory — " +
        "about the code, or to change it. Each message starts a run; its answer and every tool it uses stream here, " +
        "and Stop ends a run. Your conversations are in the list above; + new starts another."));
    }
    hint();

    let current = null, lastId = 0, source = null, tools = null;
    const pills = {};

    async function json(url, opts) {
      const res = await fetch(url, Object.assign({ headers: { "Content-Type": "application/json" }, credentials: "same-origin" }, opts));
      const body = res.status === 204 ? null : await res.json();
      if (!res.ok && res.status !== 409) throw new Error((body && body.error && body.error.message) || res.statusText);
      return body;
    }
    const parse = (s) => { try { return JSON.parse(s); } catch (e) { return { content: s }; } };

    function render(m) {
      if (m.id <= lastId) return;
      lastId = m.id;
      const h = log.querySelector(".hint");
      if (h && m.type !== "status") h.remove();
      const data = m.type === "user" || m.type === "assistant" ? { content: m.content } : parse(m.content);
      if (m.type === "status") { showStatus(data.cancelled ? "cancelled" : data.status); refresh(); return; }
      if (m.type === "tool_use" || m.type === "tool_result") {
        if (!tools) { tools = el("div", "tools"); log.appendChild(tools); }
        if (m.type === "tool_use") {
          const d = el("details", "tool");
          const inp = data.input || {};
          const hint = inp.command || inp.file_path || inp.pattern || inp.url || "";
          d.appendChild(el("summary", "", "▸ " + (data.tool || "tool") + (hint ? " " + hint : "")));
          d.appendChild(el("pre", "tool-input", JSON.stringify(inp, null, 2)));
          tools.appendChild(d);
          if (data.id) pills[data.id] = d;
        } else {
          const d = pills[data.id] || tools.lastElementChild;
          if (d) { d.appendChild(el("pre", "tool-output", data.output || "")); if (data.is_error) d.classList.add("failed"); }
        }
      } else {
        tools = null;
        const row = el("div", "msg " + m.type);
        if (m.type === "assistant") row.appendChild(markdown(data.content || ""));
        else if (m.type === "done") {
          const u = data.usage || {};
          const parts = ["done"];
          if (u.input_tokens !== undefined) parts.push(u.input_tokens + " in / " + (u.output_tokens || 0) + " out tokens");
          if (typeof data.cost_usd === "number") parts.push("$" + data.cost_usd.toFixed(4));
          row.textContent = parts.join(" · ");
        } else if (m.type === "system" && data.session_id) row.textContent = "session " + data.session_id;
        else row.textContent = data.content || "";
        log.appendChild(row);
      }
      log.scrollTop = log.scrollHeight;
    }

    function showStatus(s) {
      status.textContent = s || "";
      status.className = "status " + (s || "");
      cancel.hidden = !(s === "running" || s === "queued");
      host.classList.toggle("busy", s === "running" || s === "queued");
    }

    function follow(id) {
      if (source) source.close();
      source = new EventSource(api + "/" + encodeURIComponent(id) + "/stream?after=" + lastId);
      for (const t of ["user", "assistant", "tool_use", "tool_result", "system", "error", "done", "status"]) {
        source.addEventListener(t, (ev) => {
          const m = { id: Number(ev.lastEventId), type: t, content: ev.data };
          if (t === "user" || t === "assistant") m.content = JSON.parse(ev.data).content;
          render(m);
          if (t === "user") refresh();
        });
      }
    }

    async function refresh() {
      const list = await json(api);
      picker.textContent = "";
      for (const c of list) {
        const o = el("option", "", (c.title || "untitled") + (c.status === "running" ? " ●" : c.status === "queued" ? " …" : ""));
        o.value = c.id;
        o.selected = c.id === current;
        picker.appendChild(o);
        if (c.id === current) showStatus(c.status);
      }
    }

    async function open(id) {
      current = id; lastId = 0; tools = null;
      log.textContent = "";
      if (host === document.body || host.dataset.agoraChat !== undefined) history.replaceState(null, "", "#" + id);
      const body = await json(api + "/" + encodeURIComponent(id));
      for (const m of body.messages) render(m);
      hint();
      showStatus(body.conversation.status);
      await refresh();
      follow(id);
    }

    picker.addEventListener("change", () => open(picker.value));
    newBtn.addEventListener("click", async () => { const c = await json(api, { method: "POST", body: "{}" }); await open(c.id); });
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const text = input.value.trim();
      if (!text) return;
      if (!current) { const c = await json(api, { method: "POST", body: "{}" }); await open(c.id); }
      input.value = "";
      await json(api + "/" + encodeURIComponent(current) + "/messages", { method: "POST", body: JSON.stringify({ content: text }) });
      refresh();
    });
    input.addEventListener("keydown", (ev) => { if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); form.requestSubmit(); } });
    cancel.addEventListener("click", async () => { await json(api + "/" + encodeURIComponent(current) + "/cancel", { method: "POST" }); refresh(); });

    refresh().then(() => {
      if (location.hash.length > 1) return open(decodeURIComponent(location.hash.slice(1)));
      if (picker.options.length > 0) return open(picker.options[0].value);
    });
    return { open };
  }

  window.Agora = Object.assign(window.Agora || {}, { chat });
  for (const e of document.querySelectorAll("[data-agora-chat]")) chat(e);
})();
