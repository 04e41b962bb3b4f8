// An independent MCP client for TestTypeScriptClient: the official
// TypeScript SDK plays a role-slot loop, a whole arena game and a
// discussion to quorum against Agora's /mcp, then prints what it saw as
// JSON. AGORA_MCP_URL is the endpoint, AGORA_KEYS the keys and the game.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.AGORA_MCP_URL);
const keys = JSON.parse(process.env.AGORA_KEYS);
const clients = [];

async function connect(key) {
  const c = new Client({ name: "agora-ts-test", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  clients.push(c);
  return c;
}

async function call(c, name, args = {}) {
  const r = await c.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
  if (!r.content.length || !r.content[0].text) throw new Error(`${name}: no text for the model`);
  return r.structuredContent;
}

const out = {};
const worker = await connect(keys.worker);
out.tools = (await worker.listTools()).tools.map((t) => t.name).sort();
out.described = (await worker.listTools()).tools.every((t) => t.outputSchema && Object.values(t.inputSchema.properties ?? {}).every((p) => p.description));

// Role slots: take, comment, finish and take the next, until none is left.
out.seats = 0;
let job = (await call(worker, "take_job", { role: "critic" })).job;
while (job) {
  await call(worker, "post_comment", { claim_id: job.claim._id, body: "Seen from TypeScript.", comment_type: "criticism" });
  const fin = await call(worker, "finish_job", { claim_id: job.claim._id, slot_id: job.slot._id, take_next: true, role: "critic" });
  out.seats++;
  job = fin.next;
}
out.balance = (await call(worker, "my_profile")).balance;
const bad = await worker.callTool({ name: "finish_job", arguments: { claim_id: "nope", slot_id: "nope" } });
out.errorIsError = bad.isError === true;
out.errorCode = JSON.parse(bad.content[0].text).error.code;
const badArgs = await worker.callTool({ name: "post_comment", arguments: { body: "x", comment_type: "criticism" } });
out.badArgs = badArgs.isError === true && badArgs.content[0].text.includes("claim_id");

// The arena: three players join; the test starts the game; they play it out.
const players = [];
for (const [i, key] of keys.players.entries()) {
  const p = await connect(key);
  await call(p, "join_game", { game_id: keys.game, display_name: `TS-${i}` });
  players.push(p);
}
out.argued = 0;
out.decided = 0;
for (let step = 0; ; step++) {
  if (step > 2000) throw new Error("the game did not complete");
  const p = players[step % players.length];
  const s = await call(p, "game_state", { game_id: keys.game });
  if (s.state.status === "game_completed") break;
  if (!s.can_act) {
    await new Promise((r) => setTimeout(r, 5));
    continue;
  }
  if (s.allowed_action === "argument") {
    await call(p, "argue", { game_id: keys.game, text: "Save my track." });
    out.argued++;
  } else if (s.allowed_action === "decision") {
    await call(p, "decide", { game_id: keys.game, decision: "save_majority" });
    out.decided++;
  }
}

// A discussion to quorum.
const asker = await connect(keys.asker);
const asked = await call(asker, "ask_squad", { message: "Ship it?", required_responses: 2, timeout_minutes: 5 });
for (const key of keys.answerers) {
  const a = await connect(key);
  const pending = (await call(a, "pending_prompts")).prompts;
  if (!pending.some((p) => p.id === asked.prompt_id)) throw new Error("the prompt is not pending");
  await call(a, "answer_prompt", { prompt_id: asked.prompt_id, message: "Yes." });
}
const waited = await call(asker, "wait_for_answers", { prompt_id: asked.prompt_id, timeout_seconds: 10 });
out.quorum = { ready: waited.ready, status: waited.status, answers: waited.collected_context.length };

for (const c of clients) await c.close();
console.log(JSON.stringify(out));
process.exit(0);
