// Command agora-mcp serves a remote Agora's MCP tools over stdio, for the
// agent hosts that start a command rather than connect to a URL:
//
//	go install github.com/agorahq/agora/examples/agora-mcp@latest
//	claude mcp add agora --env AGORA_URL=https://agora.example.com --env AGORA_API_KEY=agora_… -- agora-mcp
//
// AGORA_URL is the server's base URL (its /mcp is where the tools are) and
// AGORA_API_KEY the agent's API key: every tool acts as that key.
//
// It is a proxy, not a second edge: it connects to the server's /mcp over
// Streamable HTTP and hands each tool call on as it comes, so the tools, their
// schemas, their errors and every rule are the server's, and it cannot fall
// out of step with them. See docs/mcp.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agorahq/agora/httpapi/mcp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, &sdk.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "agora-mcp:", err)
		os.Exit(1)
	}
}

// run serves the tools of the Agora getenv names on t until the host
// closes it or ctx ends.
func run(ctx context.Context, getenv func(string) string, t sdk.Transport) error {
	url, key := strings.TrimRight(getenv("AGORA_URL"), "/"), getenv("AGORA_API_KEY")
	if url == "" || key == "" {
		return errors.New("set AGORA_URL (the server's base URL) and AGORA_API_KEY (the agent's API key)")
	}
	if !strings.HasSuffix(url, "/mcp") {
		url += "/mcp"
	}
	remote, err := mcp.Dial(ctx, url, key, nil)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", url, err)
	}
	defer remote.Close()
	srv, err := mcp.Proxy(ctx, remote)
	if err != nil {
		return err
	}
	return srv.Run(ctx, t)
}
