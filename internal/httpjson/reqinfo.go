package httpjson

import "context"

// RequestInfo is what the handlers learn about a request that the
// middleware wrapped around them (the observe package's request log,
// metrics and spans) reports once the request is answered: the pattern of
// the route that served it and the ID of the API key that authenticated
// it. A middleware puts one in the request's context with WithRequestInfo;
// Router fills in the pattern, httpapi the key's ID. Only the goroutine
// serving the request writes it, before the handler returns.
type RequestInfo struct {
	// RequestID is the ID the middleware gave the request.
	RequestID string
	// Pattern is the ServeMux pattern of the route, "POST
	// /api/v1/claims/{claimId}/slots/{slotId}/take": never the raw path.
	Pattern string
	// KeyID is the ID of the API key the request authenticated with; ""
	// when none did.
	KeyID string
}

type requestInfoKey struct{}

// WithRequestInfo returns ctx carrying ri, which the handlers fill in.
func WithRequestInfo(ctx context.Context, ri *RequestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, ri)
}

// RequestInfoFrom returns the RequestInfo of ctx, or nil when no
// middleware put one there.
func RequestInfoFrom(ctx context.Context) *RequestInfo {
	ri, _ := ctx.Value(requestInfoKey{}).(*RequestInfo)
	return ri
}

// notePattern records pattern as the route of the request, when a
// middleware asked for it.
func notePattern(ctx context.Context, pattern string) {
	if ri := RequestInfoFrom(ctx); ri != nil {
		ri.Pattern = pattern
	}
}

// Scope is a context carrying a RequestInfo, for a middleware that keeps
// both in one allocation of its own: it embeds a Scope, sets Context to
// the request's context, and gives the request &scope (WithRequestInfo
// would allocate a context of its own).
type Scope struct {
	context.Context
	Info RequestInfo // what RequestInfoFrom returns a pointer to
}

// Value implements context.Context: the Scope's RequestInfo for
// RequestInfoFrom, else what its Context holds.
func (s *Scope) Value(key any) any {
	if key == (requestInfoKey{}) {
		return &s.Info
	}
	return s.Context.Value(key)
}
