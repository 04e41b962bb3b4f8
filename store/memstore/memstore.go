// Package memstore is Agora's in-memory backend: maps behind one mutex, so
// every atomic step of every domain is simply done under the lock. It is the
// embedded default and what tests of code built on Agora use. Nothing
// survives the process.
package memstore

import (
	"sync"
	"time"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/notify"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// Store implements every domain's store interface in memory. The zero value
// is not usable; call New.
type Store struct {
	mu sync.Mutex

	claims     map[string]*claimRec
	claimOrder []string // claim IDs, ascending
	protocols  map[string]*slots.ProtocolUse
	slots      map[string]*slotRec
	seq        uint64 // last slotRec.seq handed out
	keys       map[string]*identity.Key
	keyOrder   []string
	keyNames   map[string]string // name -> key ID, revoked keys included
	balances   map[string]int64
	queue      jobQueue
	leased     map[string]time.Time // taken slot ID -> lease expiry
	devices    deviceData

	disc      discussionData
	prism     prismData
	games     map[string]arena.Game
	gameOrder []string
	gameLogs  map[string]*gameLog
	chats     map[string]*chatRec
	chatSeq   int64 // the last chat message ID, store-wide

	hub   notify.Hub // the notifier; has its own lock
	rates rateData   // the rate limits (Limiter); has its own lock
}

var (
	_ slots.Store    = (*Store)(nil)
	_ identity.Store = (*Store)(nil)
	_ store.Parallel = (*Store)(nil)
)

// Parallelism implements store.Parallel: one mutex guards every call.
func (s *Store) Parallelism() int { return 1 }

// New returns an empty store.
func New() *Store {
	return &Store{
		claims:    map[string]*claimRec{},
		protocols: map[string]*slots.ProtocolUse{},
		slots:     map[string]*slotRec{},
		keys:      map[string]*identity.Key{},
		keyNames:  map[string]string{},
		balances:  map[string]int64{},
		queue:     jobQueue{sets: map[queueKey]*openSet{}},
		leased:    map[string]time.Time{},
	}
}
