package server

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/mcp"
)

// TestMCPOverStreamableHTTP: the server serves the MCP tools at /mcp, each
// request's Bearer key the caller, and refuses a request without one.
func TestMCPOverStreamableHTTP(t *testing.T) {
	t.Parallel()
	const admin = "admin-mcp"
	base, _ := serve(t, "-quiet", "-admin-key", admin)
	status, _ := call(t, "POST", base+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	require.Equal(t, 401, status, "no key, no MCP")
	status, _ = call(t, "POST", base+"/mcp", "agora_nope", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	require.Equal(t, 401, status, "a bad key, no MCP")

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
	require.Len(t, tools.Tools, 17)
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
