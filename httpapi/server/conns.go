package server

import (
	"net"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/agorahq/agora/internal/httpjson"
)

// connLimit accepts at most n connections at once, so that a host below
// its file-descriptor limit keeps answering the connections it has; more
// wait to be accepted. A connection that holds a slot without a request in
// progress — one still sending its headers (a slow client) or idle between
// requests — gives its slot up, oldest first, to a newcomer when every
// slot is taken: only requests being answered hold the rest back. Hook
// state into the http.Server's ConnState.
type connLimit struct {
	net.Listener
	n     int
	mu    sync.Mutex
	conns map[*limitedConn]struct{} // the connections holding a slot
	freed chan struct{}             // closed and replaced when a slot frees or a connection turns idle
}

func limitListener(ln net.Listener, n int) *connLimit {
	return &connLimit{Listener: ln, n: n, conns: map[*limitedConn]struct{}{}, freed: make(chan struct{})}
}

// Accept implements net.Listener.
func (l *connLimit) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		l.mu.Lock()
		if len(l.conns) < l.n {
			lc := &limitedConn{Conn: c, l: l, idleSince: time.Now()}
			l.conns[lc] = struct{}{}
			l.mu.Unlock()
			return lc, nil
		}
		victim, wait := l.oldestIdle(), l.freed
		var age time.Duration
		if victim != nil {
			age = time.Since(victim.idleSince)
		}
		if victim != nil && age >= slowAfter {
			// Its slot is the newcomer's, decided under the lock by
			// the state the server last reported for it.
			l.release(victim)
			victim.Conn.Close()
			l.mu.Unlock()
			continue
		}
		l.mu.Unlock()
		if victim == nil {
			<-wait
			continue
		}
		// A connection gets a moment to send its request before it
		// counts as slow: its headers may be on their way.
		select {
		case <-wait:
		case <-time.After(slowAfter - age):
		}
	}
}

// slowAfter is how long a connection may be without a request in progress
// before a newcomer may take its slot.
const slowAfter = 50 * time.Millisecond

// oldestIdle returns the connection without a request in progress that
// has been so the longest, or nil. l.mu is held.
func (l *connLimit) oldestIdle() *limitedConn {
	var oldest *limitedConn
	for c := range l.conns {
		if !c.idleSince.IsZero() && (oldest == nil || c.idleSince.Before(oldest.idleSince)) {
			oldest = c
		}
	}
	return oldest
}

// wake tells a waiting Accept to look again. l.mu is held.
func (l *connLimit) wake() {
	close(l.freed)
	l.freed = make(chan struct{})
}

// state is the server's ConnState hook: it tells requests in progress
// from connections that may give their slot up.
func (l *connLimit) state(c net.Conn, s http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateNew, http.StateIdle:
		if _, held := l.conns[lc]; held {
			lc.idleSince = time.Now()
			l.wake()
		}
	case http.StateActive:
		lc.idleSince = time.Time{}
	case http.StateHijacked, http.StateClosed:
		l.release(lc)
	}
}

// release frees c's slot. l.mu is held.
func (l *connLimit) release(c *limitedConn) {
	if _, held := l.conns[c]; held {
		delete(l.conns, c)
		l.wake()
	}
}

type limitedConn struct {
	net.Conn
	l         *connLimit
	idleSince time.Time // zero while a request is in progress; guarded by l.mu
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.release(c)
	c.l.mu.Unlock()
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
