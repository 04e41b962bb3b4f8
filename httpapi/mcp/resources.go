package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// The resources' URIs: a claim with its comments, seats and pipeline, a
// game's state, a discussion prompt.
const (
	claimURI  = "agora://claims/"
	gameURI   = "agora://games/"
	promptURI = "agora://prompts/"
)

// ClaimResource is what agora://claims/{claim_id} holds.
type ClaimResource struct {
	Claim    wire.Claim      `json:"claim"`    // as GET /api/v1/claims/{id} answers it
	Comments []wire.Comment  `json:"comments"` // oldest first; [] when none
	Slots    []wire.RoleSlot `json:"slots"`    // its role seats in creation order; [] when none
	// Pipeline is the claim's Prism pipeline, absent when it has none.
	Pipeline *wire.Pipeline `json:"pipeline,omitempty"`
}

// resources adds the resource templates to s.
func (e *edge) resources(s *sdk.Server) {
	add := func(uri, name, desc string, read func(ctx context.Context, id string) (any, error)) {
		s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: uri + "{id}", Name: name, Description: desc, MIMEType: "application/json"},
			func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				if _, err := e.caller(ctx, req.Extra); err != nil {
					return nil, e.toolError(ctx, name, err)
				}
				uri := req.Params.URI
				v, err := read(ctx, strings.TrimPrefix(uri, uriPrefix(uri)))
				if errors.Is(err, store.ErrNotFound) {
					return nil, resourceNotFound(uri)
				}
				if err != nil {
					return nil, e.toolError(ctx, name, err)
				}
				b, err := json.Marshal(v)
				if err != nil {
					return nil, err
				}
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
			})
	}
	add(claimURI, "claim", "A claim with its comments, its role seats and, when it has one, its Prism pipeline; subscribe to hear when any of them changes.", e.readClaim)
	if e.Arena != nil {
		add(gameURI, "game", "An arena game's state, as game_state shows it; subscribe to hear every change.", func(ctx context.Context, id string) (any, error) {
			g, err := e.Arena.Game(ctx, id)
			if err != nil {
				return nil, err
			}
			return httpapi.ViewGameState(g), nil
		})
	}
	if e.Discussion != nil {
		add(promptURI, "prompt", "A squad prompt with the answers collected so far; subscribe to hear each new answer and when it closes.", func(ctx context.Context, id string) (any, error) {
			p, err := e.Discussion.Get(ctx, id)
			if err != nil {
				return nil, err
			}
			return httpapi.ViewPrompt(p), nil
		})
	}
}

// resourceNotFound is the protocol's error for a resource uri that is not
// there, sdk.ResourceNotFoundError's with its data JSON: that one quotes
// the URI as Go does, "\x01" for a control character, which is no JSON, and
// the answer carrying it would end the client's session.
func resourceNotFound(uri string) error {
	data, _ := json.Marshal(struct { // a string field: never an error
		URI string `json:"uri"`
	}{uri})
	return &jsonrpc.Error{Code: sdk.CodeResourceNotFound, Message: "Resource not found", Data: data}
}

// wellFormedErrors is a receiving middleware that mends the SDK's own
// not-found error of an unknown resource read, whose data is no JSON when
// the URI holds a control character or a NUL: its answer would end the
// client's session.
func wellFormedErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Data == nil || json.Valid(rpc.Data) {
			return res, err
		}
		if p, ok := req.GetParams().(*sdk.ReadResourceParams); ok && p != nil && rpc.Code == sdk.CodeResourceNotFound {
			return res, resourceNotFound(p.URI)
		}
		return res, &jsonrpc.Error{Code: rpc.Code, Message: rpc.Message}
	}
}

// uriPrefix is the resource family of uri, "" when none.
func uriPrefix(uri string) string {
	for _, p := range []string{claimURI, gameURI, promptURI} {
		if strings.HasPrefix(uri, p) {
			return p
		}
	}
	return ""
}

func (e *edge) readClaim(ctx context.Context, id string) (any, error) {
	c, err := e.Slots.Claim(ctx, id)
	if err != nil {
		return nil, err
	}
	cs, err := e.Slots.Comments(ctx, id, slots.CommentsParams{Sort: slots.CommentsOld, Limit: slots.MaxCommentsLimit})
	if err != nil {
		return nil, err
	}
	ss, err := e.Slots.Slots(ctx, id)
	if err != nil {
		return nil, err
	}
	out := ClaimResource{Claim: httpapi.ViewClaim(c), Comments: make([]wire.Comment, len(cs)), Slots: make([]wire.RoleSlot, len(ss))}
	for i, cm := range cs {
		out.Comments[i] = httpapi.ViewComment(cm)
	}
	for i, s := range ss {
		out.Slots[i] = httpapi.ViewRoleSlot(s)
	}
	if e.Prism != nil {
		p, err := e.Prism.Pipeline(ctx, id)
		switch {
		case err == nil:
			v := httpapi.ViewPipeline(p)
			out.Pipeline = &v
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	return out, nil
}

// watches follows, for each resource some session subscribes to, the
// notifier topic its changes are published on, and tells the server the
// resource was updated; a resource's watch ends when its last subscriber
// unsubscribes or goes away.
type watches struct {
	e      *edge
	server *sdk.Server
	mu     sync.Mutex
	byURI  map[string]*watch
	// held is the URIs each session follows, at most MaxSubscriptions. A
	// session is here from its first subscription until it ends, watched
	// for its end by one goroutine, however often it subscribes.
	held map[*sdk.ServerSession]map[string]bool
}

// MaxSubscriptions is the most resources one session follows at once: a
// subscription holds a notifier subscription and a goroutine until it
// ends, so a session's subscriptions are bounded like its other state.
// One more is refused with too_many_subscriptions.
const MaxSubscriptions = 256

// watch is one resource's: its subscribers and how to stop following it.
// A subscriber is arming from the moment its subscribe request reaches the
// handler until the server has recorded it (and would send it updates); a
// change heard meanwhile is missed, and told again once none is arming.
type watch struct {
	sessions map[*sdk.ServerSession]bool
	stop     context.CancelFunc
	arming   int
	missed   bool
}

// subscription is what a subscriber of uri follows: the topic's
// subscription and whether an event's hint concerns uri.
func (w *watches) subscription(ctx context.Context, uri string) (*store.Subscription, func(hint []byte) bool, error) {
	id := strings.TrimPrefix(uri, uriPrefix(uri))
	mine := func(hint []byte) bool { return len(hint) == 0 || string(hint) == id }
	switch uriPrefix(uri) {
	case claimURI:
		sub, err := w.e.Slots.SubscribeClaims(ctx)
		return sub, mine, err
	case gameURI:
		if w.e.Arena != nil {
			sub, err := w.e.Arena.Subscribe(ctx, id)
			return sub, func([]byte) bool { return true }, err
		}
	case promptURI:
		if w.e.Discussion != nil {
			sub, err := w.e.Discussion.SubscribeSquad(ctx)
			return sub, mine, err
		}
	}
	return nil, nil, resourceNotFound(uri)
}

func (w *watches) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	if _, err := w.e.caller(ctx, req.Extra); err != nil {
		return w.e.toolError(ctx, "subscribe", err)
	}
	uri := req.Params.URI
	w.mu.Lock()
	defer w.mu.Unlock()
	wt := w.byURI[uri]
	if (wt == nil || !wt.sessions[req.Session]) && len(w.held[req.Session]) >= MaxSubscriptions {
		return w.e.toolError(ctx, "subscribe", store.Errorf(store.ErrConflict, "too_many_subscriptions",
			"a session follows at most %d resources at once; unsubscribe from one first", MaxSubscriptions))
	}
	if wt == nil {
		// The watch outlives the request that starts it.
		wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		sub, concerns, err := w.subscription(wctx, uri)
		if err != nil {
			stop()
			return err
		}
		wt = &watch{sessions: map[*sdk.ServerSession]bool{}, stop: stop}
		w.byURI[uri] = wt
		go w.follow(wctx, uri, sub, concerns)
	}
	if !wt.sessions[req.Session] {
		wt.sessions[req.Session] = true
		if w.held[req.Session] == nil {
			w.held[req.Session] = map[string]bool{}
			go w.ended(req.Session)
		}
		w.held[req.Session][uri] = true
		wt.arming++
	}
	return nil
}

// ended waits for ss to end, then ends its subscriptions.
func (w *watches) ended(ss *sdk.ServerSession) {
	_ = ss.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	for uri := range w.held[ss] {
		w.releaseLocked(uri, ss)
	}
	delete(w.held, ss)
}

// attach makes s the server w tells of changes, and ends each
// subscriber's arming once s has recorded it, whichever way the protocol
// subscribed it.
func (w *watches) attach(s *sdk.Server) {
	w.server = s
	s.AddReceivingMiddleware(w.armed, wellFormedErrors)
	s.AddSendingMiddleware(w.acknowledged)
}

// armed is a receiving middleware: once the server has recorded a
// resources/subscribe request's subscription, a change of its resource
// missed while it was arming is told.
func (w *watches) armed(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if sub, ok := req.(*sdk.SubscribeRequest); ok && method == "resources/subscribe" && sub.Params != nil {
			w.recorded(ctx, sub.Params.URI)
		}
		return res, err
	}
}

// acknowledged is a sending middleware doing armed's work for the
// protocol's subscriptions/listen (2026-07-28), which subscribes a
// stream's resources without a resources/subscribe request and records
// them before it sends their acknowledgement: a change missed while they
// were arming is told once that is sent.
func (w *watches) acknowledged(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if method != "notifications/subscriptions/acknowledged" {
			return res, err
		}
		if p, ok := req.GetParams().(*sdk.SubscriptionsAcknowledgedParams); ok && p != nil {
			for _, uri := range p.Notifications.ResourceSubscriptions {
				w.recorded(ctx, uri)
			}
		}
		return res, err
	}
}

// recorded ends the arming of one subscriber of uri, now recorded by the
// server, and tells uri's change if one was missed while the last of its
// subscribers was arming.
func (w *watches) recorded(ctx context.Context, uri string) {
	tell := false
	w.mu.Lock()
	if wt := w.byURI[uri]; wt != nil && wt.arming > 0 {
		wt.arming--
		tell, wt.missed = wt.missed && wt.arming == 0, wt.missed && wt.arming > 0
	}
	w.mu.Unlock()
	if tell {
		_ = w.server.ResourceUpdated(context.WithoutCancel(ctx), &sdk.ResourceUpdatedNotificationParams{URI: uri})
	}
}

func (w *watches) unsubscribe(_ context.Context, req *sdk.UnsubscribeRequest) error {
	w.release(req.Params.URI, req.Session)
	return nil
}

// release ends ss's subscription to uri, and the watch with its last.
func (w *watches) release(uri string, ss *sdk.ServerSession) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.releaseLocked(uri, ss)
}

// releaseLocked is release with w.mu held.
func (w *watches) releaseLocked(uri string, ss *sdk.ServerSession) {
	wt := w.byURI[uri]
	if wt == nil || !wt.sessions[ss] {
		return
	}
	delete(wt.sessions, ss)
	delete(w.held[ss], uri)
	if len(wt.sessions) == 0 {
		wt.stop()
		delete(w.byURI, uri)
	}
}

// follow tells the server uri changed on every event of sub that concerns
// it, until ctx ends.
func (w *watches) follow(ctx context.Context, uri string, sub *store.Subscription, concerns func([]byte) bool) {
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case hint, ok := <-sub.C:
			if !ok {
				return
			}
			if !concerns(hint) {
				continue
			}
			w.mu.Lock()
			if wt := w.byURI[uri]; wt != nil && wt.arming > 0 {
				wt.missed = true
			}
			w.mu.Unlock()
			_ = w.server.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: uri})
		}
	}
}
