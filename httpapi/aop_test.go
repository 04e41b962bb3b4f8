package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/storetest"
)

const adminToken = "test-admin-token"

type apiClient struct {
	t   *testing.T
	srv *httptest.Server
}

func newAPI(t *testing.T, st storetest.Stores, opts ...httpapi.SlotsOption) *apiClient {
	t.Helper()
	svc := slots.New(st.Slots)
	ids := identity.New(st.Identity, identity.WithAdminKey(adminToken), identity.WithScopes(httpapi.Scopes()))
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", httpapi.Slots(svc, ids, opts...))
	srv := httptest.NewServer(validated(t, mux))
	t.Cleanup(srv.Close)
	return &apiClient{t: t, srv: srv}
}

type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// errCode returns the code of an error body, failing the test when the body
// does not have the documented error shape or its code header (the
// original's X-Aop-Error-Code) says otherwise.
func (r response) errCode(t *testing.T) string {
	t.Helper()
	e, ok := r.body["error"].(map[string]any)
	require.True(t, ok, "error body %s", r.raw)
	require.NotEmpty(t, e["message"], "error message in %s", r.raw)
	code, _ := e["code"].(string)
	require.NotEmpty(t, code, "error code in %s", r.raw)
	require.Equal(t, code, r.header.Get("X-Aop-Error-Code"), "the code header of %s", r.raw)
	return code
}

func (c *apiClient) do(method, path, token string, body any) response {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		require.NoError(c.t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.srv.URL+path, rd)
	require.NoError(c.t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.srv.Client().Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	out := response{status: res.StatusCode, header: res.Header, raw: string(data)}
	if len(data) > 0 {
		require.Equal(c.t, "application/json; charset=utf-8", res.Header.Get("Content-Type"), "%s %s: %s", method, path, data)
		var v any
		require.NoError(c.t, json.Unmarshal(data, &v), "%s %s answered %q", method, path, data)
		out.body, _ = v.(map[string]any) // an array answer stays in raw
	}
	return out
}

// expect asserts the status (and, for errors, the error shape).
func (c *apiClient) expect(status int, method, path, token string, body any) response {
	c.t.Helper()
	r := c.do(method, path, token, body)
	require.Equal(c.t, status, r.status, "%s %s: %s", method, path, r.raw)
	if status >= 400 {
		r.errCode(c.t)
	}
	return r
}

func (c *apiClient) key(name string, scopes ...identity.Scope) (id, token string) {
	c.t.Helper()
	r := c.expect(201, "POST", "/api/v1/keys", adminToken, map[string]any{"name": name, "scopes": scopes})
	return r.body["_id"].(string), r.body["key"].(string)
}

func (c *apiClient) claim(token, domain string) string {
	c.t.Helper()
	r := c.expect(201, "POST", "/api/v1/claims", token, map[string]any{"title": "Vaccines do not cause autism", "body": "...", "domain": domain})
	return r.body["_id"].(string)
}

// tokenCode is the code of a 401 for token: the original's missing_token
// when none is given, invalid_api_key for one that is not a key.
func tokenCode(token string) string {
	if token == "" {
		return "missing_token"
	}
	return "invalid_api_key"
}

func TestAuthentication(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		for _, tok := range []string{"", "wrong", "agora.key_x.y"} {
			r := c.expect(401, "GET", "/api/v1/me", tok, nil)
			require.Equal(t, tokenCode(tok), r.errCode(t), "the original's codes")
		}
		r := c.expect(401, "GET", "/api/v1/me", "", nil)
		require.Equal(t, "Missing bearer token", r.body["error"].(map[string]any)["message"])
		id, tok := c.key("Skeptic-7", slots.ScopeCommentCreate)
		me := c.expect(200, "GET", "/api/v1/me", tok, nil).body
		require.Equal(t, id, me["_id"])
		require.Equal(t, "Skeptic-7", me["name"])
		require.Equal(t, []any{"comment:create"}, me["scopes"])
		require.EqualValues(t, 0, me["balance"])

		// Lower-case scheme works too; anything but Bearer does not.
		req, _ := http.NewRequest("GET", c.srv.URL+"/api/v1/me", nil)
		req.Header.Set("Authorization", "bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, 200, res.StatusCode)
		req.Header.Set("Authorization", "Basic "+tok)
		res, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, 401, res.StatusCode)

		c.expect(204, "DELETE", "/api/v1/keys/"+id, adminToken, nil)
		c.expect(401, "GET", "/api/v1/me", tok, nil)
		c.expect(204, "DELETE", "/api/v1/keys/"+id, adminToken, nil)
		c.expect(404, "DELETE", "/api/v1/keys/key_missing", adminToken, nil)
	})
}

func TestKeys(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		r := c.expect(201, "POST", "/api/v1/keys", adminToken, map[string]any{
			"name": "Skeptic-7", "avatarUrl": "https://example.com/a.png", "scopes": []string{"comment:create", "slots:configure"},
		})
		for _, f := range []string{"_id", "key", "name", "avatarUrl", "scopes", "createdAt"} {
			require.Contains(t, r.body, f)
		}
		require.Equal(t, "https://example.com/a.png", r.body["avatarUrl"])
		token := r.body["key"].(string)

		list := c.expect(200, "GET", "/api/v1/keys", adminToken, nil)
		items := list.body["items"].([]any)
		require.Len(t, items, 1)
		require.NotContains(t, list.raw, token, "the secret is shown once")
		require.NotContains(t, items[0], "key")
		require.Equal(t, r.body["_id"], items[0].(map[string]any)["_id"])

		_, plain := c.key("plain")
		c.expect(403, "POST", "/api/v1/keys", plain, map[string]any{"name": "x"})
		c.expect(403, "GET", "/api/v1/keys", plain, nil)
		c.expect(403, "DELETE", "/api/v1/keys/"+r.body["_id"].(string), plain, nil)

		for _, bad := range []any{
			map[string]any{"name": ""},
			map[string]any{"name": "x", "scopes": []string{"root"}},
			map[string]any{"name": "x", "avatarUrl": "javascript:alert(1)"},
			map[string]any{"name": strings.Repeat("n", 101)},
			map[string]any{"name": "x", "scopes": "comment:create"},
		} {
			c.expect(400, "POST", "/api/v1/keys", adminToken, bad)
		}
	})
}

func TestClaimsAndComments(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		_, creator := c.key("creator", slots.ScopeClaimCreate)
		_, writer := c.key("writer", slots.ScopeCommentCreate)

		r := c.expect(201, "POST", "/api/v1/claims", creator, map[string]any{"title": "T", "body": "B"})
		claim := r.body
		require.Equal(t, "calibrating", claim["domain"])
		for _, f := range []string{"_id", "title", "body", "domain", "createdAt"} {
			require.Contains(t, claim, f)
		}
		id := claim["_id"].(string)
		require.Equal(t, claim, c.expect(200, "GET", "/api/v1/claims/"+id, writer, nil).body)
		c.expect(404, "GET", "/api/v1/claims/claim_missing", writer, nil)
		c.expect(403, "POST", "/api/v1/claims", writer, map[string]any{"title": "T"})
		c.expect(400, "POST", "/api/v1/claims", creator, map[string]any{"body": "no title"})
		// No pipeline server: a protocol is refused, and no claim stands
		// (the paging below finds two).
		r = c.expect(400, "POST", "/api/v1/claims", creator, map[string]any{"title": "T", "protocol": "prism-v1"})
		require.Equal(t, "invalid_protocol", r.errCode(t))
		require.Contains(t, r.raw, "this server runs no deliberation pipeline; omit protocol")

		second := c.claim(creator, "physics")
		page := c.expect(200, "GET", "/api/v1/claims?limit=1", writer, nil).body
		require.Equal(t, second, page["items"].([]any)[0].(map[string]any)["_id"])
		cursor := page["nextCursor"].(string)
		page = c.expect(200, "GET", "/api/v1/claims?limit=1&cursor="+cursor, writer, nil).body
		require.Equal(t, id, page["items"].([]any)[0].(map[string]any)["_id"])
		require.Contains(t, page, "nextCursor", "the original's lists always carry it")
		require.Nil(t, page["nextCursor"], "null on the last page")
		// The original refuses no limit: not a number or below 1 is the
		// default, a large one the most a page holds.
		for _, loose := range []string{"0", "-1", "abc", "1000"} {
			require.Len(t, c.expect(200, "GET", "/api/v1/claims?limit="+loose, writer, nil).body["items"], 2, loose)
		}

		cm := c.expect(200, "POST", "/api/v1/claims/"+id+"/comments", writer, map[string]any{"body": "why?", "commentType": "Question"}).body
		require.Equal(t, "question", cm["commentType"])
		require.Equal(t, id, cm["claimId"])
		require.Equal(t, "writer", cm["agentName"])
		for _, f := range []string{"_id", "claimId", "body", "commentType", "authorId", "agentName", "createdAt"} {
			require.Contains(t, cm, f)
		}
		cm2 := c.expect(200, "POST", "/api/v1/claims/"+id+"/comments", writer, map[string]any{"body": "more"}).body
		require.Equal(t, "addition", cm2["commentType"])
		r = c.expect(400, "POST", "/api/v1/claims/"+id+"/comments", writer, map[string]any{"body": "x", "commentType": "rant"})
		require.Equal(t, "invalid_comment_type", r.errCode(t))
		c.expect(400, "POST", "/api/v1/claims/"+id+"/comments", writer, map[string]any{"body": ""})
		c.expect(404, "POST", "/api/v1/claims/claim_missing/comments", writer, map[string]any{"body": "x"})
		c.expect(403, "POST", "/api/v1/claims/"+id+"/comments", creator, map[string]any{"body": "x"})
		// Creating a comment also answers the original's {ok, commentId};
		// the listing shows the comment itself.
		for _, m := range []map[string]any{cm, cm2} {
			require.Equal(t, true, m["ok"])
			require.Equal(t, m["_id"], m["commentId"])
			delete(m, "ok")
			delete(m, "commentId")
		}
		items := c.expect(200, "GET", "/api/v1/claims/"+id+"/comments?sort=old", creator, nil).body["items"].([]any)
		require.Equal(t, []any{cm, cm2}, items)
		empty := c.expect(200, "GET", "/api/v1/claims/"+second+"/comments", creator, nil)
		require.JSONEq(t, `{"items":[],"nextCursor":null}`, empty.raw)
		c.expect(404, "GET", "/api/v1/claims/claim_missing/comments", creator, nil)
	})
}

// TestClaimSources: a claim created with sources — URL strings or
// {url, title}, as AOP's clients send them — answers them as objects on
// create, read, list and in a job; one without has an empty list; too many
// or a URL that is not http(s) is a 400, as is a source of any other form.
func TestClaimSources(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		_, creator := c.key("creator", slots.ScopeClaimCreate)
		_, writer := c.key("writer", slots.ScopeCommentCreate, slots.ScopeSlotsConfigure)

		claim := c.expect(201, "POST", "/api/v1/claims", creator, map[string]any{"title": "T", "body": "B", "sources": []any{
			"https://www.who.int/news-room/fact-sheets/detail/climate-change-and-health",
			map[string]any{"url": "https://ipcc.ch", "title": "IPCC"},
			map[string]any{"url": "https://ipcc.ch/"},
			"",
		}}).body
		want := []any{
			map[string]any{"url": "https://www.who.int/news-room/fact-sheets/detail/climate-change-and-health"},
			map[string]any{"url": "https://ipcc.ch/", "title": "IPCC"},
		}
		require.Equal(t, want, claim["sources"])
		id := claim["_id"].(string)
		require.Equal(t, claim, c.expect(200, "GET", "/api/v1/claims/"+id, writer, nil).body)
		require.Equal(t, want, c.expect(200, "GET", "/api/v1/claims", writer, nil).body["items"].([]any)[0].(map[string]any)["sources"])
		c.expect(201, "POST", "/api/v1/claims/"+id+"/slots", writer, map[string]any{"roles": []any{map[string]any{"role": "critic", "count": 1}}})
		c.expect(200, "POST", "/api/v1/claims/"+id+"/comments", writer, map[string]any{"body": "a draft", "commentType": "draft"})
		job := c.expect(200, "GET", "/api/v1/jobs/slots", writer, nil).body
		require.Equal(t, want, job["claim"].(map[string]any)["sources"], "the job's claim, which the agent CLIs print")

		none := c.expect(201, "POST", "/api/v1/claims", creator, map[string]any{"title": "T"})
		require.Contains(t, none.raw, `"sources":[]`)

		many := make([]string, slots.MaxSources+1)
		for i := range many {
			many[i] = fmt.Sprint("https://example.com/", i)
		}
		r := c.expect(400, "POST", "/api/v1/claims", creator, map[string]any{"title": "T", "sources": many})
		require.Equal(t, "invalid_sources", r.errCode(t))
		require.Contains(t, r.raw, "Too many sources (max 20)")
		r = c.expect(400, "POST", "/api/v1/claims", creator, map[string]any{"title": "T", "sources": []any{"ftp://example.com/x"}})
		require.Contains(t, r.raw, "Invalid source URL: ftp://example.com/x")
		for _, bad := range []any{42, []any{42}, []any{map[string]any{"href": "https://example.com/"}}, []any{map[string]any{"url": 1}}, "https://example.com/"} {
			r = c.expect(400, "POST", "/api/v1/claims", creator, map[string]any{"title": "T", "sources": bad})
			require.Equal(t, "invalid_json", r.errCode(t), "%v", bad)
		}
	})
}

// TestRoleSlotsWorkflow walks the agent loop of docs/slots.md, checking every
// documented answer on the way.
func TestRoleSlotsWorkflow(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		_, human := c.key("human", slots.ScopeSlotsConfigure, slots.ScopeClaimCreate, slots.ScopeCommentCreate)
		aID, a := c.key("Skeptic-7", slots.ScopeCommentCreate)
		_, b := c.key("Other", slots.ScopeCommentCreate)
		_, reader := c.key("reader")
		claim := c.claim(human, "medicine")
		slotsPath := "/api/v1/claims/" + claim + "/slots"

		cfg := c.expect(201, "POST", slotsPath, human, map[string]any{"roles": []any{
			map[string]any{"role": "critic", "count": 2},
			map[string]any{"role": "questioner", "count": 1},
			map[string]any{"role": "supporter", "count": 1},
		}})
		require.JSONEq(t, `{"ok":true,"created":4}`, cfg.raw)
		c.expect(403, "POST", slotsPath, a, map[string]any{"roles": []any{map[string]any{"role": "critic", "count": 1}}})
		c.expect(404, "POST", "/api/v1/claims/claim_missing/slots", human, map[string]any{"roles": []any{map[string]any{"role": "critic", "count": 1}}})

		listed := c.expect(200, "GET", slotsPath, reader, nil).body["items"].([]any)
		require.Len(t, listed, 4)
		first := listed[0].(map[string]any)
		require.Equal(t, "critic", first["role"])
		require.Equal(t, "open", first["status"])
		require.Equal(t, claim, first["claimId"])
		require.NotContains(t, first, "agentName")
		c.expect(404, "GET", "/api/v1/claims/claim_missing/slots", reader, nil)

		// No draft yet: the job queue has nothing.
		r := c.expect(404, "GET", "/api/v1/jobs/slots", a, nil)
		require.Equal(t, "no_open_slots", r.errCode(t))
		c.expect(200, "POST", "/api/v1/claims/"+claim+"/comments", human, map[string]any{"body": "draft", "commentType": "draft"})

		job := c.expect(200, "GET", "/api/v1/jobs/slots?role=critic&domain=medicine", a, nil).body
		slot := job["slot"].(map[string]any)
		require.Equal(t, first["_id"], slot["_id"])
		require.Equal(t, claim, job["claim"].(map[string]any)["_id"])
		require.Len(t, job["comments"].([]any), 1)
		q := c.expect(200, "GET", "/api/v1/jobs/slots?role=questioner&strategy=random", a, nil).body
		require.Equal(t, "questioner", q["slot"].(map[string]any)["role"])
		c.expect(404, "GET", "/api/v1/jobs/slots?domain=physics", a, nil)
		c.expect(400, "GET", "/api/v1/jobs/slots?strategy=best", a, nil)
		c.expect(400, "GET", "/api/v1/jobs/slots?role=judge", a, nil)

		slotID := slot["_id"].(string)
		take := c.expect(200, "POST", slotsPath+"/"+slotID+"/take", a, nil)
		require.JSONEq(t, fmt.Sprintf(`{"ok":true,"slotId":%q,"role":"critic","claimId":%q}`, slotID, claim), take.raw)
		r = c.expect(409, "POST", slotsPath+"/"+slotID+"/take", b, nil)
		require.Equal(t, "slot_taken", r.errCode(t))
		other := listed[1].(map[string]any)["_id"].(string)
		r = c.expect(409, "POST", slotsPath+"/"+other+"/take", a, nil)
		require.Equal(t, "slot_held", r.errCode(t))
		c.expect(404, "POST", slotsPath+"/slot_missing/take", a, nil)
		c.expect(403, "POST", slotsPath+"/"+other+"/take", reader, nil)

		listed = c.expect(200, "GET", slotsPath, reader, nil).body["items"].([]any)
		taken := listed[0].(map[string]any)
		require.Equal(t, "taken", taken["status"])
		require.Equal(t, "Skeptic-7", taken["agentName"])
		require.Equal(t, aID, taken["apiKeyId"])
		require.Contains(t, taken, "takenAt")

		c.expect(200, "POST", "/api/v1/claims/"+claim+"/comments", a, map[string]any{"body": "a criticism", "commentType": "criticism"})
		r = c.expect(403, "POST", slotsPath+"/"+slotID+"/done", b, nil)
		require.Equal(t, "not_slot_owner", r.errCode(t))
		r = c.expect(400, "POST", slotsPath+"/"+other+"/done", b, nil)
		require.Equal(t, "slot_not_taken", r.errCode(t))
		c.expect(404, "POST", slotsPath+"/slot_missing/done", a, nil)
		c.expect(403, "POST", slotsPath+"/"+slotID+"/done", reader, nil)
		done := c.expect(200, "POST", slotsPath+"/"+slotID+"/done", a, nil)
		require.JSONEq(t, `{"ok":true}`, done.raw)
		c.expect(400, "POST", slotsPath+"/"+slotID+"/done", a, nil)
		require.EqualValues(t, 10, c.expect(200, "GET", "/api/v1/me", a, nil).body["balance"])

		listed = c.expect(200, "GET", slotsPath, reader, nil).body["items"].([]any)
		require.Equal(t, "done", listed[0].(map[string]any)["status"])
		require.Contains(t, listed[0], "doneAt")
	})
}

func TestConfigureValidation(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		_, human := c.key("human", slots.ScopeSlotsConfigure, slots.ScopeClaimCreate)
		path := "/api/v1/claims/" + c.claim(human, "") + "/slots"
		for name, body := range map[string]string{
			"invalid role":  `{"roles":[{"role":"judge","count":1}]}`,
			"float count":   `{"roles":[{"role":"critic","count":1.5}]}`,
			"string count":  `{"roles":[{"role":"critic","count":"2"}]}`,
			"null count":    `{"roles":[{"role":"critic","count":null}]}`,
			"missing count": `{"roles":[{"role":"critic"}]}`,
			"zero count":    `{"roles":[{"role":"critic","count":0}]}`,
			"total > 20":    `{"roles":[{"role":"critic","count":12},{"role":"defender","count":9}]}`,
			"total < 1":     `{"roles":[]}`,
			"no roles":      `{}`,
			"malformed":     `{"roles":[`,
			"not an object": `[1,2]`,
			"trailing data": `{"roles":[{"role":"critic","count":1}]} {}`,
			"empty body":    ``,
		} {
			r := c.do("POST", path, human, body)
			require.Equal(t, 400, r.status, "%s: %s", name, r.raw)
			r.errCode(t)
		}
		require.JSONEq(t, `{"items":[],"nextCursor":null}`, c.expect(200, "GET", path, human, nil).raw, "nothing half-written")
		// Fields the route does not read are ignored, as the original
		// ignores them.
		c.expect(201, "POST", path, human, `{"roles":[{"role":"critic","count":1,"x":1}],"extra":true}`)
		c.expect(201, "POST", path, human, `{"roles":[{"role":"critic","count":2.0},{"role":"answerer","count":18}]}`)
	})
}

func TestOversizeBody(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		_, human := c.key("human", slots.ScopeClaimCreate)
		big := `{"title":"t","body":"` + strings.Repeat("x", httpapi.MaxBodyBytes) + `"}`
		r := c.expect(413, "POST", "/api/v1/claims", human, big)
		require.Equal(t, "payload_too_large", r.errCode(t))
	})
}

func TestUnknownRoutesAndMethodsAnswerJSON(t *testing.T) {
	c := newAPI(t, testbackend.All()[0].New(t))
	r := c.expect(404, "GET", "/api/v1/nothing", adminToken, nil)
	require.Equal(t, "route_not_found", r.errCode(t))
	r = c.expect(405, "PUT", "/api/v1/claims", adminToken, nil)
	require.Equal(t, "method_not_allowed", r.errCode(t))
	require.Equal(t, "GET, POST", r.header.Get("Allow"))
	r = c.expect(405, "GET", "/api/v1/claims/c1/slots/s1/take", adminToken, nil)
	require.Equal(t, "POST", r.header.Get("Allow"))
}

func TestRateLimit(t *testing.T) {
	c := newAPI(t, testbackend.All()[0].New(t), httpapi.WithLimiter(httpapi.NewLocalLimiter(0.001, 2)))
	_, human := c.key("human", slots.ScopeClaimCreate, slots.ScopeCommentCreate)
	claim := c.claim(adminToken, "")
	path := "/api/v1/claims/" + claim + "/comments"
	c.expect(200, "POST", path, human, map[string]any{"body": "1"})
	c.expect(200, "POST", path, human, map[string]any{"body": "2"})
	r := c.expect(429, "POST", path, human, map[string]any{"body": "3"})
	require.Equal(t, "comment_create_limited", r.errCode(t), "the original's code for a comment")
	require.NotEmpty(t, r.header.Get("Retry-After"))
	r = c.expect(429, "POST", "/api/v1/claims/"+claim+"/slots/slot_x/take", human, nil)
	require.Equal(t, "rate_limited", r.errCode(t))
	// Reads are not limited, and other keys have their own bucket.
	c.expect(200, "GET", path, human, nil)
	_, other := c.key("other", slots.ScopeCommentCreate)
	c.expect(200, "POST", path, other, map[string]any{"body": "4"})
	// Creating claims counts too.
	_, maker := c.key("maker", slots.ScopeClaimCreate)
	c.claim(maker, "")
	c.claim(maker, "")
	r = c.expect(429, "POST", "/api/v1/claims", maker, map[string]any{"title": "one too many"})
	require.Equal(t, "claim_create_limited", r.errCode(t), "the original's code for a claim")
}

// allScopes is every scope a key may carry on a server of every API, in
// the order an unknown scope's error lists them: each domain's, then the
// original's scopes that guard routes Agora does not serve.
var allScopes = []string{"slots:configure", "comment:create", "claim:create", "keys:admin", "pipeline:review", "consensus:write",
	"arena:play", "arena:admin", "discussion:write", "discussion:admin",
	"classification:write", "policy:write", "output:write"}

// TestScopesKeepTheirOrder: httpapi.Scopes, gathered from each domain's
// declaration, is the wire's list in its order, so the unknown-scope
// error says what it said.
func TestScopesKeepTheirOrder(t *testing.T) {
	all, aliases := httpapi.Scopes()
	got := make([]string, len(all))
	for i, s := range all {
		got[i] = string(s)
	}
	require.Equal(t, allScopes, got)
	require.Equal(t, map[identity.Scope]identity.Scope{"claim:new": slots.ScopeClaimCreate}, aliases)
	c := newAPI(t, testbackend.All()[0].New(t))
	r := c.expect(400, "POST", "/api/v1/keys", adminToken, map[string]any{"name": "x", "scopes": []string{"root"}})
	require.Equal(t, "invalid_scope", r.errCode(t))
	require.Equal(t, `unknown scope "root"; scopes are `+strings.Join(allScopes, ", ")+` (claim:new is claim:create)`,
		r.body["error"].(map[string]any)["message"])
}

// TestKeysAdminGrantsOnlyItsOwn: a key holding keys:admin creates keys and
// approves device logins with the scopes it holds itself and no others, so
// it cannot mint a key stronger than itself; the admin key holds them all.
func TestKeysAdminGrantsOnlyItsOwn(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		_, keeper := c.key("keeper", identity.ScopeKeysAdmin, slots.ScopeCommentCreate)
		r := c.expect(403, "POST", "/api/v1/keys", keeper, map[string]any{"name": "escalated", "scopes": allScopes})
		require.Equal(t, "insufficient_scope", r.errCode(t))
		c.expect(403, "POST", "/api/v1/keys", keeper, map[string]any{"name": "escalated", "scopes": []string{"claim:new"}})
		c.expect(201, "POST", "/api/v1/keys", keeper, map[string]any{"name": "worker", "scopes": []string{"comment:create"}})
		c.expect(201, "POST", "/api/v1/keys", keeper, map[string]any{"name": "deputy", "scopes": []string{"keys:admin", "comment:create"}})
		c.expect(201, "POST", "/api/v1/keys", adminToken, map[string]any{"name": "all", "scopes": allScopes})

		code := c.expect(200, "POST", "/api/v1/auth/device-code", "", map[string]any{"scopes": []string{"claim:create"}, "agentName": "cli"}).body
		user := code["userCode"].(string)
		require.Equal(t, "insufficient_scope", c.expect(403, "POST", "/api/v1/auth/device-codes/"+user+"/approve", keeper, nil).errCode(t))
		c.expect(200, "POST", "/api/v1/auth/device-codes/"+user+"/approve", adminToken, nil)
	})
}

// TestKeyNamesAreUnique: a key's name is who it is in a discussion, so a
// second key of the same name is 409 key_name_taken, revoked or not.
func TestKeyNamesAreUnique(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newAPI(t, st)
		id, _ := c.key("dupname", slots.ScopeCommentCreate)
		r := c.expect(409, "POST", "/api/v1/keys", adminToken, map[string]any{"name": "dupname"})
		require.Equal(t, "key_name_taken", r.errCode(t))
		c.expect(204, "DELETE", "/api/v1/keys/"+id, adminToken, nil)
		c.expect(409, "POST", "/api/v1/keys", adminToken, map[string]any{"name": "dupname"})
		c.expect(409, "POST", "/api/v1/keys", adminToken, map[string]any{"name": "admin"})
	})
}
