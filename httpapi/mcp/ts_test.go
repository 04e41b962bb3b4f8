package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi/mcp"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
)

// tsClient is where the TypeScript client and its package.json live.
const tsClient = "testdata/tsclient"

// typeScriptSDK returns a node_modules folder holding the TypeScript MCP
// SDK at the version testdata/tsclient/package.json pins: the one
// $AGORA_MCP_TS_SDK names, else one npm installs once into the user's
// cache. Without node and npm the test skips, unless CI is set: there it
// fails, so CI always runs it.
func typeScriptSDK(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			testdb.Unavailable(t, "%s is not installed: %v", tool, err)
		}
	}
	if dir := os.Getenv("AGORA_MCP_TS_SDK"); dir != "" {
		return dir
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	data, err := os.ReadFile(filepath.Join(tsClient, "package.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &pkg))
	version := pkg.Dependencies["@modelcontextprotocol/sdk"]
	require.NotEmpty(t, version)
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	prefix := filepath.Join(cache, "agora-test", "mcp-sdk-"+version)
	modules := filepath.Join(prefix, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return modules
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", prefix, "@modelcontextprotocol/sdk@"+version)
	if out, err := cmd.CombinedOutput(); err != nil {
		testdb.Unavailable(t, "npm could not install @modelcontextprotocol/sdk@%s: %v\n%s", version, err, out)
	}
	return modules
}

// TestTypeScriptClient: the official TypeScript SDK, an independent MCP
// client, lists the tools and plays a role-slot loop, a whole arena game
// and a discussion to quorum over Streamable HTTP.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	modules := typeScriptSDK(t)
	dir := t.TempDir()
	for _, f := range []string{"client.mjs", "package.json"} {
		data, err := os.ReadFile(filepath.Join(tsClient, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), data, 0o600))
	}
	require.NoError(t, os.Symlink(modules, filepath.Join(dir, "node_modules")))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := setup(t, testbackend.All()[0].New(t))
	srv := httptest.NewServer(mcp.Handler(b.svcs, mcp.Options{}))
	defer srv.Close()
	b.claimsWithSeats(t, "Crows plan ahead", "Octopuses dream", "Bees count")
	g, err := b.svcs.Arena.Create(ctx, arena.TableMin, 0)
	require.NoError(t, err)
	keys := map[string]any{
		"worker":    b.key(t, "ts-worker", slots.ScopeCommentCreate),
		"players":   []string{b.key(t, "ts-p0", arena.ScopePlay), b.key(t, "ts-p1", arena.ScopePlay), b.key(t, "ts-p2", arena.ScopePlay)},
		"asker":     b.key(t, "ts-asker", discussion.ScopeWrite),
		"answerers": []string{b.key(t, "ts-a0", discussion.ScopeWrite), b.key(t, "ts-a1", discussion.ScopeWrite)},
		"game":      g.ID,
	}
	// The host starts the game once its players have joined.
	started := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if g, err := b.svcs.Arena.Game(ctx, g.ID); err == nil && g.Status == arena.StatusReady {
				_, err := b.svcs.Arena.Start(ctx, g.ID)
				started <- err
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		started <- ctx.Err()
	}()

	raw, err := json.Marshal(keys)
	require.NoError(t, err)
	run, stop := context.WithTimeout(ctx, 2*time.Minute)
	defer stop()
	cmd := exec.CommandContext(run, "node", "client.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGORA_MCP_URL="+srv.URL, "AGORA_KEYS="+string(raw))
	stdout, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		t.Fatalf("the TypeScript client failed: %v\n%s", err, exit.Stderr)
	}
	require.NoError(t, err)
	require.NoError(t, <-started)

	var got struct {
		Tools        []string
		Described    bool
		Seats        int
		Balance      int
		ErrorIsError bool
		ErrorCode    string
		BadArgs      bool
		Argued       int
		Decided      int
		Quorum       struct {
			Ready   bool
			Status  string
			Answers int
		}
	}
	require.NoError(t, json.Unmarshal(stdout, &got), string(stdout))
	require.Len(t, got.Tools, 19)
	require.True(t, got.Described, "every tool has an output schema and described inputs")
	require.Equal(t, 3, got.Seats, "one critic seat on each claim")
	require.Positive(t, got.Balance)
	require.True(t, got.ErrorIsError)
	require.Equal(t, "slot_not_found", got.ErrorCode, "the code POST .../done answers")
	require.True(t, got.BadArgs, "a missing argument is a tool error naming it")
	require.Positive(t, got.Argued)
	require.GreaterOrEqual(t, got.Decided, arena.TableMin)
	require.True(t, got.Quorum.Ready)
	require.Equal(t, "resolved", got.Quorum.Status)
	require.Equal(t, 2, got.Quorum.Answers)
}
