package redisstore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agorahq/agora/store"
)

// FuzzParseProtocolRank: a member of the names' ranking as rank_protocol
// writes it reads back as the name, its claims and its last use; any other
// text is an error or a use, never a panic.
func FuzzParseProtocolRank(f *testing.F) {
	f.Add(int64(1), int64(1767323045123), "evidence-review")
	f.Add(int64(0), int64(0), "x")
	f.Add(int64(1<<40), int64(-5), "ünï:code\x00")
	f.Fuzz(func(t *testing.T, claims, last int64, name string) {
		if claims < 0 || claims > 1<<52 || last <= -(1<<52) || last > 1<<52 || name == "" {
			_, _ = parseProtocolRank(name) // arbitrary text: no panic
			return
		}
		member := fmt.Sprintf("%016d%016d%s", 1<<53-claims, 1<<52-last, name)
		u, err := parseProtocolRank(member)
		if err != nil {
			t.Fatalf("%q: %v", member, err)
		}
		if u.Name != name || int64(u.Claims) != claims || !u.LastUsedAt.Equal(store.FromMillis(last)) {
			t.Fatalf("%q read as %+v, want %s %d %v", member, u, name, claims, store.FromMillis(last).Format(time.RFC3339Nano))
		}
		if _, err := parseProtocolRank(strings.Repeat("x", 32) + name); err == nil {
			t.Fatalf("digits of x read without error")
		}
	})
}
