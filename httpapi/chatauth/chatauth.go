// Package chatauth holds the schemes that guard the agent chat's API
// (httpapi.AgentChat): docs/agentchat.md's three options — none, a
// shared secret, delegating to the application's own auth endpoint — and
// slot-machine's signed-user header in its two forms (hmac, trusted), plus
// Config, the same choice as a host reads it from flags or the
// environment.
//
// The chat is not guarded by Agora's API keys: it sits in front of a
// host's application (httpapi.InterceptChat), whose users are not agents
// with keys, and slot-machine's chat page speaks these schemes. It has a
// package of its own so that httpapi's own names (its Bearer API keys,
// its options) and these do not read alike.
package chatauth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agorahq/agora/store"
)

// Scheme is how the agent API authenticates a request. /chat and its
// config stay open whatever the scheme.
type Scheme struct {
	// Mode names the scheme in GET /chat/config: "none", "secret", "hmac",
	// "trusted", "delegate", or "custom".
	Mode string
	// Authenticate returns who the request is from, or an error: one of
	// kind store.ErrUnauthorized refuses the request (401),
	// ErrUnavailable answers 503. Nil lets every request in.
	Authenticate func(*http.Request) (user string, err error)
	// PageSecret is served to the page in GET /chat/config as authSecret,
	// so that slot-machine's page can sign its user itself (see
	// SignedUser); empty for every other scheme.
	PageSecret string
}

// NamesUsers reports whether the scheme alone says who a request is from
// (hmac, delegate): then a request cannot name its user itself, as it may
// under the others.
func (s Scheme) NamesUsers() bool { return s.Mode == "hmac" || s.Mode == "delegate" }

// Custom is the host's own scheme, named "custom" in /chat/config: check
// returns who the request is from and whether it may use the agent.
func Custom(check func(*http.Request) (user string, ok bool)) Scheme {
	return checked("custom", check)
}

// checked is the Scheme of mode that lets in the requests check accepts.
func checked(mode string, check func(*http.Request) (string, bool)) Scheme {
	return Scheme{Mode: mode, Authenticate: func(r *http.Request) (string, error) {
		if user, ok := check(r); ok {
			return user, nil
		}
		return "", errAuth
	}}
}

var errAuth = store.Errorf(store.ErrUnauthorized, "unauthorized", "sign in to use the agent")

// ErrUnavailable is returned when the application's auth endpoint (see
// Delegate) cannot say whether a request may use the agent; it answers 503.
var ErrUnavailable = errors.New("chatauth: the application's auth endpoint did not answer")

// None lets every request in: docs/agentchat.md's first option, for a
// private network or local development.
func None() Scheme { return Scheme{Mode: "none"} }

// secretCheck accepts a request that presents secret in the header or in
// the cookie of the given names, compared in constant time.
func secretCheck(header, cookie, secret string) func(*http.Request) bool {
	want := sha256.Sum256([]byte(secret))
	match := func(v string) bool {
		got := sha256.Sum256([]byte(v))
		return v != "" && subtle.ConstantTimeCompare(got[:], want[:]) == 1
	}
	return func(r *http.Request) bool {
		if header != "" && match(r.Header.Get(header)) {
			return true
		}
		c, err := r.Cookie(cookie)
		return cookie != "" && err == nil && match(c.Value)
	}
}

// SharedSecret is docs/agentchat.md's second option: a request is let in
// when it presents secret in the header or in the cookie of the given
// names (either may be empty), compared in constant time. The host sets
// the cookie; the secret is never served to the page, and it names no
// user. /chat/config calls it "secret".
func SharedSecret(header, cookie, secret string) Scheme {
	check := secretCheck(header, cookie, secret)
	return checked("secret", func(r *http.Request) (string, bool) {
		return "", check(r) // the secret names no one
	})
}

// UserHeader is the header of slot-machine's signed-user scheme:
// "<user>:<hex HMAC-SHA256 of user>" (SignedUser), or the bare user name
// (TrustedUser).
const UserHeader = "X-SlotMachine-User"

// SignedUser is slot-machine's "hmac" scheme: a request is let in when its
// X-SlotMachine-User header is "<user>:<signature>", the signature the
// lowercase hex HMAC-SHA256 of user keyed with secret (its bytes as given),
// compared in constant time. The host's application signs its user's name
// and hands the header to the page; with servePage, GET /chat/config
// serves the secret itself, as slot-machine does, so that its page signs
// in the browser — which lets anyone who can load /chat/config in.
func SignedUser(secret string, servePage bool) Scheme {
	a := checked("hmac", func(r *http.Request) (string, bool) {
		user := VerifyUser(secret, r.Header.Get(UserHeader))
		return user, user != ""
	})
	if servePage {
		a.PageSecret = secret
	}
	return a
}

// SignUser returns the X-SlotMachine-User value of user under secret.
func SignUser(secret, user string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(user))
	return user + ":" + hex.EncodeToString(mac.Sum(nil))
}

// VerifyUser returns the user of a signed X-SlotMachine-User value, or ""
// when it is not signed with secret (or secret is empty).
func VerifyUser(secret, header string) string {
	i := strings.LastIndex(header, ":")
	if secret == "" || i < 1 {
		return ""
	}
	user := header[:i]
	if !hmac.Equal([]byte(SignUser(secret, user)), []byte(header)) {
		return ""
	}
	return user
}

// TrustedUser is slot-machine's "trusted" scheme: the X-SlotMachine-User
// header names the user and is believed, because a proxy in front sets
// it — and must strip any the client sent, or anyone can be anyone. A
// request without the header did not pass that proxy and is refused (401),
// where slot-machine let it in.
func TrustedUser() Scheme {
	return checked("trusted", func(r *http.Request) (string, bool) {
		user := strings.TrimSpace(r.Header.Get(UserHeader))
		return user, user != ""
	})
}

// MinSigningKeyLen is the shortest key the hmac scheme accepts from
// Config: a short key can be guessed from one signed header offline.
const MinSigningKeyLen = 32

// delegateTimeout bounds a call to the application's auth endpoint.
const delegateTimeout = 5 * time.Second

// Delegate is docs/agentchat.md's third option: before handling a request
// it asks the application — GET endpoint, with the request's Cookie and
// Authorization headers — and lets the request in when the application
// answers 2xx; the user is the answer's X-SlotMachine-User header, if any.
// A 401 or 403 refuses the request; no answer within 5 seconds, or any
// other status, is ErrUnavailable (503). client nil is http.DefaultClient.
func Delegate(endpoint string, client *http.Client) (Scheme, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Scheme{}, fmt.Errorf("chatauth: the auth endpoint %q is not an http(s) URL", endpoint)
	}
	if client == nil {
		client = http.DefaultClient
	}
	return Scheme{Mode: "delegate", Authenticate: func(r *http.Request) (string, error) {
		ctx, cancel := context.WithTimeout(r.Context(), delegateTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		for _, h := range []string{"Cookie", "Authorization"} {
			for _, v := range r.Header.Values(h) {
				req.Header.Add(h, v)
			}
		}
		res, err := client.Do(req)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		switch {
		case res.StatusCode >= 200 && res.StatusCode < 300:
			return res.Header.Get(UserHeader), nil
		case res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden:
			return "", errAuth
		}
		return "", fmt.Errorf("%w: it answered %s", ErrUnavailable, res.Status)
	}}, nil
}

// Config is a Scheme in plain values, as a host reads it from its flags
// or environment (see Flags).
type Config struct {
	// Mode is none (or empty), secret, hmac, trusted or delegate.
	Mode string
	// Secret is the shared secret (secret) or the signing key (hmac).
	Secret string
	// ServeSecret serves the hmac key to slot-machine's page (SignedUser).
	ServeSecret bool
	// URL is the application's auth endpoint (delegate).
	URL string
	// Open serves the agent API without authentication on an address
	// other than loopback: the host's explicit choice (see CheckExposure).
	Open bool
}

// CheckExposure refuses to serve the agent API without authentication on
// addr unless addr is a loopback address or c.Open says it is meant to be
// open: anyone who reaches it could run the coding agent, with its tools,
// in the host's directory.
func (c Config) CheckExposure(addr string) error {
	if (c.Mode != "" && c.Mode != "none") || c.Open {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("chatauth: the agent API would run the coding agent for anyone who reaches %s: set -chat-auth (secret, hmac, trusted or delegate), listen on a loopback address, or pass -chat-open to serve it open on purpose", addr)
}

// Flags registers -chat-auth, -chat-secret, -chat-serve-secret,
// -chat-auth-url and -chat-open on fs, their defaults from the environment
// variables AGORA_CHAT_AUTH, AGORA_CHAT_SECRET, AGORA_CHAT_SERVE_SECRET
// ("1" or "true"), AGORA_CHAT_AUTH_URL and AGORA_CHAT_OPEN ("1" or
// "true"), read with getenv.
func (c *Config) Flags(fs *flag.FlagSet, getenv func(string) string) {
	serve := getenv("AGORA_CHAT_SERVE_SECRET")
	fs.StringVar(&c.Mode, "chat-auth", getenv("AGORA_CHAT_AUTH"), "how the agent API authenticates: none, secret (header X-Agent-Secret or cookie agent_secret), hmac (signed X-SlotMachine-User), trusted (X-SlotMachine-User as is) or delegate (ask -chat-auth-url)")
	fs.StringVar(&c.Secret, "chat-secret", getenv("AGORA_CHAT_SECRET"), "the shared secret (secret) or signing key (hmac) of the agent API")
	fs.BoolVar(&c.ServeSecret, "chat-serve-secret", serve == "1" || serve == "true", "hmac: serve the signing key in /chat/config so that slot-machine's page signs in the browser (anyone who can load the page gets in)")
	fs.StringVar(&c.URL, "chat-auth-url", getenv("AGORA_CHAT_AUTH_URL"), "delegate: the application's auth endpoint, asked with the request's cookies and Authorization")
	open := getenv("AGORA_CHAT_OPEN")
	fs.BoolVar(&c.Open, "chat-open", open == "1" || open == "true", "serve the agent API without authentication on an address other than loopback (refused otherwise: anyone reaching it runs the agent)")
}

// Scheme returns the Scheme c describes, or an error when its mode is
// unknown or lacks its secret (secret, hmac) or its URL (delegate).
func (c Config) Scheme() (Scheme, error) {
	needSecret := func() error {
		if c.Secret == "" {
			return fmt.Errorf("chatauth: chat auth %q needs a secret", c.Mode)
		}
		return nil
	}
	switch c.Mode {
	case "", "none":
		return None(), nil
	case "secret":
		return SharedSecret("X-Agent-Secret", "agent_secret", c.Secret), needSecret()
	case "hmac":
		if err := needSecret(); err != nil {
			return Scheme{}, err
		}
		if len(c.Secret) < MinSigningKeyLen {
			return Scheme{}, fmt.Errorf("chatauth: chat auth hmac needs a signing key of at least %d bytes (openssl rand -hex 32 makes one)", MinSigningKeyLen)
		}
		return SignedUser(c.Secret, c.ServeSecret), nil
	case "trusted":
		return TrustedUser(), nil
	case "delegate":
		return Delegate(c.URL, nil)
	}
	return Scheme{}, fmt.Errorf("chatauth: chat auth %q is not one of none, secret, hmac, trusted, delegate", c.Mode)
}
