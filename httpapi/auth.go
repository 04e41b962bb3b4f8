package httpapi

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/store"
)

// bearer extracts the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// withCaller puts the request's caller in its context, where every
// service reads it (identity.FromContext).
func withCaller(ctx context.Context, c identity.Caller) context.Context {
	if ri := httpjson.RequestInfoFrom(ctx); ri != nil && c.Keyed() {
		ri.KeyID = c.Key.ID // the request log's key_id
	}
	return identity.NewContext(ctx, c)
}

// The device login of the original's `aop setup` (see identity.DeviceCode):
// the CLI asks for a code, an operator approves it on the console's
// /device page, the CLI's poll receives a key.

// devicePage is where an operator approves a user code, on the host the
// request came to.
func devicePage(r *http.Request, userCode string) (page, complete string) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	page = scheme + "://" + r.Host + "/device"
	return page, page + "?code=" + url.QueryEscape(userCode)
}

func toScopes(ss []string) []identity.Scope {
	out := make([]identity.Scope, len(ss))
	for i, s := range ss {
		out[i] = identity.Scope(s)
	}
	return out
}

func fromScopes(ss []identity.Scope) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

func (a *slotsAPI) deviceCode(w http.ResponseWriter, r *http.Request) error {
	if a.limiter != nil {
		// Unauthenticated: the client's address stands in for a key.
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		ok, wait, err := a.limiter.Allow(r.Context(), "device:"+host)
		if err != nil {
			return err
		}
		if !ok {
			return &httpjson.RateLimited{RetryAfter: wait}
		}
	}
	var in wire.DeviceCodeRequest
	if err := httpjson.DecodeOptional(w, r, &in); err != nil {
		return err
	}
	login, err := a.ids.StartDeviceLogin(r.Context(), identity.NewDeviceLogin{Name: in.AgentName, AgentModel: in.AgentModel, AvatarURL: in.AvatarURL, Scopes: toScopes(in.Scopes)})
	if err != nil {
		return err
	}
	page, complete := devicePage(r, login.UserCode)
	httpjson.Write(w, http.StatusOK, wire.DeviceCodeResponse{DeviceCode: login.DeviceCode, UserCode: login.UserCode,
		VerificationURI: page, VerificationURIComplete: complete,
		ExpiresIn: int64(identity.DeviceCodeTTL / time.Second), Interval: int(identity.DevicePollInterval / time.Second)})
	return nil
}

func (a *slotsAPI) deviceToken(w http.ResponseWriter, r *http.Request) error {
	var in wire.TokenRequest
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	if in.DeviceCode == "" {
		return httpjson.Invalid("invalid_request", "deviceCode is required")
	}
	p, err := a.ids.PollDeviceLogin(r.Context(), in.DeviceCode)
	if err != nil {
		return err
	}
	if p.Token == "" {
		httpjson.Write(w, http.StatusAccepted, wire.TokenResponse{Status: string(identity.DevicePending)})
		return nil
	}
	httpjson.Write(w, http.StatusOK, wire.TokenResponse{Status: string(identity.DeviceApproved), APIKey: p.Token, KeyID: p.Key.ID, Scopes: fromScopes(p.Key.Scopes)})
	return nil
}

func viewDeviceLogin(d identity.DeviceCode, now time.Time) wire.DeviceLogin {
	return wire.DeviceLogin{UserCode: d.UserCode, AgentName: d.Name, AgentModel: d.AgentModel, AvatarURL: d.AvatarURL,
		Scopes: fromScopes(d.Scopes), Status: string(d.Status), Expired: d.Expired(now), CreatedAt: store.Millis(d.CreatedAt),
		ExpiresAt: store.Millis(d.ExpiresAt), ApprovedBy: d.ApprovedBy, ApprovedAt: store.Millis(d.ApprovedAt)}
}

func (a *slotsAPI) deviceLogin(w http.ResponseWriter, r *http.Request) error {
	d, err := a.ids.DeviceCodeByUserCode(r.Context(), r.PathValue("userCode"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, viewDeviceLogin(d, a.svc.Now()))
	return nil
}

func (a *slotsAPI) approveDeviceLogin(w http.ResponseWriter, r *http.Request) error {
	d, err := a.ids.ApproveDeviceCode(r.Context(), r.PathValue("userCode"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, viewDeviceLogin(d, a.svc.Now()))
	return nil
}
