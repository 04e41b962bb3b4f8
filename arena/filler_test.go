package arena

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFillersPlayATable: a game of one registered agent (min_players 1)
// starts with two fillers seated; the fillers' due actions are what the
// engine lets them do, never the real agent's; played out with templates,
// the game completes with everyone's coverage complete.
func TestFillersPlayATable(t *testing.T) {
	e := testEnv()
	g, err := NewGame("g", 1, 0, e.now)
	require.NoError(t, err)
	_, err = NewGame("g", 0, 0, e.now)
	require.NoError(t, err, "0 is the default")
	for _, n := range []int{-1, 51} {
		_, err = NewGame("g", n, 0, e.now)
		require.Error(t, err)
	}
	human, err := g.register("Human", actor{}, e)
	require.NoError(t, err)
	require.Equal(t, StatusReady, g.Status)
	_, ok := g.DueFiller()
	require.False(t, ok, "nothing is due before the start")
	require.NoError(t, g.fillTable(e))
	require.NoError(t, g.start(e))
	require.Len(t, g.Agents, TableMin)
	require.Equal(t, []string{"Filler Max", "Filler Luna"}, []string{g.Agents[1].DisplayName, g.Agents[2].DisplayName})
	require.True(t, g.Agents[1].Filler && g.Agents[2].Filler && !g.Agents[0].Filler)
	_, err = g.addFillers(1, e)
	require.ErrorContains(t, err, "Can only add fillers before game starts")

	decisions := map[Decision]bool{}
	for steps := 0; g.Status != StatusCompleted; steps++ {
		require.Less(t, steps, 100)
		a, ok := g.DueFiller()
		if !ok {
			// Only the human can act: argue or decide for it.
			r := g.Current()
			if r.Operator == human.ID {
				require.Equal(t, PhaseAwaiting, r.Phase)
				require.NoError(t, g.decide(r.ID, human.ID, SaveMajority, e))
			} else {
				require.NoError(t, g.argue(r.ID, human.ID, "I argue", e))
			}
			continue
		}
		require.NotEqual(t, human.ID, a.AgentID)
		if a.Decide {
			d := templateDecision(a.Round)
			decisions[d] = true
			require.NoError(t, g.decide(a.RoundID, a.AgentID, d, e))
			continue
		}
		turn := g.turn(a)
		require.Contains(t, fillerLines[a.Role], turn.Template)
		require.Len(t, turn.Debate, len(g.Current().Arguments))
		require.NoError(t, g.argue(a.RoundID, a.AgentID, turn.Template, e))
	}
	for _, c := range g.Coverage() {
		require.True(t, c.Complete)
	}
	require.True(t, decisions[SaveMajority])
}

// TestFillerNames: filler names stay unique past the list, and a game
// takes no more agents than MaxAgents.
func TestFillerNames(t *testing.T) {
	e := testEnv()
	g, err := NewGame("g", 50, 0, e.now)
	require.NoError(t, err)
	_, err = g.addFillers(MaxAgents, e)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, a := range g.Agents {
		require.False(t, seen[a.DisplayName], a.DisplayName)
		seen[a.DisplayName] = true
	}
	require.Equal(t, StatusReady, g.Status)
	_, err = g.addFillers(1, e)
	require.ErrorContains(t, err, "Game is full")
	require.Equal(t, "x", fitArgument("  x  "))
	require.Equal(t, strings.Repeat("é", MaxArgumentChars), fitArgument(strings.Repeat("é", 600)), "a writer's long text is cut to fit")
}
