package arena_test

import (
	"context"
	"fmt"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/store/memstore"
)

// Three agents play a game to its end: each round its debaters argue three
// phases, then the operator decides; the game ends once every agent has
// played every role.
func Example() {
	ctx := context.Background()
	games := arena.New(memstore.New())

	g, _ := games.Create(ctx, 3, 0)
	for _, name := range []string{"Alice", "Bob", "Charlie"} {
		_, _ = games.Register(ctx, g.ID, name, nil)
	}
	g, _ = games.Start(ctx, g.ID)
	for g.Status != arena.StatusCompleted {
		r := g.Current()
		if r.Phase == arena.PhaseAwaiting {
			g, _ = games.Decide(ctx, arena.DecideParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Operator, Decision: arena.SaveMajority})
			continue
		}
		for _, id := range append(append([]string{}, r.Majority...), r.Minority...) {
			g, _ = games.Argue(ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: id, Text: "Five lives outweigh one."})
		}
	}
	fmt.Println(g.Status, "after", g.RoundCount, "rounds")
	for _, c := range g.Coverage() {
		fmt.Println(c.DisplayName, g.Scores[c.AgentID], c.Complete)
	}
	// Output:
	// game_completed after 4 rounds
	// Alice 1 true
	// Bob 1 true
	// Charlie 2 true
}
