package observe_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/observe"
	"github.com/agorahq/agora/store/storetest"
)

// okRunner answers every message at once, well.
type okRunner struct{}

func (okRunner) Run(_ context.Context, req agentchat.RunRequest) (agentchat.RunResult, error) {
	req.OnEvent(agentchat.Event{Type: agentchat.EventAssistant, Content: "done"})
	return agentchat.RunResult{SessionID: "s1"}, nil
}

// TestPromptAndChatCountersOnEveryBackend: prompts created, resolved,
// cancelled and timed out, and a chat run's start and end, are counted on
// every backend.
func TestPromptAndChatCountersOnEveryBackend(t *testing.T) {
	t.Parallel()
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := context.Background()
		reg, m := newMetrics(t)
		wrap := observe.NewStores("b", m, nil)
		now := time.Now()
		disc := discussion.New(wrap.Discussion(st.Discussion), discussion.WithClock(func() time.Time { return now }))
		one, minute := 1, 1
		ask := func() discussion.Prompt {
			p, _, err := disc.Create(ctx, discussion.NewPrompt{RequesterAgent: "a", PromptMessage: "why?", RequiredResponses: &one, TimeoutMinutes: &minute})
			require.NoError(t, err)
			return p
		}
		answered, cancelled := ask(), ask()
		ask() // times out
		_, _, err := disc.Respond(ctx, answered.ID, discussion.Response{AgentName: "b", Message: "because"})
		require.NoError(t, err)
		_, err = disc.Close(ctx, cancelled.ID, discussion.ActionCancel)
		require.NoError(t, err)
		now = now.Add(2 * time.Minute)
		n, err := disc.Sweep(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		prompts := func(status string) float64 {
			return counter(t, reg, "agora_discussion_prompts_total", map[string]string{"backend": "b", "status": status})
		}
		require.Equal(t, 3.0, prompts("created"))
		require.Equal(t, 1.0, prompts("resolved"))
		require.Equal(t, 1.0, prompts("cancelled"))
		require.Equal(t, 1.0, prompts("timed_out"))

		chat := agentchat.New(wrap.AgentChat(st.AgentChat), okRunner{})
		_, err = chat.Start(ctx)
		require.NoError(t, err)
		t.Cleanup(chat.Close)
		c, err := chat.Create(ctx, agentchat.NewConversation{})
		require.NoError(t, err)
		_, err = chat.Send(ctx, c.ID, "hello")
		require.NoError(t, err)
		changes := func(status string) float64 {
			return counter(t, reg, "agora_agentchat_status_changes_total", map[string]string{"backend": "b", "status": status})
		}
		require.Eventually(t, func() bool { return changes("idle") == 1 }, 10*time.Second, 10*time.Millisecond)
		require.Equal(t, 1.0, changes("running"), "the title written alone is no change")
		run := series(t, reg, "agora_agentchat_run_duration_seconds", map[string]string{"backend": "b", "status": "idle"})
		require.NotNil(t, run)
		require.EqualValues(t, 1, run.GetHistogram().GetSampleCount())
	})
}
