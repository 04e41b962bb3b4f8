// Package console serves the operator pages: vanilla JS, embedded, no
// build step: /jobs, every claim with its 7-layer pipeline bar, its flags,
// consensus record and role slots (configured with + and −, then watched
// live); /squad, the squad chat with discussion prompts highlighted, their
// response counters and statuses, threaded responses and a reply box; and
// /arena/{game_id}, a spectator view of a game. Every page updates live
// over server-sent events and calls the routes of httpapi on the same
// origin; /jobs asks for an API key, kept in the browser tab, and /squad
// and /arena/{game_id} do too on a server that requires keys
// (httpapi.WithKeys). Every page loads static/console.js before its own
// script: the DOM helpers, the tab's API key and the form that asks for
// it, the one fetch wrapper the pages call the API with, and the event
// stream read with a key, written once.
package console

import (
	"embed"
	"io/fs"
	"log/slog"
	"net/http"

	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/store"
)

//go:embed static
var files embed.FS

// Handler serves the console pages. Mount it at "/jobs", "/squad",
// "/device" (where an operator approves an agent CLI's device login),
// "/arena/" and "/console/". The pages and files answer GET and HEAD;
// anything else under those paths answers as the API does, in JSON: a
// path with no page or file 404, another method 405.
func Handler() http.Handler {
	sub, _ := fs.Sub(files, "static") // the embedded directory exists
	rt := httpjson.NewRouter(slog.Default())
	page := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.ServeFileFS(w, r, sub, name) })
	}
	rt.HandleRaw("GET /jobs", page("jobs.html"))
	rt.HandleRaw("GET /squad", page("squad.html"))
	rt.HandleRaw("GET /device", page("device.html"))
	rt.HandleRaw("GET /arena/{game_id}", page("arena.html"))
	rt.HandleRaw("GET /console/{file}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("file")
		if fi, err := fs.Stat(sub, name); err != nil || fi.IsDir() {
			httpjson.WriteError(w, r, rt.Log, store.Errorf(store.ErrNotFound, "file_not_found", "no file %s", r.URL.Path))
			return
		}
		http.ServeFileFS(w, r, sub, name)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; frame-ancestors 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// No other site may frame the page (clickjacking); older browsers
		// read X-Frame-Options.
		w.Header().Set("X-Frame-Options", "SAMEORIGIN")
		rt.ServeHTTP(w, r)
	})
}
