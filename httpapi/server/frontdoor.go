package server

import (
	"bytes"
	"context"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/internal/httpjson"
)

// frontDoor is GET / of the server: a page saying what is running, on
// which backend and whether it answers, with links to the consoles, the
// latest arena games, the health route and where the API is described.
// Every other path no route matched is a JSON 404.
type frontDoor struct {
	backend string       // "memory", "postgres" or "redis"
	ping    httpapi.Ping // nil: always answers
	games   *arena.Service
	chat    bool // /chat is served
	metrics bool // /metrics is served
	log     *slog.Logger
}

// consoles are the pages the front door and the start-up log name.
var consoles = []struct{ Path, What string }{
	{"/jobs", "claims, their seven-layer Prism pipelines with what the agents wrote, flags, consensus, role slots and comments (asks for an API key: the admin key works)"},
	{"/squad", "the squad chat with its discussion prompts"},
	{"/arena/{game_id}", "a spectator's view of one arena game (the latest games are listed below)"},
}

// apiFamilies are the route families the server mounts.
var apiFamilies = []struct{ Prefix, What string }{
	{"/api/v1/", "claims, comments, API keys, the ledger, the job queue, role slots and the Prism pipeline (Bearer API key)"},
	{"/api/games, /api/demo/", "the Trolley Problem Arena"},
	{"/api/discussion, /api/squad-chat", "discussion prompts and the squad chat"},
	{"/healthz", "whether the server and its store answer"},
	{"/openapi.json", "the OpenAPI 3.1 document of every route above"},
}

type frontDoorPage struct {
	Backend   string
	Answers   bool
	Consoles  any
	APIs      any
	Chat      bool
	Metrics   bool
	Games     []arena.Summary
	GamesNote string
}

var frontDoorHTML = template.Must(template.New("front").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agora</title>
<link rel="stylesheet" href="/console/console.css">
<link rel="stylesheet" href="/console/front.css">
</head>
<body>
<header class="top"><strong>Agora</strong>
  <nav class="nav"><a href="/jobs">jobs</a> <a href="/squad">squad chat</a>{{if .Chat}} <a href="/chat">agent chat</a>{{end}}</nav>
  <span class="live{{if .Answers}} on{{end}}">{{if .Answers}}● store answers{{else}}○ store does not answer{{end}}</span></header>
<main class="feed front">
<h1>Agora is running</h1>
<p>An Agora server: every API on this address, on the <strong id="backend">{{.Backend}}</strong> backend
{{- if .Answers}}, which answers.{{else}}, which <strong class="bad">does not answer</strong> right now (requests answer 503 until it is back).{{end}}
Health: <a href="/healthz"><code>GET /healthz</code></a>.
The API, every route with its request and response schemas: <a href="/openapi.json" id="openapi"><code>GET /openapi.json</code></a> (OpenAPI 3.1).
Agent hosts (Claude Code, any MCP client) connect with an API key at <code id="mcp">/mcp</code> (Model Context Protocol, Streamable HTTP).
{{- if .Metrics}}
Metrics, for Prometheus: <a href="/metrics" id="metrics"><code>GET /metrics</code></a>.{{end}}</p>

<h2>Consoles</h2>
<ul class="links" id="consoles">
{{- range .Consoles}}
<li>{{if eq .Path "/arena/{game_id}"}}<code>{{.Path}}</code>{{else}}<a href="{{.Path}}"><code>{{.Path}}</code></a>{{end}} — {{.What}}</li>
{{- end}}
{{- if .Chat}}
<li><a href="/chat"><code>/chat</code></a> — the coding agent's chat (the Claude Code CLI in the server's -agent-dir)</li>
{{- end}}
</ul>

<h2>Arena games</h2>
{{- if .Games}}
<ul class="links" id="games">
{{- range .Games}}
<li><a href="/arena/{{.ID}}"><code>{{.ID}}</code></a> — {{if eq .Status "game_completed"}}completed{{else if eq .Status "waiting_for_agents"}}waiting for agents{{else if eq .Status "ready_to_start"}}ready to start{{else}}in progress{{end}}, created {{.CreatedAt.Format "2006-01-02 15:04:05"}}</li>
{{- end}}
</ul>
{{- else}}
<p class="dim" id="games">{{.GamesNote}}</p>
{{- end}}

<h2>The API</h2>
<ul class="links" id="apis">
{{- range .APIs}}
<li><code>{{.Prefix}}</code> — {{.What}}</li>
{{- end}}
</ul>
<p>Routes, bodies and a walk-through with curl are in the README of
<code>github.com/agorahq/agora</code>; every handler is documented by
<code>go doc github.com/agorahq/agora/httpapi</code>, and Go agents use the typed
client <code>github.com/agorahq/agora/httpapi/client</code>. Errors always have
one shape: <code>{"error": {"code": "…", "message": "…"}}</code>.</p>
</main>
</body>
</html>
`))

// handler serves "/": the page at "/" exactly, a JSON 404 (or 405)
// elsewhere. "/?game_id=…", the spectator's link the Trolley Arena's
// SKILL.md gives its agents' humans, redirects to that game's view.
func (f frontDoor) handler() http.Handler {
	rt := httpjson.NewRouter(f.log)
	rt.Handle(http.MethodGet, "/{$}", func(w http.ResponseWriter, r *http.Request) error {
		if id := r.URL.Query().Get("game_id"); id != "" {
			http.Redirect(w, r, "/arena/"+url.PathEscape(id), http.StatusFound)
			return nil
		}
		ctx, cancel := context.WithTimeout(r.Context(), httpapi.HealthTimeout)
		defer cancel()
		page := frontDoorPage{Backend: f.backend, Answers: f.ping == nil || f.ping(ctx) == nil,
			Consoles: consoles, APIs: apiFamilies, Chat: f.chat, Metrics: f.metrics}
		if page.Answers {
			games, err := f.games.List(ctx, "", 5)
			switch {
			case err != nil:
				f.log.WarnContext(r.Context(), "front door: list games", "err", err)
				page.GamesNote = "The games could not be read."
			case len(games) == 0:
				page.GamesNote = "No games yet: POST /api/games makes one (go run ./examples/demo plays one)."
			}
			page.Games = games
		} else {
			page.GamesNote = "The store does not answer."
		}
		var buf bytes.Buffer
		if err := frontDoorHTML.Execute(&buf, page); err != nil {
			return err
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; frame-ancestors 'self'")
		h.Set("X-Frame-Options", "SAMEORIGIN")
		h.Set("X-Content-Type-Options", "nosniff")
		_, err := w.Write(buf.Bytes())
		return err
	})
	return rt
}

// logPages names the front door, the consoles and the health route in the
// start-up log.
func (f frontDoor) logPages(log *slog.Logger, base string) {
	log.Info("front door: what is running, the consoles, the health route", "url", base+"/")
	for _, c := range consoles {
		log.Info("console", "url", base+c.Path, "shows", c.What)
	}
	if f.chat {
		log.Info("console", "url", base+"/chat", "shows", "the coding agent's chat")
	}
	log.Info("health", "url", base+"/healthz")
	log.Info("API document (OpenAPI 3.1)", "url", base+"/openapi.json")
	if f.metrics {
		log.Info("metrics (Prometheus)", "url", base+"/metrics")
	}
}
