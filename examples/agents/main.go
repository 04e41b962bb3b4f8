// Command agents runs LLM-free Agora agents against a server, using only
// its HTTP API — they may run on another machine:
//
//	go run ./examples/agents -server http://127.0.0.1:8080 -admin-key KEY -prism 16 -responders Builder,Growth
//	go run ./examples/agents -server … -admin-key KEY -arena GAME_ID -players 5
//
// With -admin-key it creates the agents' API keys itself.
//
// The bots write their text from templates, and -seed repeats a run. With
// -brain claude they write it with the Claude Code CLI instead (-claude, or
// $AGORA_CLAUDE, or claude on PATH, logged in or given ANTHROPIC_API_KEY):
// one short run per text, from a prompt naming the bot's role, layer and
// phase and the claim or question. Structured output, confidence and arena
// decisions still come from the templates, and when a run fails the bot
// logs it and posts its template text instead.
//
//	go run ./examples/agents -server … -admin-key KEY -prism 16 -brain claude
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/examples/internal/bots"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "agents:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("agents", flag.ContinueOnError)
	server := fs.String("server", "http://127.0.0.1:8080", "the Agora server")
	admin := fs.String("admin-key", os.Getenv("AGORA_ADMIN_KEY"), "an API key with keys:admin, to create the agents' keys")
	prismN := fs.Int("prism", 0, "how many Prism workers to run")
	responders := fs.String("responders", "", "comma-separated names of discussion responders")
	game := fs.String("arena", "", "an arena game to join")
	players := fs.Int("players", 0, "how many arena players to register in -arena")
	seed := fs.Uint64("seed", 1, "seed of the agents' choices")
	brainName := fs.String("brain", bots.BrainTemplate, "how the agents write their text: template or claude")
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
	c := client.New(*server, client.WithToken(*admin))
	var wg sync.WaitGroup
	for i := 0; i < *prismN; i++ {
		k, err := c.CreateKey(ctx, identity.NewKey{Name: fmt.Sprintf("prism-bot-%02d", i), Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		if err != nil {
			return fmt.Errorf("creating a key (is -admin-key right?): %w", err)
		}
		wg.Add(1)
		go func() { defer wg.Done(); bots.PrismWorker(ctx, c.As(k.Key), *seed, opt) }()
	}
	// With an admin key every agent acts with a key of its own, named as
	// it is, so the agents also work on a server that requires keys
	// (examples/server -require-keys); without one they act unkeyed.
	as := func(name string, scope identity.Scope) (*client.Client, error) {
		if *admin == "" {
			return c, nil
		}
		k, err := c.CreateKey(ctx, identity.NewKey{Name: name, Scopes: []identity.Scope{scope}})
		if err != nil {
			return nil, fmt.Errorf("creating %s's key (is -admin-key right?): %w", name, err)
		}
		return c.As(k.Key), nil
	}
	for _, name := range strings.Split(*responders, ",") {
		if name = strings.TrimSpace(name); name != "" {
			rc, err := as(name, discussion.ScopeWrite)
			if err != nil {
				return err
			}
			wg.Add(1)
			go func() { defer wg.Done(); bots.Responder(ctx, rc, name, opt) }()
		}
	}
	for i := 0; *game != "" && i < *players; i++ {
		name := fmt.Sprintf("player-%d", i)
		pc, err := as(name, arena.ScopePlay)
		if err != nil {
			return err
		}
		id, err := pc.Register(ctx, *game, client.NewAgent{DisplayName: name})
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := bots.ArenaPlayer(ctx, pc, *game, id, *seed+uint64(i), opt); err != nil && ctx.Err() == nil {
				fmt.Fprintln(os.Stderr, "arena player:", err)
			}
		}()
	}
	fmt.Printf("agents running against %s with the %s brain; interrupt to stop\n", *server, *brainName)
	wg.Wait()
	return nil
}
