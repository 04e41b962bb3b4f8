// Package ids makes the IDs every Agora service gives what it creates.
package ids

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"time"
)

// IDs are opaque strings to callers. Inside Agora they sort by creation time:
// a prefix, 12 hex digits of Unix milliseconds, a 4-hex-digit sequence that
// keeps IDs made in the same millisecond by one generator in order, and 8 hex
// digits of randomness so that generators in different processes do not
// collide. Backends order "oldest first" by ID, so this property matters.

// Gen generates time-ordered IDs. The zero value is ready to use and safe
// for concurrent use.
type Gen struct {
	mu   sync.Mutex
	last int64
	seq  uint16
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// New returns a fresh ID such as "slot_018f2c3a4b5c0000a1b2c3d4".
func (g *Gen) New(prefix string) string {
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	ms := now().UnixMilli()
	g.mu.Lock()
	if ms <= g.last {
		// Same millisecond (or a clock that went back): keep order by
		// continuing from the last timestamp.
		ms = g.last
		g.seq++
		if g.seq == 0 {
			ms++
		}
	} else {
		g.seq = 0
	}
	g.last = ms
	seq := g.seq
	g.mu.Unlock()

	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	b := make([]byte, 0, len(prefix)+1+24)
	b = append(b, prefix...)
	b = append(b, '_')
	ts := strconv.FormatInt(ms, 16)
	for i := len(ts); i < 12; i++ {
		b = append(b, '0')
	}
	b = append(b, ts...)
	sq := strconv.FormatUint(uint64(seq), 16)
	for i := len(sq); i < 4; i++ {
		b = append(b, '0')
	}
	b = append(b, sq...)
	b = hex.AppendEncode(b, rnd[:])
	return string(b)
}
