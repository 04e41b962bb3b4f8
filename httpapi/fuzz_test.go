package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// fuzzStatus fails unless a fuzzed request was answered with one of the
// statuses a client may get for its own input.
func fuzzStatus(t *testing.T, body string, rec *httptest.ResponseRecorder, ok ...int) {
	t.Helper()
	for _, s := range append(ok, 400, 404, 409, 413) {
		if rec.Code == s {
			if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
				t.Fatalf("body %q: %d answered %q", body, rec.Code, rec.Header().Get("Content-Type"))
			}
			return
		}
	}
	t.Fatalf("body %q: status %d: %s", body, rec.Code, rec.Body)
}

// FuzzConfigureSlots throws arbitrary bodies at the configure route: the
// answer is 201 or a 4xx with the error shape, never a 500 or a panic.
func FuzzConfigureSlots(f *testing.F) {
	for _, s := range []string{
		`{"roles":[{"role":"critic","count":2}]}`, `{"roles":[]}`, `{"roles":[{"role":"critic","count":1e400}]}`,
		`{"roles":[{"role":"critic","count":-0}]}`, `{"roles":null}`, `[]`, `{`, `{"roles":[{"role":"critic","count":9007199254740993}]}`,
	} {
		f.Add(s)
	}
	st := memstore.New()
	svc := slots.New(st)
	ids := identity.New(st, identity.WithAdminKey(adminToken), identity.WithScopes(httpapi.Scopes()))
	h := httpapi.Slots(svc, ids, httpapi.WithLimiter(nil))
	claim, err := svc.CreateClaim(f.Context(), slots.NewClaim{Title: "fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest("POST", "/api/v1/claims/"+claim.ID+"/slots", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+adminToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fuzzStatus(t, body, rec, http.StatusCreated)
	})
}

// FuzzCreatePrompt does the same for discussion prompts.
func FuzzCreatePrompt(f *testing.F) {
	for _, s := range []string{
		`{"requester_agent":"A","prompt_message":"?"}`, `{"requester_agent":"A","prompt_message":"?","required_responses":2.0}`,
		`{"task_id":null,"requester_agent":"A","prompt_message":"?","timeout_minutes":"5"}`, `{"required_responses":-1}`,
	} {
		f.Add(s)
	}
	h := httpapi.Discussion(discussion.New(memstore.New()))
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest("POST", "/api/discussion", strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fuzzStatus(t, body, rec, http.StatusCreated)
	})
}
