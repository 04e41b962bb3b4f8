package server

import (
	"net"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/agorahq/agora/internal/httpjson"
)

// limitListener accepts at most n connections at once: a host below its
// file-descriptor limit keeps answering the connections it has.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limited{Listener: ln, slots: make(chan struct{}, n)}
}

type limited struct {
	net.Listener
	slots chan struct{}
}

func (l *limited) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// cleanPaths answers a path with "." or ".." segments or doubled slashes
// with a JSON 400 instead of the ServeMux's redirect to the cleaned path:
// no route has such a path, and a redirect would invite the client to
// request another one than it named.
func cleanPaths(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		clean := path.Clean(p)
		if strings.HasSuffix(p, "/") && clean != "/" {
			clean += "/"
		}
		if p != "" && p != clean {
			httpjson.Write(w, http.StatusBadRequest, httpjson.ErrorBody("invalid_path", "the path "+p+" is not in clean form; no route has . or .. segments or doubled slashes"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// splitList returns the non-empty, trimmed items of a comma-separated list.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
