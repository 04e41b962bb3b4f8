package httpapi

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// The chat page is embedded here, beside the handler that serves it, not
// among the console's operator pages: it is part of what AgentChat (and
// InterceptChat, in front of a host's application) serves at /chat, and
// its /chat.js is loaded into the host's own pages, so it stands alone,
// sharing no script with the console.
//
//go:embed chatpage
var chatFiles embed.FS

// chatPage serves the chat console of docs/agentchat.md: a self-contained
// page at /chat (vanilla JS, no build step) that talks to the agent API
// under /agent/conversations, and /chat.js, which a host's own page loads
// to render the console into an element with Agora.chat("#el").
func chatPage() http.Handler {
	sub, _ := fs.Sub(chatFiles, "chatpage") // the embedded directory exists
	files := http.FileServer(http.FS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// No other site may frame the page (clickjacking); older browsers
		// read X-Frame-Options.
		w.Header().Set("X-Frame-Options", "SAMEORIGIN")
		switch r.URL.Path {
		case "/chat", "/chat/":
			http.ServeFileFS(w, r, sub, "index.html")
		case "/chat.js", "/chat/style.css":
			r2 := r.Clone(r.Context())
			r2.URL.Path = strings.TrimPrefix(r.URL.Path, "/chat")
			if r.URL.Path == "/chat.js" {
				r2.URL.Path = "/chat.js"
			}
			files.ServeHTTP(w, r2)
		default:
			http.NotFound(w, r)
		}
	})
}
