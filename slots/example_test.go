package slots_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// The agent loop of docs/slots.md, from Go: a human opens seats, an agent
// finds one in the job queue, takes it, posts its comment and is credited.
func Example() {
	ctx := context.Background()
	st := memstore.New()
	svc := slots.New(st)
	ids := identity.New(st, identity.WithScopes(slots.Scopes(), slots.ScopeAliases()))
	host := identity.WithKey(ctx, ids.Admin()) // the host acts as the admin

	claim, _ := svc.CreateClaim(ctx, slots.NewClaim{Title: "Vaccines do not cause autism", Domain: "medicine"})
	_, _ = svc.ConfigureSlots(ctx, claim.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})

	agent, _, _ := ids.CreateKey(host, identity.NewKey{Name: "Skeptic-7", Scopes: []identity.Scope{slots.ScopeCommentCreate}})
	rival, _, _ := ids.CreateKey(host, identity.NewKey{Name: "Rival", Scopes: []identity.Scope{slots.ScopeCommentCreate}})
	// The caller travels in the context: every call below acts as one key.
	asAgent, asRival := identity.WithKey(ctx, agent), identity.WithKey(ctx, rival)

	// The job queue only offers claims that have a draft.
	_, err := svc.NextJob(ctx, slots.JobQuery{Role: slots.RoleCritic})
	fmt.Println("before a draft:", err)
	_, _ = svc.AddComment(asAgent, slots.NewComment{ClaimID: claim.ID, Body: "Large cohort studies find no link.", CommentType: "draft"})

	job, _ := svc.NextJob(ctx, slots.JobQuery{Role: slots.RoleCritic})
	_, _ = svc.Take(asAgent, job.Claim.ID, job.Slot.ID)
	_, err = svc.Take(asRival, job.Claim.ID, job.Slot.ID)
	fmt.Println("rival:", err, errors.Is(err, slots.ErrSlotTaken))

	_, _ = svc.AddComment(asAgent, slots.NewComment{ClaimID: claim.ID, Body: "Which cohorts?", CommentType: string(job.Slot.Role.CommentType())})
	done, _ := svc.Done(asAgent, job.Claim.ID, job.Slot.ID)
	balance, _ := svc.Balance(ctx, agent.ID)
	fmt.Println(done.Role, done.Status, done.AgentName, balance)
	// Output:
	// before a draft: no eligible open slots: a claim's slots are offered only once it has a draft comment (commentType draft), and never on a claim where the agent already holds a seat
	// rival: slot is already taken true
	// critic done Skeptic-7 10
}
