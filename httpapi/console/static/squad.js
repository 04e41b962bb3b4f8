// The squad chat page: messages newest last, discussion prompts highlighted
// with their response counter and status, responses threaded under their
// prompt, a reply box on open prompts. A message that replies to another
// (reply_to_id) is threaded under it; "reply" on a message makes the next
// post a reply to it. A message's task_ref is shown as a tag. It re-reads on every change the
// server announces over SSE. Everything from the network is shown with
// textContent. A re-read rebuilds the feed, so what a person is typing in a
// reply box (and where the cursor is) is carried over to the new one.
//
// On a server that requires API keys (examples/server -require-keys) the
// page asks for one and sends it, kept in this tab's sessionStorage as
// /jobs keeps it (a "#key=" fragment sets it); posts are then under the
// key's name, and speaking as a human needs the discussion:admin scope.
(function () {
  "use strict";
  const { $, el, clock, askKey } = window.agora; // console.js
  // A prompt's status in words: the API's values are collecting, pending,
  // resolved, timed_out and cancelled.
  const icons = { collecting: "⏱ collecting answers", pending: "⏱ not open yet", resolved: "✓ resolved: quorum reached", timed_out: "⚠ timed out before the quorum", cancelled: "✕ cancelled" };

  const key = window.agora.key();

  // api calls the API with the tab's key, if it has one.
  function api(method, path, body) {
    return window.agora.api(method, path, body, key);
  }

  let replyTo = null; // {id, who}: the message the next post answers

  function setReplyTo(m) {
    replyTo = m ? { id: m.id, who: m.agent_name } : null;
    const box = $("replying");
    box.hidden = !replyTo;
    $("replying-who").textContent = replyTo ? replyTo.who : "";
    if (replyTo) $("text").focus();
  }

  function line(m) {
    const d = el("div", "msg" + (m.is_human ? " human" : ""));
    d.dataset.msg = m.id;
    d.appendChild(el("span", "when", clock(m.created_at)));
    d.appendChild(el("span", "who", m.agent_name));
    if (m.task_ref) d.appendChild(el("span", "task", "#" + m.task_ref));
    d.appendChild(el("span", "text", m.message));
    if (m.message_type === "message" || m.message_type === "discussion_prompt") {
      const b = el("button", "reply-to", "reply");
      b.type = "button";
      b.addEventListener("click", () => setReplyTo(m));
      d.appendChild(b);
    }
    return d;
  }

  // replies returns the thread box under a message line, made on first use.
  function replies(box) {
    let r = box.querySelector(":scope > .thread");
    if (!r) { r = el("div", "thread"); box.appendChild(r); }
    return r;
  }

  async function load() {
    const [chat, prompts] = await Promise.all([
      api("GET", "/api/squad-chat?limit=200"),
      api("GET", "/api/discussion?status=pending,collecting,resolved,timed_out,cancelled&limit=200"),
    ]);
    const byId = {};
    for (const p of prompts.prompts) byId[p.id] = p;
    const threads = {};
    const feed = $("feed");
    const drafts = {}; // prompt ID -> {who, text, focus: class, at: cursor}
    let refocus = null; // the new input to focus once the feed is in the page
    for (const f of feed.querySelectorAll(".prompt .reply")) {
      const d = { who: f.querySelector(".who-input").value, text: f.querySelector(".text").value };
      const a = document.activeElement;
      if (a && f.contains(a)) { d.focus = a.className; d.at = a.selectionStart; }
      drafts[f.closest(".prompt").dataset.prompt] = d;
    }
    const atBottom = feed.scrollTop + feed.clientHeight >= feed.scrollHeight - 20;
    feed.textContent = "";
    const lines = {}; // message ID -> its line, for threading replies
    for (const m of chat.messages.slice().reverse()) {
      if (m.message_type === "discussion_response" && threads[m.discussion_prompt_id]) {
        threads[m.discussion_prompt_id].appendChild(line(m));
        continue;
      }
      if (m.message_type !== "discussion_prompt") {
        const l = line(m);
        lines[m.id] = l;
        const parent = m.reply_to_id && lines[m.reply_to_id];
        if (parent) { replies(parent).appendChild(l); continue; }
        if (m.reply_to_id) l.insertBefore(el("span", "in-reply", "↳ in reply to an older message"), l.children[1]);
        feed.appendChild(l);
        continue;
      }
      const p = byId[m.discussion_prompt_id] || {};
      const box = line(m);
      lines[m.id] = box;
      box.classList.add("prompt");
      box.dataset.prompt = m.discussion_prompt_id;
      box.insertBefore(el("span", "badge", "discussion"), box.children[1]);
      const meta = el("div", "meta");
      const n = (p.collected_context || []).length;
      meta.appendChild(el("span", "count", n + "/" + (p.required_responses || "?") + " responses"));
      meta.appendChild(el("span", "status status-" + (p.status || ""), icons[p.status] || p.status || ""));
      box.appendChild(meta);
      const responses = el("div", "responses");
      box.appendChild(responses);
      threads[m.discussion_prompt_id] = responses;
      if (p.status === "collecting" || p.status === "pending") {
        const form = el("form", "reply");
        const who = el("input", "who-input"); who.placeholder = "name"; who.value = $("name").value; who.required = true; who.readOnly = $("name").readOnly;
        const text = el("input", "text"); text.placeholder = "reply…"; text.required = true;
        const draft = drafts[p.id];
        if (draft) { who.value = draft.who; text.value = draft.text; }
        const send = el("button", "", "Reply"); send.type = "submit";
        form.append(who, text, send);
        form.addEventListener("submit", async (ev) => {
          ev.preventDefault();
          // Cleared before sending, so a re-read meanwhile does not carry
          // the sent text over; put back if sending fails.
          const message = text.value;
          text.value = "";
          try {
            await api("POST", "/api/discussion/" + encodeURIComponent(p.id), { agent_name: who.value, message: message, is_human: true });
          } catch (e) {
            const now = document.querySelector('.prompt[data-prompt="' + CSS.escape(p.id) + '"] .reply .text');
            if (now && !now.value) now.value = message;
            alert(e.message);
          }
        });
        box.appendChild(form);
        if (draft && draft.focus) refocus = { input: form.querySelector("." + draft.focus.split(" ")[0]), at: draft.at };
      }
      feed.appendChild(box);
    }
    if (refocus) {
      refocus.input.focus();
      if (refocus.at != null) refocus.input.setSelectionRange(refocus.at, refocus.at);
    }
    if (atBottom) feed.scrollTop = feed.scrollHeight;
  }

  $("post").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { agent_name: $("name").value, message: $("text").value, is_human: true };
    if (replyTo) body.reply_to_id = replyTo.id;
    try {
      await api("POST", "/api/squad-chat", body);
    } catch (e) {
      alert(e.message);
      return;
    }
    $("text").value = "";
    setReplyTo(null);
  });
  $("replying-cancel").addEventListener("click", () => setReplyTo(null));

  let pending = false;
  function refresh() {
    if (pending) return;
    pending = true;
    setTimeout(() => { pending = false; load(); }, 50);
  }
  async function start() {
    if (key) {
      // A key names whoever posts: the name is the key's.
      try {
        const me = await api("GET", "/api/v1/me");
        if (me.name) { $("name").value = me.name; $("name").readOnly = true; }
      } catch (e) {
        if (e.status === 401) { askKey(true); return; }
      }
    } else {
      try {
        await load();
      } catch (e) {
        if (e.status === 401) { askKey(false); return; }
      }
    }
    window.agora.follow("/api/squad-chat/events", key, { changed: refresh });
  }
  start();
})();
