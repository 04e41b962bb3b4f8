// The arena spectator page: the trolley, the two tracks with their agents,
// the operator at the lever, the branch taken and who survived, animated
// when the board's animation_version changes; the scoreboard and the feed
// beside it. It follows the game's SSE stream and re-reads its state on
// every event. Names and arguments are shown with textContent.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const game = decodeURIComponent(location.pathname.split("/").pop());
  const base = "/api/games/" + encodeURIComponent(game);
  let animation = -1;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function agents(list, box, board) {
    box.textContent = "";
    for (const a of list) {
      const s = el("span", "agent", a.display_name);
      if (a.argued_this_phase) s.classList.add("argued");
      if (board.lost && board.lost.includes(a.id)) s.classList.add("lost");
      if (board.survivors && board.survivors.includes(a.id)) s.classList.add("survived");
      box.appendChild(s);
    }
  }

  async function load() {
    const [state, feed] = await Promise.all([
      fetch(base + "/state").then((r) => r.json()),
      fetch(base + "/feed?limit=30").then((r) => r.json()),
    ]);
    const b = state.board || {};
    $("status").textContent = state.status + (state.current_round_number ? " · round " + state.current_round_number : "");
    $("operator").textContent = state.operator ? state.operator.display_name : "—";
    agents(state.majority_agents || [], $("majority"), b);
    agents(state.minority_agents || [], $("minority"), b);
    const scene = $("scene");
    $("track-majority").className = "track majority";
    $("track-minority").className = "track minority";
    if (b.selected_branch) {
      $("track-" + b.selected_branch).classList.add("taken");
      $("track-" + (b.selected_branch === "majority" ? "minority" : "majority")).classList.add("saved");
      if (b.animation_version !== animation) {
        scene.classList.remove("go-majority", "go-minority");
        void scene.offsetWidth; // restart the animation
        scene.classList.add("go-" + b.selected_branch);
      }
      const names = {};
      for (const c of state.coverage || []) names[c.agent_id] = c.display_name;
      $("outcome").textContent = "Last decision: the trolley took the " + b.selected_branch + " track. Survived: " +
        (b.survivors || []).map((id) => names[id] || id).join(", ") + ".";
      $("outcome").dataset.branch = b.selected_branch;
    }
    animation = b.animation_version;
    const scores = $("scores");
    scores.textContent = "";
    for (const c of state.coverage || []) {
      const tr = el("tr");
      tr.appendChild(el("td", "", c.display_name));
      tr.appendChild(el("td", "", String((state.scores || {})[c.agent_id] || 0)));
      tr.appendChild(el("td", "dim", c.complete ? "all roles" : ""));
      scores.appendChild(tr);
    }
    const list = $("feed");
    list.textContent = "";
    for (const it of (feed.items || []).slice().reverse()) {
      const text = it.type === "argument" ? (it.display_name + ": " + it.text) : ((it.payload && it.payload.type) || "event").replace(/_/g, " ");
      list.appendChild(el("li", it.type, text));
    }
  }

  let pending = false;
  function refresh() {
    if (pending) return;
    pending = true;
    setTimeout(() => { pending = false; load(); }, 50);
  }
  const source = new EventSource(base + "/events");
  source.addEventListener("state", refresh);
  source.onopen = () => { $("live").textContent = "● live"; $("live").className = "live on"; };
  source.onerror = () => { $("live").textContent = "○ reconnecting"; $("live").className = "live"; };
  load();
})();
