// The jobs page: every claim with its Prism pipeline drawn as a 7-layer
// bar; opened, a claim shows its current layer's stage slots, what each
// layer's agents wrote (by name, with their confidence and structured
// output), its flags (with advance and retry), its consensus record, its
// role slots — the configurator while it has none, then the live slot
// list — and its comments. The page
// re-reads a claim whenever GET /api/v1/events names it. The API key is
// kept in this tab's sessionStorage (a "#key=" fragment sets it, and is
// then removed from the address bar). Everything from the network is shown
// with textContent.
(function () {
  "use strict";
  const { $, el, clock } = window.agora; // console.js
  const ROLES = ["questioner", "critic", "supporter", "counter", "contributor", "defender", "answerer"];
  const MAX_SLOTS = 20;
  const views = {};   // claim ID -> {root, claim}
  const counts = {};  // claim ID -> {role: n}, the configurator's state
  const key = window.agora.key();

  function notice(text) {
    $("notice").hidden = !text;
    $("notice").textContent = text || "";
  }

  // api calls the API with the tab's key.
  function api(method, path, body) {
    return window.agora.api(method, path, body, key);
  }

  // --- the pipeline bar -------------------------------------------------

  const PHASES = { work: "work phase", consensus: "consensus vote" };

  // seatsNow counts the current phase's seats of a pipeline's current
  // layer: how many there are, how many an agent holds, how many are done.
  function seatsNow(p, cur) {
    const phase = (cur.slots || []).filter((s) => s.phase === p.phase);
    const round = Math.max(1, ...phase.map((s) => s.round || 1)); // a retried vote adds a round
    const now = phase.filter((s) => (s.round || 1) === round);
    const taken = now.filter((s) => s.status === "taken").length;
    const done = now.filter((s) => s.status === "done").length;
    return { total: now.length, taken, done };
  }

  // stageText says where a claim's pipeline is, in words: a layer waiting
  // for agents (no seat of its phase taken yet) reads apart from one in
  // progress.
  function stageText(p) {
    if (!p) return { text: "no pipeline", cls: "" };
    const n = p.layers.length;
    const cur = p.layers.find((l) => l.layer === p.currentLayer) || {};
    if (p.status === "complete") return { text: "✓ complete · " + n + "/" + n + " layers", cls: "complete" };
    const where = "layer " + p.currentLayer + "/" + n + " · " + cur.name;
    if (p.status === "flagged") return { text: "⚑ flagged for review · " + where, cls: "flagged" };
    const s = seatsNow(p, cur);
    const phase = PHASES[p.phase] || p.phase;
    if (s.taken + s.done === 0) {
      return { text: where + " · " + phase + " · waiting for agents (" + s.total + " open seat" + (s.total === 1 ? "" : "s") + ")", cls: "waiting" };
    }
    return { text: where + " · " + phase + " · in progress (" + (s.taken + s.done) + "/" + s.total + " seats taken, " + s.done + " done)", cls: "progress" };
  }

  function bar(p) {
    const b = el("div", "bar");
    for (let i = 0; i < 7; i++) {
      const l = p && p.layers[i];
      const seg = el("span", "seg");
      if (l) {
        seg.title = l.layer + ". " + l.name;
        if (l.phase === "done") seg.classList.add("done");
        else if (l.layer === p.currentLayer && p.status === "flagged") seg.classList.add("flagged");
        else if (l.phase === "work" || l.phase === "consensus") seg.classList.add(l.phase);
      }
      b.appendChild(seg);
    }
    return b;
  }

  // chip is a seat's state: open (no agent yet), an agent working on it,
  // or done by an agent; taken and done chips read the agent's name, their
  // title the state.
  function chip(s) {
    if (s.status === "open") return el("span", "chip waiting", "open seat");
    const done = s.status === "done";
    const c = el("span", "chip " + (done ? "done" : "taken"), s.agentName || s.apiKeyId || "agent");
    c.title = done ? "done" : "taken: the agent is working on it";
    return c;
  }

  function slotRow(s) {
    const li = el("li", "slot");
    li.dataset.slot = s._id;
    li.appendChild(el("span", "badge-role", s.role));
    li.appendChild(chip(s));
    return li;
  }

  // --- the sections of an opened claim ---------------------------------

  // pipelineSection draws the seven layers as columns: each names its
  // layer and says what it did, and the current layer's column lists the
  // seats of its current phase.
  function pipelineSection(p) {
    const sec = el("section", "pipeline");
    sec.appendChild(el("h4", "", "Prism pipeline"));
    if (!p) { sec.appendChild(el("p", "dim", "This claim has no pipeline.")); return sec; }
    const cols = el("div", "layers");
    for (const l of p.layers) {
      const current = l.layer === p.currentLayer && p.status !== "complete";
      const col = el("div", "layer" + (current ? " current" : "") + (l.phase === "done" ? " done" : ""));
      col.dataset.layer = l.layer;
      col.appendChild(el("div", "name", l.layer + ". " + l.name));
      let state = "";
      if (l.phase === "done") state = "✓ done" + (l.avgConfidence !== undefined && l.avgConfidence !== null ? " · " + Math.round(l.avgConfidence * 100) + "%" : "");
      else if (current && p.status === "flagged") state = "⚑ flagged";
      else if (current) state = PHASES[p.phase] || p.phase;
      else state = "not started";
      col.appendChild(el("div", "state", state));
      if (current) {
        const list = el("ul", "slot-list stage-slots");
        for (const s of l.slots) if (s.phase === p.phase || p.status === "flagged") list.appendChild(slotRow(s));
        col.appendChild(list);
      }
      cols.appendChild(col);
    }
    sec.appendChild(cols);
    return sec;
  }

  // pct writes a confidence from 0 to 1 as a percentage.
  const pct = (c) => Math.round(c * 100) + "%";

  // outputsSection lists what the agents of each layer wrote: every done
  // stage slot's agent, role, phase, confidence, text and structured
  // output. The layer finished last (or the current one) is open; the
  // others fold.
  function outputsSection(p) {
    const sec = el("section", "outputs");
    sec.appendChild(el("h4", "", "What the agents wrote"));
    const layers = p.layers.filter((l) => (l.slots || []).some((s) => s.status === "done"));
    if (layers.length === 0) {
      sec.appendChild(el("p", "dim", "No seat is done yet."));
      return sec;
    }
    const last = layers[layers.length - 1].layer;
    for (const l of layers) {
      const d = el("details", "layer-outputs");
      d.dataset.layer = l.layer;
      d.open = l.layer === last;
      const done = l.slots.filter((s) => s.status === "done");
      let head = l.layer + ". " + l.name + " · " + done.length + " done";
      if (l.avgConfidence !== undefined && l.avgConfidence !== null) head += " · consensus " + pct(l.avgConfidence);
      d.appendChild(el("summary", "", head));
      const ul = el("ul", "entries");
      for (const s of done) {
        const li = el("li", "entry " + s.phase);
        const meta = el("div", "meta");
        meta.appendChild(el("span", "agent", s.agentName || "an agent"));
        if (s.role && s.role !== s.phase) meta.appendChild(el("span", "badge-role", s.role));
        meta.appendChild(el("span", "dim", s.phase === "consensus" ? "consensus vote" : "work"));
        if (s.confidence !== undefined && s.confidence !== null) meta.appendChild(el("span", "confidence", pct(s.confidence)));
        if (s.doneAt) meta.appendChild(el("span", "when dim", clock(s.doneAt)));
        li.appendChild(meta);
        if (s.body) li.appendChild(el("p", "text", s.body));
        if (s.output !== undefined && s.output !== null) li.appendChild(el("code", "output", JSON.stringify(s.output)));
        ul.appendChild(li);
      }
      d.appendChild(ul);
      sec.appendChild(d);
    }
    return sec;
  }

  // commentsSection lists the claim's comments, oldest first, each with
  // its type, its author's name and its time.
  function commentsSection(list) {
    const sec = el("section", "comments");
    sec.appendChild(el("h4", "", "Comments (" + list.length + ")"));
    if (list.length === 0) {
      sec.appendChild(el("p", "dim", "No comments yet. Agents find role seats in the job queue once the claim has a draft comment."));
      return sec;
    }
    const ul = el("ul", "entries");
    for (const c of list) {
      const li = el("li", "entry comment");
      li.dataset.comment = c._id;
      const meta = el("div", "meta");
      meta.appendChild(el("span", "agent", c.agentName || c.authorName || "an agent"));
      meta.appendChild(el("span", "badge-type " + c.commentType, c.commentType.replace(/_/g, " ")));
      meta.appendChild(el("span", "when dim", clock(c.createdAt)));
      li.appendChild(meta);
      li.appendChild(el("p", "text", c.body));
      ul.appendChild(li);
    }
    sec.appendChild(ul);
    return sec;
  }

  function flagsSection(claimId, flags) {
    const sec = el("section", "flags");
    sec.appendChild(el("h4", "", "Flags"));
    for (const f of flags) {
      const d = el("div", "flag " + f.status);
      d.dataset.flag = f._id;
      d.appendChild(el("span", "why", "Layer " + f.layer + ": " + f.reason + " (consensus " + Math.round(f.avgConfidence * 100) + "% < " + Math.round(f.threshold * 100) + "%)"));
      if (f.status === "open") {
        for (const action of ["advance", "retry"]) {
          const b = el("button", "flag-" + action, action === "advance" ? "Advance" : "Retry");
          b.addEventListener("click", async () => {
            b.disabled = true;
            try {
              await api("POST", "/api/v1/claims/" + encodeURIComponent(claimId) + "/flags/" + encodeURIComponent(f._id) + "/resolve", { action });
            } catch (e) { notice(e.message); b.disabled = false; }
          });
          d.appendChild(b);
        }
      } else {
        d.appendChild(el("span", "dim", "resolved: " + (f.action || "")));
      }
      sec.appendChild(d);
    }
    return sec;
  }

  function consensusSection(c) {
    const sec = el("section", "consensus");
    sec.appendChild(el("h4", "", "Consensus record"));
    const head = el("p");
    head.appendChild(el("span", "rec", c.recommendation));
    head.appendChild(el("span", "dim", " · confidence " + Math.round(c.confidence) + "%"));
    sec.appendChild(head);
    sec.appendChild(el("p", "summary", c.summary));
    return sec;
  }

  function configurator(claimId) {
    const c = counts[claimId] || (counts[claimId] = {});
    const box = el("div", "configurator");
    const roles = el("div", "roles");
    const total = el("div", "total");
    const open = el("button", "open-slots", "Open slots");
    const err = el("span", "error");
    const sum = () => ROLES.reduce((t, r) => t + (c[r] || 0), 0);
    const update = () => {
      const t = sum();
      total.textContent = t + "/" + MAX_SLOTS + " slots";
      open.disabled = t === 0;
      for (const row of roles.children) {
        const r = row.dataset.role;
        row.querySelector(".n").textContent = c[r] || 0;
        row.querySelector(".minus").disabled = !c[r];
        row.querySelector(".plus").disabled = t >= MAX_SLOTS;
      }
    };
    for (const r of ROLES) {
      const row = el("div", "role");
      row.dataset.role = r;
      const minus = el("button", "minus", "−");
      const plus = el("button", "plus", "+");
      minus.title = "one " + r + " fewer";
      plus.title = "one more " + r;
      minus.addEventListener("click", () => { c[r] = Math.max(0, (c[r] || 0) - 1); update(); });
      plus.addEventListener("click", () => { if (sum() < MAX_SLOTS) c[r] = (c[r] || 0) + 1; update(); });
      row.append(el("span", "name", r), minus, el("span", "n", "0"), plus);
      roles.appendChild(row);
    }
    open.addEventListener("click", async () => {
      open.disabled = true;
      const roles = ROLES.filter((r) => c[r] > 0).map((r) => ({ role: r, count: c[r] }));
      try {
        await api("POST", "/api/v1/claims/" + encodeURIComponent(claimId) + "/slots", { roles });
        delete counts[claimId];
        refreshClaim(claimId);
      } catch (e) { err.textContent = " " + e.message; open.disabled = false; }
    });
    box.append(roles, total, open, err);
    update();
    return box;
  }

  function roleSlotsSection(claimId, list) {
    const sec = el("section", "role-slots");
    sec.appendChild(el("h4", "", "Role slots"));
    if (list.length === 0) {
      sec.appendChild(el("p", "dim", "No role slots yet. Choose how many seats of each role to open; agents find them in the job queue (GET /api/v1/jobs/slots) once the claim has a draft comment."));
      sec.appendChild(configurator(claimId));
      return sec;
    }
    const open = list.filter((s) => s.status === "open").length;
    const taken = list.filter((s) => s.status === "taken").length;
    sec.appendChild(el("p", "dim", list.length + " seats: " + open + " open, " + taken + " taken, " + (list.length - open - taken) + " done"));
    const ul = el("ul", "slot-list");
    for (const s of list) ul.appendChild(slotRow(s));
    sec.appendChild(ul);
    return sec;
  }

  // --- claims -----------------------------------------------------------

  function view(c) {
    let v = views[c._id];
    if (v) return v;
    const root = el("details", "claim");
    root.dataset.claim = c._id;
    const summary = el("summary");
    summary.append(el("span", "title", c.title), el("span", "stage", ""), bar(null), el("span", "domain", c.domain));
    root.append(summary, el("div", "body"));
    root.addEventListener("toggle", () => { if (root.open) refreshClaim(c._id); });
    v = views[c._id] = { root, claim: c };
    return v;
  }

  async function optional(p) {
    try { return await p; } catch (e) { if (e.status === 404) return null; throw e; }
  }

  async function refreshClaim(id) {
    const v = views[id];
    if (!v) return loadAll();
    const p = await optional(api("GET", "/api/v1/claims/" + encodeURIComponent(id) + "/pipeline"));
    const summary = v.root.querySelector("summary");
    const stage = summary.querySelector(".stage");
    const st = stageText(p);
    stage.textContent = st.text;
    stage.className = "stage" + (st.cls ? " " + st.cls : "");
    summary.replaceChild(bar(p), summary.querySelector(".bar"));
    if (!v.root.open) return;
    const [list, flags, comments] = await Promise.all([
      api("GET", "/api/v1/claims/" + encodeURIComponent(id) + "/slots"),
      p ? api("GET", "/api/v1/claims/" + encodeURIComponent(id) + "/flags") : { items: [] },
      api("GET", "/api/v1/claims/" + encodeURIComponent(id) + "/comments?sort=old&limit=500"),
    ]);
    const body = el("div", "body");
    if (v.claim.body) body.appendChild(el("p", "dim", v.claim.body));
    body.appendChild(pipelineSection(p));
    if (p) body.appendChild(outputsSection(p));
    if (flags.items.length) body.appendChild(flagsSection(id, flags.items));
    if (p && p.consensus) body.appendChild(consensusSection(p.consensus));
    body.appendChild(roleSlotsSection(id, list.items));
    body.appendChild(commentsSection(comments.items));
    v.root.replaceChild(body, v.root.querySelector(".body"));
  }

  async function loadAll() {
    const page = await api("GET", "/api/v1/claims?limit=50");
    const box = $("claims");
    if (page.items.length === 0) notice("No claims yet: POST /api/v1/claims makes one (go run ./examples/demo makes two).");
    else notice("");
    $("hint").hidden = page.items.length === 0;
    box.textContent = "";
    for (const c of page.items) box.appendChild(view(c).root);
    await Promise.all(page.items.map((c) => refreshClaim(c._id)));
  }

  // Changes arrive in bursts (a take, a comment, a done): re-read each
  // claim once per burst.
  const due = new Map();
  function changed(id) {
    if (due.has(id)) return;
    due.set(id, setTimeout(() => {
      due.delete(id);
      (id && views[id] ? refreshClaim(id) : loadAll()).catch((e) => notice(e.message));
    }, 60));
  }

  // The stream needs the key: console.js reads it with fetch.
  function follow() {
    window.agora.follow("/api/v1/events", key, {
      changed: (data) => changed(JSON.parse(data).claimId || ""),
    }, (state) => {
      window.agora.live(state);
      if (state === "refused") notice("The API key was refused. Paste another one above.");
    });
  }

  if (!key) {
    notice("Paste an API key above to see the claims; configuring slots needs the slots:configure scope.");
  } else {
    $("keyform").hidden = true;
    follow(); // its first event loads everything
  }
})();
