package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/mcp"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// BenchmarkTakeJob compares what a take of the same seat costs on memory
// through the HTTP route (POST /api/v1/jobs/slots/take) and through the
// MCP tool take_job, over Streamable HTTP as an agent host calls it and
// over the SDK's in-memory transport (the edge without the network). Each
// iteration takes a fresh seat; batching is off so that the edges, not
// the batcher's waits, are measured. Besides the wall time, each reports
// cpu-ns/op, the CPU time the process (client and server, GC included)
// spent per take, which a machine shared with other work leaves as it is.
//
//	go test -run '^$' -bench TakeJob -benchtime 2000x -count 10 ./httpapi/mcp | benchstat -col /edge -
func BenchmarkTakeJob(b *testing.B) {
	ctx := context.Background()
	setup := func(b *testing.B) (*slots.Service, *identity.Service, string) {
		b.Helper()
		mem := memstore.New()
		svc := slots.New(mem, slots.WithoutBatching())
		ids := identity.New(mem, identity.WithAdminKey(adminToken), identity.WithScopes(httpapi.Scopes()))
		author, _, err := ids.CreateKey(identity.WithKey(ctx, ids.Admin()), identity.NewKey{Name: "author", Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		if err != nil {
			b.Fatal(err)
		}
		for i := range b.N {
			c, err := svc.CreateClaim(ctx, slots.NewClaim{Title: fmt.Sprint("claim ", i), Body: "b"})
			if err == nil {
				_, err = svc.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})
			}
			if err == nil {
				_, err = svc.AddComment(identity.WithKey(ctx, author), slots.NewComment{ClaimID: c.ID, Body: "d", CommentType: "draft"})
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		_, token, err := ids.CreateKey(identity.WithKey(ctx, ids.Admin()), identity.NewKey{Name: "agent", Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		if err != nil {
			b.Fatal(err)
		}
		return svc, ids, token
	}
	takeMCP := func(b *testing.B, cs *sdk.ClientSession) {
		b.Helper()
		defer measureCPU(b)()
		for range b.N {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "take_job"})
			if err != nil || res.IsError || res.StructuredContent.(map[string]any)["job"] == nil {
				b.Fatal(err, res)
			}
		}
	}

	b.Run("edge=http", func(b *testing.B) {
		svc, ids, token := setup(b)
		srv := httptest.NewServer(httpapi.Slots(svc, ids, httpapi.WithLimiter(nil)))
		defer srv.Close()
		client := srv.Client()
		defer measureCPU(b)()
		for range b.N {
			req, _ := http.NewRequest("POST", srv.URL+"/api/v1/jobs/slots/take", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := client.Do(req)
			if err != nil || res.StatusCode != 200 {
				b.Fatal(err, res)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	})
	b.Run("edge=mcp-http", func(b *testing.B) {
		svc, ids, token := setup(b)
		srv := httptest.NewServer(mcp.Handler(mcp.Services{Identity: ids, Slots: svc}, mcp.Options{}))
		defer srv.Close()
		cs, err := mcp.Dial(ctx, srv.URL, token, srv.Client())
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		takeMCP(b, cs)
	})
	// The server's part alone: JSON-RPC posted as bytes and the answer
	// discarded, as the HTTP case does, without the Go SDK's client.
	b.Run("edge=mcp-http-raw", func(b *testing.B) {
		svc, ids, token := setup(b)
		srv := httptest.NewServer(mcp.Handler(mcp.Services{Identity: ids, Slots: svc}, mcp.Options{}))
		defer srv.Close()
		client := srv.Client()
		session := ""
		post := func(body string) (*http.Response, []byte) {
			req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
				req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			}
			res, err := client.Do(req)
			if err != nil || res.StatusCode >= 300 {
				b.Fatal(err, res)
			}
			data, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return res, data
		}
		opened, _ := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		session = opened.Header.Get("Mcp-Session-Id")
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		defer measureCPU(b)()
		for i := range b.N {
			_, data := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"take_job","arguments":{}}}`)
			if i == 0 {
				var answer struct {
					Result struct {
						StructuredContent struct{ Job *wire.Job }
					}
				}
				if json.Unmarshal(data, &answer) != nil || answer.Result.StructuredContent.Job == nil {
					b.Fatalf("no job taken: %s", data)
				}
			}
		}
	})
	b.Run("edge=mcp-memory", func(b *testing.B) {
		svc, ids, token := setup(b)
		ct, st := sdk.NewInMemoryTransports()
		ss, err := mcp.NewServer(mcp.Services{Identity: ids, Slots: svc}, mcp.Options{Token: token}).Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Close()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		takeMCP(b, cs)
	})
}

// measureCPU resets b's timer and returns the function that, deferred,
// reports the CPU time per iteration spent since as cpu-ns/op.
func measureCPU(b *testing.B) func() {
	b.ResetTimer()
	start, err := testdb.ProcessCPU()
	return func() {
		if end, err2 := testdb.ProcessCPU(); err == nil && err2 == nil {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}
