// Command demo shows all of Agora in one run: it starts the server
// in-process (memory by default, or -store), starts LLM-free bots that work
// only through the HTTP client, and drives a claim through the seven Prism
// layers, a race of more agents than role slots, a five-agent arena game
// and a discussion prompt to quorum — printing a live transcript, then a
// summary. It exits 0 when every part finished.
//
// With -brain claude the bots write their text with the Claude Code CLI
// (-claude, or $AGORA_CLAUDE, or claude on PATH) instead of templates, as
// in examples/agents; that makes many short runs, so give it a longer
// -timeout.
//
//	go run ./examples/demo
//	go run ./examples/demo -store redis://127.0.0.1:6379 -serve
//	go run ./examples/demo -brain claude -timeout 15m
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agorahq/agora/examples/internal/bots"
	"github.com/agorahq/agora/examples/internal/server"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	storeURL := fs.String("store", "memory", "backend: memory, postgres://… or redis://…")
	serve := fs.Bool("serve", false, "keep the server up after the demo and print its URL")
	seed := fs.Uint64("seed", 1, "seed of the bots' choices, for a repeatable run")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
	extra := fs.String("redis-prefix", "", "Redis key prefix (default: a fresh one)")
	brainName := fs.String("brain", bots.BrainTemplate, "how the bots write their text: template or claude")
	claude := fs.String("claude", bots.DefaultClaude(), "the Claude Code CLI for -brain claude")
	if err := fs.Parse(args); err != nil {
		return err
	}
	brain, closeBrain, err := bots.NewBrain(*brainName, *claude)
	if err != nil {
		return err
	}
	defer closeBrain()
	opt := bots.WithBrain(brain)
	var outMu sync.Mutex // bots report from several goroutines
	say := func(format string, a ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Fprintf(out, format+"\n", a...)
	}

	var b [12]byte
	_, _ = rand.Read(b[:])
	admin := "demo-" + hex.EncodeToString(b[:])
	prefix := *extra
	if prefix == "" {
		prefix = "agora-demo-" + hex.EncodeToString(b[:4])
	}
	srvCtx, stopServer := context.WithCancel(ctx)
	defer stopServer()
	ready := make(chan string, 1)
	srvDone := make(chan error, 1)
	go func() {
		srvDone <- server.Run(srvCtx, []string{"-addr", "127.0.0.1:0", "-store", *storeURL, "-admin-key", admin,
			"-redis-prefix", prefix, "-quiet", "-stage-lease", "1m"}, io.Discard, func(a string) { ready <- a })
	}()
	var base string
	select {
	case a := <-ready:
		base = "http://" + a
	case err := <-srvDone:
		return fmt.Errorf("server: %w", err)
	}
	say("Agora demo — server at %s on %s", base, *storeURL)

	interrupted := ctx // -serve serves until then, past -timeout
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	botsCtx, stopBots := context.WithCancel(ctx)
	defer stopBots()
	c := client.New(base, client.WithToken(admin))
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stopBots()

	// Prism: sixteen workers take a claim through the seven layers.
	for i := 0; i < 16; i++ {
		k, err := c.CreateKey(ctx, slots.NewKey{Name: fmt.Sprintf("prism-bot-%02d", i), Scopes: []slots.Scope{slots.ScopeCommentCreate}})
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() { defer wg.Done(); bots.PrismWorker(botsCtx, c.As(k.Token), *seed*100+uint64(i), opt) }()
	}
	// Follow the claim over the server's change events rather than polling.
	events, err := c.ClaimEvents(botsCtx)
	if err != nil {
		return err
	}
	claim, err := c.CreateClaim(ctx, client.NewClaim{Title: "Crows plan for the future", Body: "Scrub jays cache food where they will need it tomorrow."})
	if err != nil {
		return err
	}
	say("prism: claim %q created, 16 bots working", claim.Title)
	last, agreed := "", 0
	for p, err := c.Pipeline(ctx, claim.ID); ; p, err = c.Pipeline(ctx, claim.ID) {
		if err != nil {
			return err
		}
		for _, l := range p.Layers {
			if l.Phase == "done" && l.AvgConfidence != nil && l.Layer > agreed {
				agreed = l.Layer
				say("prism: layer %d/7 %s agreed at %.0f%% confidence", l.Layer, l.Name, *l.AvgConfidence*100)
			}
		}
		now := fmt.Sprintf("prism: layer %d/7 %s", p.CurrentLayer, p.Phase)
		if p.CurrentLayer >= 1 && p.CurrentLayer <= len(p.Layers) {
			now = fmt.Sprintf("prism: layer %d/7 %s · %s", p.CurrentLayer, p.Layers[p.CurrentLayer-1].Name, p.Phase)
		}
		if p.Status == prism.StatusComplete {
			now = "prism: complete"
		}
		if now != last {
			say("%s", now)
			last = now
		}
		if p.Status == prism.StatusComplete {
			break
		}
		if p.Status == prism.StatusFlagged {
			return errors.New("prism: the pipeline was flagged")
		}
		if err := nextChange(ctx, events, claim.ID); err != nil {
			return fmt.Errorf("prism: stopped at %s: %w", last, err)
		}
	}
	claim, _ = c.Claim(ctx, claim.ID)
	cons, err := c.Consensus(ctx, claim.ID)
	if err != nil {
		return err
	}
	say("prism: domain %q, consensus %q at %.0f%% — %s", claim.Domain, cons.Recommendation, cons.Confidence, cons.Summary)

	// Role slots: six agents race for three seats.
	human, err := c.CreateKey(ctx, slots.NewKey{Name: "operator", Scopes: []slots.Scope{slots.ScopeClaimCreate, slots.ScopeSlotsConfigure, slots.ScopeCommentCreate}})
	if err != nil {
		return err
	}
	h := c.As(human.Token)
	race, err := h.CreateClaim(ctx, client.NewClaim{Title: "Bees can count", Body: "Honeybees tell four landmarks from five.", Domain: "biology"})
	if err != nil {
		return err
	}
	if _, err := h.Comment(ctx, race.ID, "Draft: counting up to four is well supported.", slots.CommentDraft); err != nil {
		return err
	}
	if _, err := h.ConfigureSlots(ctx, race.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 3}); err != nil {
		return err
	}
	say("slots: 3 critic seats opened, 6 agents racing")
	var mu sync.Mutex
	var winners []string
	var raceWG sync.WaitGroup
	raceCtx, stopRace := context.WithCancel(ctx)
	for i := 0; i < 6; i++ {
		k, err := c.CreateKey(ctx, slots.NewKey{Name: fmt.Sprintf("critic-%d", i), Scopes: []slots.Scope{slots.ScopeCommentCreate}})
		if err != nil {
			stopRace()
			return err
		}
		raceWG.Add(1)
		go func() {
			defer raceWG.Done()
			if _, err := bots.SlotAgent(raceCtx, c.As(k.Token), slots.RoleCritic, 0, *seed+uint64(i), opt); err == nil {
				mu.Lock()
				winners = append(winners, k.Name)
				n := len(winners)
				mu.Unlock()
				say("slots: %s won a seat (%d/3)", k.Name, n)
				if n == 3 {
					stopRace()
				}
			}
		}()
	}
	raceWG.Wait()
	stopRace()
	if len(winners) != 3 {
		return fmt.Errorf("slots: %d winners for 3 seats", len(winners))
	}

	// Arena: five agents play until everyone has played every role.
	game, err := c.CreateGame(ctx, client.NewGame{MinPlayers: 5})
	if err != nil {
		return err
	}
	var players []string
	for _, n := range []string{"Alice", "Bob", "Charlie", "Dana", "Eve"} {
		id, err := c.Register(ctx, game, client.NewAgent{DisplayName: n})
		if err != nil {
			return err
		}
		players = append(players, id)
	}
	if err := c.StartGame(ctx, game); err != nil {
		return err
	}
	say("arena: game started with 5 agents")
	arenaErr := make(chan error, len(players))
	for i, id := range players {
		go func() { arenaErr <- bots.ArenaPlayer(ctx, c, game, id, *seed+uint64(10+i), opt) }()
	}
	names := map[string]string{}
	lastRound, decisions := "", 0
	version := int64(-1)
	for {
		s, err := c.WaitState(ctx, game, version, 2*time.Second)
		if err != nil {
			return err
		}
		version = s.Version
		for _, seat := range append(append([]client.Seat{}, s.MajorityAgents...), s.MinorityAgents...) {
			names[seat.ID] = seat.DisplayName
		}
		if b := s.Board; b.AnimationVersion > decisions && b.SelectedBranch != nil {
			decisions = b.AnimationVersion
			say("arena: the trolley took the %s track — lost: %s; survived: %s", *b.SelectedBranch, list(b.Lost, names), list(b.Survivors, names))
		}
		if s.Status == "game_completed" {
			say("arena: game completed after %d rounds, every agent played every role; scores %s", s.CurrentRoundNumber, scores(s.Scores, names))
			break
		}
		if s.CurrentRoundID != nil && *s.CurrentRoundID != lastRound && s.Operator != nil {
			lastRound = *s.CurrentRoundID
			// Roles rotate until every agent has played every role, in
			// about as many rounds as there are agents.
			covered := 0
			for _, cv := range s.Coverage {
				if cv.Complete {
					covered++
				}
			}
			say("arena: round %d, every role covered by %d/%d agents — %s at the lever; majority %s; minority %s",
				s.CurrentRoundNumber, covered, len(players), s.Operator.DisplayName, seats(s.MajorityAgents), seats(s.MinorityAgents))
		}
	}
	for range players {
		if err := <-arenaErr; err != nil {
			return fmt.Errorf("arena player: %w", err)
		}
	}

	// Discussion: a prompt reaches its quorum.
	for _, n := range []string{"Builder", "Growth", "Critic"} {
		wg.Add(1)
		go func() { defer wg.Done(); bots.Responder(botsCtx, c, n, opt) }()
	}
	squad, err := c.SquadEvents(botsCtx)
	if err != nil {
		return err
	}
	p, err := c.AskSquad(ctx, client.Question{RequesterAgent: "Developer", PromptMessage: "Before shipping the arena, what should I check?", RequiredResponses: 2, TimeoutMinutes: 5})
	if err != nil {
		return err
	}
	say("discussion: %s asked %q, responses 0/%d", p.RequesterAgent, p.PromptMessage, p.RequiredResponses)
	for heard := 0; ; {
		v, err := c.Prompt(ctx, p.ID, 0)
		if err != nil {
			return err
		}
		p = v.Prompt
		for _, e := range p.CollectedContext[heard:] {
			heard++
			say("discussion: %s answered (%d/%d): %s", e.Agent, heard, p.RequiredResponses, e.Message)
		}
		if v.Ready {
			break
		}
		if err := nextChange(ctx, squad, p.ID); err != nil {
			return fmt.Errorf("discussion: stopped at %d/%d: %w", heard, p.RequiredResponses, err)
		}
	}
	say("discussion: %s", p.Status)

	say("summary: prism complete (%s), 3/3 seats filled, arena game completed, discussion %s", cons.Recommendation, p.Status)
	stopBots()
	if *serve {
		say("serving on %s until interrupted (admin key %s); the console:", base, admin)
		say("  %s/jobs#key=%s", base, admin)
		say("  %s/arena/%s", base, game)
		say("  %s/squad", base)
		<-interrupted.Done()
	}
	return nil
}

// nextChange waits for a change event naming id (or naming nothing, which
// may be anything), or a second without one: events are hints, and a
// re-read after a quiet second keeps the transcript going if one is lost.
func nextChange(ctx context.Context, events <-chan string, id string) error {
	quiet := time.NewTimer(time.Second)
	defer quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-quiet.C:
			return nil
		case got, ok := <-events:
			if !ok {
				return errors.New("the server's event stream ended")
			}
			if got == id || got == "" {
				return nil
			}
		}
	}
}

// seats names the agents on a track.
func seats(ss []client.Seat) string {
	n := make([]string, len(ss))
	for i, s := range ss {
		n[i] = s.DisplayName
	}
	return strings.Join(n, ", ")
}

// list names agents by ID.
func list(ids []string, names map[string]string) string {
	n := make([]string, len(ids))
	for i, id := range ids {
		n[i] = names[id]
	}
	return strings.Join(n, ", ")
}

// scores lists every agent's score, by name.
func scores(s map[string]int, names map[string]string) string {
	out := make([]string, 0, len(s))
	for id, n := range s {
		out = append(out, fmt.Sprintf("%s %d", names[id], n))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
