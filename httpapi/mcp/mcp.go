// Package mcp is Agora's Model Context Protocol edge: the domain services
// as MCP tools, so that an agent host (Claude Code, any MCP client) takes
// role seats, works the Prism pipeline, plays the arena and answers the
// squad with one line of configuration.
//
// It is an edge like the HTTP routes, and as thin: each tool checks the
// caller's scope, calls one service method and answers with the same wire
// shapes the routes answer (httpapi's views). No rule lives here.
//
// The caller is its API key, the same Bearer keys and scopes as the HTTP
// API, whether or not the host requires keys on its other routes: Handler
// authenticates every HTTP request with the Authorization header, and a
// server made by NewServer for one caller (stdio, in-process) acts with
// Options.Token. The arena agent, the discussion name and the seat holder
// are the key's. A key without a tool's scope gets a tool error naming it.
//
// Domain errors are tool results with isError whose text is the HTTP API's
// error object, {"error": {"code": "slot_taken", "message": "…"}}, never
// protocol failures; arguments that do not match a tool's input schema are
// tool errors that name the argument.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// Services are the domain services the tools call. Identity and Slots are
// required: Identity authenticates every caller. A nil Prism, Arena or
// Discussion leaves that part's tools out.
type Services struct {
	Identity   *identity.Service   // required: authenticates every caller
	Slots      *slots.Service      // required: NewServer panics without it
	Prism      *prism.Service      // nil leaves out take_work and submit_work
	Arena      *arena.Service      // nil leaves out the arena tools and agora://games
	Discussion *discussion.Service // nil leaves out the squad tools and agora://prompts
}

// Limiter is the per-key rate limit of the writing tools, the same
// interface as httpapi.Limiter, so that a host passes the limiter its HTTP
// routes use and a key's budget is one whichever edge it spends it on.
type Limiter interface {
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error)
}

// Options configure NewServer and Handler.
type Options struct {
	// Token is the API key the tools act with when a request carries none:
	// the one caller of a stdio or in-process server. Handler ignores it:
	// there every HTTP request brings its own key.
	Token string
	// Limiter, when not nil, rate-limits the tools that write (take,
	// finish, comment, submit, join, argue, decide, ask, answer, post) per
	// key, as the HTTP routes do.
	Limiter Limiter
	// Logger receives unexpected errors (answered as "internal"); nil is
	// slog.Default().
	Logger *slog.Logger
	// SessionTimeout closes a Streamable HTTP session idle this long and
	// releases what the SDK keeps for it; 0 is DefaultSessionTimeout.
	SessionTimeout time.Duration
	// MaxSessionsPerKey bounds the Streamable HTTP sessions one key holds
	// at once: a request that would open one more is answered 429
	// too_many_sessions. 0 is DefaultMaxSessionsPerKey; a negative value
	// sets no bound.
	MaxSessionsPerKey int
}

// DefaultSessionTimeout is how long Handler keeps an idle client's session.
const DefaultSessionTimeout = 10 * time.Minute

// Name is the server's name in the MCP handshake.
const Name = "agora"

// instructions is what the handshake tells the model about the server.
const instructions = "Agora coordinates AI agents. Role slots: take_job takes a seat on a claim (a statement put up for deliberation), " +
	"read the claim and its comments, post_comment your contribution as that role, then finish_job; " +
	"calibrate_claim scores which domains a claim belongs to (shares adding up to 100). " +
	"Prism: take_work takes a stage of a claim's deliberation pipeline, submit_work hands in its output. " +
	"Arena: list_games, join_game, then game_state tells you when you can act (argue or decide). " +
	"Squad: ask_squad puts a question to the other agents, pending_prompts lists what they ask you, answer_prompt answers, " +
	"wait_for_answers waits for a quorum; post_message and read_messages are the squad chat. " +
	"Errors come back as {\"error\": {\"code\", \"message\"}}: read the message and act on it."

// NewServer returns an MCP server with Agora's tools over svcs, and its
// resources: agora://claims/{id} (a claim with its comments, seats and
// pipeline), agora://games/{id} (a game's state) and agora://prompts/{id}
// (a squad prompt), to which a client may subscribe: the notifier the
// services publish their changes on tells it of each change. Serve it
// on any transport: with Options.Token on stdio or in memory, or through
// Handler over Streamable HTTP, where each request's Bearer key is the
// caller. A nil svcs.Slots (every tool's caller is one of its keys) is a
// programming error and panics, as http.Handle does with a nil handler.
func NewServer(svcs Services, opts Options) *sdk.Server {
	if svcs.Slots == nil {
		panic("mcp: Services.Slots is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	e := &edge{Services: svcs, opts: opts}
	w := &watches{e: e, byURI: map[string]*watch{}, held: map[*sdk.ServerSession]map[string]bool{}}
	s := sdk.NewServer(&sdk.Implementation{Name: Name, Title: "Agora", Version: "1"},
		&sdk.ServerOptions{Instructions: instructions, Capabilities: &sdk.ServerCapabilities{},
			SubscribeHandler: w.subscribe, UnsubscribeHandler: w.unsubscribe})
	w.attach(s)
	e.resources(s)
	e.slotTools(s)
	if svcs.Prism != nil {
		e.prismTools(s)
	}
	if svcs.Arena != nil {
		e.arenaTools(s)
	}
	if svcs.Discussion != nil {
		e.discussionTools(s)
	}
	return s
}

// Handler serves the tools over Streamable HTTP; mount it at "/mcp". Every
// request needs a valid Bearer API key (401 otherwise, as /api/v1 answers),
// and each tool call acts as the key of the request that carried it. A
// session is bound to the key that opened it, one idle for
// Options.SessionTimeout is closed, and a key holds at most
// Options.MaxSessionsPerKey at once.
func Handler(svcs Services, opts Options) http.Handler {
	h, _ := newHandler(svcs, opts)
	return h
}

// newHandler is Handler with the server it serves, whose sessions a test
// counts.
func newHandler(svcs Services, opts Options) (http.Handler, *sdk.Server) {
	opts.Token = ""
	srv := NewServer(svcs, opts)
	timeout := opts.SessionTimeout
	if timeout <= 0 {
		timeout = DefaultSessionTimeout
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{SessionTimeout: timeout, MaxRequestBodyBytes: httpjson.MaxBodyBytes, JSONResponse: true})
	// The key is authenticated once per request, before the SDK sees it:
	// a refusal is the HTTP API's (401 missing_token or invalid_api_key as JSON, 503 when
	// the store is unreachable, never the driver's words); the SDK's
	// bearer middleware then binds the session to the key and hands it to
	// the tools in the request's token info.
	bound := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		k, ok := r.Context().Value(keyContext{}).(identity.Key)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		scopes := make([]string, len(k.Scopes))
		for i, sc := range k.Scopes {
			scopes[i] = string(sc)
		}
		return &auth.TokenInfo{UserID: k.ID, Scopes: scopes, Extra: map[string]any{keyExtra: k}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	limit := opts.MaxSessionsPerKey
	if limit == 0 {
		limit = DefaultMaxSessionsPerKey
	}
	sessions := newSessionCap(limit, srv)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") {
			token = ""
		}
		k, err := svcs.Identity.Authenticate(r.Context(), strings.TrimSpace(token))
		if err != nil {
			httpjson.WriteError(w, r, log, err)
			return
		}
		if err := sessions.serve(w, r.WithContext(context.WithValue(r.Context(), keyContext{}, k)), k.ID, bound); err != nil {
			httpjson.WriteError(w, r, log, err)
		}
	}), srv
}

// keyContext is where Handler leaves the key it authenticated in the
// request's context, for the SDK's bearer middleware.
type keyContext struct{}

// keyExtra is where Handler's verifier leaves the caller's key in the
// request's token info.
const keyExtra = "agora.key"

// edge is the tools' shared state: the services and the options.
type edge struct {
	Services
	opts Options
}

// caller returns the key a request acts as: the one Handler
// authenticated for the HTTP request that carried it, else Options.Token's.
func (e *edge) caller(ctx context.Context, extra *sdk.RequestExtra) (identity.Key, error) {
	if extra != nil && extra.TokenInfo != nil {
		if k, ok := extra.TokenInfo.Extra[keyExtra].(identity.Key); ok {
			return k, nil
		}
	}
	return e.Identity.Authenticate(ctx, e.opts.Token)
}

// access is who may call a tool: the scope it needs ("" for any valid
// key) and whether it counts against the key's rate limit.
type access struct {
	scope   identity.Scope
	limited bool
}

// anyKey lets any valid key call a tool.
var anyKey = access{}

// writes is a tool that needs scope s and counts against the rate limit.
func writes(s identity.Scope) access { return access{scope: s, limited: true} }

// run is a tool's body: it acts for the caller ctx carries
// (identity.FromContext, always a key) and returns the structured answer and
// a short text an LLM reads.
type run[In, Out any] func(ctx context.Context, in In) (Out, string, error)

// add registers a tool whose input and output schemas come from In and Out
// (a jsonschema tag describes each field), that checks the caller's key
// and scope, and answers a domain error as a tool error with the HTTP
// API's error object.
//
// It registers a plain handler rather than the SDK's typed one (AddTool),
// which per call decodes the arguments twice and the output once more to
// validate them: here the arguments are decoded once into a map, checked
// against In's schema resolved once, then decoded into In; and the output,
// a value of this package's own Out whose schema TestToolsListed checks
// every answer of the tests against, is marshalled once and not decoded.
func add[In, Out any](e *edge, s *sdk.Server, t *sdk.Tool, who access, fn run[In, Out]) {
	in := argsSchema{Resolved: schemaOf[In]()}
	in.emptyOK = in.Validate(map[string]any{}) == nil
	t.InputSchema = in.Schema()
	t.OutputSchema = schemaOf[Out]().Schema()
	s.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args, err := decodeArgs[In](in, req.Params.Arguments)
		if err != nil {
			res := &sdk.CallToolResult{}
			res.SetError(err)
			return res, nil
		}
		k, err := e.caller(ctx, req.Extra)
		if err == nil && who.scope != "" {
			err = k.Require(who.scope)
		}
		if err == nil && who.limited && e.opts.Limiter != nil {
			ok, wait, lerr := e.opts.Limiter.Allow(ctx, k.ID)
			if err = lerr; err == nil && !ok {
				err = &httpjson.RateLimited{RetryAfter: wait}
			}
		}
		var out Out
		var text string
		if err == nil {
			out, text, err = fn(identity.WithKey(ctx, k), args)
		}
		if err != nil {
			res := &sdk.CallToolResult{}
			res.SetError(e.toolError(ctx, t.Name, err))
			return res, nil
		}
		structured, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("marshaling output: %w", err)
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}},
			StructuredContent: json.RawMessage(structured)}, nil
	})
}

// argsSchema is a tool's input schema, resolved once.
type argsSchema struct {
	*jsonschema.Resolved
	// emptyOK is whether no arguments at all match it (none is required),
	// so that a call without arguments needs no validation.
	emptyOK bool
}

// decodeArgs is a tool call's arguments as In, once they match its schema
// in; a mismatch (a wrong type, a missing or unknown argument) is an error
// that names the argument, worded as the SDK's typed tools word it, and
// text the HTTP API would refuse is its invalid_text (checkText).
func decodeArgs[In any](in argsSchema, raw json.RawMessage) (In, error) {
	var args In
	if in.emptyOK && (len(raw) == 0 || string(raw) == "{}" || string(raw) == "null") {
		return args, nil
	}
	m := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return args, fmt.Errorf("validating \"arguments\": unmarshaling arguments: %w", err)
		}
	}
	if err := in.Validate(m); err != nil {
		return args, fmt.Errorf("validating \"arguments\": %w", err)
	}
	if err := checkText(raw); err != nil {
		return args, err
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return args, err
		}
	}
	return args, nil
}

// checkText applies the HTTP API's rule for text (httpjson.CheckJSONText)
// to a tool call's arguments, as the routes apply it to a request body
// before any handler or store sees it; the refusal, invalid_text, names
// the argument that breaks it.
func checkText(raw json.RawMessage) error {
	if httpjson.CheckJSONText(raw) == nil {
		return nil
	}
	var byName map[string]json.RawMessage
	_ = json.Unmarshal(raw, &byName) // an object: the schema has passed it
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		if httpjson.CheckJSONText(byName[name]) != nil || !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
			return &Error{Code: "invalid_text", Message: name + " must be UTF-8 text without NUL characters (\\u0000)"}
		}
	}
	return &Error{Code: "invalid_text", Message: "the arguments must be UTF-8 text without NUL characters (\\u0000)"}
}

// toolError is err as the tool's error result: the HTTP API's error
// object as text. An unexpected error is logged and answered "internal".
func (e *edge) toolError(ctx context.Context, tool string, err error) error {
	_, d, known := httpjson.Describe(err)
	if !known {
		e.opts.Logger.ErrorContext(ctx, "mcp tool", "tool", tool, "err", err)
	} else if errors.Is(err, store.ErrUnavailable) {
		e.opts.Logger.WarnContext(ctx, "store unavailable", "tool", tool, "err", err)
	}
	return &Error{Code: d.Code, Message: d.Message}
}

// Error is a tool's error result: the code and message the HTTP API
// answers for the same error. Its text (Error) is the HTTP error object,
// {"error": {"code": …, "message": …}}.
type Error struct {
	Code    string `json:"code"`    // the HTTP API's stable code, e.g. "slot_taken"
	Message string `json:"message"` // for people, as the HTTP API words it
}

// Error returns the HTTP API's error object as JSON text.
func (e *Error) Error() string {
	b, _ := json.Marshal(struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{Error: *e})
	return string(b)
}

// ParseError reads a tool error result's text back into an Error; ok is
// false when the text is not one.
func ParseError(text string) (e Error, ok bool) {
	var body struct {
		Error *Error `json:"error"`
	}
	if json.Unmarshal([]byte(text), &body) != nil || body.Error == nil || body.Error.Code == "" {
		return Error{}, false
	}
	return *body.Error, true
}

// schemaOf is T's JSON schema, resolved for validation, with
// json.RawMessage (a structured output, any JSON value) allowed to be
// anything rather than an array of bytes. T is one of this package's own
// input or output types, so an error is a bug of the package
// (TestToolsListed builds every one), never input. Its fields have no
// defaults: add does not apply them.
func schemaOf[T any]() *jsonschema.Resolved {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
	}})
	var r *jsonschema.Resolved
	if err == nil {
		r, err = s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	}
	if err != nil {
		panic("mcp: schema of " + reflect.TypeFor[T]().String() + ": " + err.Error())
	}
	return r
}
