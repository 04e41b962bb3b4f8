package arena

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/store"
)

// Fillers are agents Agora plays itself, so that a game with fewer
// registered agents than its table can run, as the original's fillers
// do: a host adds them before the start (AddFillers), a start with fewer
// than TableMin agents seats them, and they act when ticked
// (TickFillers) or, with WithAutoFillers, by themselves after every
// change that leaves one of them an action due. Their arguments come from
// templates unless the host plugs in a FillerWriter; their decisions
// always do.

// MaxFillersPerAdd bounds one AddFillers, as the original's add-filler
// does.
const MaxFillersPerAdd = 5

// fillerNames name fillers in the order they join; past the list, a
// number tells them apart.
var fillerNames = []string{"Filler Max", "Filler Luna", "Filler Alex", "Filler Sage", "Filler River", "Filler Nova", "Filler Quinn"}

// fillerLines are the LLM-free arguments of each track.
var fillerLines = map[Role][]string{
	RoleMajority: {
		"We are on this track and there are more of us: saving the greater number does the least harm. Pull the lever for us.",
		"Every one of us is a life with the same worth as theirs; five lives saved outweigh one. Save the majority.",
		"Doing the least harm is the only choice you can defend afterwards. Save us.",
		"You would not trade many lives for one anywhere else. Do not do it here.",
	},
	RoleMinority: {
		"Being outnumbered does not make my life worth less. Treat us as people, not as a count.",
		"Choosing to let me die because I am alone is still choosing. Save the minority.",
		"Equal worth means no one is sacrificed for being fewer. Save our side.",
		"The majority asks you to weigh lives like coins; refuse, and save us.",
	},
}

// TemplateArgument returns a template argument of a track agent (role
// majority or minority); n picks among the lines, wrapping.
func TemplateArgument(role Role, n int) string {
	lines := fillerLines[role]
	if len(lines) == 0 {
		lines = fillerLines[RoleMajority]
	}
	return lines[(n%len(lines)+len(lines))%len(lines)]
}

// templateDecision is a filler operator's decision: the majority, but the
// minority every third round, so a long game shows both.
func templateDecision(round int) Decision {
	if round%3 == 0 {
		return SaveMinority
	}
	return SaveMajority
}

// fillerName returns the first filler name no agent of g has.
func (g *Game) fillerName() string {
	taken := map[string]bool{}
	for _, a := range g.Agents {
		taken[a.DisplayName] = true
	}
	for n := 1; ; n++ {
		for _, name := range fillerNames {
			if n > 1 {
				name = fmt.Sprint(name, " ", n)
			}
			if !taken[name] {
				return name
			}
		}
	}
}

// addFillers registers n filler agents before the start.
func (g *Game) addFillers(n int, e env) ([]Agent, error) {
	if g.started() {
		return nil, bad("Can only add fillers before game starts")
	}
	if len(g.Agents)+n > MaxAgents {
		return nil, bad("Game is full")
	}
	out := make([]Agent, 0, n)
	for range n {
		a, err := g.join(g.fillerName(), actor{}, true, e)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// fillTable seats fillers until the game has its min_players agents, and
// at least TableMin, unless it has started.
func (g *Game) fillTable(e env) error {
	if n := max(TableMin, g.MinPlayers) - len(g.Agents); n > 0 && !g.started() {
		_, err := g.addFillers(n, e)
		return err
	}
	return nil
}

// FillerAction is an action a filler agent has due: the round's decision
// when Decide is set, else an argument in Phase.
type FillerAction struct {
	AgentID     string // the filler's ID
	DisplayName string // the filler's name
	RoundID     string // the round being played
	Round       int    // that round's Number
	Role        Role   // the filler's seat in the round
	Phase       Phase  // the round's phase: a debate phase, or PhaseAwaiting to decide
	Decide      bool   // the action is the operator's decision, not an argument
}

// DueFiller returns the action a filler agent has due now, if any, by
// the rule that says what any agent may do (Game.Turn): the operator's
// decision, else the first track filler (majority, then minority) that has
// not argued in this phase.
func (g *Game) DueFiller() (FillerAction, bool) {
	r := g.Current()
	if r == nil || g.Status == StatusCompleted {
		return FillerAction{}, false
	}
	seats := append(append([]string{r.Operator}, r.Majority...), r.Minority...)
	for _, id := range seats {
		a := g.agent(id)
		if a == nil || !a.Filler {
			continue
		}
		if t, err := g.Turn(id); err == nil && t.Allowed != "" {
			return FillerAction{AgentID: id, DisplayName: a.DisplayName, RoundID: r.ID, Round: r.Number, Role: t.Role, Phase: r.Phase, Decide: t.Allowed == ActDecide}, true
		}
	}
	return FillerAction{}, false
}

// FillerTurn is what a FillerWriter is asked to write: the filler's
// action, the round's debate so far ("Name (role): text" lines, oldest
// first), and the template text the default writer answers (and that is
// posted when a writer fails).
type FillerTurn struct {
	FillerAction
	// Debate holds the round's arguments of every phase so far, one
	// "Name (role): text" line each, oldest first; nil when there are none.
	Debate []string
	// Template is the template argument of the filler's role and seat.
	Template string
}

// A FillerWriter writes a filler's argument, at most MaxArgumentChars
// characters (a longer one is cut). Decisions stay with the templates.
type FillerWriter interface {
	WriteArgument(ctx context.Context, t FillerTurn) (string, error)
}

// templates is the default, LLM-free FillerWriter.
type templates struct{}

func (templates) WriteArgument(_ context.Context, t FillerTurn) (string, error) {
	return t.Template, nil
}

// turn returns the FillerTurn of action a in g.
func (g *Game) turn(a FillerAction) FillerTurn {
	t := FillerTurn{FillerAction: a}
	r := g.Current()
	phaseIndex := map[Phase]int{Phase1: 0, Phase2: 1, Phase3: 2}[a.Phase]
	seat := 0
	for i, ag := range g.Agents {
		if ag.ID == a.AgentID {
			seat = i
		}
	}
	t.Template = TemplateArgument(a.Role, a.Round+phaseIndex+seat)
	for _, arg := range r.Arguments {
		role := r.RoleOf(arg.AgentID)
		name := arg.AgentID
		if ag := g.agent(arg.AgentID); ag != nil {
			name = ag.DisplayName
		}
		t.Debate = append(t.Debate, fmt.Sprintf("%s (%s): %s", name, role, arg.Text))
	}
	return t
}

// fitArgument trims text and cuts it to MaxArgumentChars characters.
func fitArgument(text string) string {
	text = strings.TrimSpace(text)
	if utf8.RuneCountInString(text) > MaxArgumentChars {
		text = string([]rune(text)[:MaxArgumentChars])
	}
	return strings.TrimSpace(text)
}

// WithFillerWriter makes fillers argue with w's prose instead of the
// templates (a host's language model, say). w is called outside any store
// step; when it fails, the filler posts the template text.
func WithFillerWriter(w FillerWriter) Option { return func(s *Service) { s.writer = w } }

// WithAutoFillers makes the service play fillers by itself: after every
// change it saves that leaves a filler an action due, it plays the game's
// due filler actions in the background, waiting pace before each, until
// none is due or ctx ends. Without it, fillers act only when ticked.
func WithAutoFillers(ctx context.Context, pace time.Duration) Option {
	return func(s *Service) { s.auto = &autoFillers{ctx: ctx, pace: pace, running: map[string]bool{}} }
}

// autoFillers runs at most one background drain per game.
type autoFillers struct {
	ctx     context.Context
	pace    time.Duration
	mu      sync.Mutex
	running map[string]bool // game ID -> a drain runs; true: run once more
}

// kick starts a background drain of the game's fillers, or asks the one
// running to look again when it is done.
func (s *Service) kick(id string) {
	a := s.auto
	a.mu.Lock()
	if _, ok := a.running[id]; ok {
		a.running[id] = true
		a.mu.Unlock()
		return
	}
	a.running[id] = false
	a.mu.Unlock()
	go func() {
		for {
			_, _ = s.tickFillers(a.ctx, id, true, a.pace)
			a.mu.Lock()
			if !a.running[id] || a.ctx.Err() != nil {
				delete(a.running, id)
				a.mu.Unlock()
				return
			}
			a.running[id] = false
			a.mu.Unlock()
		}
	}()
}

// AddFillers registers count (1 to MaxFillersPerAdd) filler agents in a
// game that has not started.
func (s *Service) AddFillers(ctx context.Context, gameID string, count int) (_ []Agent, err error) {
	ctx, done := s.obs.Call(ctx, "arena.AddFillers")
	defer func() { done(err) }()
	if count < 1 || count > MaxFillersPerAdd {
		return nil, store.Errorf(store.ErrInvalid, "invalid_count", "count must be from 1 to %d", MaxFillersPerAdd)
	}
	var added []Agent
	_, err = s.change(ctx, gameID, "add_fillers", func(g *Game, e env) error {
		var err error
		added, err = g.addFillers(count, e)
		return err
	})
	return added, err
}

// MaxFillerTick bounds the actions of one drained TickFillers.
const MaxFillerTick = 500

// TickFillers plays the filler action due in a game, and with drain every
// one due after it until none is (or MaxFillerTick), each its own change
// as if the filler had posted it. It returns what was done, one line per
// action. An action another process played first is skipped.
func (s *Service) TickFillers(ctx context.Context, gameID string, drain bool) (_ []string, err error) {
	ctx, done := s.obs.Call(ctx, "arena.TickFillers")
	defer func() { done(err) }()
	return s.tickFillers(ctx, gameID, drain, 0)
}

func (s *Service) tickFillers(ctx context.Context, gameID string, drain bool, pace time.Duration) ([]string, error) {
	g, err := s.store.GetGame(ctx, gameID)
	if err != nil {
		return nil, err
	}
	done := []string{}
	var failed FillerAction // the last action refused: refused twice, the tick stops
	for len(done) < MaxFillerTick {
		a, ok := g.DueFiller()
		if !ok {
			return done, nil
		}
		if pace > 0 {
			t := time.NewTimer(pace)
			select {
			case <-ctx.Done():
				t.Stop()
				return done, ctx.Err()
			case <-t.C:
			}
		}
		var line string
		// A filler belongs to no key and no token: it acts as no one,
		// whoever ticks it.
		nobody := identity.NewContext(ctx, identity.Caller{})
		if a.Decide {
			d := templateDecision(a.Round)
			g, err = s.Decide(nobody, DecideParams{GameID: gameID, RoundID: a.RoundID, AgentID: a.AgentID, Decision: d})
			line = fmt.Sprintf("%s decided: %s", a.DisplayName, d)
		} else {
			t := g.turn(a)
			text, werr := s.writer.WriteArgument(ctx, t)
			if text = fitArgument(text); werr != nil || text == "" {
				text = t.Template
			}
			g, err = s.Argue(nobody, ArgueParams{GameID: gameID, RoundID: a.RoundID, AgentID: a.AgentID, Text: text})
			line = fmt.Sprintf("%s argued: %s", a.DisplayName, text)
		}
		switch {
		case err == nil:
			done = append(done, line)
		case (errors.Is(err, store.ErrInvalid) || errors.Is(err, ErrRoundNotFound)) && failed != a:
			// Another process played it first, or the round moved on.
			failed = a
			if g, err = s.store.GetGame(ctx, gameID); err != nil {
				return done, err
			}
		default:
			return done, err
		}
		if !drain && len(done) > 0 {
			return done, nil
		}
	}
	return done, nil
}
