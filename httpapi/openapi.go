package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/httpjson"
)

// access says who may call an operation.
type access int

const (
	// public: no key (the device login's first steps, the arena's skill
	// file and health, the health route).
	public access = iota
	// keyRequired: a Bearer API key, with the operation's scope if it has
	// one (the /api/v1 routes).
	keyRequired
	// keyIfRequired: open as the original describes it, a Bearer API key with
	// the operation's scope when the host requires keys (WithKeys).
	keyIfRequired
	// chatAuth: the agent chat's own auth scheme (WithChatAuth).
	chatAuth
)

// operation is one route of the document: what it takes, what it answers
// and who may call it. Request and response shapes are values of the Go
// types the handlers decode and write; their schemas are derived from
// those types, so a change of a wire struct changes the document.
type operation struct {
	// id is the operation's ID in the document: a verb and what it acts
	// on, in lower camel case ("takeSlot", "listGames"), which generated
	// clients name their methods after.
	id           string
	method, path string
	tag, summary string
	// query lists the query parameters, "name" (a string) or
	// "name:type" (integer, boolean), space-separated; all are optional.
	query string
	auth  access
	scope identity.Scope
	body  any // nil: no request body
	// optionalBody: the body may be left out (httpjson.DecodeOptional).
	optionalBody bool
	status       int // the success status
	resp         any // nil: no body (204)
	media        string
	// other answers with a body of their own besides the error body, by
	// status.
	other map[int]any
	// limited counts the route against the caller's rate limit (when it
	// is called with a key); limitCode is the code of its 429, when not
	// rate_limited.
	limited   bool
	limitCode string
	// fn serves the route once its caller is let in.
	fn func(http.ResponseWriter, *http.Request) error
}

// mount registers every operation of ops on rt, each behind what its auth
// says: keys checks the keys of keyRequired operations; keyIfRequired ones
// use the host's keys (WithKeys) when it has them; guard lets chatAuth
// operations in (nil: the agent chat's routes are open).
func (rt *router) mount(ops []operation, keys *identity.Service, guard func(func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error) {
	for _, op := range ops {
		rte := route{fn: op.fn}
		switch op.auth {
		case keyRequired:
			rte = route{auth: keys, scope: op.scope, limited: op.limited, limitCode: op.limitCode, fn: op.fn}
		case keyIfRequired:
			rte = rt.keyed(op.scope, op.limited, op.fn)
		case chatAuth:
			if guard != nil {
				rte.fn = guard(op.fn)
			}
		}
		rt.handle(op.method, op.path, rte)
	}
}

// The media types other than JSON some routes answer with.
const (
	mediaEvents   = "text/event-stream"
	mediaMarkdown = "text/markdown"
)

// The document's tags, one per route family.
const (
	tagAOP        = "aop"
	tagPrism      = "prism"
	tagArena      = "arena"
	tagDiscussion = "discussion"
	tagChat       = "agentchat"
	tagHealth     = "health"
)

// operations lists every route the handlers of this package register,
// from each domain's table: the table that mounts a route describes it.
// The handlers are method values of zero APIs, never called.
func operations() []operation {
	var a *slotsAPI
	var g *arenaAPI
	var d *discussionAPI
	var c *chatAPI
	var h *healthAPI
	return slices.Concat(a.routes(), a.prismRoutes(), g.routes(), d.routes(), c.routes(), h.routes())
}

// OpenAPI returns the OpenAPI 3.1 document of every route the handlers of
// this package (AOP with WithPrism, Arena, Discussion, AgentChat,
// HealthHandler) serve, as JSON: operations, request and response
// schemas, the error body and the Bearer API keys.
func OpenAPI() []byte {
	b, err := json.MarshalIndent(buildDocument(operations()), "", "  ")
	if err != nil { // the document holds only strings, numbers and maps
		return nil
	}
	return b
}

// OpenAPIHandler serves OpenAPI() as application/json: what a host mounts
// at GET /openapi.json.
func OpenAPIHandler() http.Handler {
	doc := OpenAPI()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			httpjson.Write(w, http.StatusMethodNotAllowed, httpjson.ErrorBody("method_not_allowed", "use GET"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(doc)
	})
}

// pathParams returns the {names} of a path pattern.
func pathParams(path string) []string {
	var out []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, strings.TrimSuffix(seg[1:], "}"))
		}
	}
	return out
}
