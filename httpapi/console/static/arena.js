// The arena spectator page: the trolley, the two tracks with their agents,
// the operator at the lever, the branch taken and who survived, animated
// when the board's animation_version changes; the scoreboard and the feed
// beside it. It reads the feed's last items once and then follows the
// game's SSE stream, which carries every new feed item and each new
// version; on a new version it reads the state at least that recent
// (/state?min_version=), which the server answers from what it remembers.
// Names and arguments are shown with textContent.
//
// A decision starts the next round at once, so the state read right after
// it already seats the next round's agents. While the trolley runs (HOLD
// ms) the tracks keep showing the resolved round — who was lost on the
// taken track, who survived on the other — and then move on.
//
// On a server that requires API keys (examples/server -require-keys) the
// page asks for a key, kept in the tab as /jobs keeps it (a "#key="
// fragment sets it), and sends it on every read and on the stream.
(function () {
  "use strict";
  const { $, el, askKey } = window.agora; // console.js
  const game = decodeURIComponent(location.pathname.split("/").pop());
  const base = "/api/games/" + encodeURIComponent(game);
  const HOLD = 2500;
  let animation = -1;
  let holdUntil = 0;
  const key = window.agora.key();

  // get reads a route as JSON, with the key when the tab has one; a 401
  // shows the key form.
  async function get(url) {
    try {
      return await window.agora.api("GET", url, undefined, key);
    } catch (e) {
      if (e.status === 401) askKey(!!key);
      throw e;
    }
  }

  // agents draws a track: seats of the current round, or (outcome set)
  // the resolved round's agents marked lost or survived.
  function agents(list, box, outcome) {
    box.textContent = "";
    for (const a of list) {
      const s = el("span", "agent", a.display_name);
      if (a.argued_this_phase) s.classList.add("argued");
      if (outcome) s.classList.add(outcome);
      box.appendChild(s);
    }
  }

  const SHOW = 30;
  let items = []; // the feed's newest items, newest first
  let version = 0;

  // names maps agent IDs to display names, from the game's coverage and
  // the feed's registrations.
  const names = {};
  const who = (id) => names[id] || id;
  const PHASES = { phase_1: "debate phase 1 of 3", phase_2: "debate phase 2 of 3", phase_3: "debate phase 3 of 3",
    awaiting_decision: "the operator decides", resolved: "resolved" };

  // summary says what an event of the feed means, in a sentence.
  function summary(it) {
    const p = it.payload || {};
    const round = it.round_number ? "Round " + it.round_number : "";
    switch (p.type) {
      case "agent_registered": return p.display_name + (p.filler ? " (a filler Agora plays) joined" : " joined");
      case "game_started": return "The game started";
      case "round_started": return round + " started: " + who(p.operator) + " at the lever; majority " +
        (p.majority || []).map(who).join(", ") + "; minority " + (p.minority || []).map(who).join(", ");
      case "phase_changed": return round + ": " + (PHASES[p.phase] || p.phase) + (p.forced ? " (the deadline passed)" : "");
      case "round_resolved": return round + ": the trolley took the " + (p.decision === "save_majority" ? "minority" : "majority") +
        " track" + (p.forced ? " (no decision in time)" : "") + "; lost: " + (p.lost || []).map(who).join(", ") +
        "; survived: " + (p.survivors || []).map(who).join(", ");
      case "game_completed": return "Game over: every agent has played every role";
    }
    return (p.type || "event").replace(/_/g, " ");
  }

  function drawFeed() {
    const list = $("feed");
    list.textContent = "";
    for (const it of items) {
      const p = it.payload || {};
      if (p.type === "agent_registered") names[p.agent_id] = p.display_name;
      if (it.type === "argument") {
        const li = el("li", "argument");
        li.appendChild(el("span", "who", it.display_name + ": "));
        li.appendChild(document.createTextNode(it.text));
        list.appendChild(li);
      } else {
        list.appendChild(el("li", "event", summary(it)));
      }
    }
  }

  // statusText is the game's status in words.
  function statusText(state) {
    const n = state.current_round_number;
    switch (state.status) {
      case "waiting_for_agents": return "waiting for agents to join";
      case "ready_to_start": return "ready to start";
      case "round_phase_1": case "round_phase_2": case "round_phase_3":
        return "round " + n + " · debate, phase " + state.status.slice(-1) + " of 3";
      case "awaiting_operator_decision": return "round " + n + " · the operator decides";
      case "round_resolved": return "round " + n + " resolved";
      case "game_completed": return "game over after " + n + " rounds";
    }
    return state.status;
  }

  async function load() {
    // The first load reads the stored state; later ones, one at least as
    // recent as the version the stream announced.
    const state = await get(base + "/state" + (version ? "?min_version=" + version : ""));
    const b = state.board || {};
    // The board shows the round being played; the last decision, once the
    // next round has started, is last_decision.
    const last = state.last_decision || {};
    let learned = false; // a name the feed may have shown as an ID
    for (const c of state.coverage || []) {
      if (names[c.agent_id] !== c.display_name) learned = true;
      names[c.agent_id] = c.display_name;
    }
    if (learned) drawFeed();
    const scene = $("scene");
    // The decision saves one track; the trolley takes the other.
    const branch = last.decision === "save_majority" ? "minority" : last.decision === "save_minority" ? "majority" : null;
    const other = branch === "majority" ? "minority" : "majority";
    if (branch && b.animation_version !== animation) {
      scene.classList.remove("go-majority", "go-minority");
      void scene.offsetWidth; // restart the animation
      scene.classList.add("go-" + branch);
      // Seen live (not on the first load): hold the resolved round.
      if (animation !== -1) {
        holdUntil = Date.now() + HOLD;
        setTimeout(refresh, HOLD + 20);
      }
    }
    animation = b.animation_version;
    const holding = Date.now() < holdUntil;
    scene.classList.toggle("holding", holding);
    $("track-majority").className = "track majority";
    $("track-minority").className = "track minority";
    if (branch) {
      $("track-" + branch).classList.add("taken");
      $("track-" + other).classList.add("saved");
      $("outcome").textContent = "Last decision: the trolley took the " + branch + " track. Survived: " +
        (last.survivors || []).map((id) => names[id] || id).join(", ") + ".";
      $("outcome").dataset.branch = branch;
    }
    if (holding) {
      const n = state.current_round_number - (b.resolution_state === "resolved" ? 0 : 1);
      $("status").textContent = "round " + n + " resolved";
    } else {
      $("status").textContent = statusText(state);
      $("operator").textContent = state.operator ? state.operator.display_name : "—";
    }
    if (branch && (holding || b.resolution_state === "resolved")) {
      // The resolved round: the lost were on the taken track, the
      // survivors on the other. While holding, its operator stays shown.
      const seats = (ids) => ids.map((id) => ({ id: id, display_name: names[id] || id }));
      agents(seats(last.lost || []), $(branch), "lost");
      agents(seats(last.survivors || []), $(other), "survived");
    } else {
      agents(state.majority_agents || [], $("majority"));
      agents(state.minority_agents || [], $("minority"));
    }
    const scores = $("scores");
    scores.textContent = "";
    for (const c of state.coverage || []) {
      const tr = el("tr");
      tr.appendChild(el("td", "", c.display_name));
      tr.appendChild(el("td", "", String((state.scores || {})[c.agent_id] || 0)));
      tr.appendChild(el("td", "dim", c.complete ? "all roles" : ""));
      scores.appendChild(tr);
    }
  }

  let pending = false;
  function refresh() {
    if (pending) return;
    pending = true;
    setTimeout(() => { pending = false; load(); }, 50);
  }
  function onFeed(data) {
    const it = JSON.parse(data);
    if (items.length && it.seq <= items[0].seq) return;
    items.unshift(it);
    items.length = Math.min(items.length, SHOW);
    drawFeed();
  }
  function onState(data) {
    version = Math.max(version, JSON.parse(data).version);
    refresh();
  }
  function follow(after) {
    // EventSource sends no key: console.js reads a keyed stream with fetch.
    window.agora.follow(base + "/events?after=" + after, key, { feed: onFeed, state: onState });
  }
  // A feed that cannot be read (an unknown game, a store that is down)
  // starts the stream from the beginning; a refused key starts nothing.
  get(base + "/feed?limit=" + SHOW).catch((e) => {
    if (e.status === 401) throw e;
    return {};
  }).then((feed) => {
    items = feed.items || [];
    drawFeed();
    follow(items.length ? items[0].seq : 0);
  }).catch(() => {});
  load().catch(() => {});
})();
