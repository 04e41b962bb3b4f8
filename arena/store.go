package arena

import (
	"context"
	"time"

	"github.com/agorahq/agora/store"
)

// ErrVersionConflict is what UpdateGame returns when another change was
// saved first.
var ErrVersionConflict = &store.Error{Kind: store.ErrConflict, Code: "game_version_conflict", Message: "the game changed concurrently"}

// Store keeps games: each game's document, saved whole with
// compare-and-set on its version, and beside it two append-only logs, its
// feed and its resolved rounds, which a save extends in the same atomic
// step and nothing rewrites.
type Store interface {
	// CreateGame stores g (Version 1), or returns ErrGameExists, changing
	// nothing, when a game has its ID.
	CreateGame(ctx context.Context, g Game) error
	// GetGame returns a game or ErrGameNotFound.
	GetGame(ctx context.Context, id string) (Game, error)
	// ListGames returns up to limit games, newest first, in status when it
	// is set.
	ListGames(ctx context.Context, status Status, limit int) ([]Summary, error)
	// UpdateGame stores next if the stored game's Version is
	// next.Version-1, and appends next.Appended's feed items and rounds to
	// the game's logs in the same atomic step. Otherwise it returns ErrVersionConflict together with
	// the game as it is stored now, read in the same atomic step as the
	// failed comparison (no extra round trip), so the caller can apply its
	// change again without reading; current is meaningful only with
	// ErrVersionConflict. An unknown game is ErrGameNotFound, whatever
	// next.Version says: UpdateGame never creates a game.
	UpdateGame(ctx context.Context, next Game) (current Game, err error)
	// FeedAfter returns up to limit of a game's feed items whose Seq is
	// above after, oldest first; an unknown game is ErrGameNotFound.
	FeedAfter(ctx context.Context, id string, after int64, limit int) ([]FeedItem, error)
	// FeedLatest returns a game's last limit feed items, newest first; an
	// unknown game is ErrGameNotFound.
	FeedLatest(ctx context.Context, id string, limit int) ([]FeedItem, error)
	// ResolvedRounds returns a game's resolved rounds in order, with their
	// arguments; an unknown game is ErrGameNotFound.
	ResolvedRounds(ctx context.Context, id string) ([]Round, error)
	// OverdueGames returns the games whose phase deadline is at or before
	// now, from an index.
	OverdueGames(ctx context.Context, now time.Time) ([]string, error)
}

// Summary is a game as GET /games lists it.
type Summary struct {
	ID        string    `json:"id"`         // the game's ID
	Status    Status    `json:"status"`     // the game's Status as last saved
	CreatedAt time.Time `json:"created_at"` // the game's CreatedAt
}
