package mcp

import (
	"context"
	"errors"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Dial connects to the MCP tools of a remote Agora over Streamable HTTP:
// url is its MCP endpoint (the server's base URL and "/mcp"), token the API
// key every request carries as its Bearer key. A nil client is
// http.DefaultClient's transport.
func Dial(ctx context.Context, url, token string, client *http.Client) (*sdk.ClientSession, error) {
	if token == "" {
		return nil, errors.New("mcp: an API key is required")
	}
	base := http.DefaultTransport
	if client != nil && client.Transport != nil {
		base = client.Transport
	}
	hc := &http.Client{Transport: bearer{token: token, next: base}}
	if client != nil {
		hc.Timeout, hc.Jar, hc.CheckRedirect = client.Timeout, client.Jar, client.CheckRedirect
	}
	c := sdk.NewClient(&sdk.Implementation{Name: Name + "-client", Version: "1"}, nil)
	return c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: strings.TrimRight(url, "/"), HTTPClient: hc, DisableStandaloneSSE: true}, nil)
}

// bearer adds the Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

// RoundTrip sends a clone of r with the Authorization header set.
func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// Proxy returns a server with the tools of remote, each call forwarded to
// it as it comes and its result handed back as it is: the stdio server of
// examples/agora-mcp, which serves a remote Agora's tools to an agent host
// that starts a command. Nothing is decided here: the remote's tools, with
// their schemas, rules, errors and caller, are the ones served.
func Proxy(ctx context.Context, remote *sdk.ClientSession) (*sdk.Server, error) {
	info := remote.InitializeResult()
	s := sdk.NewServer(info.ServerInfo, &sdk.ServerOptions{Instructions: info.Instructions, Capabilities: &sdk.ServerCapabilities{}})
	for tool, err := range remote.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		s.AddTool(tool, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return remote.CallTool(ctx, &sdk.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
		})
	}
	return s, nil
}
