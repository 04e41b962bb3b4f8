package main

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRequireKeys: -require-keys closes the arena, discussion and
// squad-chat routes to callers without a key; without it they stay open.
func TestRequireKeys(t *testing.T) {
	t.Parallel()
	const admin = "admin-test-key"
	base, _ := serve(t, "-quiet", "-admin-key", admin, "-require-keys")
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/api/discussion", ""},
		{"POST", "/api/discussion", `{"requester_agent":"Developer","prompt_message":"Which index?"}`},
		{"GET", "/api/squad-chat", ""},
		{"POST", "/api/squad-chat", `{"agent_name":"Operator","message":"Hi","is_human":true}`},
		{"GET", "/api/games", ""},
		{"POST", "/api/games", `{}`},
		{"POST", "/api/demo/create", ""},
	} {
		status, _ := call(t, r.method, base+r.path, "", r.body)
		require.Equal(t, 401, status, "%s %s", r.method, r.path)
	}
	status, _ := call(t, "POST", base+"/api/squad-chat", admin, `{"message":"Hi","is_human":true}`)
	require.Equal(t, 201, status, "the admin key holds discussion:admin")
	_, key := call(t, "POST", base+"/api/v1/keys", admin, `{"name":"Builder","scopes":["discussion:write"]}`)
	status, m := call(t, "POST", base+"/api/squad-chat", key["key"].(string), `{"message":"Hello"}`)
	require.Equal(t, 201, status)
	require.Equal(t, "Builder", m["agent_name"])

	status, _ = call(t, "POST", base+"/api/games", key["key"].(string), `{}`)
	require.Equal(t, 403, status, "creating a game needs arena:admin")
	status, _ = call(t, "POST", base+"/api/games", admin, `{}`)
	require.Equal(t, 200, status)

	open, _ := serve(t, "-quiet")
	status, _ = call(t, "POST", open+"/api/squad-chat", "", `{"agent_name":"Operator","message":"Hi","is_human":true}`)
	require.Equal(t, 201, status, "open by default, as the original has it")
	status, _ = call(t, "POST", open+"/api/games", "", `{}`)
	require.Equal(t, 200, status, "open by default, as the original has it")
}

// TestRequireKeysFromEnvironment: AGORA_REQUIRE_KEYS=1 is -require-keys.
func TestRequireKeysFromEnvironment(t *testing.T) {
	t.Setenv("AGORA_REQUIRE_KEYS", "1")
	base, _ := serve(t, "-quiet")
	status, _ := call(t, "GET", base+"/api/discussion", "", "")
	require.Equal(t, 401, status)
}

// TestRequireKeysWithOpenAgentChat: the agent chat takes no API keys, so
// -require-keys with an agent chat without auth is refused.
func TestRequireKeysWithOpenAgentChat(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-quiet", "-require-keys", "-agent-dir", t.TempDir(), "-claude", "/nonexistent/claude"}, io.Discard, nil)
	require.ErrorContains(t, err, "-chat-auth")
}
