package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/store/storetest"
)

// openAPI is the document loaded and validated by kin-openapi, and its
// router, built once.
var openAPI = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI())
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

var openAPIRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openAPI()
	if err != nil {
		return nil, err
	}
	return gorillamux.NewRouter(doc)
})

// TestOpenAPIDocument: the document is OpenAPI 3.1 that kin-openapi loads
// and validates, and its handler serves it.
func TestOpenAPIDocument(t *testing.T) {
	doc, err := openAPI()
	require.NoError(t, err)
	require.True(t, doc.IsOpenAPI31OrLater(), doc.OpenAPI)
	take := doc.Paths.Find("/api/v1/claims/{claimId}/slots/{slotId}/take").Post
	require.NotNil(t, take)
	require.Equal(t, openapi3.SecurityRequirements{{"apiKey": {}}}, *take.Security)
	require.NotNil(t, take.Responses.Default(), "the error body")

	rec := httptest.NewRecorder()
	httpapi.OpenAPIHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/openapi.json", nil))
	require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	require.JSONEq(t, string(httpapi.OpenAPI()), rec.Body.String())
	rec = httptest.NewRecorder()
	httpapi.OpenAPIHandler().ServeHTTP(rec, httptest.NewRequest("POST", "/openapi.json", nil))
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}

// TestOpenAPIRoutesAreTheMuxRoutes: on every backend, the document's
// operations are exactly the routes every handler registers.
func TestOpenAPIRoutesAreTheMuxRoutes(t *testing.T) {
	doc, err := openAPI()
	require.NoError(t, err)
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	slices.Sort(documented)
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		handlers := everyHandler(t, st)
		handlers["health"] = httpapi.HealthHandler("test", func(context.Context) error { return nil })
		served := map[string]bool{}
		for _, h := range handlers {
			for _, r := range h.(interface{ Routes() []string }).Routes() {
				served[r] = true
			}
		}
		require.Equal(t, slices.Sorted(maps.Keys(served)), documented)
	})
}

// validated wraps h so that every answer to a request the document
// describes is checked against it (checkAnswer), and every request it
// accepted too (checkAccepted). Streams pass through
// unchecked: the document says only their media type.
func validated(t *testing.T, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/events") || strings.HasSuffix(r.URL.Path, "/stream") {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		r.Body = io.NopCloser(bytes.NewReader(body))
		described, err := checkAnswer(r, rec)
		if err != nil {
			t.Errorf("%s %s answered %d %s, which the OpenAPI document does not describe: %v", r.Method, r.URL.Path, rec.Code, rec.Body, err)
		}
		// The handlers also read a JSON body sent without Content-Type,
		// which the document (application/json) does not describe.
		if described && rec.Code < 300 && (len(body) == 0 || r.Header.Get("Content-Type") != "") {
			if err := checkAccepted(r); err != nil {
				t.Errorf("%s %s was accepted, but the OpenAPI document does not describe it: %v", r.Method, r.URL, err)
			}
		}
	})
}

// checkAccepted checks a request a handler accepted against the document
// with kin-openapi's request validator: the document's request bodies and
// parameters describe what the handlers take.
func checkAccepted(r *http.Request) error {
	router, err := openAPIRouter()
	if err != nil {
		return err
	}
	route, params, err := router.FindRoute(r)
	if err != nil {
		return err
	}
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}})
}

// checkAnswer checks the answer rec to r against the document with
// kin-openapi's response validator; described is false when the document
// has no operation for r (a page, a wrong method).
func checkAnswer(r *http.Request, rec *httptest.ResponseRecorder) (described bool, err error) {
	router, err := openAPIRouter()
	if err != nil {
		return false, err
	}
	route, params, err := router.FindRoute(r)
	if err != nil {
		return false, nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
		Status:                 rec.Code,
		Header:                 rec.Header(),
		Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if rec.Code == http.StatusNoContent || r.Method == http.MethodHead || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		in.Options.ExcludeResponseBody = true
	}
	return true, openapi3filter.ValidateResponse(context.Background(), in)
}

// TestOpenAPIChecksAnswers: the validator the suite's servers use refuses
// an answer or a request the document does not describe, and knows the
// operations.
func TestOpenAPIChecksAnswers(t *testing.T) {
	answer := func(status int, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		rec.Header().Set("Content-Type", "application/json")
		rec.WriteHeader(status)
		rec.WriteString(body)
		return rec
	}
	take := httptest.NewRequest("POST", "/api/v1/claims/c1/slots/s1/take", nil)
	for _, ok := range []*httptest.ResponseRecorder{
		answer(200, `{"ok":true,"slotId":"s1","role":"critic","claimId":"c1"}`),
		answer(409, `{"error":{"code":"slot_taken","message":"m"},"detail":"m"}`),
	} {
		described, err := checkAnswer(take, ok)
		require.True(t, described)
		require.NoError(t, err)
	}
	for what, bad := range map[string]*httptest.ResponseRecorder{
		"a wrong type":                   answer(200, `{"ok":"yes","slotId":"s1","role":"critic","claimId":"c1"}`),
		"a required field missing":       answer(200, `{"ok":true,"slotId":"s1","role":"critic"}`),
		"an error body of another shape": answer(409, `{"error":"slot_taken"}`),
	} {
		described, err := checkAnswer(take, bad)
		require.True(t, described)
		require.Error(t, err, what)
	}
	described, err := checkAnswer(httptest.NewRequest("GET", "/jobs", nil), answer(200, `{}`))
	require.False(t, described, "a page is no operation")
	require.NoError(t, err)

	comment := func(body string) *http.Request {
		r := httptest.NewRequest("POST", "/api/v1/claims/c1/comments", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	require.NoError(t, checkAccepted(comment(`{"body":"b","commentType":"review"}`)))
	require.Error(t, checkAccepted(comment(`{"body":5}`)), "a request body of another shape")
}

// TestOpenAPIOperationIDs: every operation has a unique ID that reads as
// a verb and what it acts on ("takeSlot", "listGames"), every operation
// declares its security, and every error answer it lists has the error
// body.
func TestOpenAPIOperationIDs(t *testing.T) {
	t.Parallel()
	doc, err := openAPI()
	require.NoError(t, err)
	verbs := []string{"add", "advance", "approve", "argue", "cancel", "close", "configure", "create", "decide", "delete",
		"find", "finish", "get", "list", "peek", "poll", "post", "register", "release", "resolve", "respond", "revoke",
		"send", "start", "stream", "take", "tick"}
	seen := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			require.Regexp(t, `^[a-z]+([A-Z][a-z]*)*$`, op.OperationID, where)
			require.False(t, seen[op.OperationID], "%s: operation ID %s twice", where, op.OperationID)
			seen[op.OperationID] = true
			verb := op.OperationID
			if i := strings.IndexFunc(verb, func(r rune) bool { return r >= 'A' && r <= 'Z' }); i > 0 {
				verb = verb[:i]
			}
			require.Contains(t, verbs, verb, "%s: %s does not start with a verb", where, op.OperationID)
			require.NotNil(t, op.Security, "%s declares no security", where)
			require.NotNil(t, op.Responses.Value("400"), "%s: no 400", where)
			require.NotNil(t, op.Responses.Value("503"), "%s: no 503", where)
			for status, r := range op.Responses.Map() {
				if status[0] == '4' || status[0] == '5' {
					if body := r.Value.Content.Get("application/json"); body != nil && status != "409" && status != "503" {
						require.Equal(t, "#/components/schemas/Error", body.Schema.Ref, "%s: %s", where, status)
					}
				}
			}
		}
	}
	for name := range doc.Components.Schemas {
		require.Regexp(t, `^[A-Z][A-Za-z0-9]*$`, name, "a component named after a Go type's exported name")
	}
}
