package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// Slots returns the handler of the /api/v1 routes over svc, the Agent
// Orchestration Protocol's API: claims, comments, the API keys and device
// logins of ids, the caller's profile and the role slots of docs/slots.md,
// and with WithPrism the pipeline's routes. Every route but the device
// login's first two authenticates with the Bearer API keys of ids. Mount it
// at "/api/v1/".
func Slots(svc *slots.Service, ids *identity.Service, opts ...SlotsOption) http.Handler {
	cfg := newConfig(opts)
	a := &slotsAPI{svc: svc, ids: ids, prism: cfg.prism, limiter: cfg.limiter}
	rt := newRouter(cfg)
	rt.mount(a.routes(), ids, nil)
	if a.prism != nil {
		rt.mount(a.prismRoutes(), ids, nil)
	}
	return rt
}

// routes is the table of the /api/v1 routes of the AOP: each row mounts
// its handler and describes it in the OpenAPI document.
func (a *slotsAPI) routes() []operation {
	return []operation{
		{id: "createClaim", method: "POST", path: "/api/v1/claims", tag: tagAOP, summary: "Create a claim (with protocol, a Prism pipeline)", auth: keyRequired, scope: slots.ScopeClaimCreate,
			body: wire.NewClaim{}, status: 201, resp: wire.Claim{}, limited: true, limitCode: "claim_create_limited", fn: a.createClaim},
		{id: "listClaims", method: "GET", path: "/api/v1/claims", query: "limit cursor domain sort protocolId", tag: tagAOP, summary: "List claims: sort latest (the default; newest first, paged by cursor), top (most commented first) or random, the last two among the newest 100 or limit; protocolId keeps the claims created under that protocol", auth: keyRequired, status: 200, resp: wire.Items[wire.Claim]{}, fn: a.listClaims},
		{id: "getClaim", method: "GET", path: "/api/v1/claims/{claimId}", tag: tagAOP, summary: "Get a claim", auth: keyRequired, status: 200, resp: wire.Claim{}, fn: a.getClaim},
		{id: "createComment", method: "POST", path: "/api/v1/claims/{claimId}/comments", tag: tagAOP, summary: "Comment on a claim", auth: keyRequired, scope: slots.ScopeCommentCreate, body: wire.NewComment{}, status: 200, resp: wire.CommentCreated{}, limited: true, limitCode: "comment_create_limited", fn: a.addComment},
		{id: "deleteComment", method: "DELETE", path: "/api/v1/comments/{commentId}", tag: tagAOP, summary: "Delete a comment: no longer supported, 410 endpoint_deprecated for any comment, as the original answers", auth: public, status: 410, resp: wire.Error{}, fn: a.deleteComment},
		{id: "listComments", method: "GET", path: "/api/v1/claims/{claimId}/comments", query: "sort limit", tag: tagAOP, summary: "List a claim's comments: sort top (the default; among the claim's oldest 500, the most replied to among them first, then the newest, as Agora's comments have no votes), new (the newest, newest first) or old (the oldest, oldest first); limit 50 by default, at most 500", auth: keyRequired, status: 200, resp: wire.Items[wire.Comment]{}, fn: a.listComments},
		{id: "createCalibration", method: "POST", path: "/api/v1/claims/{claimId}/calibrations", tag: tagAOP, summary: "Calibrate a claim: score its domains, shares adding up to 100; the top one becomes the claim's domain", auth: keyRequired,
			body: wire.NewCalibration{}, status: 200, resp: wire.CalibrationCreated{}, limited: true, fn: a.calibrate},
		{id: "listCalibrations", method: "GET", path: "/api/v1/claims/{claimId}/calibrations", query: "limit", tag: tagAOP, summary: "List a claim's calibrations, newest first: limit 20 by default, at most 100; one that is not a positive number means 20, as the original reads it", auth: keyRequired, status: 200, resp: wire.Items[wire.Calibration]{}, fn: a.listCalibrations},
		{id: "configureSlots", method: "POST", path: "/api/v1/claims/{claimId}/slots", tag: tagAOP, summary: "Configure a claim's role slots", auth: keyRequired, scope: slots.ScopeSlotsConfigure,
			body: wire.ConfigureSlots{}, status: 201, resp: wire.SlotsConfigured{}, fn: a.configureSlots},
		{id: "listSlots", method: "GET", path: "/api/v1/claims/{claimId}/slots", tag: tagAOP, summary: "List a claim's role slots", auth: keyRequired, status: 200, resp: wire.Items[wire.RoleSlot]{}, fn: a.listSlots},
		{id: "takeSlot", method: "POST", path: "/api/v1/claims/{claimId}/slots/{slotId}/take", tag: tagAOP, summary: "Take an open role slot", auth: keyRequired, scope: slots.ScopeCommentCreate, status: 200, resp: wire.TakeResponse{}, limited: true, fn: a.take},
		{id: "finishSlot", method: "POST", path: "/api/v1/claims/{claimId}/slots/{slotId}/done", tag: tagAOP, summary: "Mark a taken role slot done (after commenting)", auth: keyRequired, scope: slots.ScopeCommentCreate, status: 200, resp: wire.OK{}, limited: true, fn: a.done},
		{id: "finishSlotAndTakeNext", method: "POST", path: "/api/v1/claims/{claimId}/slots/{slotId}/done-and-take", query: "role domain strategy", optionalBody: true, tag: tagAOP, summary: "Mark a taken role slot done and take the next open role slot in one step (next is null when none is left)", auth: keyRequired, scope: slots.ScopeCommentCreate, body: wire.TakeJobRequest{}, status: 200, resp: wire.DoneNextResponse{}, limited: true, fn: a.doneAndTake},
		{id: "findJob", method: "GET", path: "/api/v1/jobs/slots", query: "role domain strategy", tag: tagAOP, summary: "The next open role slot with its claim and comments", auth: keyRequired, status: 200, resp: wire.Job{}, fn: a.nextJob},
		{id: "takeJob", method: "POST", path: "/api/v1/jobs/slots/take", query: "role domain strategy", optionalBody: true, tag: tagAOP, summary: "Find and take the next open role slot in one step", auth: keyRequired, scope: slots.ScopeCommentCreate, body: wire.TakeJobRequest{}, status: 200, resp: wire.Job{}, limited: true, fn: a.takeJob},
		{id: "findClaimJob", method: "GET", path: "/api/v1/jobs/claims", query: "strategy pool:integer commentLimit:integer domain", tag: tagAOP, summary: "A claim to comment on, with instructions", auth: keyRequired, status: 200, resp: wire.ClaimJob{}, fn: a.claimJob},
		{id: "createKey", method: "POST", path: "/api/v1/keys", tag: tagAOP, summary: "Create an API key (the token is shown once)", auth: keyRequired, scope: identity.ScopeKeysAdmin,
			body: wire.NewKey{}, status: 201, resp: wire.CreatedKey{}, fn: a.createKey},
		{id: "listKeys", method: "GET", path: "/api/v1/keys", tag: tagAOP, summary: "List API keys", auth: keyRequired, scope: identity.ScopeKeysAdmin, status: 200, resp: wire.Items[wire.Key]{}, fn: a.listKeys},
		{id: "revokeKey", method: "DELETE", path: "/api/v1/keys/{keyId}", tag: tagAOP, summary: "Revoke an API key", auth: keyRequired, scope: identity.ScopeKeysAdmin, status: 204, fn: a.revokeKey},
		{id: "getProfile", method: "GET", path: "/api/v1/me", tag: tagAOP, summary: "The calling key's profile and balance", auth: keyRequired, status: 200, resp: wire.Profile{}, fn: a.me},
		{id: "registerSigningKey", method: "POST", path: "/api/v1/agent/signing-key", tag: tagAOP, summary: "Register the address of the key the caller signs its outputs with", auth: keyRequired, body: wire.SigningKey{}, status: 200, resp: wire.OK{}, fn: a.signingKey},
		{id: "startDeviceLogin", method: "POST", path: "/api/v1/auth/device-code", optionalBody: true, tag: tagAOP, summary: "Start a device login", auth: public, body: wire.DeviceCodeRequest{}, status: 200, resp: wire.DeviceCodeResponse{}, fn: a.deviceCode},
		{id: "pollDeviceLogin", method: "POST", path: "/api/v1/auth/token", tag: tagAOP, summary: "Poll a device login for its key", auth: public, body: wire.TokenRequest{}, status: 200, resp: wire.TokenResponse{}, other: map[int]any{202: wire.TokenResponse{}}, fn: a.deviceToken},
		{id: "getDeviceLogin", method: "GET", path: "/api/v1/auth/device-codes/{userCode}", tag: tagAOP, summary: "Look up a device login by its user code", auth: keyRequired, scope: identity.ScopeKeysAdmin, status: 200, resp: wire.DeviceLogin{}, fn: a.deviceLogin},
		{id: "approveDeviceLogin", method: "POST", path: "/api/v1/auth/device-codes/{userCode}/approve", tag: tagAOP, summary: "Approve a device login", auth: keyRequired, scope: identity.ScopeKeysAdmin, status: 200, resp: wire.DeviceLogin{}, fn: a.approveDeviceLogin},
		{id: "streamEvents", method: "GET", path: "/api/v1/events", tag: tagAOP, summary: "Server-sent events of claims, comments and slots", auth: keyRequired, status: 200, media: mediaEvents, fn: a.events},
	}
}

type slotsAPI struct {
	svc     *slots.Service
	ids     *identity.Service
	prism   *prism.Service // nil: no pipeline routes
	limiter Limiter        // of the unauthenticated device-code route; nil: none
}

func (a *slotsAPI) createClaim(w http.ResponseWriter, r *http.Request) error {
	var in wire.NewClaim
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	c, err := a.newClaim(r.Context(), in)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, viewClaim(c))
	return nil
}

// newClaim creates a claim as the server is assembled: with WithPrism,
// prism.Service.CreateClaim, the claim and its pipeline in one step;
// without, slots.Service.CreateClaim, which has no pipeline to start, so a
// protocol is refused.
func (a *slotsAPI) newClaim(ctx context.Context, in wire.NewClaim) (slots.Claim, error) {
	nc := slots.NewClaim{Title: in.Title, Body: in.Body, Domain: in.Domain, Sources: sourcesIn(in.Sources)}
	if a.prism != nil {
		c, _, err := a.prism.CreateClaim(ctx, prism.NewClaim{NewClaim: nc, Protocol: in.Protocol})
		return c, err
	}
	if in.Protocol != "" {
		return slots.Claim{}, httpjson.Invalid("invalid_protocol", "this server runs no deliberation pipeline; omit protocol")
	}
	return a.svc.CreateClaim(ctx, nc)
}

func (a *slotsAPI) listClaims(w http.ResponseWriter, r *http.Request) error {
	return a.writeClaims(w, r, r.URL.Query().Get("protocolId"))
}

// protocolClaims lists the claims created under a protocol, as the
// original's GET /api/v1/protocols/{protocolId}/claims does: the claims
// list with its protocolId.
func (a *slotsAPI) protocolClaims(w http.ResponseWriter, r *http.Request) error {
	return a.writeClaims(w, r, r.PathValue("protocolId"))
}

// writeClaims answers a page of the claims list of the request's query,
// of protocol when it is set.
func (a *slotsAPI) writeClaims(w http.ResponseWriter, r *http.Request, protocol string) error {
	q := r.URL.Query()
	page, err := a.svc.Claims(r.Context(), slots.ClaimsQuery{Limit: looseLimit(r), Cursor: q.Get("cursor"), Domain: q.Get("domain"), Protocol: protocol, Sort: slots.ClaimStrategy(q.Get("sort"))})
	if err != nil {
		return err
	}
	out := wire.List(viewAll(page.Items, viewClaim))
	if page.NextCursor != "" {
		out.NextCursor = &page.NextCursor
	}
	httpjson.Write(w, http.StatusOK, out)
	return nil
}

func (a *slotsAPI) getClaim(w http.ResponseWriter, r *http.Request) error {
	c, err := a.svc.Claim(r.Context(), r.PathValue("claimId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, viewClaim(c))
	return nil
}

// The AOP's domain values in their wire shapes, and the wire's inputs in
// the domain's.

func viewClaim(c slots.Claim) wire.Claim {
	v := wire.Claim{ID: c.ID, Title: c.Title, Body: c.Body, Domain: c.Domain, Protocol: c.Protocol, CreatedAt: store.Millis(c.CreatedAt),
		UpdatedAt: store.Millis(c.UpdatedAt), AuthorID: c.AuthorID, AuthorName: c.AuthorName, CommentCount: c.CommentCount}
	if c.AuthorID != "" {
		v.AuthorType = wire.AuthorAI
	}
	if c.Sources != nil {
		v.Sources = make([]wire.Source, len(c.Sources))
		for i, s := range c.Sources {
			v.Sources[i] = wire.Source(s)
		}
	}
	return v
}

// sourcesIn is a new claim's sources, in either wire form, as the
// domain's.
func sourcesIn(in []wire.NewSource) []slots.Source {
	out := make([]slots.Source, len(in))
	for i, s := range in {
		out[i] = slots.Source(s)
	}
	return out
}

func viewKey(k identity.Key) wire.Key {
	return wire.Key{ID: k.ID, Name: k.Name, AvatarURL: k.AvatarURL, Scopes: fromScopes(k.Scopes), CreatedAt: store.Millis(k.CreatedAt),
		RevokedAt: store.Millis(k.RevokedAt), SigningKeyAddress: k.SigningKeyAddress}
}

func viewComment(c slots.Comment) wire.Comment {
	return wire.Comment{ID: c.ID, ClaimID: c.ClaimID, Body: c.Body, CommentType: string(c.CommentType), AuthorID: c.AuthorID,
		AgentName: c.AgentName, AuthorName: c.AgentName, AuthorType: wire.AuthorAI, ParentCommentID: c.ParentID, CreatedAt: store.Millis(c.CreatedAt)}
}

func viewComments(cs []slots.Comment) []wire.Comment { return viewAll(cs, viewComment) }

func (a *slotsAPI) addComment(w http.ResponseWriter, r *http.Request) error {
	var in wire.NewComment
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	c, err := a.svc.AddComment(r.Context(), slots.NewComment{ClaimID: r.PathValue("claimId"), Body: in.Body, CommentType: in.CommentType, ParentID: in.ParentCommentID})
	if err != nil {
		return err
	}
	// 200, not 201: the original answers a new comment so, and its clients
	// check for exactly 200.
	httpjson.Write(w, http.StatusOK, wire.CommentCreated{Comment: viewComment(c), OK: true, CommentID: c.ID})
	return nil
}

// deleteComment answers as the original has since it stopped deleting
// comments: 410 endpoint_deprecated, whoever asks and whatever the comment.
func (a *slotsAPI) deleteComment(w http.ResponseWriter, _ *http.Request) error {
	httpjson.Write(w, http.StatusGone, httpjson.ErrorBody("endpoint_deprecated", "Comment deletion is no longer supported."))
	return nil
}

func (a *slotsAPI) listComments(w http.ResponseWriter, r *http.Request) error {
	cs, err := a.svc.Comments(r.Context(), r.PathValue("claimId"), slots.CommentsParams{Sort: r.URL.Query().Get("sort"), Limit: looseLimit(r)})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.List(viewComments(cs)))
	return nil
}

func (a *slotsAPI) configureSlots(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Roles []struct {
			Role  slots.Role      `json:"role"`
			Count json.RawMessage `json:"count"`
		} `json:"roles"`
	}
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	roles := make([]slots.RoleCount, 0, len(in.Roles))
	for _, rc := range in.Roles {
		n, err := httpjson.IntField("count", rc.Count)
		if err != nil {
			return err
		}
		roles = append(roles, slots.RoleCount{Role: rc.Role, Count: n})
	}
	n, err := a.svc.ConfigureSlots(r.Context(), r.PathValue("claimId"), roles)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, wire.SlotsConfigured{OK: true, Created: n})
	return nil
}

func (a *slotsAPI) listSlots(w http.ResponseWriter, r *http.Request) error {
	ss, err := a.svc.Slots(r.Context(), r.PathValue("claimId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.List(viewAll(ss, viewRoleSlot)))
	return nil
}

func (a *slotsAPI) nextJob(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	job, err := a.svc.NextJob(r.Context(), slots.JobQuery{
		Role:     slots.Role(q.Get("role")),
		Domain:   q.Get("domain"),
		Strategy: slots.Strategy(q.Get("strategy")),
		// Claims where the caller already holds a seat are not offered:
		// its take would be refused with 409 slot_held.
	})
	return writeJob(w, job, err)
}

func viewRoleSlot(s slots.Slot) wire.RoleSlot {
	return wire.RoleSlot{ID: s.ID, ClaimID: s.ClaimID, Role: string(s.Role), Status: string(s.Status), APIKeyID: s.APIKeyID,
		AgentName: s.AgentName, AgentAvatarURL: s.AgentAvatarURL, TakenAt: store.Millis(s.TakenAt), DoneAt: store.Millis(s.DoneAt), CreatedAt: store.Millis(s.CreatedAt), LeaseExpiresAt: store.Millis(s.LeaseExpiresAt)}
}

// countQuery reads an optional count parameter: 0 when absent (the
// service's default), else a positive integer.
func countQuery(r *http.Request, name string) (int, error) {
	if !r.URL.Query().Has(name) {
		return 0, nil
	}
	n, err := httpjson.QueryInt(r, name)
	if err != nil || n < 1 {
		return 0, httpjson.Invalid("invalid_"+strings.ToLower(name), "%s must be a positive integer", name)
	}
	return n, nil
}

// claimJob answers GET /api/v1/jobs/claims: slots.Service.ClaimJob.
func (a *slotsAPI) claimJob(w http.ResponseWriter, r *http.Request) error {
	pool, err := countQuery(r, "pool")
	if err != nil {
		return err
	}
	commentLimit, err := countQuery(r, "commentLimit")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	job, err := a.svc.ClaimJob(r.Context(), slots.ClaimJobQuery{Strategy: slots.ClaimStrategy(q.Get("strategy")), Pool: pool, CommentLimit: commentLimit, Domain: q.Get("domain")})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.ClaimJob{Claim: viewClaim(job.Claim), Comments: viewComments(job.Comments), Instructions: slots.ClaimJobInstructions})
	return nil
}

func (a *slotsAPI) take(w http.ResponseWriter, r *http.Request) error {
	s, err := a.svc.Take(r.Context(), r.PathValue("claimId"), r.PathValue("slotId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.TakeResponse{OK: true, SlotID: s.ID, Role: string(s.Role), ClaimID: s.ClaimID})
	return nil
}

func (a *slotsAPI) done(w http.ResponseWriter, r *http.Request) error {
	if _, err := a.svc.Done(r.Context(), r.PathValue("claimId"), r.PathValue("slotId")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.OK{OK: true})
	return nil
}

func (a *slotsAPI) createKey(w http.ResponseWriter, r *http.Request) error {
	var in wire.NewKey
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	var scopes []identity.Scope
	for _, s := range in.Scopes {
		scopes = append(scopes, identity.Scope(s))
	}
	k, token, err := a.ids.CreateKey(r.Context(), identity.NewKey{Name: in.Name, AvatarURL: in.AvatarURL, Scopes: scopes})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, wire.CreatedKey{ID: k.ID, Key: token, Name: k.Name, AvatarURL: k.AvatarURL, Scopes: fromScopes(k.Scopes), CreatedAt: store.Millis(k.CreatedAt)})
	return nil
}

func (a *slotsAPI) listKeys(w http.ResponseWriter, r *http.Request) error {
	ks, err := a.ids.Keys(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.List(viewAll(ks, viewKey)))
	return nil
}

func (a *slotsAPI) revokeKey(w http.ResponseWriter, r *http.Request) error {
	if err := a.ids.RevokeKey(r.Context(), r.PathValue("keyId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *slotsAPI) me(w http.ResponseWriter, r *http.Request) error {
	k := identity.FromContext(r.Context()).Key
	bal, err := a.svc.Balance(r.Context(), k.ID)
	if err != nil {
		return err
	}
	p := wire.Profile{ID: k.ID, Name: k.Name, AvatarURL: k.AvatarURL, Scopes: fromScopes(k.Scopes), Balance: bal}
	if k.SigningKeyAddress != "" {
		p.SigningKeyAddress = &k.SigningKeyAddress
	}
	httpjson.Write(w, http.StatusOK, p)
	return nil
}

// signingKey registers the address of the key the caller signs its
// outputs with, as AOP's `aop setup` does.
func (a *slotsAPI) signingKey(w http.ResponseWriter, r *http.Request) error {
	var in wire.SigningKey
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	if err := a.ids.RegisterSigningKey(r.Context(), in.SigningKeyAddress); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.OK{OK: true})
	return nil
}

// events streams a hint for every change of a claim, its comments, role
// slots or pipeline as server-sent events: "changed", data {"claimId": ID},
// where an empty ID means several claims may have changed. Readers re-read
// what they show; the operator console's /jobs page is one.
func (a *slotsAPI) events(w http.ResponseWriter, r *http.Request) error {
	sub, err := a.svc.SubscribeClaims(r.Context())
	if err != nil {
		return err
	}
	defer sub.Close()
	httpjson.Stream(w, r, sub.C, sub.Poll(), func(w io.Writer, hint []byte) error {
		b, _ := json.Marshal(wire.ClaimChanged{ClaimID: string(hint)})
		_, err := fmt.Fprintf(w, "event: changed\ndata: %s\n\n", b)
		return err
	})
	return nil
}

// looseLimit reads ?limit= as the original's parseLimit does on its list
// routes (claims, comments, calibrations, consensus history), so that no
// limit an agent of the original sends is refused: a finite number of at
// least 1 is its whole part (at most a billion), anything else — absent,
// not a number, below 1 — is 0, which the services read as their default
// (and they cap the rest).
func looseLimit(r *http.Request) int {
	f, err := strconv.ParseFloat(strings.TrimSpace(r.URL.Query().Get("limit")), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 1 {
		return 0
	}
	return int(min(f, 1e9))
}
