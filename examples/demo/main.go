// Command demo shows all of Agora in one run: it starts the server
// in-process (memory by default, or -store), starts LLM-free bots that work
// only through the HTTP client, and drives a claim through the seven Prism
// layers, a race of more agents than role slots, a five-agent arena game
// and a discussion prompt to quorum — printing a live transcript, then a
// summary. It exits 0 when every part finished.
//
// The same -seed prints the same transcript, but for the server's address
// and the names of the demo's data: the bots' choices come from the seed,
// and what they submit never hangs on which bot was faster.
//
// On PostgreSQL the demo keeps its data in a schema of its own, on Redis
// under a key prefix of its own; the transcript names it, and -clean
// removes it when the demo ends. A schema or prefix named with -schema or
// -redis-prefix must hold nothing when the demo starts (with -clean, the
// schema must not exist yet): -clean removes only what the run created.
//
// With -brain claude the bots write their text with the Claude Code CLI
// (-claude, or $AGORA_CLAUDE, or claude on PATH) instead of templates, as
// in examples/agents; that makes many short runs, so give it a longer
// -timeout. With -serve the server stays up with its consoles, and with
// the agent chat at /chat when that CLI is installed.
//
//	go run ./examples/demo
//	go run ./examples/demo -seed 7
//	go run ./examples/demo -serve -addr 127.0.0.1:8080   # AGORA_ADMIN_KEY fixes the admin key too
//	go run ./examples/demo -store redis://127.0.0.1:6379 -serve
//	go run ./examples/demo -store 'postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable' -clean
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
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/examples/internal/bots"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/httpapi/mcp"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// options are the demo's command line.
type options struct {
	store, redisPrefix, schema string
	addr                       string
	serve, clean, requireKeys  bool
	seed                       uint64
	timeout                    time.Duration
	brain, claude              string
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.StringVar(&o.store, "store", "memory", "backend: memory, postgres://… or redis://…")
	fs.BoolVar(&o.serve, "serve", false, "keep the server up after the demo, with its front door, consoles and (when the Claude Code CLI is installed) /chat, until interrupted")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:0", "the server's address (default: a free loopback port); with -serve, a fixed one such as 127.0.0.1:8080 keeps the consoles' URLs from run to run")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the bots' choices: the same seed prints the same transcript")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "give up on the demo after this long (-serve then serves on)")
	fs.StringVar(&o.redisPrefix, "redis-prefix", "", "Redis: the key prefix of the demo's data, which must hold no key yet (default: a fresh agora-demo-…)")
	fs.StringVar(&o.schema, "schema", "", "PostgreSQL: the schema of the demo's data, made when missing; an existing one must be empty, and with -clean must not exist (default: a fresh agora_demo_…)")
	fs.BoolVar(&o.requireKeys, "require-keys", false, "run the server with -require-keys: the arena and discussion routes need API keys too, and every bot acts with a key of its own")
	fs.BoolVar(&o.clean, "clean", false, "remove the demo's data when it ends: drop the PostgreSQL schema it created, or delete the keys of its Redis prefix, which held none before")
	fs.StringVar(&o.brain, "brain", bots.BrainTemplate, "how the bots write their text: template or claude")
	fs.StringVar(&o.claude, "claude", bots.DefaultClaude(), "the Claude Code CLI for -brain claude and /chat")
	return o, fs.Parse(args)
}

func run(ctx context.Context, args []string, out io.Writer) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	brain, closeBrain, err := bots.NewBrain(o.brain, o.claude)
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
	// A fixed admin key (AGORA_ADMIN_KEY) with a fixed -addr keeps the
	// consoles' links from run to run; else a fresh one each run.
	admin := os.Getenv("AGORA_ADMIN_KEY")
	if admin == "" {
		admin = "demo-" + hex.EncodeToString(b[:])
	}
	data, err := openData(ctx, o, hex.EncodeToString(b[:4]))
	if err != nil {
		return err
	}
	srv := demoServer{d: data, addr: o.addr, admin: admin, requireKeys: o.requireKeys}
	if o.serve {
		if path, err := exec.LookPath(o.claude); err == nil {
			if srv.chatDir, err = os.MkdirTemp("", "agora-demo-chat-"); err != nil {
				return err
			}
			defer os.RemoveAll(srv.chatDir)
			srv.claude = path
		}
	}
	srvCtx, stopServer := context.WithCancel(ctx)
	defer stopServer()
	addr, srvDone, err := srv.start(srvCtx)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	base := "http://" + addr
	if o.clean {
		// After the server: its store is closed before the data goes.
		defer func() {
			stopServer()
			<-srvDone
			if err := data.drop(context.WithoutCancel(ctx)); err != nil {
				say("data: could not remove %s: %v", data.where, err)
				return
			}
			say("data: %s removed (-clean)", data.where)
		}()
	}
	say("Agora demo, seed %d — server at %s on the %s backend", o.seed, base, data.backend)
	if o.clean {
		say("data: %s, removed when the demo ends (-clean)", data.where)
	} else {
		say("data: %s; %s", data.where, data.keep)
	}

	interrupted := ctx // -serve serves until then, past -timeout
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	c := client.New(base, client.WithToken(admin))
	d := &tour{c: c, base: base, say: say, seed: o.seed, opt: opt}
	defer d.wg.Wait()
	botsCtx, stopBots := context.WithCancel(ctx)
	defer stopBots()

	cons, err := d.prism(ctx, botsCtx)
	if err != nil {
		return err
	}
	if err := d.race(ctx); err != nil {
		return err
	}
	game, err := d.arena(ctx)
	if err != nil {
		return err
	}
	status, err := d.discussion(ctx, botsCtx)
	if err != nil {
		return err
	}
	say("summary: Prism took the claim through 7/7 layers to %q, 3/3 role seats filled, the arena game completed, the discussion %s", cons.Recommendation, status)
	stopBots()
	d.wg.Wait()
	if o.serve {
		// The demo's deadline is over: from here the server runs until
		// interrupted, however long -timeout was.
		cancel()
		say("serving until interrupted (Ctrl-C); the admin key is %s", admin)
		say("  %-12s %s/", "front door", base)
		say("  %-12s %s/jobs#key=%s", "jobs", base, admin)
		say("  %-12s %s/arena/%s", "arena game", base, game)
		say("  %-12s %s/squad", "squad chat", base)
		if srv.chatDir != "" {
			say("  %-12s %s/chat", "agent chat", base)
		} else {
			say("  %-12s none: no Claude Code CLI at %q (install it, or set -claude or AGORA_CLAUDE)", "agent chat", o.claude)
		}
		say("  %-12s %s/healthz", "health", base)
		<-interrupted.Done()
	}
	return nil
}

// tour is one run's bots and transcript.
type tour struct {
	c    *client.Client // the admin's
	base string         // the server's base URL
	say  func(format string, a ...any)
	seed uint64
	opt  bots.Option
	wg   sync.WaitGroup // bots running until the demo ends
}

// prism has sixteen workers take a claim through the seven layers and
// returns its consensus record. The workers stop when the claim is
// complete, so the race's claim that follows keeps its pipeline at layer
// 1, waiting for agents.
func (d *tour) prism(ctx, botsCtx context.Context) (prism.ConsensusRecord, error) {
	c := d.c
	workers, stop := context.WithCancel(botsCtx)
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	for i := 0; i < 16; i++ {
		k, err := c.CreateKey(ctx, identity.NewKey{Name: fmt.Sprintf("prism-bot-%02d", i), Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		if err != nil {
			return prism.ConsensusRecord{}, err
		}
		wg.Add(1)
		go func() { defer wg.Done(); bots.PrismWorker(workers, c.As(k.Key), d.seed, d.opt) }()
	}
	// Follow the claim over the server's change events rather than polling.
	events, err := c.ClaimEvents(workers)
	if err != nil {
		return prism.ConsensusRecord{}, err
	}
	claim, err := c.CreateClaim(ctx, client.NewClaim{Title: "Crows plan for the future", Body: "Scrub jays cache food where they will need it tomorrow."})
	if err != nil {
		return prism.ConsensusRecord{}, err
	}
	d.say("prism: claim %q opened; 16 bots take it through the seven layers, each layer's work seats first, then its consensus seats", claim.Title)
	told := 0 // layers told so far
	for p, err := c.Pipeline(ctx, claim.ID); ; p, err = c.Pipeline(ctx, claim.ID) {
		if err != nil {
			return prism.ConsensusRecord{}, err
		}
		// A layer is told once it is done, whatever was seen of its phases
		// on the way: every run tells the same lines.
		for told < len(p.Layers) && p.Layers[told].Phase == "done" {
			d.say("prism: %s", layerLine(p.Layers[told], len(p.Layers)))
			told++
		}
		if p.Status == string(prism.StatusComplete) {
			break
		}
		if p.Status == string(prism.StatusFlagged) {
			return prism.ConsensusRecord{}, fmt.Errorf("prism: the pipeline was flagged at layer %d", p.CurrentLayer)
		}
		if err := nextChange(ctx, events, claim.ID); err != nil {
			return prism.ConsensusRecord{}, fmt.Errorf("prism: stopped at layer %d: %w", p.CurrentLayer, err)
		}
	}
	claim, err = c.Claim(ctx, claim.ID)
	if err != nil {
		return prism.ConsensusRecord{}, err
	}
	cons, err := c.Consensus(ctx, claim.ID)
	if err != nil {
		return prism.ConsensusRecord{}, err
	}
	d.say("prism: complete — domain %q; verdict %q at %.0f%% confidence: %s", claim.Domain, cons.Recommendation, cons.Confidence, cons.Summary)
	return prism.ConsensusRecord{Summary: cons.Summary, Recommendation: cons.Recommendation, Confidence: cons.Confidence}, nil
}

// layerLine tells what a finished layer's seats did.
func layerLine(l client.PipelineLayer, layers int) string {
	var work []string
	agreed := 0
	for _, s := range l.Slots {
		switch {
		case s.Status != string(slots.StatusDone):
		case s.Phase == string(prism.PhaseWork):
			work = append(work, s.Role)
		case s.Phase == string(prism.PhaseConsensus):
			agreed++
		}
	}
	line := fmt.Sprintf("layer %d/%d %s done: ", l.Layer, layers, l.Name)
	if len(work) > 0 {
		line += fmt.Sprintf("%d work seats (%s), then ", len(work), tally(work))
	} else {
		line += "no work seats (this layer only votes), "
	}
	line += fmt.Sprintf("%d consensus seats", agreed)
	if l.AvgConfidence != nil {
		line += fmt.Sprintf(" agreeing at %.0f%% average confidence", *l.AvgConfidence*100)
	}
	return line
}

// tally says how many of each: "critic ×2, questioner".
func tally(xs []string) string {
	slices.Sort(xs)
	var out []string
	for i := 0; i < len(xs); {
		j := i
		for j < len(xs) && xs[j] == xs[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, fmt.Sprintf("%s ×%d", xs[i], j-i))
		} else {
			out = append(out, xs[i])
		}
		i = j
	}
	return strings.Join(out, ", ")
}

// race has six agents race for three critic seats on a claim of its own.
func (d *tour) race(ctx context.Context) error {
	c := d.c
	human, err := c.CreateKey(ctx, identity.NewKey{Name: "operator", Scopes: []identity.Scope{slots.ScopeClaimCreate, slots.ScopeSlotsConfigure, slots.ScopeCommentCreate}})
	if err != nil {
		return err
	}
	h := c.As(human.Key)
	race, err := h.CreateClaim(ctx, client.NewClaim{Title: "Bees can count", Body: "Honeybees tell four landmarks from five.", Domain: "biology"})
	if err != nil {
		return err
	}
	// The job queue hands out a claim's role seats once it has a draft
	// comment for the critics to answer.
	if _, err := h.Comment(ctx, race.ID, client.NewComment{Body: "Draft: counting up to four is well supported.", CommentType: string(slots.CommentDraft)}); err != nil {
		return err
	}
	if _, err := h.ConfigureSlots(ctx, race.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 3}); err != nil {
		return err
	}
	d.say("slots: claim %q opened with a draft and 3 critic seats; 6 critic agents race for them, one of them through the MCP tools at /mcp as an agent host would (its Prism pipeline stays at layer 1, waiting for agents: the Prism bots have stopped)", race.Title)
	var mu sync.Mutex
	won := 0
	var wg sync.WaitGroup
	raceCtx, stopRace := context.WithCancel(ctx)
	defer stopRace()
	for i := 0; i < 6; i++ {
		k, err := c.CreateKey(ctx, identity.NewKey{Name: fmt.Sprintf("critic-%d", i), Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i == 5 {
				// One critic is an agent host's: it works through the MCP
				// tools at /mcp, as Claude Code would, with its own key.
				err = d.mcpCritic(raceCtx, k.Key, d.seed+uint64(i))
			} else {
				_, err = bots.SlotAgent(raceCtx, c.As(k.Key), slots.RoleCritic, 0, d.seed+uint64(i), d.opt)
			}
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			won++
			// Which agent wins a seat is up to the race, not the seed:
			// /jobs shows the winners' names.
			d.say("slots: seat %d/3 won: its agent posted a criticism and marked the seat done", won)
			if won == 3 {
				stopRace()
			}
		}()
	}
	wg.Wait()
	if won != 3 {
		return fmt.Errorf("slots: %d seats won of 3", won)
	}
	d.say("slots: every seat filled; the other 3 agents found no open seat (exactly one agent wins each seat, and one agent holds at most one seat of a claim)")
	return nil
}

// mcpCritic races for a critic seat through the server's MCP tools
// (Streamable HTTP at /mcp), the session's caller being token's key.
func (d *tour) mcpCritic(ctx context.Context, token string, seed uint64) error {
	s, err := mcp.Dial(ctx, d.base+"/mcp", token, nil)
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = bots.SlotAgentMCP(ctx, s, slots.RoleCritic, seed, d.opt)
	return err
}

// arena plays a five-agent game until every agent has played every role
// and returns the game's ID.
func (d *tour) arena(ctx context.Context) (string, error) {
	c := d.c
	game, err := c.CreateGame(ctx, client.NewGame{MinPlayers: 5})
	if err != nil {
		return "", err
	}
	names := []string{"Alice", "Bob", "Charlie", "Dana", "Eve"}
	var players []string
	var clients []*client.Client // each player acts with a key of its own
	for _, n := range names {
		pc, err := d.agent(ctx, n, arena.ScopePlay)
		if err != nil {
			return "", err
		}
		id, err := pc.Register(ctx, game, client.NewAgent{DisplayName: n})
		if err != nil {
			return "", err
		}
		players, clients = append(players, id), append(clients, pc)
	}
	if err := c.StartGame(ctx, game); err != nil {
		return "", err
	}
	d.say("arena: a Trolley Problem game started with %s. Each round one agent holds the lever, the others stand on the majority or the minority track and argue; the operator decides which track the trolley takes, and everyone who survives scores a point. The game ends once every agent has held the lever and stood on both tracks", strings.Join(names, ", "))
	arenaErr := make(chan error, len(players))
	for i, id := range players {
		go func() { arenaErr <- bots.ArenaPlayer(ctx, clients[i], game, id, d.seed+uint64(10+i), d.opt) }()
	}
	byID := map[string]string{}
	for i, id := range players {
		byID[id] = names[i]
	}
	// The rounds are told from the game's history, each once it is
	// resolved: a board seen now and then can skip a round the agents
	// played between two looks, and the transcript must not depend on that.
	told, version := 0, int64(-1)
	for {
		s, err := c.WaitState(ctx, game, version, 2*time.Second)
		if err != nil {
			return "", err
		}
		version = s.Version
		if ld := s.LastDecision; ld != nil && ld.RoundNumber > told {
			rounds, err := c.History(ctx, game)
			if err != nil {
				return "", err
			}
			d.tellRounds(rounds, told, byID)
			told = len(rounds)
		}
		if s.Status == "game_completed" {
			d.say("arena: game over after %d rounds, every agent has played every role; points (one per round survived): %s", s.CurrentRoundNumber, scores(s.Scores, byID))
			break
		}
	}
	for range players {
		if err := <-arenaErr; err != nil {
			return "", fmt.Errorf("arena player: %w", err)
		}
	}
	return game, nil
}

// discussion asks the squad a question and waits for its quorum; it
// returns the prompt's final status. Every member answers, so the answers
// are the same on every run; they are told in the members' order once
// the quorum is reached, not in the order they arrived.
func (d *tour) discussion(ctx, botsCtx context.Context) (string, error) {
	c := d.c
	squad := []string{"Builder", "Critic", "Growth"}
	for _, n := range squad {
		rc, err := d.agent(ctx, n, discussion.ScopeWrite) // a responder answers as its key
		if err != nil {
			return "", err
		}
		d.wg.Add(1)
		go func() { defer d.wg.Done(); bots.Responder(botsCtx, rc, n, d.opt) }()
	}
	developer, err := d.agent(ctx, "Developer", discussion.ScopeWrite)
	if err != nil {
		return "", err
	}
	events, err := c.SquadEvents(botsCtx)
	if err != nil {
		return "", err
	}
	p, err := developer.AskSquad(ctx, client.Question{RequesterAgent: "Developer", PromptMessage: "Before shipping the arena, what should I check?", RequiredResponses: len(squad), TimeoutMinutes: 5})
	if err != nil {
		return "", err
	}
	d.say("discussion: Developer asked the squad (%s) %q; the prompt resolves at %d answers, or times out after 5 minutes", strings.Join(squad, ", "), p.PromptMessage, p.RequiredResponses)
	for {
		v, err := c.Prompt(ctx, p.ID, 0)
		if err != nil {
			return "", err
		}
		p = v.Prompt
		if v.Ready {
			break
		}
		if err := nextChange(ctx, events, p.ID); err != nil {
			return "", fmt.Errorf("discussion: stopped at %d/%d answers: %w", len(p.CollectedContext), p.RequiredResponses, err)
		}
	}
	answers := map[string]string{}
	for _, e := range p.CollectedContext {
		answers[e.Agent] = e.Message
	}
	for _, n := range squad {
		if a, ok := answers[n]; ok {
			d.say("discussion:   %s: %s", n, a)
		}
	}
	d.say("discussion: %s with %d/%d answers", p.Status, len(p.CollectedContext), p.RequiredResponses)
	return string(p.Status), nil
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

// tellRounds tells rounds[told:], each with its operator, its tracks and
// its decision. Who has played every role is the game's to count
// (arena.Game.Coverage); the transcript tells it once, at the game's end.
func (d *tour) tellRounds(rounds []client.ResolvedRound, told int, byID map[string]string) {
	for _, rd := range rounds[told:] {
		d.say("arena: round %d: %s at the lever; majority track %s; minority track %s",
			rd.RoundNumber, byID[rd.Operator], list(rd.Majority, byID), list(rd.Minority, byID))
		saved, took := tracks(rd.Decision)
		d.say("arena:   the operator saved the %s: the trolley took the %s track — lost: %s; survived: %s", saved, took, list(rd.Lost, byID), list(rd.Survivors, byID))
	}
}

// tracks reads an operator's decision: save_majority saves the majority,
// so the trolley takes the minority's track, and save_minority the other
// way round.
func tracks(decision string) (saved, took string) {
	if decision == "save_minority" {
		return "minority", "majority"
	}
	return "majority", "minority"
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

// agent returns a client acting with a new key named name holding scope:
// on a server that requires keys a bot is its key (its name is the key's),
// and on an open one the key is simply not asked for.
func (d *tour) agent(ctx context.Context, name string, scope identity.Scope) (*client.Client, error) {
	k, err := d.c.CreateKey(ctx, identity.NewKey{Name: name, Scopes: []identity.Scope{scope}})
	if err != nil {
		return nil, err
	}
	return d.c.As(k.Key), nil
}
