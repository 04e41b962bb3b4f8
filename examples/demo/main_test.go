package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// demo runs the demo with args and returns its transcript, having checked
// that every part finished.
func demo(t *testing.T, args ...string) string {
	t.Helper()
	var out strings.Builder
	require.NoError(t, run(context.Background(), append(args, "-timeout", "5m"), &out))
	text := out.String()
	for _, want := range []string{"prism: layer 7/7 Synthesis done", "prism: complete", "seat 3/3 won", "the trolley took the",
		"arena: game over", "discussion: resolved with 3/3 answers", "summary:"} {
		require.Contains(t, text, want)
	}
	return text
}

func TestDemoMemory(t *testing.T) { t.Logf("\n%s", demo(t)) }

// TestDemoRequireKeys: on a server whose every API needs keys, every bot
// acts with a key of its own and the whole tour still finishes.
func TestDemoRequireKeys(t *testing.T) {
	t.Parallel()
	demo(t, "-require-keys")
}

// TestDemoRepeats: the same seed prints the same transcript but for the
// first line (the server's address), though the bots run concurrently;
// another seed another one.
func TestDemoRepeats(t *testing.T) {
	body := func(seed string) string {
		text := demo(t, "-seed", seed)
		_, rest, _ := strings.Cut(text, "\n")
		return rest
	}
	first := body("7")
	require.Equal(t, first, body("7"))
	require.NotEqual(t, first, body("8"))
}

func TestDemoRedis(t *testing.T) {
	c, prefix := testdb.RedisClient(t) // deletes the prefix's keys afterwards
	ctx := context.Background()
	keys := func(prefix string) []string {
		var all []string
		for _, m := range []string{"{" + prefix + "}:*", "rate:{" + prefix + "}:*"} {
			ks, err := c.Keys(ctx, m).Result()
			require.NoError(t, err)
			all = append(all, ks...)
		}
		return all
	}
	text := demo(t, "-store", testdb.RedisURL(t), "-redis-prefix", prefix, "-clean")
	require.Contains(t, text, "removed (-clean)")
	require.Empty(t, keys(prefix), "-clean deletes every key of the demo's prefix")

	text = demo(t, "-store", testdb.RedisURL(t), "-redis-prefix", prefix)
	require.Contains(t, text, "data: Redis keys {"+prefix+"}:* and rate:{"+prefix+"}:*")
	require.NotEmpty(t, keys(prefix), "kept without -clean")
	for _, clean := range []string{"-clean", "-seed=2"} {
		err := run(ctx, []string{"-store", testdb.RedisURL(t), "-redis-prefix", prefix, clean}, &strings.Builder{})
		require.ErrorContains(t, err, "already holds keys", "a prefix with data is not the demo's")
	}

	// A user's key under the prefix (the server's default prefix, say)
	// makes the prefix not the demo's: refused, and the key kept.
	user := testdb.UniqueName()
	t.Cleanup(func() { c.Del(ctx, "{"+user+"}:mine") })
	require.NoError(t, c.Set(ctx, "{"+user+"}:mine", "precious", 0).Err())
	err := run(ctx, []string{"-store", testdb.RedisURL(t), "-redis-prefix", user, "-clean"}, &strings.Builder{})
	require.ErrorContains(t, err, "already holds keys")
	require.Equal(t, "precious", c.Get(ctx, "{"+user+"}:mine").Val())
}

func TestDemoPostgres(t *testing.T) {
	dsn := testdb.PostgresDSN(t)
	db, err := sql.Open("postgres", dsn)
	require.NoError(t, err)
	defer db.Close()
	exists := func(schema string) bool {
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1`, schema).Scan(&n))
		return n == 1
	}
	fresh := func() string {
		schema := testdb.UniqueName()
		t.Cleanup(func() { _, _ = db.Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE") })
		return schema
	}

	schema := fresh()
	text := demo(t, "-store", dsn, "-schema", schema, "-clean")
	require.Contains(t, text, "removed (-clean)")
	require.False(t, exists(schema), "-clean drops the schema the demo made")

	text = demo(t, "-store", dsn, "-schema", schema)
	require.Contains(t, text, "data: PostgreSQL schema "+schema)
	require.Contains(t, text, "DROP SCHEMA "+schema+" CASCADE")
	require.True(t, exists(schema), "kept without -clean")
	var claims int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+schema+`.agora_claims`).Scan(&claims))
	require.Equal(t, 2, claims, "the demo's claims are in its schema")
	for _, clean := range []string{"-clean", "-seed=2"} {
		err := run(context.Background(), []string{"-store", dsn, "-schema", schema, clean}, &strings.Builder{})
		require.Error(t, err, "a schema with data is not the demo's")
	}
	require.True(t, exists(schema))

	// A schema that exists is never dropped, however empty; one with a
	// user's table is not used at all.
	mine := fresh()
	_, err = db.Exec("CREATE SCHEMA " + mine)
	require.NoError(t, err)
	err = run(context.Background(), []string{"-store", dsn, "-schema", mine, "-clean"}, &strings.Builder{})
	require.ErrorContains(t, err, "-clean drops only a schema the demo creates")
	_, err = db.Exec("CREATE TABLE " + mine + ".precious (x int)")
	require.NoError(t, err)
	err = run(context.Background(), []string{"-store", dsn, "-schema", mine}, &strings.Builder{})
	require.ErrorContains(t, err, "already holds")
	// As public would be, where examples/server keeps its tables. (Not
	// tried on public itself: the database is shared with other tests.)
	err = run(context.Background(), []string{"-store", dsn, "-schema", mine, "-clean"}, &strings.Builder{})
	require.ErrorContains(t, err, "-clean drops only a schema the demo creates")
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+mine+`.precious`).Scan(&n), "the user's table is kept")
}

func TestDemoBadSchema(t *testing.T) {
	err := run(context.Background(), []string{"-store", "postgres://x@127.0.0.1:1/db", "-schema", "a;DROP"}, &strings.Builder{})
	require.ErrorContains(t, err, "-schema")
}

// watched is an output the demo writes while the test reads it; served
// closes once the demo says it serves.
type watched struct {
	mu     sync.Mutex
	b      strings.Builder
	served chan struct{}
	once   sync.Once
}

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.b.Write(p)
	if text := w.b.String(); strings.Contains(text, "serving until interrupted") && strings.Contains(text, "/healthz\n") {
		w.once.Do(func() { close(w.served) })
	}
	return n, err
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// serveDemo runs the demo with -serve and args until the test ends and
// returns its transcript once it serves, with the URLs it names by name.
func serveDemo(t *testing.T, args ...string) (string, map[string]string) {
	t.Helper()
	ctx, interrupt := context.WithCancel(context.Background())
	out := &watched{served: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"-serve"}, args...), out) }()
	t.Cleanup(func() {
		interrupt()
		require.NoError(t, <-done)
	})
	// No deadline of the test's own: the demo ends or serves, however
	// long a loaded machine takes.
	select {
	case <-out.served:
	case err := <-done:
		t.Fatalf("the demo returned without serving: %v\n%s", err, out.String())
	}
	text := out.String()
	urls := map[string]string{}
	_, list, _ := strings.Cut(text, "serving until interrupted")
	for _, line := range strings.Split(list, "\n")[1:] {
		if i := strings.Index(line, "http://"); i > 0 {
			urls[strings.TrimSpace(line[:i])] = strings.Fields(line[i:])[0]
		}
	}
	return text, urls
}

// TestDemoServe keeps the server up after the demo, past its deadline
// (-timeout bounds the demo, not the serving), with a front door, the
// consoles and the health route, until interrupted.
func TestDemoServe(t *testing.T) {
	t.Parallel()
	text, urls := serveDemo(t, "-claude", "/nonexistent/claude")
	for _, name := range []string{"front door", "jobs", "arena game", "squad chat", "health"} {
		u, ok := urls[name]
		require.True(t, ok, "%s in\n%s", name, text)
		res, err := http.Get(u)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, u)
		want := "text/html"
		if name == "health" {
			want = "application/json"
		}
		require.Contains(t, res.Header.Get("Content-Type"), want, u)
	}
	require.NotContains(t, urls, "agent chat")
	require.Contains(t, text, `agent chat   none: no Claude Code CLI at "/nonexistent/claude"`)
}

// TestDemoServesTheChat: with a Claude Code CLI at -claude, -serve serves
// /chat and names it.
func TestDemoServesTheChat(t *testing.T) {
	t.Parallel()
	cli := filepath.Join(t.TempDir(), "claude")
	require.NoError(t, os.WriteFile(cli, []byte("#!/bin/sh\nexit 0\n"), 0o755))
	_, urls := serveDemo(t, "-claude", cli)
	u, ok := urls["agent chat"]
	require.True(t, ok)
	res, err := http.Get(u)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, res.Header.Get("Content-Type"), "text/html")
}

// TestDemoArenaTranscriptMatchesTheGame: every round the transcript tells
// (who held the lever, who stood on which track, which track the trolley
// took, who was lost and who survived) is the round the game's history
// records; -addr keeps the server at the address given.
func TestDemoArenaTranscriptMatchesTheGame(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	text, urls := serveDemo(t, "-addr", addr, "-claude", "/nonexistent/claude")
	require.Equal(t, "http://"+addr+"/", urls["front door"], "-addr")
	gameURL := urls["arena game"]
	game := gameURL[strings.LastIndex(gameURL, "/")+1:]

	getJSON := func(path string, v any) {
		res, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		require.NoError(t, json.NewDecoder(res.Body).Decode(v))
	}
	var board wire.Scoreboard
	getJSON("/api/games/"+game+"/scoreboard", &board)
	name := map[string]string{}
	for _, c := range board.Coverage {
		name[c.AgentID] = c.DisplayName
	}
	names := func(ids []string) string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = name[id]
		}
		return strings.Join(out, ", ")
	}
	var history wire.History
	getJSON("/api/games/"+game+"/history", &history)

	roundLine := regexp.MustCompile(`(?m)^arena: round (\d+): (.+) at the lever; majority track (.+); minority track (.+)$`)
	outcomeLine := regexp.MustCompile(`(?m)^arena:   the operator saved the (majority|minority): the trolley took the (majority|minority) track — lost: (.*); survived: (.*)$`)
	rounds := roundLine.FindAllStringSubmatch(text, -1)
	outcomes := outcomeLine.FindAllStringSubmatch(text, -1)
	require.NotEmpty(t, history.Rounds)
	require.Len(t, rounds, len(history.Rounds), "a line per round:\n%s", text)
	require.Len(t, outcomes, len(history.Rounds), "an outcome per round:\n%s", text)
	for i, r := range history.Rounds {
		where := fmt.Sprintf("round %d", r.RoundNumber)
		require.Equal(t, strconv.Itoa(r.RoundNumber), rounds[i][1], where)
		require.Equal(t, r.OperatorDisplayName, rounds[i][2], where)
		require.Equal(t, names(r.Majority), rounds[i][3], where)
		require.Equal(t, names(r.Minority), rounds[i][4], where)
		saved, took := outcomes[i][1], outcomes[i][2]
		require.Equal(t, r.Decision, "save_"+saved, where)
		require.NotEqual(t, saved, took, where)
		onTrack := map[string][]string{"majority": r.Majority, "minority": r.Minority}
		require.Equal(t, names(onTrack[took]), outcomes[i][3], "%s: the lost stood on the track the trolley took", where)
		require.Equal(t, names(onTrack[saved]), outcomes[i][4], "%s: the survivors stood on the other", where)
		require.Equal(t, names(r.Lost), outcomes[i][3], where)
		require.Equal(t, names(r.Survivors), outcomes[i][4], where)
	}
}

// TestDemoSquadAnswersDiffer: the discussion's answers are different
// sentences, none repeating its speaker's name.
func TestDemoSquadAnswersDiffer(t *testing.T) {
	t.Parallel()
	text := demo(t, "-seed", "3")
	answers := regexp.MustCompile(`(?m)^discussion:   (\w+): (.+)$`).FindAllStringSubmatch(text, -1)
	require.Len(t, answers, 3, text)
	seen := map[string]bool{}
	for _, a := range answers {
		require.NotContains(t, a[2], a[1], "no doubled name")
		require.False(t, seen[a[2]], "the same answer twice: %s", a[2])
		seen[a[2]] = true
	}
}
