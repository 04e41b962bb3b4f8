package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/storetest"
)

func newPrismAPI(t *testing.T, st storetest.Stores) *apiClient {
	t.Helper()
	svc := slots.New(st.Slots)
	ids := identity.New(st.Identity, identity.WithAdminKey(adminToken), identity.WithScopes(httpapi.Scopes()))
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", httpapi.Slots(svc, ids, httpapi.WithLimiter(nil), httpapi.WithPrism(prism.New(st.Prism, st.Slots))))
	srv := httptest.NewServer(validated(t, mux))
	t.Cleanup(srv.Close)
	return &apiClient{t: t, srv: srv}
}

// stageOutput is what an agent submits for a slot of layer n in phase.
func stageOutput(n int, phase string, i int) map[string]any {
	out := map[string]any{"body": fmt.Sprintf("reasoning of agent %d", i), "confidence": 0.85}
	switch {
	case n == 2 && phase == "work":
		out["output"] = map[string]any{"domain": []string{"Animal Cognition", "animal_cognition", "Zoology"}[i%3]}
	case n == 3 && phase == "work":
		out["output"] = map[string]any{"keyPoints": []string{"caching"}, "strength": "strong"}
	case n == 4 && phase == "work":
		out["output"] = map[string]any{"weaknesses": []string{"lab birds"}, "questions": []string{"wild birds?"}, "severity": "low"}
	case n == 5 && phase == "work":
		out["output"] = map[string]any{"responseToWeaknesses": []string{"field data"}, "answeredQuestions": []string{"yes"}}
	case n == 6 && phase == "work":
		out["output"] = map[string]any{"verdict": "advance-to-synthesis", "caveats": []string{"few species"}}
	case n == 7:
		out["output"] = map[string]any{"summary": "Corvids plan ahead.", "recommendation": "accept-with-caveats"}
	}
	return out
}

// TestPrismThroughHTTP drives a claim through all seven layers with nothing
// but HTTP calls of sixteen agent keys, on every backend.
func TestPrismThroughHTTP(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		_, human := c.key("human", slots.ScopeClaimCreate, prism.ScopePipelineReview)
		var agents []string
		for i := 0; i < 16; i++ {
			_, tok := c.key(fmt.Sprint("agent-", i), slots.ScopeCommentCreate)
			agents = append(agents, tok)
		}
		claim := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "Crows plan ahead", "body": "Scrub jays cache food for tomorrow."}).body["_id"].(string)
		view := c.expect(200, "GET", "/api/v1/claims/"+claim+"/pipeline", human, nil).body
		require.Equal(t, "active", view["status"])
		require.EqualValues(t, 1, view["currentLayer"])
		require.Equal(t, "work", view["phase"])
		require.Equal(t, "prism-v1", view["protocol"])
		require.Equal(t, "prism-v1", view["protocolId"], "the original's name for it")
		created := view["createdAt"].(float64)
		require.Positive(t, created)
		require.Equal(t, created, view["updatedAt"])
		require.NotContains(t, view, "completedAt", "not complete")
		require.Len(t, view["layers"].([]any), 7)
		c.expect(404, "GET", "/api/v1/claims/"+claim+"/consensus", human, nil)

		view = cliRun(t, c, claim, human, agents, func(w map[string]any, _, _ string, i int) map[string]any {
			slot := w["slot"].(map[string]any)
			return stageOutput(int(slot["layer"].(float64)), slot["phase"].(string), i)
		})
		got := c.expect(200, "GET", "/api/v1/claims/"+claim, human, nil).body
		require.Equal(t, "animal-cognition", got["domain"], "layer 2's majority slug")
		require.Equal(t, created, view["createdAt"])
		require.GreaterOrEqual(t, view["updatedAt"], created)
		require.Equal(t, view["updatedAt"], view["completedAt"], "complete: completed at its last change")
		cons := c.expect(200, "GET", "/api/v1/claims/"+claim+"/consensus", human, nil).body
		require.Equal(t, "accept-with-caveats", cons["recommendation"])
		require.Equal(t, "Corvids plan ahead.\n\n---\n\nCorvids plan ahead.\n\n---\n\nCorvids plan ahead.", cons["summary"], "the three syntheses' summaries, joined as the original joins them")
		require.InDelta(t, 85, cons["confidence"], 1e-9)
		for _, l := range view["layers"].([]any) {
			require.Equal(t, "done", l.(map[string]any)["phase"])
			require.InDelta(t, 0.85, l.(map[string]any)["avgConfidence"], 1e-9)
		}
		var total float64
		for _, tok := range agents {
			total += c.expect(200, "GET", "/api/v1/me", tok, nil).body["balance"].(float64)
		}
		want := 0
		for _, l := range prism.PrismV1().Layers {
			want += l.WorkSlots()*prism.RewardWork + l.ConsensusSlots*prism.RewardConsensus
		}
		require.EqualValues(t, want, total)
	})
}

func TestPrismHTTPErrors(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		_, human := c.key("human", slots.ScopeClaimCreate)
		_, a := c.key("a", slots.ScopeCommentCreate)
		_, b := c.key("b", slots.ScopeCommentCreate)
		_, reviewer := c.key("reviewer", prism.ScopePipelineReview)
		claim := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "t"}).body["_id"].(string)
		work := c.expect(200, "GET", "/api/v1/jobs/work?layer=1&role=contributor", a, nil).body
		path := fmt.Sprintf("/api/v1/claims/%s/stage-slots/%s", claim, work["slot"].(map[string]any)["_id"])
		c.expect(403, "POST", path+"/take", human, nil)
		c.expect(404, "POST", "/api/v1/claims/"+claim+"/stage-slots/stage_missing/take", a, nil)
		c.expect(400, "POST", path+"/done", a, nil)
		c.expect(200, "POST", path+"/take", a, nil)
		r := c.expect(409, "POST", path+"/take", b, nil)
		require.Equal(t, "slot_taken", r.errCode(t))
		c.expect(403, "POST", path+"/done", b, nil)
		c.expect(400, "POST", path+"/done", a, map[string]any{"confidence": 2})
		c.expect(400, "POST", path+"/done", a, map[string]any{"confidence": "high"})
		c.expect(200, "POST", path+"/done", a, map[string]any{"extra": "ignored, as the original ignores it"})
		c.expect(400, "POST", path+"/done", a, nil)
		c.expect(400, "GET", "/api/v1/jobs/work?layer=x", a, nil)
		c.expect(400, "GET", "/api/v1/jobs/work?strategy=best", a, nil)
		c.expect(404, "GET", "/api/v1/jobs/work?layer=5", a, nil)
		other := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "t", "protocol": "scientific-review"}).body["_id"].(string)
		require.Equal(t, prism.PrismV1ID, c.expect(200, "GET", "/api/v1/claims/"+other+"/pipeline", human, nil).body["protocol"],
			"a protocol no one registered runs the default, as the original's")
		for _, route := range []string{"pipeline", "consensus", "consensus/history", "flags"} {
			r := c.expect(404, "GET", "/api/v1/claims/claim_missing/"+route, a, nil)
			require.Equal(t, "claim_not_found", r.errCode(t), "%s: no claim is the claim's 404, as the original's", route)
		}
		require.JSONEq(t, `{"items":[],"nextCursor":null}`, c.expect(200, "GET", "/api/v1/claims/"+claim+"/flags", a, nil).raw)
		c.expect(403, "POST", "/api/v1/claims/"+claim+"/flags/flag_x/resolve", a, map[string]any{"action": "advance"})
		c.expect(404, "POST", "/api/v1/claims/"+claim+"/flags/flag_x/resolve", reviewer, map[string]any{"action": "advance"})
		protos := c.expect(200, "GET", "/api/v1/protocols", a, nil).body["items"].([]any)
		require.Len(t, protos, len(prism.BuiltinIDs)+1, "the built-in protocols and the name a claim was created under")
		unregistered := protos[0].(map[string]any)
		require.Equal(t, "scientific-review", unregistered["id"], "its one claim the latest")
		require.Equal(t, "scientific-review", unregistered["name"])
		require.EqualValues(t, 1, unregistered["claimCount"])
		require.NotContains(t, unregistered, "layers", "no one registered it")
		require.Equal(t, unregistered, c.expect(200, "GET", "/api/v1/protocols/scientific-review", a, nil).body, "its summary, as the original's")
		require.Equal(t, "prism-v1", protos[1].(map[string]any)["id"], "one claim, used before")
		require.Contains(t, protos[1], "layers")
		require.Equal(t, "protocol_not_found", c.expect(404, "GET", "/api/v1/protocols/never-used", a, nil).errCode(t))
		c.expect(403, "POST", "/api/v1/protocols", human, map[string]any{"id": "x"})
		c.expect(400, "POST", "/api/v1/protocols", adminToken, map[string]any{"id": "x", "name": "X", "layers": []any{}})
		c.expect(201, "POST", "/api/v1/protocols", adminToken, map[string]any{"id": "quick", "name": "Quick", "layers": []any{
			map[string]any{"layer": 1, "name": "Vote", "workRoles": []any{}, "consensusSlots": 1, "threshold": 0.5, "effect": "none"},
		}})
		r = c.expect(409, "POST", "/api/v1/protocols", adminToken, map[string]any{"id": "prism-v1", "name": "Mine", "layers": []any{
			map[string]any{"layer": 1, "name": "Vote", "workRoles": []any{}, "consensusSlots": 1, "threshold": 0.5, "effect": "none"},
		}})
		require.Equal(t, "protocol_reserved", r.errCode(t))
		quick := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "q", "protocol": "quick"}).body["_id"].(string)
		v := c.expect(200, "GET", "/api/v1/claims/"+quick+"/pipeline", a, nil).body
		require.Equal(t, "quick", v["protocol"])
		require.Equal(t, "consensus", v["phase"])
	})
}

// TestPrismWorkLayerZero: ?layer=0 asks for layer 0, meta-v1's
// meta-classify, as the original's work queue reads it; no layer is any
// layer, and the peek and the take read it alike.
func TestPrismWorkLayerZero(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		_, human := c.key("human", slots.ScopeClaimCreate)
		_, a := c.key("a", slots.ScopeCommentCreate)
		older := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "older"}).body["_id"].(string)
		meta := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "meta", "protocol": prism.MetaV1ID}).body["_id"].(string)
		for _, q := range []string{"?layer=0", "?layer=0&role=classifier", "?layer=0&type=work"} {
			w := c.expect(200, "GET", "/api/v1/jobs/work"+q, a, nil).body
			require.Equal(t, meta, w["claim"].(map[string]any)["_id"], q)
			require.EqualValues(t, 0, w["slot"].(map[string]any)["layer"], q)
		}
		for _, q := range []string{"", "?layer=1"} {
			w := c.expect(200, "GET", "/api/v1/jobs/work"+q, a, nil).body
			require.Equal(t, older, w["claim"].(map[string]any)["_id"], "%q: the oldest claim's slot", q)
			require.EqualValues(t, 1, w["slot"].(map[string]any)["layer"], q)
		}
		c.expect(404, "GET", "/api/v1/jobs/peek?layer=0&type=consensus", a, nil)
		require.Equal(t, "invalid_layer", c.expect(400, "GET", "/api/v1/jobs/peek?layer=-1", a, nil).errCode(t))
		w := c.expect(200, "POST", "/api/v1/jobs/work/take?layer=0", a, nil).body
		require.Equal(t, meta, w["claim"].(map[string]any)["_id"])
		c.expect(404, "GET", "/api/v1/jobs/peek?layer=0", a, nil)
		c.expect(200, "GET", "/api/v1/jobs/peek", a, nil)
	})
}

// TestPostConsensusThroughHTTP: an agent with consensus:write posts a
// claim's consensus record, as the original's api-consensus skill does;
// it is the claim's latest record and heads its history.
func TestPostConsensusThroughHTTP(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		_, human := c.key("human", slots.ScopeClaimCreate)
		writerID, writer := c.key("scribe", prism.ScopeConsensusWrite)
		_, commenter := c.key("commenter", slots.ScopeCommentCreate)
		claim := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "Crows plan ahead"}).body["_id"].(string)
		path := "/api/v1/claims/" + claim + "/consensus"
		valid := map[string]any{"summary": " Corvids plan. ", "keyPoints": []string{"caching", " "}, "dissent": []string{"lab birds"},
			"openQuestions": []string{"wild birds?"}, "confidence": 72.5}

		r := c.expect(403, "POST", path, commenter, valid)
		require.Equal(t, "missing_scope", r.errCode(t))
		require.Contains(t, r.body["error"].(map[string]any)["message"], "Missing scope")
		require.Equal(t, "missing_token", c.expect(401, "POST", path, "", valid).errCode(t))
		require.Equal(t, "claim_not_found", c.expect(404, "POST", "/api/v1/claims/claim_missing/consensus", writer, valid).errCode(t))
		for body, code := range map[string]string{
			`{}`:                  "invalid_payload",
			`{"summary":"s"}`:     "invalid_payload",
			`{"keyPoints":["k"]}`: "invalid_payload",
			`{"summary":"s","keyPoints":"k","confidence":1}`:           "invalid_json",
			`{"summary":"s","keyPoints":["k"]}`:                        "consensus_create_failed",
			`{"summary":"s","keyPoints":["k"],"confidence":101}`:       "consensus_create_failed",
			`{"summary":" ","keyPoints":["k"],"confidence":50}`:        "consensus_create_failed",
			`{"summary":"s","keyPoints":[" "],"confidence":50}`:        "consensus_create_failed",
			`{"summary":"a\u0000b","keyPoints":["k"],"confidence":50}`: "invalid_text",
			`{"summary":"s","keyPoints":["k"],"confidence":50`:         "invalid_json",
		} {
			require.Equal(t, code, c.expect(400, "POST", path, writer, body).errCode(t), body)
		}
		require.JSONEq(t, `{"items":[],"nextCursor":null}`, c.expect(200, "GET", path+"/history", human, nil).raw, "nothing refused was kept")
		c.expect(404, "GET", path, human, nil)

		posted := c.expect(200, "POST", path, writer, valid).body
		require.Equal(t, true, posted["ok"])
		id, _ := posted["consensusId"].(string)
		require.True(t, strings.HasPrefix(id, "consensus_"), "%v", posted)
		got := c.expect(200, "GET", path, human, nil).body
		require.Equal(t, id, got["_id"])
		require.Equal(t, claim, got["claimId"])
		require.Equal(t, "Corvids plan.", got["summary"])
		require.Equal(t, []any{"caching"}, got["keyPoints"])
		require.Equal(t, []any{"lab birds"}, got["dissent"])
		require.Equal(t, []any{"wild birds?"}, got["openQuestions"])
		require.EqualValues(t, 73, got["confidence"], "rounded half up, as the original's Math.round")
		require.Equal(t, writerID, got["apiKeyId"])
		require.Equal(t, "scribe", got["agentName"])
		require.Positive(t, got["createdAt"])
		require.NotContains(t, got, "recommendation")

		second := c.expect(200, "POST", path, writer, map[string]any{"summary": "Second", "keyPoints": []string{"k"}, "confidence": 10}).body["consensusId"]
		require.Equal(t, second, c.expect(200, "GET", path, human, nil).body["_id"], "the newest is the claim's consensus")
		items := c.expect(200, "GET", path+"/history", human, nil).body["items"].([]any)
		require.Len(t, items, 2)
		require.Equal(t, second, items[0].(map[string]any)["_id"])
		require.Equal(t, id, items[1].(map[string]any)["_id"])
		require.Len(t, c.expect(200, "GET", path+"/history?limit=1", human, nil).body["items"], 1)
		require.Len(t, c.expect(200, "GET", path+"/history?limit=0", human, nil).body["items"], 2, "0: the default")
		require.Len(t, c.expect(200, "GET", path+"/history?limit=x", human, nil).body["items"], 2, "not a number: the default, as the original's")
	})
}
