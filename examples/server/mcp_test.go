package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/mcp"
	"github.com/agorahq/agora/internal/fakeanthropic"
)

// TestMCPOverStreamableHTTP: the server serves the MCP tools at /mcp, each
// request's Bearer key the caller, and refuses a request without one.
func TestMCPOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	const admin = "admin-mcp"
	base, _ := serve(t, "-quiet", "-admin-key", admin)
	status, _ := call(t, "POST", base+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	require.Equal(t, 401, status, "no key, no MCP")
	status, body := call(t, "POST", base+"/mcp", "agora_nope", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	require.Equal(t, 401, status, "a bad key, no MCP")
	require.Equal(t, "invalid_api_key", body["error"].(map[string]any)["code"], "refused as the HTTP API refuses")

	_, key := call(t, "POST", base+"/api/v1/keys", admin, `{"name":"Builder","scopes":["discussion:write","comment:create"]}`)
	ctx := context.Background()
	cs, err := mcp.Dial(ctx, base+"/mcp", key["key"].(string), nil)
	require.NoError(t, err)
	defer cs.Close()

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "my_profile"})
	require.NoError(t, err)
	require.False(t, res.IsError)
	var me mcp.ProfileOutput
	decode(t, res, &me)
	require.Equal(t, "Builder", me.Name)

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "take_job"})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Equal(t, map[string]any{"job": nil}, res.StructuredContent)

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "post_message", Arguments: map[string]any{"message": "Hello over MCP"}})
	require.NoError(t, err)
	var posted mcp.MessageOutput
	decode(t, res, &posted)
	require.Equal(t, "Builder", posted.Message.AgentName)
	_, chat := call(t, "GET", base+"/api/squad-chat", "", "")
	require.Contains(t, chat["messages"].([]any)[0].(map[string]any)["message"], "Hello over MCP", "the HTTP API sees what MCP wrote")

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "join_game", Arguments: map[string]any{"game_id": "g", "display_name": "B"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	e, ok := mcp.ParseError(res.Content[0].(*sdk.TextContent).Text)
	require.True(t, ok)
	require.Equal(t, "missing_scope", e.Code)

	// The stdio command's proxy serves the same tools from this server.
	proxy, err := mcp.Proxy(ctx, cs)
	require.NoError(t, err)
	ct, st := sdk.NewInMemoryTransports()
	ss, err := proxy.Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	local, err := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer local.Close()
	tools, err := local.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 19)
	res, err = local.CallTool(ctx, &sdk.CallToolParams{Name: "my_profile"})
	require.NoError(t, err)
	decode(t, res, &me)
	require.Equal(t, "Builder", me.Name)
}

func decode(t *testing.T, res *sdk.CallToolResult, v any) {
	t.Helper()
	require.False(t, res.IsError, "%v", res.Content)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, v))
}

// TestClaudeCodeTakesASeat: the real Claude Code CLI, given the server's
// /mcp in --mcp-config and a fake Messages API scripted to call take_job
// then finish_job, takes and finishes a role seat.
func TestClaudeCodeTakesASeat(t *testing.T) {
	t.Parallel()
	cli := fakeanthropic.CLI(t)
	const admin = "admin-claude-mcp"
	base, _ := serve(t, "-quiet", "-admin-key", admin)
	_, human := call(t, "POST", base+"/api/v1/keys", admin, `{"name":"human","scopes":["claim:create","slots:configure","comment:create"]}`)
	_, claim := call(t, "POST", base+"/api/v1/claims", human["key"].(string), `{"title":"Crows plan ahead","body":"b"}`)
	id := claim["_id"].(string)
	call(t, "POST", base+"/api/v1/claims/"+id+"/slots", human["key"].(string), `{"roles":[{"role":"critic","count":1}]}`)
	call(t, "POST", base+"/api/v1/claims/"+id+"/comments", human["key"].(string), `{"body":"The draft.","commentType":"draft"}`)
	_, agent := call(t, "POST", base+"/api/v1/keys", admin, `{"name":"Claude","scopes":["comment:create"]}`)

	api := fakeanthropic.Start(t, nil)
	// The CLI hands the model a tool's structured content as its result.
	seat := func(last json.RawMessage) (claimID, slotID string) {
		var blocks []struct {
			Content string `json:"content"`
		}
		var got struct {
			Job struct {
				Slot struct {
					ID      string `json:"_id"`
					ClaimID string `json:"claimId"`
				} `json:"slot"`
			} `json:"job"`
		}
		if json.Unmarshal(last, &blocks) != nil || len(blocks) == 0 || json.Unmarshal([]byte(blocks[0].Content), &got) != nil {
			return "", ""
		}
		return got.Job.Slot.ClaimID, got.Job.Slot.ID
	}
	var mu sync.Mutex // the fake API's handlers write, the test reads
	var offered []string
	var calls []string
	api.Calls(func(tools []string, last json.RawMessage) *fakeanthropic.ToolUse {
		mu.Lock()
		defer mu.Unlock()
		offered = tools
		switch len(calls) {
		case 0:
			calls = append(calls, "take_job")
			return &fakeanthropic.ToolUse{Name: "mcp__agora__take_job", Input: map[string]string{"role": "critic"}}
		case 1:
			claimID, slotID := seat(last)
			if slotID == "" {
				calls = append(calls, "no seat in "+string(last))
				return nil
			}
			calls = append(calls, "finish_job")
			return &fakeanthropic.ToolUse{Name: "mcp__agora__finish_job", Input: map[string]string{"claim_id": claimID, "slot_id": slotID}}
		}
		calls = append(calls, "done: "+string(last))
		return nil
	})
	home := t.TempDir()
	config, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"agora": map[string]any{
		"type": "http", "url": base + "/mcp", "headers": map[string]string{"Authorization": "Bearer " + agent["key"].(string)}}}})
	require.NoError(t, err)
	cfg := filepath.Join(home, "mcp.json")
	require.NoError(t, os.WriteFile(cfg, config, 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "-p", "Take a role seat on Agora and finish it.", "--mcp-config", cfg, "--strict-mcp-config",
		"--allowedTools", "mcp__agora__take_job,mcp__agora__finish_job")
	cmd.Dir = home
	cmd.Env = append(os.Environ(), api.Env(home)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, offered, "mcp__agora__take_job", "the CLI offers the model Agora's tools")
	require.Equal(t, "finish_job", calls[1], "calls: %v", calls)
	require.Contains(t, calls[2], `\"ok\":true`, "calls: %v", calls)

	status, slots := call(t, "GET", base+"/api/v1/claims/"+id+"/slots", human["key"].(string), "")
	require.Equal(t, 200, status)
	s := slots["items"].([]any)[0].(map[string]any)
	require.Equal(t, "done", s["status"])
	require.Equal(t, "Claude", s["agentName"], "the seat is the key's")
}
