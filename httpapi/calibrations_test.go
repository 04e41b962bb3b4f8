package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/storetest"
)

// TestCalibrationRoutes: POST and GET /api/v1/claims/{id}/calibrations as
// AOP's api-calibrations skill calls them, on every backend: any key
// calibrates, the top domain becomes the claim's, the list is newest first
// with the original's limit, and every refusal answers the original's
// status, code and message.
func TestCalibrationRoutes(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		_, writer := c.key("writer", slots.ScopeClaimCreate)
		readerID, reader := c.key("reader") // no scope: any key may calibrate
		claim := c.claim(writer, "")
		path := "/api/v1/claims/" + claim + "/calibrations"

		list := c.expect(200, "GET", path, reader, nil)
		require.Equal(t, `{"items":[],"nextCursor":null}`+"\n", list.raw)

		r := c.expect(200, "POST", path, reader, `{"scores":[{"domain":"statistics","score":60},{"domain":"information-theory","score":40}]}`)
		require.Equal(t, true, r.body["ok"])
		first, _ := r.body["calibrationId"].(string)
		require.NotEmpty(t, first)
		require.Equal(t, first, r.body["_id"])
		require.Equal(t, "statistics", r.body["domain"])
		require.Equal(t, "statistics", c.expect(200, "GET", "/api/v1/claims/"+claim, reader, nil).body["domain"])

		r = c.expect(200, "POST", path, reader, `{"scores":[{"domain":" logic ","score":49.5},{"domain":"ethics","score":50.4},{"domain":"unscored","score":0}]}`)
		second := r.body["calibrationId"].(string)
		require.Equal(t, "logic", r.body["domain"], "50 and 50: the first of the top scores")
		require.Equal(t, "logic", c.expect(200, "GET", "/api/v1/claims/"+claim, reader, nil).body["domain"])
		byDomain := c.expect(200, "GET", "/api/v1/claims?domain=logic", reader, nil).body["items"].([]any)
		require.Len(t, byDomain, 1)
		require.Equal(t, claim, byDomain[0].(map[string]any)["_id"])

		items := func(q string) []map[string]any {
			t.Helper()
			var out []map[string]any
			for _, it := range c.expect(200, "GET", path+q, reader, nil).body["items"].([]any) {
				out = append(out, it.(map[string]any))
			}
			return out
		}
		all := items("")
		require.Len(t, all, 2)
		require.Equal(t, second, all[0]["_id"], "newest first")
		require.Equal(t, first, all[1]["_id"])
		latest := all[0]
		createdAt, ok := latest["createdAt"].(float64)
		require.True(t, ok && createdAt > 0, "createdAt is Unix milliseconds: %v", latest["createdAt"])
		delete(latest, "createdAt")
		require.Equal(t, map[string]any{"_id": second, "claimId": claim, "total": float64(100), "domain": "logic",
			"scores":       []any{map[string]any{"domain": "logic", "score": float64(50)}, map[string]any{"domain": "ethics", "score": float64(50)}},
			"editorAuthId": readerID, "editorName": "reader"}, latest)
		for q, want := range map[string]int{"?limit=1": 1, "?limit=1.9": 1, "?limit=2": 2, "?limit=500": 2, "?limit=0": 2,
			"?limit=-3": 2, "?limit=abc": 2, "?limit=": 2, "?limit=Infinity": 2, "?limit=NaN": 2, "?limit=1e400": 2} {
			require.Len(t, items(q), want, q)
		}

		scores := func(entries ...string) string { return `{"scores":[` + strings.Join(entries, ",") + `]}` }
		many := make([]string, slots.MaxCalibrationScores+1)
		for i := range many {
			many[i] = fmt.Sprintf(`{"domain":"d%d","score":1}`, i)
		}
		const ccf = slots.CodeCalibrationFailed
		for body, want := range map[string]struct{ code, message string }{
			`{}`:                                    {"invalid_payload", "Missing scores"},
			`{"scores":null}`:                       {"invalid_payload", "Missing scores"},
			`{"scores":"statistics"}`:               {"invalid_payload", "Missing scores"},
			`{"scores":{"domain":"a","score":100}}`: {"invalid_payload", "Missing scores"},
			`{"scores":[]}`:                         {ccf, "At least one domain is required"},
			scores(`{"domain":"  ","score":100}`, `{"domain":"a","score":0}`):  {ccf, "At least one domain is required"},
			scores(`{"domain":"a","score":100.5}`):                             {ccf, "Scores must be between 0 and 100"},
			scores(`{"domain":"a","score":100}`, `{"domain":"b","score":-1}`):  {ccf, "Scores must be between 0 and 100"},
			scores(`{"domain":"a","score":50}`, `{"domain":" a","score":50}`):  {ccf, "Duplicate domain"},
			scores(`{"domain":"a","score":60}`, `{"domain":"b","score":30}`):   {ccf, "Scores must sum to 100"},
			scores(`{"domain":"a","score":60}`, `{"domain":"b","score":40.5}`): {ccf, "Scores must sum to 100"},
			scores(many...): {"too_many_scores", "at most 100 scores may be given"},
			scores(`{"domain":"` + strings.Repeat("x", slots.MaxDomainLen+1) + `","score":100}`): {"invalid_domain", "domain is 101 characters long; the limit is 100"},
		} {
			r := c.expect(400, "POST", path, reader, body)
			require.Equal(t, want.code, r.errCode(t), body)
			require.Equal(t, want.message, r.body["error"].(map[string]any)["message"], body)
		}
		for _, body := range []string{scores(`{"domain":1,"score":100}`), scores(`{"domain":"a","score":"100"}`), scores(`7`),
			scores(`{"domain":"a","score":1e400}`), `{"scores":[`, ``} {
			require.Equal(t, "invalid_json", c.expect(400, "POST", path, reader, body).errCode(t), body)
		}
		// Text the server refuses in any body (httpjson.CheckJSONText).
		require.Equal(t, "invalid_text", c.expect(400, "POST", path, reader, scores(`{"domain":"a\u0000b","score":100}`)).errCode(t))
		require.Len(t, items(""), 2, "a refused calibration stores nothing")
		require.Equal(t, "logic", c.expect(200, "GET", "/api/v1/claims/"+claim, reader, nil).body["domain"])

		valid := scores(`{"domain":"a","score":100}`)
		for _, method := range []string{"POST", "GET"} {
			require.Equal(t, "claim_not_found", c.expect(404, method, "/api/v1/claims/claim_missing/calibrations", reader, valid).errCode(t))
			for _, token := range []string{"", "not-a-key"} {
				require.Equal(t, tokenCode(token), c.expect(401, method, path, token, valid).errCode(t), "%s %q", method, token)
			}
		}
	})
}
