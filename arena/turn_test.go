package arena

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireTurnsAgree checks every agent's Turn against what argue and decide
// accept on a copy of g: an agent is allowed to argue exactly when argue
// takes its argument, to decide exactly when decide takes its decision.
func requireTurnsAgree(t *testing.T, g Game, e env) {
	t.Helper()
	r := g.Current()
	for _, a := range g.Agents {
		turn, err := g.Turn(a.ID)
		require.NoError(t, err)
		if r == nil || g.Status == StatusCompleted {
			require.Equal(t, Turn{}, turn, "no round, no turn")
		} else {
			require.Equal(t, r.ID, turn.RoundID)
			require.Equal(t, r.RoleOf(a.ID), turn.Role)
		}
		roundID := ""
		if r != nil {
			roundID = r.ID
		}
		argue, decide := g.Clone(), g.Clone()
		argued := argue.argue(roundID, a.ID, "pull the lever", e) == nil
		decided := decide.decide(roundID, a.ID, SaveMajority, e) == nil
		require.Equal(t, argued, turn.Allowed == ActArgue, "%s may argue: argue and Turn agree (%s, %s)", a.DisplayName, g.Status, turn.Allowed)
		require.Equal(t, decided, turn.Allowed == ActDecide, "%s may decide: decide and Turn agree (%s, %s)", a.DisplayName, g.Status, turn.Allowed)
	}
}

func TestTurnIsWhatArgueAndDecideAccept(t *testing.T) {
	e := testEnv()
	g, err := NewGame("g", TableMin, 0, e.now)
	require.NoError(t, err)
	_, err = g.Turn("agent_missing")
	require.ErrorIs(t, err, ErrAgentNotFound)
	for i := range 4 {
		_, err := g.register(fmt.Sprint("agent-", i), actor{}, e)
		require.NoError(t, err)
		requireTurnsAgree(t, g, e)
	}
	require.NoError(t, g.start(e))
	forced := false
	for steps := 0; g.Status != StatusCompleted; steps++ {
		require.Less(t, steps, 200)
		requireTurnsAgree(t, g, e)
		r := g.Current()
		op, err := g.Turn(r.Operator)
		require.NoError(t, err)
		require.Equal(t, RoleOperator, op.Role)
		if r.Phase == PhaseAwaiting {
			require.Equal(t, ActDecide, op.Allowed)
			require.NoError(t, g.decide(r.ID, r.Operator, SaveMinority, e))
			continue
		}
		require.Empty(t, op.Allowed, "the operator does not argue")
		if r.Phase == Phase2 && !forced {
			// An admin's push skips the rest of the debate: the operator
			// may decide at once, nobody argues.
			forced = true
			require.NoError(t, g.advance(ActionForceDecision, e))
			continue
		}
		// The first track agent who has not argued argues; then it may not
		// again in this phase.
		for _, id := range append(append([]string{}, r.Majority...), r.Minority...) {
			turn, err := g.Turn(id)
			require.NoError(t, err)
			if turn.Allowed == ActArgue {
				phase := r.Phase
				require.NoError(t, g.argue(r.ID, id, "save us", e))
				if again, _ := g.Turn(id); g.Current().Phase == phase {
					require.Empty(t, again.Allowed, "one argument a phase")
				}
				break
			}
		}
	}
	require.True(t, forced)
	requireTurnsAgree(t, g, e)
}

func TestBoard(t *testing.T) {
	e := testEnv()
	g, err := NewGame("g", TableMin, 0, e.now)
	require.NoError(t, err)
	empty := Board{Argued: []string{}, Survivors: []string{}, Lost: []string{}, Resolution: ResolutionPending}
	require.Equal(t, empty, g.Board(), "before the first round")
	for i := range 4 {
		_, err := g.register(fmt.Sprint("agent-", i), actor{}, e)
		require.NoError(t, err)
	}
	require.NoError(t, g.start(e))
	require.Equal(t, empty, g.Board(), "nobody argued yet")

	r := g.Current()
	require.NoError(t, g.argue(r.ID, r.Minority[0], "save me", e))
	require.NoError(t, g.argue(r.ID, r.Majority[0], "save us", e))
	b := g.Board()
	require.Equal(t, []string{r.Minority[0], r.Majority[0]}, b.Argued, "who argued in this phase, in order")
	require.Empty(t, b.Branch)

	// The phase moved on: nobody has argued in the new one.
	require.NoError(t, g.argue(r.ID, r.Majority[1], "save us", e))
	require.Equal(t, Phase2, r.Phase)
	require.Empty(t, g.Board().Argued)

	require.NoError(t, g.advance(ActionForceDecision, e))
	require.NoError(t, g.decide(r.ID, r.Operator, SaveMinority, e))
	b = g.Board()
	require.NotEqual(t, r.ID, g.Current().ID, "the next round started")
	require.Equal(t, Board{Argued: []string{}, Survivors: []string{}, Lost: []string{}, Resolution: ResolutionPending, AnimationVersion: 1}, b,
		"the next round is not decided: the board carries nothing of the previous one")
	require.Equal(t, SaveMinority, g.LastResolved.Decision, "the decision is the ended round's")

	for g.Status != StatusCompleted {
		require.NoError(t, g.advance(ActionForceDecision, e))
		require.NoError(t, g.advance(ActionResolveRound, e))
	}
	b = g.Board()
	require.Equal(t, ResolutionResolved, b.Resolution, "the last round decided is the one on the board")
	require.Equal(t, SaveMajority, b.Branch)
	require.Equal(t, g.Current().Survivors, b.Survivors)
	require.Equal(t, g.AnimationCount, b.AnimationVersion)
}
