// The chat console: vanilla JS, no build step. Every piece of agent output
// is put on the page with textContent, never as HTML.
(function () {
  "use strict";
  const api = "/agent/conversations";
  const $ = (id) => document.getElementById(id);
  let current = null;   // conversation ID
  let lastId = 0;       // last message ID rendered
  let source = null;    // EventSource
  let tools = null;     // the open tool group
  const pills = {};     // tool_use ID -> details element

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  async function json(url, opts) {
    const res = await fetch(url, Object.assign({ headers: { "Content-Type": "application/json" } }, opts));
    const body = res.status === 204 ? null : await res.json();
    if (!res.ok && res.status !== 409) throw new Error((body && body.error && body.error.message) || res.statusText);
    return body;
  }

  function parse(m) {
    try { return JSON.parse(m.content); } catch (e) { return { content: m.content }; }
  }

  function render(m) {
    if (m.id <= lastId) return;
    lastId = m.id;
    const log = $("log");
    const data = m.type === "user" || m.type === "assistant" ? { content: m.content } : parse(m);
    if (m.type === "status") return;
    if (m.type === "tool_use" || m.type === "tool_result") {
      if (!tools) { tools = el("div", "tools"); log.appendChild(tools); }
      if (m.type === "tool_use") {
        const d = el("details", "tool");
        const input = data.input || {};
        const hint = input.command || input.file_path || input.pattern || input.url || "";
        d.appendChild(el("summary", "", "▸ " + (data.tool || "tool") + (hint ? " " + hint : "")));
        d.appendChild(el("pre", "input", JSON.stringify(input, null, 2)));
        tools.appendChild(d);
        if (data.id) pills[data.id] = d;
      } else {
        const d = pills[data.id] || tools.lastElementChild;
        if (d) {
          d.appendChild(el("pre", "output", data.output || ""));
          if (data.is_error) d.classList.add("failed");
        }
      }
    } else {
      tools = null;
      let text = data.content || "";
      if (m.type === "done") text = "done" + (data.cost_usd ? " · $" + data.cost_usd.toFixed(4) : "");
      if (m.type === "system" && data.session_id) text = "session " + data.session_id;
      log.appendChild(el("div", "msg " + m.type, text));
    }
    log.scrollTop = log.scrollHeight;
    if (m.type === "status" || m.type === "error") refreshStatus();
  }

  function follow(id) {
    if (source) source.close();
    source = new EventSource(api + "/" + encodeURIComponent(id) + "/stream?after=" + lastId);
    for (const t of ["user", "assistant", "tool_use", "tool_result", "system", "error", "done", "status"]) {
      source.addEventListener(t, (ev) => {
        const m = { id: Number(ev.lastEventId), type: t, content: ev.data };
        if (t === "user" || t === "assistant") m.content = JSON.parse(ev.data).content;
        render(m);
      });
    }
  }

  async function refreshStatus() {
    if (!current) return;
    const body = await json(api + "/" + encodeURIComponent(current));
    const c = body.conversation;
    $("title").textContent = c.title || "untitled";
    $("status").textContent = c.status;
    $("status").className = "status " + c.status;
    $("cancel").hidden = !(c.status === "running" || c.status === "queued");
    listConversations();
  }

  async function open(id) {
    current = id;
    lastId = 0;
    tools = null;
    $("log").textContent = "";
    history.replaceState(null, "", "#" + id);
    const body = await json(api + "/" + encodeURIComponent(id));
    for (const m of body.messages) render(m);
    await refreshStatus();
    follow(id);
  }

  async function listConversations() {
    const body = await json(api);
    const ul = $("conversations");
    ul.textContent = "";
    for (const c of body.conversations) {
      const li = el("li", c.id === current ? "active" : "");
      li.appendChild(el("span", "", c.title || "untitled"));
      if (c.status === "running") li.appendChild(el("span", "dot", " ●"));
      li.dataset.id = c.id;
      li.addEventListener("click", () => open(c.id));
      ul.appendChild(li);
    }
  }

  $("new").addEventListener("click", async () => {
    const c = await json(api, { method: "POST", body: "{}" });
    await open(c.id);
  });

  $("composer").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = $("input").value.trim();
    if (!text) return;
    if (!current) {
      const c = await json(api, { method: "POST", body: "{}" });
      await open(c.id);
    }
    $("input").value = "";
    await json(api + "/" + encodeURIComponent(current) + "/messages", { method: "POST", body: JSON.stringify({ content: text }) });
    refreshStatus();
  });

  $("input").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); $("composer").requestSubmit(); }
  });

  $("cancel").addEventListener("click", async () => {
    await json(api + "/" + encodeURIComponent(current) + "/cancel", { method: "POST" });
    refreshStatus();
  });

  listConversations().then(() => { if (location.hash.length > 1) open(decodeURIComponent(location.hash.slice(1))); });
})();
