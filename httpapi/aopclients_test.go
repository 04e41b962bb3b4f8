package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/storetest"
)

// The tests of this file pin the wire contract of the original's agent
// CLIs (scripts/agent-loop.mjs, packages/cli/agent-loop.mjs and index.mjs):
// the request bodies as they send them and the fields they read.

// cliSubmit is the body agent-loop.mjs's submit sends: the prose as output,
// the flags --domain, --summary and --recommendation as structuredOutput,
// and agentModel and outputSignature when it has them.
func cliSubmit(layer int, phase string, i int) map[string]any {
	body := map[string]any{"output": fmt.Sprintf("reasoning of agent %d on layer %d", i, layer), "confidence": 0.85,
		"agentModel": "sonnet-4.6", "outputSignature": "MEUCIQDsig" + fmt.Sprint(i)}
	switch {
	case layer == 2 && phase == "work":
		body["structuredOutput"] = map[string]any{"domain": []string{"Cognitive Ethology", "cognitive_ethology"}[i%2]}
	case layer == 7:
		body["structuredOutput"] = map[string]any{"summary": "Corvids plan ahead.", "recommendation": "accept-with-caveats"}
	}
	return body
}

// requireStrings asserts v is a JSON array of strings (what the CLI prints
// with "  - ${out}") and returns them.
func requireStrings(t *testing.T, v any, what string) []string {
	t.Helper()
	list, ok := v.([]any)
	require.True(t, ok, "%s is an array: %v", what, v)
	out := make([]string, len(list))
	for i, x := range list {
		s, ok := x.(string)
		require.True(t, ok, "%s[%d] is a string: %v", what, i, x)
		require.NotEmpty(t, s)
		out[i] = s
	}
	return out
}

// TestAgentLoopPipelineWire drives a claim through Prism v1 with the
// requests agent-loop.mjs's fetch, take and submit send, checking on the
// way every field they print, on every backend: it ends complete with a
// consensus record.
func TestAgentLoopPipelineWire(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		// aop setup asks for the original's scope names.
		r := c.expect(201, "POST", "/api/v1/keys", adminToken, map[string]any{"name": "human",
			"scopes": []string{"comment:create", "consensus:write", "claim:new", "classification:write", "policy:write", "output:write", "slots:configure"}})
		require.Contains(t, r.body["scopes"], "claim:create", "claim:new is claim:create")
		human := r.body["key"].(string)
		var agents []string
		for i := 0; i < 16; i++ {
			_, tok := c.key(fmt.Sprint("agent-", i), slots.ScopeCommentCreate)
			agents = append(agents, tok)
			// aop setup registers each agent's signing key.
			c.expect(200, "POST", "/api/v1/agent/signing-key", tok, map[string]any{"signingKeyAddress": fmt.Sprint("0xpoi_", i)})
		}
		claim := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "Crows plan ahead", "body": "Scrub jays cache food for tomorrow."}).body["_id"].(string)

		// index.mjs run's pre-check, and the type filter of fetch.
		require.Equal(t, true, c.expect(200, "GET", "/api/v1/jobs/peek", agents[0], nil).body["available"])
		c.expect(404, "GET", "/api/v1/jobs/peek?layer=2", agents[0], nil)
		c.expect(404, "GET", "/api/v1/jobs/work?type=consensus", agents[0], nil)
		require.Equal(t, "invalid_type", c.expect(400, "GET", "/api/v1/jobs/work?type=vote", agents[0], nil).errCode(t))
		w := c.expect(200, "GET", "/api/v1/jobs/work?type=work&layer=1&role=contributor", agents[0], nil).body
		require.Equal(t, "work", w["slot"].(map[string]any)["slotType"])

		stages := []string{"framing", "classification", "evidence", "critique", "defense", "deliberation", "synthesis"}
		view := cliRun(t, c, claim, human, agents, func(w map[string]any, tok, path string, i int) map[string]any {
			slot, ctx := w["slot"].(map[string]any), w["context"].(map[string]any)
			layer := int(slot["layer"].(float64))
			phase := slot["slotType"].(string)
			require.Equal(t, slot["phase"], phase)
			require.Equal(t, stages[layer-1], ctx["stageName"])
			require.NotEmpty(t, slot["role"])
			prior := ctx["priorLayers"].([]any)
			require.Len(t, prior, layer-1)
			for j, pl := range prior {
				pl := pl.(map[string]any)
				require.Equal(t, stages[j], pl["stageName"])
				outs := requireStrings(t, pl["workOutputs"], "workOutputs")
				if j < 6 {
					require.NotEmpty(t, outs, "layer %d's work reaches later agents as prose", j+1)
					require.True(t, strings.HasPrefix(outs[0], "reasoning of agent"), outs[0])
				}
				requireStrings(t, pl["consensusOutputs"], "consensusOutputs")
				require.InDelta(t, 0.85, pl["avgConfidence"], 1e-9)
			}
			work := requireStrings(t, ctx["currentLayerWorkOutputs"], "currentLayerWorkOutputs")
			if phase == "consensus" && layer < 7 {
				require.NotEmpty(t, work, "a consensus slot reviews the layer's work")
			}
			if phase == "work" {
				require.Empty(t, work)
			}
			if layer == 2 && phase == "work" {
				bad := cliSubmit(layer, phase, i)
				delete(bad, "structuredOutput")
				require.Equal(t, "invalid_output", c.expect(400, "POST", path+"/done", tok, bad).errCode(t), "layer 2 needs its domain")
				bad["structuredOutput"] = map[string]any{"topic": "x"}
				require.Equal(t, "invalid_output", c.expect(400, "POST", path+"/done", tok, bad).errCode(t))
			}
			return cliSubmit(layer, phase, i)
		})
		require.Equal(t, "consensus", view["phase"], "phase stays at the last phase")
		require.Equal(t, "consensus", view["currentPhase"])
		all := view["slots"].([]any)
		require.Len(t, all, 34)
		s := all[2].(map[string]any) // layer 1's first consensus slot
		require.Equal(t, "sonnet-4.6", s["agentModel"])
		require.True(t, strings.HasPrefix(s["outputSignature"].(string), "MEUCIQDsig"))
		require.Equal(t, "0xpoi_"+strings.TrimPrefix(s["outputSignature"].(string), "MEUCIQDsig"), s["signingKeyAddress"],
			"the signing key the agent registered is kept beside its signature")
		require.True(t, strings.HasPrefix(s["body"].(string), "reasoning of agent"))
		c.expect(404, "GET", "/api/v1/jobs/peek", agents[0], nil)
		got := c.expect(200, "GET", "/api/v1/claims/"+claim, human, nil).body
		require.Equal(t, "cognitive-ethology", got["domain"])
		for domain, want := range map[string]int{"cognitive-ethology": 1, "calibrating": 0} {
			items := c.expect(200, "GET", "/api/v1/claims?domain="+domain, human, nil).body["items"].([]any)
			require.Len(t, items, want, domain)
		}
		cons := c.expect(200, "GET", "/api/v1/claims/"+claim+"/consensus", human, nil).body
		require.Equal(t, "accept-with-caveats", cons["recommendation"])
		require.Equal(t, "Corvids plan ahead.\n\n---\n\nCorvids plan ahead.\n\n---\n\nCorvids plan ahead.", cons["summary"], "the three syntheses' summaries, joined")
		require.InDelta(t, 85, cons["confidence"], 1e-9)
		require.Len(t, requireStrings(t, cons["keyPoints"], "keyPoints"), 3, "the synthesis agents' prose")
		hist := c.expect(200, "GET", "/api/v1/claims/"+claim+"/consensus/history", human, nil).body
		require.Equal(t, []any{cons}, hist["items"])
		require.Contains(t, hist, "nextCursor")
	})
}

// TestStageDoneBodies pins which done bodies are accepted: the original's
// (prose output, optional structuredOutput), Agora's ({body, output}), and
// on layers 3 to 6 prose alone; giving a part twice is refused.
func TestStageDoneBodies(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		_, human := c.key("human", slots.ScopeClaimCreate)
		claim := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "t"}).body["_id"].(string)
		_, a := c.key("a", slots.ScopeCommentCreate)
		slot := c.expect(200, "GET", "/api/v1/jobs/work", a, nil).body["slot"].(map[string]any)
		path := fmt.Sprintf("/api/v1/claims/%s/stage-slots/%s", claim, slot["_id"])
		c.expect(200, "POST", path+"/take", a, nil)
		for name, body := range map[string]map[string]any{
			"prose twice":      {"body": "x", "output": "y"},
			"structured twice": {"output": map[string]any{}, "structuredOutput": map[string]any{}},
			"not an object":    {"output": "x", "structuredOutput": []any{"a"}},
		} {
			c.expect(400, "POST", path+"/done", a, body)
			_ = name
		}
		c.expect(200, "POST", path+"/done", a, map[string]any{"output": "framing prose", "structuredOutput": map[string]any{"note": "free-form on a prose layer"},
			"signature": "a field the route does not read, ignored as the original ignores it"})
		p := c.expect(200, "GET", "/api/v1/claims/"+claim+"/pipeline", a, nil).body
		s := p["layers"].([]any)[0].(map[string]any)["slots"].([]any)[0].(map[string]any)
		require.Equal(t, "framing prose", s["body"])
		require.Equal(t, map[string]any{"note": "free-form on a prose layer"}, s["structuredOutput"])
		require.Equal(t, s["structuredOutput"], s["output"])
	})
}

// TestCouncilAndJobRoutesWire pins council-fetch and council-submit
// (authorName, {ok, commentId}), GET /jobs/claims, GET /protocols/{id} and
// POST /slots/release-stale.
func TestCouncilAndJobRoutesWire(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		_, human := c.key("human", slots.ScopeClaimCreate, slots.ScopeSlotsConfigure, slots.ScopeCommentCreate)
		_, critic := c.key("Skeptic-7", slots.ScopeCommentCreate)
		older := c.claim(human, "medicine")
		claim := c.claim(human, "medicine")
		c.expect(200, "POST", "/api/v1/claims/"+claim+"/comments", human, map[string]any{"body": "a draft", "commentType": "draft"})
		c.expect(201, "POST", "/api/v1/claims/"+claim+"/slots", human, map[string]any{"roles": []any{map[string]any{"role": "critic", "count": 1}}})

		job := c.expect(200, "GET", "/api/v1/jobs/slots?role=critic&domain=medicine", critic, nil).body
		comments := job["comments"].([]any)
		require.Len(t, comments, 1)
		require.Equal(t, "human", comments[0].(map[string]any)["authorName"])
		slot := job["slot"].(map[string]any)
		c.expect(200, "POST", fmt.Sprintf("/api/v1/claims/%s/slots/%s/take", claim, slot["_id"]), critic, map[string]any{})
		cm := c.expect(200, "POST", "/api/v1/claims/"+claim+"/comments", critic, map[string]any{"body": "small sample", "commentType": "criticism"}).body
		require.Equal(t, true, cm["ok"])
		require.NotEmpty(t, cm["commentId"])
		require.Equal(t, "Skeptic-7", cm["authorName"])
		c.expect(200, "POST", fmt.Sprintf("/api/v1/claims/%s/slots/%s/done", claim, slot["_id"]), critic, map[string]any{})

		// GET /jobs/claims: latest, top (most comments), random, filters.
		latest := c.expect(200, "GET", "/api/v1/jobs/claims", critic, nil).body
		require.Equal(t, claim, latest["claim"].(map[string]any)["_id"])
		require.Len(t, latest["comments"], 2)
		require.NotEmpty(t, latest["instructions"])
		c.expect(200, "POST", "/api/v1/claims/"+older+"/comments", human, map[string]any{"body": "one"})
		c.expect(200, "POST", "/api/v1/claims/"+older+"/comments", human, map[string]any{"body": "two"})
		c.expect(200, "POST", "/api/v1/claims/"+older+"/comments", human, map[string]any{"body": "three"})
		top := c.expect(200, "GET", "/api/v1/jobs/claims?strategy=top&pool=10&commentLimit=2", critic, nil).body
		require.Equal(t, older, top["claim"].(map[string]any)["_id"])
		tc := top["comments"].([]any)
		require.Len(t, tc, 2, "commentLimit keeps the newest")
		require.Equal(t, "three", tc[1].(map[string]any)["body"])
		rnd := c.expect(200, "GET", "/api/v1/jobs/claims?strategy=random&domain=medicine", critic, nil).body
		require.Contains(t, []any{claim, older}, rnd["claim"].(map[string]any)["_id"])
		c.expect(404, "GET", "/api/v1/jobs/claims?domain=physics", critic, nil)
		for _, bad := range []string{"strategy=best", "pool=0", "pool=x", "commentLimit=-1"} {
			c.expect(400, "GET", "/api/v1/jobs/claims?"+bad, critic, nil)
		}

		// GET /protocols/{id}.
		p := c.expect(200, "GET", "/api/v1/protocols/"+prism.PrismV1ID, critic, nil).body
		require.Equal(t, prism.PrismV1ID, p["id"])
		require.Len(t, p["layers"], 7)
		require.Equal(t, "protocol_not_found", c.expect(404, "GET", "/api/v1/protocols/lens-v2", critic, nil).errCode(t))
		lens := c.expect(200, "GET", "/api/v1/protocols/"+prism.LensV1ID, critic, nil).body
		require.Len(t, lens["layers"], 6, "AOP's other protocols are built in")

		// POST /slots/release-stale re-opens the caller's taken stage slots,
		// sent as index.mjs sends it: no body, no content type.
		w := c.expect(200, "GET", "/api/v1/jobs/work", critic, nil).body
		ws := w["slot"].(map[string]any)
		c.expect(200, "POST", fmt.Sprintf("/api/v1/claims/%s/stage-slots/%s/take", ws["claimId"], ws["_id"]), critic, nil)
		_, other := c.key("other", slots.ScopeCommentCreate)
		require.EqualValues(t, 0, c.expect(200, "POST", "/api/v1/slots/release-stale", other, nil).body["released"])
		rel := c.expect(200, "POST", "/api/v1/slots/release-stale", critic, nil).body
		require.Equal(t, true, rel["ok"])
		require.EqualValues(t, 1, rel["released"])
		c.expect(200, "POST", fmt.Sprintf("/api/v1/claims/%s/stage-slots/%s/take", ws["claimId"], ws["_id"]), other, nil)
		_, reader := c.key("reader")
		c.expect(403, "POST", "/api/v1/slots/release-stale", reader, nil)
	})
}

// TestDeviceLoginWire pins the device login as `aop setup` runs it (index.mjs
// runDeviceFlow): POST /auth/device-code with {scopes, agentName,
// agentModel}, polls of POST /auth/token with {deviceCode} answered 202
// {status: "pending"} until an operator with keys:admin approves the user
// code, then {status: "approved", apiKey}; the error codes it reads after.
func TestDeviceLoginWire(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		code := c.expect(200, "POST", "/api/v1/auth/device-code", "", map[string]any{
			"scopes":    []string{"comment:create", "consensus:write", "claim:new", "classification:write", "policy:write", "output:write", "slots:configure"},
			"agentName": "Skeptic-7", "agentModel": "sonnet-4.6"}).body
		for _, f := range []string{"deviceCode", "userCode", "verificationUri", "expiresIn", "interval"} {
			require.NotEmpty(t, code[f], f)
		}
		require.EqualValues(t, 900, code["expiresIn"])
		require.EqualValues(t, 5, code["interval"])
		device := map[string]any{"deviceCode": code["deviceCode"]}
		r := c.expect(202, "POST", "/api/v1/auth/token", "", device)
		require.JSONEq(t, `{"status":"pending"}`, r.raw)

		user := code["userCode"].(string)
		_, agent := c.key("agent", slots.ScopeCommentCreate)
		c.expect(403, "POST", "/api/v1/auth/device-codes/"+user+"/approve", agent, nil)
		c.expect(401, "GET", "/api/v1/auth/device-codes/"+user, "", nil)
		seen := c.expect(200, "GET", "/api/v1/auth/device-codes/"+strings.ToLower(user), adminToken, nil).body
		require.Equal(t, "Skeptic-7", seen["agentName"])
		require.Equal(t, "pending", seen["status"])
		require.Contains(t, seen["scopes"], "claim:create")
		c.expect(404, "GET", "/api/v1/auth/device-codes/BCDF-GHJK", adminToken, nil)
		approved := c.expect(200, "POST", "/api/v1/auth/device-codes/"+user+"/approve", adminToken, nil).body
		require.Equal(t, "approved", approved["status"])
		require.Equal(t, "device_code_used", c.expect(409, "POST", "/api/v1/auth/device-codes/"+user+"/approve", adminToken, nil).errCode(t))

		tok := c.expect(200, "POST", "/api/v1/auth/token", "", device).body
		require.Equal(t, "approved", tok["status"])
		key := tok["apiKey"].(string)
		me := c.expect(200, "GET", "/api/v1/me", key, nil).body
		require.Equal(t, "Skeptic-7", me["name"])
		require.Contains(t, me["scopes"], "claim:create")
		require.Nil(t, me["signingKeyAddress"], "no signing key yet")
		// aop setup then registers its signing key's address, and goes on
		// silently when refused.
		signing := c.expect(200, "POST", "/api/v1/agent/signing-key", key, map[string]any{"signingKeyAddress": "0xpoi_5a1e6c3d9b0f2a4e8c7d1b3f5a9e2c4d6b8f0a1c"})
		require.JSONEq(t, `{"ok":true}`, signing.raw)
		me = c.expect(200, "GET", "/api/v1/me", key, nil).body
		require.Equal(t, "0xpoi_5a1e6c3d9b0f2a4e8c7d1b3f5a9e2c4d6b8f0a1c", me["signingKeyAddress"], "shown on the key's profile")
		r = c.expect(400, "POST", "/api/v1/agent/signing-key", key, map[string]any{})
		require.Equal(t, "invalid_payload", r.errCode(t))
		require.Contains(t, r.raw, "signingKeyAddress is required")
		c.expect(400, "POST", "/api/v1/agent/signing-key", key, map[string]any{"signingKeyAddress": 7})
		c.expect(401, "POST", "/api/v1/agent/signing-key", "", map[string]any{"signingKeyAddress": "0xpoi"})
		c.expect(400, "POST", "/api/v1/agent/signing-key", adminToken, map[string]any{"signingKeyAddress": "0xpoi"})
		c.expect(201, "POST", "/api/v1/claims", key, map[string]any{"title": "the new key works"})
		require.Equal(t, "consumed_token", c.expect(410, "POST", "/api/v1/auth/token", "", device).errCode(t), "410 as the original answers a used code")
		require.Equal(t, "invalid_device_code", c.expect(404, "POST", "/api/v1/auth/token", "", map[string]any{"deviceCode": "nope"}).errCode(t))
		require.Equal(t, "invalid_request", c.expect(400, "POST", "/api/v1/auth/token", "", map[string]any{}).errCode(t))
		require.Equal(t, "invalid_scope", c.expect(400, "POST", "/api/v1/auth/device-code", "", map[string]any{"scopes": []string{"keys:admin"}}).errCode(t))
		c.expect(400, "POST", "/api/v1/auth/device-code", "", map[string]any{"scopes": []string{"claim:delete"}})
	})
}

// cliRun has the agents fetch, take and submit as agent-loop.mjs does
// until the claim's pipeline completes; submit, given the work the agent
// fetched, its token and its stage slot's path, builds each done's body
// (after what checks it likes). It returns the pipeline's last view.
func cliRun(t *testing.T, c *apiClient, claim, reader string, agents []string, submit func(work map[string]any, tok, path string, i int) map[string]any) map[string]any {
	t.Helper()
	for steps := 0; steps < 200; steps++ {
		for i, tok := range agents {
			r := c.do("GET", "/api/v1/jobs/work", tok, nil)
			if r.status == 404 {
				continue
			}
			require.Equal(t, 200, r.status, r.raw)
			slot := r.body["slot"].(map[string]any)
			ctx := r.body["context"].(map[string]any)
			require.Contains(t, ctx, "priorLayers")
			require.Contains(t, ctx, "currentLayerWorkOutputs")
			path := fmt.Sprintf("/api/v1/claims/%s/stage-slots/%s", claim, slot["_id"])
			take := c.expect(200, "POST", path+"/take", tok, map[string]any{}).body
			require.Equal(t, true, take["ok"])
			require.Equal(t, slot["layer"], take["layer"])
			done := c.expect(200, "POST", path+"/done", tok, submit(r.body, tok, path, i)).body
			require.Equal(t, true, done["ok"])
		}
		view := c.expect(200, "GET", "/api/v1/claims/"+claim+"/pipeline", reader, nil).body
		if view["status"] == "complete" {
			return view
		}
		require.Equal(t, "active", view["status"], "the pipeline stopped: %v", view)
	}
	t.Fatal("the pipeline did not complete")
	return nil
}

// TestAgentLoopMetaAndLensWire: a claim created on meta-v1 (as AOP starts
// a human's claim) is classified at layer 0, meta-classify, by three
// classifiers whose --protocol and --domain flags agent-loop.mjs sends as
// structuredOutput; the majority's lens-v1 takes over with the majority's
// domain, its roles and stage names as AOP's CLI prints them, and ends in
// a consensus record without a verdict. A claim created on lens-v1 starts
// at its framing. On every backend.
func TestAgentLoopMetaAndLensWire(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		_, human := c.key("human", slots.ScopeClaimCreate)
		var agents []string
		for i := 0; i < 12; i++ {
			_, tok := c.key(fmt.Sprint("agent-", i), slots.ScopeCommentCreate)
			agents = append(agents, tok)
		}
		claim := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "What if cities banned cars?", "protocol": prism.MetaV1ID,
			"sources": []string{"https://example.org/cities"}}).body["_id"].(string)
		w := c.expect(200, "GET", "/api/v1/jobs/work", agents[0], nil).body
		require.Equal(t, "meta-classify", w["context"].(map[string]any)["stageName"])
		require.Equal(t, "classifier", w["slot"].(map[string]any)["role"])
		require.EqualValues(t, 0, w["slot"].(map[string]any)["layer"])

		stages := map[string]bool{}
		roles := map[string]bool{}
		view := cliRun(t, c, claim, human, agents, func(w map[string]any, _, _ string, i int) map[string]any {
			phase := w["slot"].(map[string]any)["slotType"]
			stage := w["context"].(map[string]any)["stageName"].(string)
			stages[stage] = true
			body := map[string]any{"output": fmt.Sprintf("reasoning of agent %d at %s", i, stage), "confidence": 0.8}
			switch {
			case stage == "meta-classify" && phase == "work":
				body["structuredOutput"] = map[string]any{"protocol": []string{"lens-v1", "prism-v1", "lens-v1"}[i%3], "domain": "Social Philosophy"}
			case stage == "synthesis":
				// The CLI asks every synthesis slot for these; lens-v1's
				// synthesizers give them too.
				body["structuredOutput"] = map[string]any{"summary": "a synthesis", "recommendation": "accept-with-caveats"}
			}
			return body
		})
		for _, s := range view["slots"].([]any) {
			roles[s.(map[string]any)["role"].(string)] = true
		}
		require.Equal(t, prism.LensV1ID, view["protocol"], "two of three classifiers chose lens-v1")
		require.Equal(t, map[string]bool{"meta-classify": true, "framing": true, "lenses": true, "critique": true, "revision": true, "synthesis": true, "summary": true}, stages)
		for _, r := range []string{"classifier", "framer", "lens", "critic", "reviser", "synthesizer", "consensus"} {
			require.True(t, roles[r], r)
		}
		got := c.expect(200, "GET", "/api/v1/claims/"+claim, human, nil).body
		require.Equal(t, "social-philosophy", got["domain"])
		cons := c.expect(200, "GET", "/api/v1/claims/"+claim+"/consensus", human, nil)
		require.NotContains(t, cons.body, "recommendation", "lens-v1 gives no verdict")
		require.Regexp(t, `^reasoning of agent \d+ at summary(\n\n---\n\nreasoning of agent \d+ at summary){2}$`, cons.body["summary"],
			"the summary consensus's prose, as nobody gave a summary")
		require.Len(t, cons.body["keyPoints"], 3)

		lens := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "Is free will compatible with physics?", "protocol": prism.LensV1ID}).body["_id"].(string)
		p := c.expect(200, "GET", "/api/v1/claims/"+lens+"/pipeline", human, nil).body
		require.Equal(t, prism.LensV1ID, p["protocol"])
		require.EqualValues(t, 1, p["currentLayer"])
		solo := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "Solo", "protocol": prism.PrismV1SoloID}).body["_id"].(string)
		p = c.expect(200, "GET", "/api/v1/claims/"+solo+"/pipeline", human, nil).body
		require.Len(t, p["slots"], 1, "prism-v1-solo: one work slot")
		// AOP's claim skill tells agents to send a protocol, any name: one
		// no one registered runs the default, as in the original.
		free := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "x", "protocol": "lens-v2"}).body["_id"].(string)
		require.Equal(t, prism.PrismV1ID, c.expect(200, "GET", "/api/v1/claims/"+free+"/pipeline", human, nil).body["protocol"])
	})
}

// TestDeleteCommentIsGone: DELETE /api/v1/comments/{id} answers 410
// endpoint_deprecated, as the original has since it stopped deleting
// comments (its data-integrity regression test checks it).
func TestDeleteCommentIsGone(t *testing.T) {
	c := newAPI(t, testbackend.All()[0].New(t))
	_, writer := c.key("writer", slots.ScopeClaimCreate, slots.ScopeCommentCreate)
	claim := c.claim(writer, "")
	id := c.expect(200, "POST", "/api/v1/claims/"+claim+"/comments", writer, map[string]any{"body": "keep me"}).body["commentId"].(string)
	for _, tok := range []string{writer, ""} {
		for _, cm := range []string{id, "fake_id"} {
			r := c.expect(410, "DELETE", "/api/v1/comments/"+cm, tok, nil)
			require.Equal(t, "endpoint_deprecated", r.errCode(t))
		}
	}
	require.Len(t, c.expect(200, "GET", "/api/v1/claims/"+claim+"/comments", writer, nil).body["items"], 1, "nothing deleted")
}

// TestCommentsSortAndLimit: GET /api/v1/claims/{id}/comments reads the
// original's sort (top, its default, new or old) and limit, on every
// backend.
func TestCommentsSortAndLimit(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		_, writer := c.key("writer", slots.ScopeClaimCreate, slots.ScopeCommentCreate)
		claim := c.claim(writer, "")
		path := "/api/v1/claims/" + claim + "/comments"
		for _, b := range []string{"one", "two", "three"} {
			c.expect(200, "POST", path, writer, map[string]any{"body": b})
		}
		bodies := func(q string) []string {
			var out []string
			for _, it := range c.expect(200, "GET", path+q, writer, nil).body["items"].([]any) {
				out = append(out, it.(map[string]any)["body"].(string))
			}
			return out
		}
		require.Equal(t, []string{"three", "two", "one"}, bodies(""), "top, the default: newest first without votes or replies to any")
		require.Equal(t, []string{"three", "two"}, bodies("?sort=new&limit=2"))
		require.Equal(t, []string{"one", "two", "three"}, bodies("?sort=OLD"))
		require.Equal(t, []string{"one"}, bodies("?sort=old&limit=1"))
		require.Equal(t, "invalid_sort", c.expect(400, "GET", path+"?sort=best", writer, nil).errCode(t))
		for _, q := range []string{"?limit=-1", "?limit=0", "?limit=abc", "?limit=1e400"} {
			require.Equal(t, []string{"three", "two", "one"}, bodies(q), "%s: the default, as the original reads it", q)
		}
		require.Equal(t, []string{"three", "two"}, bodies("?limit=2.9"), "its whole part")
	})
}

// TestClaimsSort: GET /api/v1/claims takes the original's sort: latest
// (the default), top (most commented first) and random, and refuses others.
func TestClaimsSort(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		_, writer := c.key("writer", slots.ScopeClaimCreate, slots.ScopeCommentCreate)
		quiet := c.claim(writer, "")
		busy := c.claim(writer, "")
		newest := c.claim(writer, "")
		c.expect(200, "POST", "/api/v1/claims/"+busy+"/comments", writer, map[string]any{"body": "one"})
		order := func(q string) []string {
			var out []string
			for _, it := range c.expect(200, "GET", "/api/v1/claims"+q, writer, nil).body["items"].([]any) {
				out = append(out, it.(map[string]any)["_id"].(string))
			}
			return out
		}
		require.Equal(t, []string{newest, busy, quiet}, order(""))
		require.Equal(t, []string{newest, busy, quiet}, order("?sort=latest"))
		require.Equal(t, []string{busy, newest, quiet}, order("?sort=top"), "most commented first, then newest")
		require.Equal(t, []string{busy}, order("?sort=Top&limit=1"))
		require.ElementsMatch(t, []string{newest, busy, quiet}, order("?sort=random"))
		require.Equal(t, "invalid_sort", c.expect(400, "GET", "/api/v1/claims?sort=best", writer, nil).errCode(t))
		// Any limit the original takes is taken: not a number or below 1
		// is the default, above the most a page holds is that.
		for _, q := range []string{"?limit=0", "?limit=-4", "?limit=x", "?limit=100000"} {
			require.Equal(t, []string{newest, busy, quiet}, order(q), q)
		}
		require.Equal(t, []string{newest}, order("?limit=1.5"))
	})
}

// TestProtocolClaims: the original's api-protocols skill lists the claims
// created under a protocol by GET /api/v1/protocols/{protocolId}/claims and
// GET /api/v1/claims?protocolId=, the protocol being the name given at
// creation (kept on the claim as "protocol"), registered or not.
func TestProtocolClaims(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		_, writer := c.key("writer", slots.ScopeClaimCreate, slots.ScopeCommentCreate)
		create := func(protocol, domain string) map[string]any {
			return c.expect(201, "POST", "/api/v1/claims", writer, map[string]any{"title": "Under " + protocol, "body": "b", "protocol": protocol, "domain": domain}).body
		}
		sim := create("simulation", "")
		require.Equal(t, "simulation", sim["protocol"], "the claim keeps the name given")
		solo := create(" prism-v1-solo ", "")
		require.Equal(t, "prism-v1-solo", solo["protocol"])
		simEthology := create("simulation", "ethology")
		none := c.expect(201, "POST", "/api/v1/claims", writer, map[string]any{"title": "None", "body": "b"}).body
		require.Equal(t, "prism-v1", none["protocol"], "none given: the pipeline's")
		require.Equal(t, "simulation", c.expect(200, "GET", "/api/v1/claims/"+sim["_id"].(string), writer, nil).body["protocol"])

		ids := func(path string) []string {
			t.Helper()
			page := c.expect(200, "GET", path, writer, nil).body
			require.Contains(t, page, "nextCursor")
			out := []string{}
			for _, it := range page["items"].([]any) {
				out = append(out, it.(map[string]any)["_id"].(string))
			}
			return out
		}
		want := []string{simEthology["_id"].(string), sim["_id"].(string)}
		require.Equal(t, want, ids("/api/v1/protocols/simulation/claims"))
		require.Equal(t, want, ids("/api/v1/claims?protocolId=simulation"))
		require.Equal(t, want[:1], ids("/api/v1/protocols/simulation/claims?domain=ethology"))
		require.Equal(t, want[:1], ids("/api/v1/protocols/simulation/claims?limit=1"))
		require.Equal(t, want[1:], ids("/api/v1/protocols/simulation/claims?sort=top&domain=calibrating"))
		require.Equal(t, []string{solo["_id"].(string)}, ids("/api/v1/protocols/prism-v1-solo/claims"))
		require.Equal(t, []string{}, ids("/api/v1/protocols/unknown/claims"), "a name no claim has: none, as the original")
		require.Equal(t, "invalid_sort", c.expect(400, "GET", "/api/v1/protocols/simulation/claims?sort=best", writer, nil).errCode(t))
		require.Equal(t, "invalid_protocol", c.expect(400, "GET", "/api/v1/claims?protocolId="+strings.Repeat("p", 101), writer, nil).errCode(t))
		require.Equal(t, "invalid_protocol", c.expect(400, "POST", "/api/v1/claims", writer, map[string]any{"title": "T", "body": "b", "protocol": strings.Repeat("p", 101)}).errCode(t))
		c.expect(401, "GET", "/api/v1/protocols/simulation/claims", "", nil)
	})
}

// TestClaimAuthorAndCommentCount: a claim answers who created it and how
// many comments it has, under the original's names (authorId, authorName,
// authorType "ai", commentCount), on every read: by ID, listed, a claim
// job's and a role slot's job.
func TestClaimAuthorAndCommentCount(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		writerID, writer := c.key("writer", slots.ScopeClaimCreate, slots.ScopeCommentCreate, slots.ScopeSlotsConfigure)
		_, critic := c.key("critic", slots.ScopeCommentCreate)
		created := c.expect(201, "POST", "/api/v1/claims", writer, map[string]any{"title": "Authored", "body": "b"}).body
		id := created["_id"].(string)
		check := func(claim map[string]any, comments int, what string) {
			t.Helper()
			require.Equal(t, id, claim["_id"], what)
			require.Equal(t, writerID, claim["authorId"], what)
			require.Equal(t, "writer", claim["authorName"], what)
			require.Equal(t, "ai", claim["authorType"], what)
			require.EqualValues(t, comments, claim["commentCount"], what)
			require.GreaterOrEqual(t, claim["updatedAt"], claim["createdAt"], what)
		}
		check(created, 0, "as created")
		c.expect(200, "POST", "/api/v1/claims/"+id+"/comments", critic, map[string]any{"body": "a draft", "commentType": "draft"})
		c.expect(200, "POST", "/api/v1/claims/"+id+"/comments", critic, map[string]any{"body": "more"})
		byID := c.expect(200, "GET", "/api/v1/claims/"+id, critic, nil).body
		check(byID, 2, "by ID")
		comments := c.expect(200, "GET", "/api/v1/claims/"+id+"/comments?sort=new", critic, nil).body["items"].([]any)
		require.Equal(t, comments[0].(map[string]any)["createdAt"], byID["updatedAt"], "updated by its latest comment")
		check(c.expect(200, "GET", "/api/v1/claims", critic, nil).body["items"].([]any)[0].(map[string]any), 2, "listed")
		check(c.expect(200, "GET", "/api/v1/jobs/claims?commentLimit=1", critic, nil).body["claim"].(map[string]any), 2, "a claim job")
		c.expect(201, "POST", "/api/v1/claims/"+id+"/slots", writer, map[string]any{"roles": []map[string]any{{"role": "critic", "count": 1}}})
		check(c.expect(200, "GET", "/api/v1/jobs/slots?role=critic", critic, nil).body["claim"].(map[string]any), 2, "a role slot's job")
	})
}

// TestCommentReplies: a comment with the original's parentCommentId is a
// reply to that comment of the claim, answered and listed with it; a
// parent that is not one of the claim's comments is the original's 404
// parent_comment_not_found, and nothing is stored; sort=top lists the
// most replied to first.
func TestCommentReplies(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		_, writer := c.key("writer", slots.ScopeClaimCreate, slots.ScopeCommentCreate)
		id := c.claim(writer, "")
		other := c.claim(writer, "")
		path := "/api/v1/claims/" + id + "/comments"
		first := c.expect(200, "POST", path, writer, map[string]any{"body": "first"}).body["_id"].(string)
		second := c.expect(200, "POST", path, writer, map[string]any{"body": "second"}).body["_id"].(string)
		reply := c.expect(200, "POST", path, writer, map[string]any{"body": "why?", "commentType": "question", "parentCommentId": first}).body
		require.Equal(t, first, reply["parentCommentId"])
		elsewhere := c.expect(200, "POST", "/api/v1/claims/"+other+"/comments", writer, map[string]any{"body": "there"}).body["_id"].(string)
		for _, parent := range []string{"comment_none", elsewhere} {
			r := c.expect(404, "POST", path, writer, map[string]any{"body": "orphan", "parentCommentId": parent})
			require.Equal(t, "parent_comment_not_found", r.errCode(t))
		}
		items := c.expect(200, "GET", path+"?sort=top", writer, nil).body["items"].([]any)
		var ids []string
		for _, it := range items {
			ids = append(ids, it.(map[string]any)["_id"].(string))
		}
		require.Equal(t, []string{first, reply["_id"].(string), second}, ids, "the most replied to first, then the newest; no orphan")
		require.NotContains(t, items[2], "parentCommentId", "a comment on the claim has none")
	})
}
