package chatauth_test

import (
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/chatauth"
	"github.com/agorahq/agora/store"
)

// The signatures below are openssl's: printf alice | openssl dgst -sha256
// -hmac deadbeef1234 — the scheme of slot-machine's extractUser.
const (
	aliceSig = "a908fe7d35d64789b92fa53d70aec1cb584d4c11511508cf8503251a7a35f247"
	colonSig = "67fa711359761095c5e1dff8ad7478795cf25b13dac39c22e4fb5a4b39ad31ef" // of "a:b"
)

func TestSignedUserHeader(t *testing.T) {
	const secret = "deadbeef1234"
	require.Equal(t, "alice:"+aliceSig, chatauth.SignUser(secret, "alice"))
	require.Equal(t, "alice", chatauth.VerifyUser(secret, "alice:"+aliceSig))
	require.Equal(t, "a:b", chatauth.VerifyUser(secret, "a:b:"+colonSig), "the signature is after the last colon")
	for _, bad := range []string{"", "alice", "alice:badsig", ":" + aliceSig, "bob:" + aliceSig, "alice:" + aliceSig[:63], "alice:" + aliceSig + "0"} {
		require.Empty(t, chatauth.VerifyUser(secret, bad), "%q", bad)
	}
	require.Empty(t, chatauth.VerifyUser("", "alice:"+aliceSig), "no key, no user")

	auth := chatauth.SignedUser(secret, false)
	r := httptest.NewRequest("GET", "/agent/conversations", nil)
	_, err := auth.Authenticate(r)
	require.ErrorIs(t, err, store.ErrUnauthorized)
	r.Header.Set("X-SlotMachine-User", "alice:"+aliceSig)
	user, err := auth.Authenticate(r)
	require.NoError(t, err)
	require.Equal(t, "alice", user)
	require.Empty(t, auth.PageSecret)
	require.Equal(t, secret, chatauth.SignedUser(secret, true).PageSecret)
}

func TestAuthConfig(t *testing.T) {
	env := map[string]string{"AGORA_CHAT_AUTH": "hmac", "AGORA_CHAT_SECRET": strings.Repeat("k", 32), "AGORA_CHAT_SERVE_SECRET": "true"}
	var c chatauth.Config
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	c.Flags(fs, func(k string) string { return env[k] })
	require.NoError(t, fs.Parse(nil))
	a, err := c.Scheme()
	require.NoError(t, err)
	require.Equal(t, "hmac", a.Mode)
	require.Equal(t, strings.Repeat("k", 32), a.PageSecret, "from the environment")

	require.NoError(t, fs.Parse([]string{"-chat-auth", "delegate", "-chat-auth-url", "http://127.0.0.1:1/auth"}))
	a, err = c.Scheme()
	require.NoError(t, err)
	require.Equal(t, "delegate", a.Mode, "flags win over the environment")

	for _, bad := range []chatauth.Config{
		{Mode: "secret"}, {Mode: "hmac"}, {Mode: "hmac", Secret: "k"}, {Mode: "hmac", Secret: strings.Repeat("k", 31)}, {Mode: "delegate"}, {Mode: "delegate", URL: "ftp://x"}, {Mode: "delegate", URL: "/auth"}, {Mode: "basic"},
	} {
		_, err := bad.Scheme()
		require.Error(t, err, "%+v", bad)
	}
	for mode, want := range map[string]string{"": "none", "none": "none", "trusted": "trusted"} {
		a, err := chatauth.Config{Mode: mode}.Scheme()
		require.NoError(t, err)
		require.Equal(t, want, a.Mode)
	}
}

func TestCustomAndSharedSecret(t *testing.T) {
	custom := chatauth.Custom(func(r *http.Request) (string, bool) {
		return r.Header.Get("X-Who"), r.Header.Get("X-Who") != ""
	})
	require.Equal(t, "custom", custom.Mode)
	r := httptest.NewRequest("GET", "/agent/conversations", nil)
	_, err := custom.Authenticate(r)
	require.ErrorIs(t, err, store.ErrUnauthorized)
	r.Header.Set("X-Who", "carol")
	user, err := custom.Authenticate(r)
	require.NoError(t, err)
	require.Equal(t, "carol", user)

	secret := chatauth.SharedSecret("X-Agent-Secret", "agent_secret", "s3cret")
	require.Equal(t, "secret", secret.Mode)
	require.Empty(t, secret.PageSecret, "the secret is never served to the page")
	for _, bad := range []func(*http.Request){
		func(*http.Request) {},
		func(r *http.Request) { r.Header.Set("X-Agent-Secret", "wrong") },
		func(r *http.Request) { r.Header.Set("X-Agent-Secret", "") },
		func(r *http.Request) { r.AddCookie(&http.Cookie{Name: "other", Value: "s3cret"}) },
	} {
		r := httptest.NewRequest("GET", "/agent/conversations", nil)
		bad(r)
		_, err := secret.Authenticate(r)
		require.ErrorIs(t, err, store.ErrUnauthorized)
	}
	for _, good := range []func(*http.Request){
		func(r *http.Request) { r.Header.Set("X-Agent-Secret", "s3cret") },
		func(r *http.Request) { r.AddCookie(&http.Cookie{Name: "agent_secret", Value: "s3cret"}) },
	} {
		r := httptest.NewRequest("GET", "/agent/conversations", nil)
		good(r)
		user, err := secret.Authenticate(r)
		require.NoError(t, err)
		require.Empty(t, user, "the secret names no one")
	}
	noCookie := chatauth.SharedSecret("X-Agent-Secret", "", "s3cret")
	r = httptest.NewRequest("GET", "/agent/conversations", nil)
	r.AddCookie(&http.Cookie{Name: "", Value: "s3cret"})
	_, err = noCookie.Authenticate(r)
	require.ErrorIs(t, err, store.ErrUnauthorized, "no cookie name, no cookie")
}
