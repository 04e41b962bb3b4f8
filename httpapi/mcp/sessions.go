package mcp

import (
	"net/http"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/store"
)

// DefaultMaxSessionsPerKey is how many Streamable HTTP sessions Handler
// lets one key hold at once when Options.MaxSessionsPerKey is 0.
const DefaultMaxSessionsPerKey = 32

// sessionIDHeader is the Streamable HTTP header that names a session.
const sessionIDHeader = "Mcp-Session-Id"

// sessionCap bounds the sessions one key holds: what the SDK keeps per
// session (its connection, goroutines and streams) is then bounded per
// client, not only released after SessionTimeout. The SDK has no such cap,
// so a request that would open a session (a POST without Mcp-Session-Id)
// reserves a place under the mutex before the SDK sees it, and the session
// it opened is recorded against the key once answered; a session the SDK
// has since closed (DELETE, idle timeout) stops counting at the next count.
type sessionCap struct {
	max int
	srv *sdk.Server

	mu      sync.Mutex
	owner   map[string]string // session ID → the key that opened it
	opening map[string]int    // key ID → sessions being opened now
}

func newSessionCap(max int, srv *sdk.Server) *sessionCap {
	return &sessionCap{max: max, srv: srv, owner: map[string]string{}, opening: map[string]int{}}
}

// serve hands r to next, refusing it with 429 too_many_sessions when it
// would open a session beyond the key's cap.
func (c *sessionCap) serve(w http.ResponseWriter, r *http.Request, keyID string, next http.Handler) error {
	if c.max < 0 || r.Method != http.MethodPost || r.Header.Get(sessionIDHeader) != "" {
		next.ServeHTTP(w, r)
		return nil
	}
	if !c.reserve(keyID) {
		return store.Errorf(httpjson.ErrRateLimited, "too_many_sessions",
			"this key holds %d MCP sessions, the most it may: close one (DELETE with its Mcp-Session-Id) or let one go idle", c.max)
	}
	defer func() { c.opened(keyID, w.Header().Get(sessionIDHeader)) }()
	next.ServeHTTP(w, r)
	return nil
}

// reserve takes a place for a session keyID is opening, if it has one.
// The SDK's live sessions are read under the mutex: read before it, they
// could miss a session whose opening request recorded it meanwhile, and
// its record would be dropped as of a closed session, its place freed
// while it is held.
func (c *sessionCap) reserve(keyID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := map[string]bool{}
	for ss := range c.srv.Sessions() {
		live[ss.ID()] = true
	}
	held := c.opening[keyID]
	for id, owner := range c.owner {
		switch {
		case !live[id]:
			delete(c.owner, id)
		case owner == keyID:
			held++
		}
	}
	if held >= c.max {
		return false
	}
	c.opening[keyID]++
	return true
}

// opened ends keyID's reservation, recording the session it opened, if
// any (a refused initialize opens none).
func (c *sessionCap) opened(keyID, sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.opening[keyID]--; c.opening[keyID] <= 0 {
		delete(c.opening, keyID)
	}
	if sessionID != "" {
		c.owner[sessionID] = keyID
	}
}
