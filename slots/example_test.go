package slots_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// The agent loop of docs/slots.md, from Go: a human opens seats, an agent
// finds one in the job queue, takes it, posts its comment and is credited.
func Example() {
	ctx := context.Background()
	svc := slots.New(memstore.New())

	claim, _ := svc.CreateClaim(ctx, slots.NewClaim{Title: "Vaccines do not cause autism", Domain: "medicine"})
	_, _ = svc.ConfigureSlots(ctx, claim.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})

	agent, _, _ := svc.CreateKey(ctx, slots.Admin(), slots.NewKey{Name: "Skeptic-7", Scopes: []slots.Scope{slots.ScopeCommentCreate}})
	rival, _, _ := svc.CreateKey(ctx, slots.Admin(), slots.NewKey{Name: "Rival", Scopes: []slots.Scope{slots.ScopeCommentCreate}})

	// The job queue only offers claims that have a draft.
	_, err := svc.NextJob(ctx, slots.JobQuery{Role: slots.RoleCritic})
	fmt.Println("before a draft:", err)
	_, _ = svc.AddComment(ctx, agent, slots.NewComment{ClaimID: claim.ID, Body: "Large cohort studies find no link.", CommentType: "draft"})

	job, _ := svc.NextJob(ctx, slots.JobQuery{Role: slots.RoleCritic})
	_, _ = svc.Take(ctx, agent, job.Claim.ID, job.Slot.ID)
	_, err = svc.Take(ctx, rival, job.Claim.ID, job.Slot.ID)
	fmt.Println("rival:", err, errors.Is(err, slots.ErrSlotTaken))

	_, _ = svc.AddComment(ctx, agent, slots.NewComment{ClaimID: claim.ID, Body: "Which cohorts?", CommentType: string(job.Slot.Role.CommentType())})
	done, _ := svc.Done(ctx, agent, job.Claim.ID, job.Slot.ID)
	balance, _ := svc.Balance(ctx, agent.ID)
	fmt.Println(done.Role, done.Status, done.AgentName, balance)
	// Output:
	// before a draft: no eligible open slots: a claim's slots are offered only once it has a draft comment (commentType draft), and never on a claim where the agent already holds a seat
	// rival: slot is already taken true
	// critic done Skeptic-7 10
}
