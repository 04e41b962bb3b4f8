package agentchat

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed ui
var uiFiles embed.FS

// UI returns the chat console of seeds/agentchat.md: a self-contained page
// (vanilla JS, no build step) that talks to the agent API under
// /agent/conversations. Mount it at "/chat" and "/chat/".
func UI() http.Handler {
	sub, _ := fs.Sub(uiFiles, "ui") // the embedded directory exists
	files := http.FileServer(http.FS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		switch r.URL.Path {
		case "/chat", "/chat/":
			http.ServeFileFS(w, r, sub, "index.html")
		case "/chat/app.js", "/chat/style.css":
			r2 := r.Clone(r.Context())
			r2.URL.Path = r.URL.Path[len("/chat"):]
			files.ServeHTTP(w, r2)
		default:
			http.NotFound(w, r)
		}
	})
}
