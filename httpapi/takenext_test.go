package httpapi_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/storetest"
)

// TestTakeJobRoute: POST /api/v1/jobs/slots/take finds and takes the
// caller's next seat in one request, with the filters of GET /jobs/slots in
// the query string or the body, and leaves the original API's routes as they are.
func TestTakeJobRoute(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		_, human := c.key("human", slots.ScopeSlotsConfigure, slots.ScopeClaimCreate, slots.ScopeCommentCreate)
		aID, a := c.key("Skeptic-7", slots.ScopeCommentCreate)
		bID, b := c.key("Other", slots.ScopeCommentCreate)
		_, reader := c.key("reader")
		claim := c.claim(human, "medicine")
		slotsPath := "/api/v1/claims/" + claim + "/slots"
		c.expect(201, "POST", slotsPath, human, map[string]any{"roles": []any{
			map[string]any{"role": "critic", "count": 1},
			map[string]any{"role": "questioner", "count": 1},
		}})

		r := c.expect(404, "POST", "/api/v1/jobs/slots/take", a, nil)
		require.Equal(t, "no_open_slots", r.errCode(t), "no draft yet")
		c.expect(200, "POST", "/api/v1/claims/"+claim+"/comments", human, map[string]any{"body": "draft", "commentType": "draft"})

		c.expect(401, "POST", "/api/v1/jobs/slots/take", "", nil)
		c.expect(403, "POST", "/api/v1/jobs/slots/take", reader, nil)
		r = c.expect(400, "POST", "/api/v1/jobs/slots/take?strategy=best", a, nil)
		require.Equal(t, "invalid_strategy", r.errCode(t))
		r = c.expect(400, "POST", "/api/v1/jobs/slots/take", a, map[string]any{"role": "judge"})
		require.Equal(t, "invalid_role", r.errCode(t))
		c.expect(404, "POST", "/api/v1/jobs/slots/take?domain=physics", a, nil)

		job := c.expect(200, "POST", "/api/v1/jobs/slots/take?role=questioner", a, nil).body
		slot := job["slot"].(map[string]any)
		require.Equal(t, "questioner", slot["role"])
		require.Equal(t, "taken", slot["status"])
		require.Equal(t, aID, slot["apiKeyId"])
		require.Equal(t, "Skeptic-7", slot["agentName"])
		require.Contains(t, slot, "takenAt")
		require.Equal(t, claim, job["claim"].(map[string]any)["_id"])
		require.Len(t, job["comments"].([]any), 1)

		r = c.expect(404, "POST", "/api/v1/jobs/slots/take", a, nil)
		require.Equal(t, "no_open_slots", r.errCode(t), "one seat per agent per claim")
		c.expect(404, "GET", "/api/v1/jobs/slots", a, nil)

		job = c.expect(200, "POST", "/api/v1/jobs/slots/take", b, map[string]any{"role": "critic", "domain": "medicine", "strategy": "random", "agentKeyId": aID}).body
		slot = job["slot"].(map[string]any)
		require.Equal(t, "critic", slot["role"])
		require.Equal(t, bID, slot["apiKeyId"], "the caller is the agent; a body naming another is not read")
		c.expect(404, "GET", "/api/v1/jobs/slots", reader, nil)

		// The seat is the caller's, as one taken with the original API's route.
		slotID := slot["_id"].(string)
		r = c.expect(403, "POST", slotsPath+"/"+slotID+"/done", a, nil)
		require.Equal(t, "not_slot_owner", r.errCode(t))
		c.expect(200, "POST", slotsPath+"/"+slotID+"/done", b, nil)
		require.EqualValues(t, 10, c.expect(200, "GET", "/api/v1/me", b, nil).body["balance"])
		c.expect(405, "GET", "/api/v1/jobs/slots/take", a, nil)
	})
}

// TestDoneAndTakeRoute: POST .../slots/{slotId}/done-and-take marks the
// caller's seat done, credits it and takes its next seat, with the filters
// of POST /jobs/slots/take; errors are done's, and a done with nothing left
// to take answers next null.
func TestDoneAndTakeRoute(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		_, human := c.key("human", slots.ScopeSlotsConfigure, slots.ScopeClaimCreate, slots.ScopeCommentCreate)
		aID, a := c.key("Worker", slots.ScopeCommentCreate)
		_, b := c.key("Other", slots.ScopeCommentCreate)
		_, reader := c.key("reader")
		var claims []string
		for _, domain := range []string{"medicine", "law", "law"} {
			claim := c.claim(human, domain)
			c.expect(201, "POST", "/api/v1/claims/"+claim+"/slots", human, map[string]any{"roles": []any{
				map[string]any{"role": "critic", "count": 2},
			}})
			c.expect(200, "POST", "/api/v1/claims/"+claim+"/comments", human, map[string]any{"body": "draft", "commentType": "draft"})
			claims = append(claims, claim)
		}
		job := c.expect(200, "POST", "/api/v1/jobs/slots/take", a, nil).body
		slot := job["slot"].(map[string]any)
		require.Equal(t, claims[0], slot["claimId"])
		path := "/api/v1/claims/" + claims[0] + "/slots/" + slot["_id"].(string) + "/done-and-take"

		c.expect(401, "POST", path, "", nil)
		c.expect(403, "POST", path, reader, nil)
		r := c.expect(400, "POST", path+"?strategy=best", a, nil)
		require.Equal(t, "invalid_strategy", r.errCode(t))
		r = c.expect(403, "POST", path, b, nil)
		require.Equal(t, "not_slot_owner", r.errCode(t))

		out := c.expect(200, "POST", path, a, map[string]any{"domain": "law"}).body
		require.Equal(t, true, out["ok"])
		done := out["slot"].(map[string]any)
		require.Equal(t, slot["_id"], done["_id"])
		require.Equal(t, "done", done["status"])
		next := out["next"].(map[string]any)
		nextSlot := next["slot"].(map[string]any)
		require.Equal(t, "taken", nextSlot["status"])
		require.Equal(t, aID, nextSlot["apiKeyId"])
		require.Equal(t, claims[1], next["claim"].(map[string]any)["_id"], "the oldest of the domain asked for")
		require.Len(t, next["comments"].([]any), 1)
		require.EqualValues(t, 10, c.expect(200, "GET", "/api/v1/me", a, nil).body["balance"])

		r = c.expect(400, "POST", path, a, nil)
		require.Equal(t, "slot_not_taken", r.errCode(t), "done once, answered as the original API's done answers it")

		path = "/api/v1/claims/" + claims[1] + "/slots/" + nextSlot["_id"].(string) + "/done-and-take"
		out = c.expect(200, "POST", path+"?domain=medicine", a, nil).body
		require.Equal(t, "done", out["slot"].(map[string]any)["status"])
		require.Contains(t, out, "next")
		require.Nil(t, out["next"], "the only medicine claim is held")
		require.EqualValues(t, 20, c.expect(200, "GET", "/api/v1/me", a, nil).body["balance"])
		c.expect(405, "GET", path, a, nil)
	})
}

// TestTakeWorkRoute: POST /api/v1/jobs/work/take finds and takes the
// caller's next stage slot in one request, with the filters of
// GET /jobs/work, and answers as that route does.
func TestTakeWorkRoute(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newPrismAPI(t, st)
		_, human := c.key("human", slots.ScopeClaimCreate)
		aID, a := c.key("a", slots.ScopeCommentCreate)
		_, reader := c.key("reader")
		r := c.expect(404, "POST", "/api/v1/jobs/work/take", a, nil)
		require.Equal(t, "no_open_slots", r.errCode(t))
		claim := c.expect(201, "POST", "/api/v1/claims", human, map[string]any{"title": "t"}).body["_id"].(string)
		c.expect(401, "POST", "/api/v1/jobs/work/take", "", nil)
		c.expect(403, "POST", "/api/v1/jobs/work/take", reader, nil)
		c.expect(400, "POST", "/api/v1/jobs/work/take?layer=x", a, nil)
		c.expect(400, "POST", "/api/v1/jobs/work/take?type=other", a, nil)
		c.expect(404, "POST", "/api/v1/jobs/work/take?layer=2", a, nil)

		shown := c.expect(200, "GET", "/api/v1/jobs/work?layer=1&role=contributor", a, nil).body
		work := c.expect(200, "POST", "/api/v1/jobs/work/take?layer=1&role=contributor&type=work", a, nil).body
		slot := work["slot"].(map[string]any)
		require.Equal(t, shown["slot"].(map[string]any)["_id"], slot["_id"], "alone, the slot GET /jobs/work shows")
		require.Equal(t, "taken", slot["status"])
		require.Equal(t, aID, slot["apiKeyId"])
		require.Equal(t, claim, work["claim"].(map[string]any)["_id"])
		require.Contains(t, work, "context")
		path := fmt.Sprintf("/api/v1/claims/%s/stage-slots/%s", claim, slot["_id"])
		r = c.expect(409, "POST", path+"/take", a, nil)
		require.Equal(t, "slot_taken", r.errCode(t), "the seat is taken, by the caller")
		c.expect(404, "POST", "/api/v1/jobs/work/take", a, nil)
		c.expect(200, "POST", path+"/done", a, nil)
	})
}
