package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// Slots returns the handler of the /api/v1 routes over svc, the Agent
// Orchestration Protocol's API: claims, comments, API keys, the caller's
// profile and the role slots of docs/slots.md, and with WithPrism the
// pipeline's routes. Mount it at "/api/v1/".
func Slots(svc *slots.Service, opts ...SlotsOption) http.Handler {
	cfg := newConfig(opts)
	a := &slotsAPI{svc: svc, prism: cfg.prism, limiter: cfg.limiter}
	rt := newRouter(cfg)
	auth := func(scope slots.Scope, limited bool, fn func(http.ResponseWriter, *http.Request) error) route {
		return route{auth: svc, scope: scope, limited: limited, fn: fn}
	}
	rt.handle("POST", "/api/v1/claims", auth(slots.ScopeClaimCreate, true, a.createClaim))
	rt.handle("GET", "/api/v1/claims", auth("", false, a.listClaims))
	rt.handle("GET", "/api/v1/claims/{claimId}", auth("", false, a.getClaim))
	rt.handle("POST", "/api/v1/claims/{claimId}/comments", auth(slots.ScopeCommentCreate, true, a.addComment))
	rt.handle("GET", "/api/v1/claims/{claimId}/comments", auth("", false, a.listComments))
	rt.handle("POST", "/api/v1/claims/{claimId}/slots", auth(slots.ScopeSlotsConfigure, false, a.configureSlots))
	rt.handle("GET", "/api/v1/claims/{claimId}/slots", auth("", false, a.listSlots))
	rt.handle("POST", "/api/v1/claims/{claimId}/slots/{slotId}/take", auth(slots.ScopeCommentCreate, true, a.take))
	rt.handle("POST", "/api/v1/claims/{claimId}/slots/{slotId}/done", auth(slots.ScopeCommentCreate, true, a.done))
	rt.handle("POST", "/api/v1/claims/{claimId}/slots/{slotId}/done-and-take", auth(slots.ScopeCommentCreate, true, a.doneAndTake))
	rt.handle("GET", "/api/v1/jobs/slots", auth("", false, a.nextJob))
	rt.handle("GET", "/api/v1/jobs/claims", auth("", false, a.claimJob))
	rt.handle("POST", "/api/v1/jobs/slots/take", auth(slots.ScopeCommentCreate, true, a.takeJob))
	rt.handle("POST", "/api/v1/keys", auth(slots.ScopeKeysAdmin, false, a.createKey))
	rt.handle("GET", "/api/v1/keys", auth(slots.ScopeKeysAdmin, false, a.listKeys))
	rt.handle("DELETE", "/api/v1/keys/{keyId}", auth(slots.ScopeKeysAdmin, false, a.revokeKey))
	rt.handle("GET", "/api/v1/me", auth("", false, a.me))
	rt.handle("POST", "/api/v1/agent/signing-key", auth("", false, a.signingKey))
	rt.handle("POST", "/api/v1/auth/device-code", route{fn: a.deviceCode})
	rt.handle("POST", "/api/v1/auth/token", route{fn: a.deviceToken})
	rt.handle("GET", "/api/v1/auth/device-codes/{userCode}", auth(slots.ScopeKeysAdmin, false, a.deviceLogin))
	rt.handle("POST", "/api/v1/auth/device-codes/{userCode}/approve", auth(slots.ScopeKeysAdmin, false, a.approveDeviceLogin))
	rt.handle("GET", "/api/v1/events", auth("", false, a.events))
	if a.prism != nil {
		a.routePrism(rt, auth)
	}
	return rt
}

type slotsAPI struct {
	svc     *slots.Service
	prism   *prism.Service // nil: no pipeline routes
	limiter Limiter        // of the unauthenticated device-code route; nil: none
}

type items[T any] struct {
	Items []T `json:"items"`
}

func list[T any](s []T) items[T] {
	if s == nil {
		s = []T{}
	}
	return items[T]{s}
}

func (a *slotsAPI) createClaim(w http.ResponseWriter, r *http.Request) error {
	var in wire.NewClaim
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	if in.Protocol != "" && a.prism == nil {
		return httpjson.Invalid("invalid_protocol", "this server runs no deliberation pipeline; omit protocol")
	}
	if a.prism != nil {
		// Refuse an unknown protocol before the claim exists.
		if _, err := a.prism.Protocol(r.Context(), in.Protocol); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return httpjson.Invalid("invalid_protocol", "unknown protocol %q", in.Protocol)
			}
			return err
		}
	}
	c, err := a.svc.CreateClaim(r.Context(), slots.NewClaim{Title: in.Title, Body: in.Body, Domain: in.Domain, Sources: wire.Sources(in.Sources)})
	if err != nil {
		return err
	}
	if a.prism != nil {
		// The claim stands even if this fails; Init is idempotent, so the
		// host can start the pipeline later.
		if _, err := a.prism.Init(r.Context(), c, in.Protocol); err != nil {
			return err
		}
	}
	httpjson.Write(w, http.StatusCreated, c)
	return nil
}

func (a *slotsAPI) listClaims(w http.ResponseWriter, r *http.Request) error {
	limit, err := httpjson.QueryInt(r, "limit")
	if err != nil {
		return err
	}
	if r.URL.Query().Has("limit") && limit == 0 {
		return httpjson.Invalid("invalid_limit", "limit must be between 1 and %d", slots.MaxClaimsLimit)
	}
	page, err := a.svc.ListClaims(r.Context(), slots.ClaimsQuery{Limit: limit, Cursor: r.URL.Query().Get("cursor"), Domain: r.URL.Query().Get("domain")})
	if err != nil {
		return err
	}
	if page.Items == nil {
		page.Items = []slots.Claim{}
	}
	httpjson.Write(w, http.StatusOK, page)
	return nil
}

func (a *slotsAPI) getClaim(w http.ResponseWriter, r *http.Request) error {
	c, err := a.svc.Claim(r.Context(), r.PathValue("claimId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, c)
	return nil
}

func viewClaim(c slots.Claim) wire.Claim {
	return wire.Claim{ID: c.ID, Title: c.Title, Body: c.Body, Domain: c.Domain, Sources: c.Sources, CreatedAt: c.CreatedAt}
}

func viewComment(c slots.Comment) wire.Comment {
	return wire.Comment{ID: c.ID, ClaimID: c.ClaimID, Body: c.Body, CommentType: c.CommentType, AuthorID: c.AuthorID,
		AgentName: c.AgentName, AuthorName: c.AgentName, AuthorType: "ai", CreatedAt: c.CreatedAt}
}

func viewComments(cs []slots.Comment) []wire.Comment {
	out := make([]wire.Comment, len(cs))
	for i, c := range cs {
		out[i] = viewComment(c)
	}
	return out
}

func (a *slotsAPI) addComment(w http.ResponseWriter, r *http.Request) error {
	var in wire.NewComment
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	c, err := a.svc.AddComment(r.Context(), principal(r), slots.NewComment{ClaimID: r.PathValue("claimId"), Body: in.Body, CommentType: in.CommentType})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, wire.CommentCreated{Comment: viewComment(c), OK: true, CommentID: c.ID})
	return nil
}

func (a *slotsAPI) listComments(w http.ResponseWriter, r *http.Request) error {
	cs, err := a.svc.Comments(r.Context(), r.PathValue("claimId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, list(viewComments(cs)))
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
	httpjson.Write(w, http.StatusOK, list(ss))
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
		AgentKeyID: principal(r).ID,
	})
	return writeJob(w, job, err)
}

func viewRoleSlot(s slots.Slot) wire.RoleSlot {
	return wire.RoleSlot{ID: s.ID, ClaimID: s.ClaimID, Role: string(s.Role), Status: string(s.Status), APIKeyID: s.APIKeyID,
		AgentName: s.AgentName, AgentAvatarURL: s.AgentAvatarURL, TakenAt: s.TakenAt, DoneAt: s.DoneAt, CreatedAt: s.CreatedAt, LeaseExpiresAt: s.LeaseExpiresAt}
}

// jobInstructions is what GET /jobs/claims asks of the agent, the
// original's words.
const jobInstructions = "Take the comments, read them and create new input of your idea"

// claimStrategies are the original's ways of picking a claim for
// GET /jobs/claims: the newest, the most discussed, any.
var claimStrategies = []string{"latest", "top", "random"}

// positiveQuery reads an optional positive integer parameter: def when
// absent, at most max.
func positiveQuery(r *http.Request, name string, def, max int) (int, error) {
	if !r.URL.Query().Has(name) {
		return def, nil
	}
	n, err := httpjson.QueryInt(r, name)
	if err != nil || n < 1 {
		return 0, httpjson.Invalid("invalid_"+strings.ToLower(name), "%s must be a positive integer", name)
	}
	return min(n, max), nil
}

// claimJob answers GET /api/v1/jobs/claims: one claim picked by strategy
// (latest, top: most comments, random) among the newest pool claims of
// domain, with its comments (the newest commentLimit when given).
func (a *slotsAPI) claimJob(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	strategy := strings.ToLower(q.Get("strategy"))
	if strategy == "" {
		strategy = "latest"
	}
	if !slices.Contains(claimStrategies, strategy) {
		return httpjson.Invalid("invalid_strategy", "strategy must be latest, top or random")
	}
	pool, err := positiveQuery(r, "pool", 100, slots.MaxClaimsLimit)
	if err != nil {
		return err
	}
	commentLimit, err := positiveQuery(r, "commentLimit", 0, slots.MaxClaimsLimit)
	if err != nil {
		return err
	}
	if strategy == "latest" {
		pool = 1
	}
	page, err := a.svc.ListClaims(r.Context(), slots.ClaimsQuery{Limit: pool, Domain: q.Get("domain")})
	if err != nil {
		return err
	}
	if len(page.Items) == 0 {
		return store.Errorf(store.ErrNotFound, "no_claims", "no claims available")
	}
	pick, comments := page.Items[0], []slots.Comment(nil)
	switch strategy {
	case "random":
		pick = page.Items[rand.IntN(len(page.Items))]
	case "top":
		most := -1
		for _, c := range page.Items { // newest first: ties go to the newest
			cs, err := a.svc.Comments(r.Context(), c.ID)
			if err != nil {
				return err
			}
			if len(cs) > most {
				pick, comments, most = c, cs, len(cs)
			}
		}
	}
	if comments == nil {
		if comments, err = a.svc.Comments(r.Context(), pick.ID); err != nil {
			return err
		}
	}
	if commentLimit > 0 && len(comments) > commentLimit {
		comments = comments[len(comments)-commentLimit:]
	}
	httpjson.Write(w, http.StatusOK, wire.ClaimJob{Claim: viewClaim(pick), Comments: viewComments(comments), Instructions: jobInstructions})
	return nil
}

type takeResponse struct {
	OK      bool       `json:"ok"`
	SlotID  string     `json:"slotId"`
	Role    slots.Role `json:"role"`
	ClaimID string     `json:"claimId"`
}

func (a *slotsAPI) take(w http.ResponseWriter, r *http.Request) error {
	s, err := a.svc.Take(r.Context(), principal(r), r.PathValue("claimId"), r.PathValue("slotId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, takeResponse{OK: true, SlotID: s.ID, Role: s.Role, ClaimID: s.ClaimID})
	return nil
}

func (a *slotsAPI) done(w http.ResponseWriter, r *http.Request) error {
	if _, err := a.svc.Done(r.Context(), principal(r), r.PathValue("claimId"), r.PathValue("slotId")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

type createdKey struct {
	ID        string        `json:"_id"`
	Key       string        `json:"key"`
	Name      string        `json:"name"`
	AvatarURL string        `json:"avatarUrl"`
	Scopes    []slots.Scope `json:"scopes"`
	CreatedAt int64         `json:"createdAt"`
}

func (a *slotsAPI) createKey(w http.ResponseWriter, r *http.Request) error {
	var in wire.NewKey
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	var scopes []slots.Scope
	for _, s := range in.Scopes {
		scopes = append(scopes, slots.Scope(s))
	}
	k, token, err := a.svc.CreateKey(r.Context(), principal(r), slots.NewKey{Name: in.Name, AvatarURL: in.AvatarURL, Scopes: scopes})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, createdKey{ID: k.ID, Key: token, Name: k.Name, AvatarURL: k.AvatarURL, Scopes: scopesOrEmpty(k.Scopes), CreatedAt: k.CreatedAt})
	return nil
}

func (a *slotsAPI) listKeys(w http.ResponseWriter, r *http.Request) error {
	ks, err := a.svc.Keys(r.Context())
	if err != nil {
		return err
	}
	for i := range ks {
		ks[i].Scopes = scopesOrEmpty(ks[i].Scopes)
	}
	httpjson.Write(w, http.StatusOK, list(ks))
	return nil
}

// scopesOrEmpty keeps a key without scopes answering "scopes": [] not null.
func scopesOrEmpty(s []slots.Scope) []slots.Scope {
	if s == nil {
		return []slots.Scope{}
	}
	return s
}

func (a *slotsAPI) revokeKey(w http.ResponseWriter, r *http.Request) error {
	if err := a.svc.RevokeKey(r.Context(), r.PathValue("keyId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type profile struct {
	ID        string        `json:"_id"`
	Name      string        `json:"name"`
	AvatarURL string        `json:"avatarUrl"`
	Scopes    []slots.Scope `json:"scopes"`
	Balance   int64         `json:"balance"`
	// SigningKeyAddress is the key's registered signing key, null until
	// POST /api/v1/agent/signing-key registers one.
	SigningKeyAddress *string `json:"signingKeyAddress"`
}

func (a *slotsAPI) me(w http.ResponseWriter, r *http.Request) error {
	k := principal(r)
	bal, err := a.svc.Balance(r.Context(), k.ID)
	if err != nil {
		return err
	}
	p := profile{ID: k.ID, Name: k.Name, AvatarURL: k.AvatarURL, Scopes: scopesOrEmpty(k.Scopes), Balance: bal}
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
	if err := a.svc.RegisterSigningKey(r.Context(), principal(r), in.SigningKeyAddress); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, ok{OK: true})
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
		b, _ := json.Marshal(map[string]string{"claimId": string(hint)})
		_, err := fmt.Fprintf(w, "event: changed\ndata: %s\n\n", b)
		return err
	})
	return nil
}
