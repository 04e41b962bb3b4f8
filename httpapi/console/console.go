// Package console serves the operator pages: vanilla JS, embedded, no
// build step. Today: /squad, the squad chat with discussion prompts
// highlighted, their response counters and statuses, threaded responses
// and a reply box, updated live over server-sent events. The pages call
// the routes of httpapi on the same origin.
package console

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var files embed.FS

// Handler serves the console pages. Mount it at "/squad" and "/console/".
func Handler() http.Handler {
	sub, _ := fs.Sub(files, "static") // the embedded directory exists
	static := http.StripPrefix("/console/", http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		switch {
		case r.URL.Path == "/squad":
			http.ServeFileFS(w, r, sub, "squad.html")
		case len(r.URL.Path) > len("/console/") && r.URL.Path[:len("/console/")] == "/console/":
			static.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}
