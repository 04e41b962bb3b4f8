// Package httpapi serves Agora's documented HTTP routes as http.Handlers that
// a host mounts on any mux:
//
//	ids := identity.New(st, identity.WithAdminKey(token), identity.WithScopes(httpapi.Scopes()))
//	mux := http.NewServeMux()
//	mux.Handle("/api/v1/", httpapi.Slots(slotsService, ids))
//
// Each route authenticates its request once, with ids (the one
// authenticator of every API), and puts the caller in the request's context
// (identity.NewContext); the handler decodes, calls one service method,
// which reads the caller and decides who may act, and encodes.
//
// Each handler takes options of its own type (SlotsOption, ArenaOption,
// …), so an option it would not read does not compile with it. Package
// httpapi/server assembles all of them, /mcp, the consoles, health and a
// front door in one call.
//
// Every answer is JSON. Errors have one shape,
//
//	{"error": {"code": "slot_taken", "message": "slot is already taken"}}
//
// and one place, internal/httpjson.WriteError, turns the domain's sentinel
// errors into status codes: store.ErrInvalid 400, ErrUnauthorized 401, ErrForbidden 403,
// ErrNotFound 404, ErrConflict 409. Bodies over 1 MiB are refused with 413,
// unknown JSON fields and malformed JSON with 400, and a key over its rate
// limit with 429 and Retry-After.
//
// AgentChat serves the coding-agent chat (package agentchat): its API under
// /agent/, guarded by a scheme of package chatauth rather than API keys,
// and its page at /chat; InterceptChat puts both in front of a host's
// application.
//
// OpenAPI returns the OpenAPI 3.1 document of every route of these
// handlers, and OpenAPIHandler serves it:
//
//	mux.Handle("/openapi.json", httpapi.OpenAPIHandler())
//
// Each part's routes, bodies, states and errors are described in words in
// the repository's docs/ (docs/slots.md, docs/prism.md, docs/arena.md,
// docs/discussion.md, docs/agentchat.md); docs/security.md says what is
// open and how to close it.
package httpapi
