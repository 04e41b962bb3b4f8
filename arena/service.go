package arena

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/aggregate"
	"github.com/agorahq/agora/internal/ids"
	"github.com/agorahq/agora/internal/notify"
	"github.com/agorahq/agora/internal/sweep"
	"github.com/agorahq/agora/store"
)

// Service runs games over a Store. Every action applies a transition of
// the engine to a copy of the game and saves it with compare-and-set, so
// each saved change raises the game's version by exactly one and is
// announced on the notifier, and long polls and event streams in every
// process wake up.
//
// The Service remembers the last version of each game it saved or was
// handed back by the store (a bounded cache), and starts an action from it
// instead of reading: posting an argument on a game whose last change this
// process made is one round trip, the save. A remembered game may be stale
// when another process changed the game since; compare-and-set then
// refuses the save and hands back the stored game, which the next attempt
// starts from. An action the remembered game refuses is tried again on the
// stored game before its error is returned, so a stale copy never turns a
// valid action into an error, nor lets an invalid one through. Once an
// action found the remembered game stale, the next reads first (see
// aggregate.Saver.Change).
type Service struct {
	store    Store
	notifier store.Notifier
	now      func() time.Time
	ids      ids.Gen
	games    *aggregate.Saver[Game, struct{}]
	writer   FillerWriter
	auto     *autoFillers
	obs      Observer
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock; the default is time.Now.
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithNotifier announces every change on n, in the background: posting
// an argument waits for the store only. Without a notifier, changes are
// announced to this process's views only, which re-read every second for
// the rest.
func WithNotifier(n store.Notifier) Option {
	return func(s *Service) { s.notifier = notify.ForService(n) }
}

// New returns a Service over st.
func New(st Store, opts ...Option) *Service {
	s := &Service{store: st, now: time.Now, writer: templates{}, notifier: notify.Local(), obs: nopObserver{}}
	for _, o := range opts {
		o(s)
	}
	s.ids.Now = s.now
	s.games = aggregate.New[Game, struct{}](gameStore{st}, ErrVersionConflict)
	return s
}

func (s *Service) env() env { return env{now: store.Milli(s.now()), ids: &s.ids} }

// topic is the notifier topic of a game; its events are Changes as JSON.
func topic(gameID string) string { return "arena:" + gameID }

// Change is what the notifier announces of a saved change: the game's new
// version, status and feed length, and the feed items the change appended
// — unless they would make the event too large for a notifier (Items is
// then nil and Truncated set: read them with FeedAfter).
type Change struct {
	Version int64  `json:"version"` // the game's Version after the change
	Status  Status `json:"status"`  // the game's Status after the change
	// FeedLen is the game's FeedLen after the change: the Seq of its
	// last feed item.
	FeedLen int64 `json:"feed_len"`
	// Items are the feed items the change appended, in Seq order; nil
	// when Truncated.
	Items []FeedItem `json:"items,omitempty"`
	// Truncated says Items was left out; the reader reads the feed after
	// the Seq it has.
	Truncated bool `json:"truncated,omitempty"`
}

// maxChangeBytes keeps an announced change under PostgreSQL's NOTIFY
// payload limit (8000 bytes) with room for the topic.
const maxChangeBytes = 7000

// announcement encodes the change that saved g.
func announcement(g Game) []byte {
	c := Change{Version: g.Version, Status: g.Status, FeedLen: g.FeedLen, Items: g.Appended.Feed}
	data, _ := json.Marshal(c)
	if len(data) > maxChangeBytes {
		c.Items, c.Truncated = nil, true
		data, _ = json.Marshal(c)
	}
	return data
}

// ParseChange decodes an announced change. An event that is not one (a
// bare version, as older servers announced) has Truncated set, so its
// reader reads what it needs.
func ParseChange(data []byte) Change {
	var c Change
	if json.Unmarshal(data, &c) != nil {
		v, _ := strconv.ParseInt(string(data), 10, 64)
		return Change{Version: v, Truncated: true}
	}
	return c
}

// change applies fn, the action named action (see Observer.ArenaAction),
// to a copy of the game and saves it with compare-and-set
// (aggregate.Saver.Change: from the remembered game when there is one,
// retrying on the stored game, fn's error returned only when the stored
// game refuses it); once saved, the change is announced and observed.
func (s *Service) change(ctx context.Context, id, action string, fn func(g *Game, e env) error) (Game, error) {
	var from Status // the status of the game the saved change started from
	g, err := s.games.Change(ctx, id, func(g *Game) (struct{}, error) {
		from = g.Status
		return struct{}{}, fn(g, s.env())
	})
	if err != nil {
		return g, err
	}
	s.announce(ctx, g)
	s.obs.ArenaAction(ctx, action)
	if g.Status != from {
		s.obs.GameEntered(ctx, g.Status)
	}
	return g, nil
}

// gameStore is the Service's Store as aggregate.Saver reads and saves
// games.
type gameStore struct{ Store }

// Load reads a game.
func (st gameStore) Load(ctx context.Context, id string) (Game, error) { return st.GetGame(ctx, id) }

// Save saves next with compare-and-set (Store.UpdateGame).
func (st gameStore) Save(ctx context.Context, next Game, _ struct{}) (Game, error) {
	return st.UpdateGame(ctx, next)
}

// AggregateID returns g.ID, the key aggregate.Saver remembers g by.
func (g Game) AggregateID() string { return g.ID }

// AggregateVersion returns g.Version, the version compare-and-set checks.
func (g Game) AggregateVersion() int64 { return g.Version }

// WithVersion returns g at version v, as aggregate.Saver saves a change.
func (g Game) WithVersion(v int64) Game {
	g.Version = v
	return g
}

// announce tells the notifier of saved, the game a change just saved, and
// starts the game's fillers when one is due.
func (s *Service) announce(ctx context.Context, saved Game) {
	if !notify.Quiet(s.notifier) {
		_ = s.notifier.Publish(context.WithoutCancel(ctx), topic(saved.ID), announcement(saved))
	}
	if s.auto != nil {
		if _, due := saved.DueFiller(); due {
			s.kick(saved.ID)
		}
	}
}

// Create starts a game waiting for agents; 0 means the defaults.
func (s *Service) Create(ctx context.Context, minPlayers int, phaseTimeout time.Duration) (_ Game, err error) {
	ctx, done := s.obs.Call(ctx, "arena.Create")
	defer func() { done(err) }()
	g, err := NewGame(s.ids.New("game"), minPlayers, phaseTimeout, s.env().now)
	if err != nil {
		return Game{}, err
	}
	if err := s.store.CreateGame(ctx, g); err != nil {
		return g, err
	}
	s.games.Remember(g)
	s.obs.GameEntered(ctx, g.Status)
	return g, nil
}

// Game returns a game.
func (s *Service) Game(ctx context.Context, id string) (_ Game, err error) {
	ctx, done := s.obs.Call(ctx, "arena.Game")
	defer func() { done(err) }()
	return s.store.GetGame(ctx, id)
}

// GameAt returns a game at version minVersion or later: the game this
// process remembers (it made or read that change) when it is that recent,
// else the stored game, which is then remembered. Many readers following
// a game's changes in one process (event streams, the pages behind them)
// read it from the store at most once per change, and not at all when
// this process made the change.
func (s *Service) GameAt(ctx context.Context, id string, minVersion int64) (_ Game, err error) {
	ctx, done := s.obs.Call(ctx, "arena.GameAt")
	defer func() { done(err) }()
	return s.games.At(ctx, id, minVersion)
}

// FeedLatest returns a game's last limit feed items, newest first.
func (s *Service) FeedLatest(ctx context.Context, id string, limit int) (_ []FeedItem, err error) {
	ctx, done := s.obs.Call(ctx, "arena.FeedLatest")
	defer func() { done(err) }()
	return s.store.FeedLatest(ctx, id, limit)
}

// FeedAfter returns up to limit of a game's feed items after the seq-th,
// oldest first.
func (s *Service) FeedAfter(ctx context.Context, id string, after int64, limit int) (_ []FeedItem, err error) {
	ctx, done := s.obs.Call(ctx, "arena.FeedAfter")
	defer func() { done(err) }()
	return s.store.FeedAfter(ctx, id, after, limit)
}

// History returns a game's resolved rounds in order, with their
// arguments.
func (s *Service) History(ctx context.Context, id string) (_ []Round, err error) {
	ctx, done := s.obs.Call(ctx, "arena.History")
	defer func() { done(err) }()
	return s.store.ResolvedRounds(ctx, id)
}

// List lists games newest first, in status when it is set; an unknown
// status is a validation error.
func (s *Service) List(ctx context.Context, status Status, limit int) (_ []Summary, err error) {
	ctx, done := s.obs.Call(ctx, "arena.List")
	defer func() { done(err) }()
	if status != "" && !status.Valid() {
		return nil, store.Errorf(store.ErrInvalid, "invalid_status", "status must be one of waiting_for_agents, ready_to_start, round_phase_1, round_phase_2, round_phase_3, awaiting_operator_decision, round_resolved, game_completed")
	}
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	return s.store.ListGames(ctx, status, limit)
}

// ErrTokenWithKey refuses an agent token on a registration a key made: the
// agent is bound to the key.
var ErrTokenWithKey = &store.Error{Kind: store.ErrInvalid, Code: "invalid_token", Message: "this server binds an agent to the API key that registers it: send no token, act with the same key"}

// Register adds an agent that the caller (identity.FromContext) binds: when
// a key authenticated the caller, the agent is that key's and only it acts
// for the agent (a token is then refused with ErrTokenWithKey); else, with
// a token, actions must present it as the caller's bearer token; with
// neither, anyone acts for it.
func (s *Service) Register(ctx context.Context, gameID, name string, token *string) (_ Agent, err error) {
	ctx, done := s.obs.Call(ctx, "arena.Register")
	defer func() { done(err) }()
	by := actorOf(ctx)
	switch {
	case by.KeyID != "" && token != nil && *token != "":
		return Agent{}, ErrTokenWithKey
	case by.KeyID == "":
		by.Token = ""
		if token != nil {
			by.Token = *token
		}
	}
	var a Agent
	_, err = s.change(ctx, gameID, "register", func(g *Game, e env) error {
		var err error
		a, err = g.register(name, by, e)
		return err
	})
	return a, err
}

// ErrAlreadyJoined refuses Join to a key that already has an agent in the
// game.
var ErrAlreadyJoined = &store.Error{Kind: store.ErrConflict, Code: "already_joined", Message: "this API key already has an agent in this game: act with it"}

// Join registers an agent of the caller's key (identity.FromContext must be
// keyed) under name, as Register does, unless the key already has an agent
// in the game: that is ErrAlreadyJoined, decided in the same change as the
// registration, so that two joins at once seat one agent. It is the join of
// an edge that knows a player by its key alone (the MCP tools), for which a
// second agent of the key would be a seat nobody plays.
func (s *Service) Join(ctx context.Context, gameID, name string) (_ Agent, err error) {
	ctx, done := s.obs.Call(ctx, "arena.Join")
	defer func() { done(err) }()
	by := actorOf(ctx)
	if by.KeyID == "" {
		return Agent{}, identity.ErrMissingToken
	}
	var a Agent
	_, err = s.change(ctx, gameID, "register", func(g *Game, e env) error {
		for _, held := range g.Agents {
			if held.KeyID == by.KeyID {
				return ErrAlreadyJoined
			}
		}
		var err error
		a, err = g.register(name, by, e)
		return err
	})
	return a, err
}

// Start begins the first round once an agent has registered. A game with
// fewer agents than its min_players (or than TableMin) is made up with
// fillers in the same step, as the original's start route seats fillers
// before it checks, so it starts with at least min_players agents. A game
// nobody registered for is refused ("Not enough agents to start").
func (s *Service) Start(ctx context.Context, gameID string) (_ Game, err error) {
	ctx, done := s.obs.Call(ctx, "arena.Start")
	defer func() { done(err) }()
	return s.change(ctx, gameID, "start", func(g *Game, e env) error {
		if len(g.Agents) > 0 {
			if err := g.fillTable(e); err != nil {
				return err
			}
		}
		return g.start(e)
	})
}

// ArgueParams is an argument of an agent in a round of a game.
type ArgueParams struct {
	GameID, RoundID string // the game and its round being played
	AgentID         string // the arguing agent; the caller must act for it
	Text            string // trimmed, then 1 to MaxArgumentChars characters
}

// Argue records p's argument when the caller may act for p.AgentID (see
// Register), else returns ErrNotYourAgent or ErrBadToken.
func (s *Service) Argue(ctx context.Context, p ArgueParams) (_ Game, err error) {
	ctx, done := s.obs.Call(ctx, "arena.Argue")
	defer func() { done(err) }()
	by := actorOf(ctx)
	return s.change(ctx, p.GameID, "argue", func(g *Game, e env) error {
		if err := g.checkActor(p.AgentID, by); err != nil {
			return err
		}
		return g.argue(p.RoundID, p.AgentID, p.Text, e)
	})
}

// DecideParams is the decision of a round's operator.
type DecideParams struct {
	GameID, RoundID string   // the game and its round being played
	AgentID         string   // the round's operator; the caller must act for it
	Decision        Decision // SaveMajority or SaveMinority
}

// Decide records p's decision when the caller may act for p.AgentID, the
// round's operator (see Register).
func (s *Service) Decide(ctx context.Context, p DecideParams) (_ Game, err error) {
	ctx, done := s.obs.Call(ctx, "arena.Decide")
	defer func() { done(err) }()
	by := actorOf(ctx)
	return s.change(ctx, p.GameID, "decide", func(g *Game, e env) error {
		if err := g.checkActor(p.AgentID, by); err != nil {
			return err
		}
		return g.decide(p.RoundID, p.AgentID, p.Decision, e)
	})
}

// Advance applies an admin action.
func (s *Service) Advance(ctx context.Context, gameID string, a AdvanceAction) (_ Game, err error) {
	ctx, done := s.obs.Call(ctx, "arena.Advance")
	defer func() { done(err) }()
	return s.change(ctx, gameID, "advance", func(g *Game, e env) error { return g.advance(a, e) })
}

// Sweep advances every game whose phase deadline passed and returns how
// many it advanced. Sweepers in several processes never advance the same
// phase twice: the compare-and-set lets one win, and the loser is handed
// back a game whose deadline is no longer due.
func (s *Service) Sweep(ctx context.Context) (_ int, err error) {
	ctx, done := s.obs.Call(ctx, "arena.Sweep")
	defer func() { done(err) }()
	ids, err := s.store.OverdueGames(ctx, s.now())
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		_, err := s.change(ctx, id, "timeout", func(g *Game, e env) error {
			if !g.sweep(e) {
				return aggregate.ErrNothing
			}
			return nil
		})
		switch {
		case err == nil:
			n++
		case !errors.Is(err, aggregate.ErrNothing):
			return n, err
		}
	}
	return n, nil
}

// RunSweeper calls Sweep every interval until ctx is done.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration, onErr func(error)) {
	sweep.Every(ctx, interval, func(ctx context.Context) error {
		_, err := s.Sweep(ctx)
		return err
	}, onErr)
}

// MaxWait bounds Wait.
const MaxWait = 30 * time.Second

// Wait returns the game as soon as its version is not version, or as
// it stands after d (at most MaxWait).
func (s *Service) Wait(ctx context.Context, id string, version int64, d time.Duration) (_ Game, err error) {
	ctx, done := s.obs.Call(ctx, "arena.Wait")
	defer func() { done(err) }()
	d = min(d, MaxWait)
	var events <-chan []byte
	var poll time.Duration
	if d > 0 {
		defer s.obs.LongPoll(ctx)()
		sub, err := s.notifier.Subscribe(ctx, topic(id))
		if err != nil {
			return Game{}, err
		}
		defer sub.Close()
		events, poll = sub.C, sub.Poll()
	}
	end := time.NewTimer(d)
	defer end.Stop()
	for {
		g, err := s.store.GetGame(ctx, id)
		if err != nil || g.Version != version || d <= 0 {
			return g, err
		}
		reread := time.NewTimer(poll) // changes elsewhere, or a lost event
		select {
		case <-ctx.Done():
			reread.Stop()
			return Game{}, ctx.Err()
		case <-end.C:
			reread.Stop()
			return s.store.GetGame(ctx, id)
		case _, ok := <-events:
			if !ok {
				events = nil
			}
		case <-reread.C:
		}
		reread.Stop()
	}
}

// Subscribe returns the notifier subscription of a game's changes.
func (s *Service) Subscribe(ctx context.Context, id string) (_ *store.Subscription, err error) {
	ctx, done := s.obs.Call(ctx, "arena.Subscribe")
	defer func() { done(err) }()
	return s.notifier.Subscribe(ctx, topic(id))
}

// Demo creates a game with Alice, Bob and Charlie registered by the caller
// (Register, with no token): when a key authenticated the caller, that key
// acts for them; else anyone does.
func (s *Service) Demo(ctx context.Context) (_ Game, _ []Agent, err error) {
	ctx, done := s.obs.Call(ctx, "arena.Demo")
	defer func() { done(err) }()
	g, err := s.Create(ctx, 0, 0)
	if err != nil {
		return Game{}, nil, err
	}
	var agents []Agent
	for _, name := range []string{"Alice", "Bob", "Charlie"} {
		a, err := s.Register(ctx, g.ID, name, nil)
		if err != nil {
			return Game{}, nil, err
		}
		agents = append(agents, a)
	}
	g, err = s.store.GetGame(ctx, g.ID)
	return g, agents, err
}
