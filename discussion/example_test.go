package discussion_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/store/memstore"
)

// An agent asks the squad and waits for two answers; a third comes too
// late to count.
func Example() {
	ctx := context.Background()
	st := memstore.New()
	svc := discussion.New(st, discussion.WithNotifier(st))

	two, ten := 2, 10
	p, _, _ := svc.Create(ctx, discussion.NewPrompt{
		RequesterAgent: "Developer", PromptMessage: "What should I check before shipping?",
		RequiredResponses: &two, TimeoutMinutes: &ten,
	})
	go func() {
		for _, who := range []string{"Builder", "Growth"} {
			_, _, _ = svc.Respond(ctx, p.ID, discussion.Response{AgentName: who, Message: who + ": the error pages"})
		}
	}()

	// Wait returns as soon as the prompt is ready, or after the long poll.
	for !p.Ready() {
		p, _ = svc.Wait(ctx, p.ID, 5*time.Second)
	}
	fmt.Println(p.Status, len(p.CollectedContext))
	_, _, err := svc.Respond(ctx, p.ID, discussion.Response{AgentName: "Critic", Message: "late"})
	fmt.Println(err)
	// Output:
	// resolved 2
	// the discussion prompt is no longer collecting responses
}
