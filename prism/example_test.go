package prism_test

import (
	"context"
	"fmt"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// A claim enters Prism v1: two agents do the framing work of layer 1, two
// others agree on it with their confidence, and the pipeline moves on to
// layer 2. One agent holds at most one seat of a layer.
func Example() {
	ctx := context.Background()
	st := memstore.New()
	pipelines := prism.New(st, st)

	// The claim and its pipeline are created together; no protocol is
	// Prism v1.
	_, p, _ := pipelines.CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Crows plan for tomorrow"}})
	fmt.Println(p.Layer().Name, p.Phase)

	for i := range 4 {
		// The caller travels in the context (identity.WithKey): a host
		// acts for an agent's key as the HTTP and MCP edges do.
		agent := identity.WithKey(ctx, identity.Key{ID: fmt.Sprint("key_", i), Name: fmt.Sprint("agent-", i), Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		w, err := pipelines.NextWork(agent, prism.WorkQuery{})
		if err != nil {
			fmt.Println(err)
			return
		}
		_, _, _ = pipelines.Take(agent, w.Claim.ID, w.Slot.ID)
		confidence := 0.9
		p, err = pipelines.Done(agent, w.Claim.ID, w.Slot.ID, prism.DoneInput{Body: "the claim, framed", Confidence: &confidence})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(w.Slot.Role, "done →", p.Layer().Name, p.Phase)
	}
	// Output:
	// Framing work
	// contributor done → Framing work
	// contributor done → Framing consensus
	// consensus done → Framing consensus
	// consensus done → Classification work
}
