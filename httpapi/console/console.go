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
	"net/http"
	"strings"
)

//go:embed static
var files embed.FS

// Handler serves the console pages. Mount it at "/jobs", "/squad",
// "/device" (where an operator approves an agent CLI's device login),
// "/arena/" and "/console/".
func Handler() http.Handler {
	sub, _ := fs.Sub(files, "static") // the embedded directory exists
	static := http.StripPrefix("/console/", http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; frame-ancestors 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// No other site may frame the page (clickjacking); older browsers
		// read X-Frame-Options.
		w.Header().Set("X-Frame-Options", "SAMEORIGIN")
		switch {
		case r.URL.Path == "/jobs":
			http.ServeFileFS(w, r, sub, "jobs.html")
		case r.URL.Path == "/squad":
			http.ServeFileFS(w, r, sub, "squad.html")
		case r.URL.Path == "/device":
			http.ServeFileFS(w, r, sub, "device.html")
		case strings.HasPrefix(r.URL.Path, "/arena/") && len(r.URL.Path) > len("/arena/"):
			http.ServeFileFS(w, r, sub, "arena.html")
		case strings.HasPrefix(r.URL.Path, "/console/") && len(r.URL.Path) > len("/console/"):
			static.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}
