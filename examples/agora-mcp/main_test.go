package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/examples/internal/memserver"
	"github.com/agorahq/agora/httpapi/server"
)

// TestMain runs the command itself when the test starts it as an agent
// host would (AGORA_MCP_MAIN=1), so that the test drives the real stdio.
func TestMain(m *testing.M) {
	if os.Getenv("AGORA_MCP_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStdio starts the command as a host does and works a seat through it
// on a running server.
func TestStdio(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done, err := memserver.Start(ctx, "adm", server.Options{})
	require.NoError(t, err)
	defer func() { cancel(); <-done }()

	key := post(t, base+"/api/v1/keys", "adm", `{"name":"Host","scopes":["comment:create","claim:create","slots:configure"]}`)["key"].(string)
	claim := post(t, base+"/api/v1/claims", key, `{"title":"Crows plan ahead","body":"b"}`)["_id"].(string)
	post(t, base+"/api/v1/claims/"+claim+"/slots", key, `{"roles":[{"role":"critic","count":1}]}`)
	post(t, base+"/api/v1/claims/"+claim+"/comments", key, `{"body":"The draft.","commentType":"draft"}`)
	agent := post(t, base+"/api/v1/keys", "adm", `{"name":"Critic","scopes":["comment:create"]}`)["key"].(string)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "AGORA_MCP_MAIN=1", "AGORA_URL="+base, "AGORA_API_KEY="+agent)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "take_job", Arguments: map[string]any{"role": "critic"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	job := res.StructuredContent.(map[string]any)["job"].(map[string]any)
	slot := job["slot"].(map[string]any)["_id"].(string)
	require.Equal(t, claim, job["claim"].(map[string]any)["_id"])
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "finish_job", Arguments: map[string]any{"claim_id": claim, "slot_id": slot}})
	require.NoError(t, err)
	require.Equal(t, true, res.StructuredContent.(map[string]any)["ok"])
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "finish_job", Arguments: map[string]any{"claim_id": claim, "slot_id": slot}})
	require.NoError(t, err)
	require.True(t, res.IsError, "a second finish is the server's error, handed on")
}

// TestNeedsItsEnvironment: without AGORA_URL and AGORA_API_KEY the
// command says what to set.
func TestNeedsItsEnvironment(t *testing.T) {
	err := run(context.Background(), func(string) string { return "" }, nil)
	require.ErrorContains(t, err, "AGORA_URL")
}

func post(t *testing.T, url, token, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Less(t, res.StatusCode, 300, url)
	var m map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&m))
	return m
}
