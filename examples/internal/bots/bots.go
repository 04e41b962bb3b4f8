// Package bots holds LLM-free agents built only on the HTTP client, so
// they could run on any machine: a Prism worker, a role-slot agent, an
// arena player and a discussion responder. They write plausible,
// role-appropriate text from templates and always valid structured output.
package bots

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// pause waits d or until ctx ends, and reports whether ctx is still alive.
func pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// Output returns valid structured output for a stage slot of Prism v1.
func Output(layer int, phase prism.Phase, rng *rand.Rand) any {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	switch {
	case layer == 2 && phase == prism.PhaseWork:
		return map[string]any{"domain": pick("Animal Cognition", "animal cognition", "Comparative Psychology")}
	case layer == 3 && phase == prism.PhaseWork:
		return map[string]any{"keyPoints": []string{"caching for tomorrow", "planning tests in scrub jays"}, "strength": pick("strong", "moderate")}
	case layer == 4 && phase == prism.PhaseWork:
		return map[string]any{"weaknesses": []string{"mostly captive birds"}, "questions": []string{"does it hold in the wild?"}, "severity": pick("moderate", "low")}
	case layer == 5 && phase == prism.PhaseWork:
		return map[string]any{"responseToWeaknesses": []string{"field studies agree"}, "answeredQuestions": []string{"yes, in several species"}}
	case layer == 6 && phase == prism.PhaseWork:
		return map[string]any{"verdict": "advance-to-synthesis", "caveats": []string{"few species studied"}}
	case layer == 7:
		return map[string]any{"summary": "Corvids plan for the future; the evidence is good but narrow.", "recommendation": pick("accept-with-caveats", "accept")}
	}
	return nil
}

// Prose returns a line of text for a role.
func Prose(role string, rng *rand.Rand) string {
	lines := map[string][]string{
		"contributor": {"The claim rests on whether caching shows planning, not habit.", "Key assumption: the birds anticipate a future need."},
		"critic":      {"The samples are small and mostly captive.", "Alternative explanation: learned routines."},
		"supporter":   {"Scrub jays cache where they will be hungry tomorrow.", "Several labs replicated the result."},
		"counter":     {"Some planning results failed to replicate.", "Effects shrink in wild populations."},
		"questioner":  {"Which species were tested?", "How was 'planning' measured?"},
		"defender":    {"Field data agree with the lab results.", "The alternative cannot explain future-specific caching."},
		"answerer":    {"Scrub jays, ravens and rooks.", "By choices that only pay off later."},
		"consensus":   {"The layer's work is sound.", "Agreed, with minor caveats."},
	}
	xs := lines[role]
	if len(xs) == 0 {
		return "No further comment."
	}
	return xs[rng.IntN(len(xs))]
}

// PrismWorker works the Prism queue until ctx ends: find, take, submit.
func PrismWorker(ctx context.Context, c *client.Client, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for ctx.Err() == nil {
		w, err := c.NextWork(ctx, "", 0, "")
		if err != nil {
			pause(ctx, 30*time.Millisecond)
			continue
		}
		if c.TakeStage(ctx, w.Claim.ID, w.Slot.ID) != nil {
			continue // another bot was faster, or this one holds a seat in the layer
		}
		conf := 0.75 + rng.Float64()*0.2
		_ = c.FinishStage(ctx, w.Claim.ID, w.Slot.ID, Prose(w.Slot.Role, rng), Output(w.Slot.Layer, w.Slot.Phase, rng), &conf)
	}
}

// SlotAgent takes one role slot of role (any role when empty), spends
// think writing its comment, posts it and marks the slot done; it returns
// the job, or an error when ctx ends first.
func SlotAgent(ctx context.Context, c *client.Client, role slots.Role, think time.Duration, seed uint64) (slots.Job, error) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	job, err := c.TakeNextJob(ctx, slots.JobQuery{Role: role}, 200*time.Millisecond)
	if err != nil {
		return slots.Job{}, err
	}
	if !pause(ctx, think) {
		return slots.Job{}, ctx.Err()
	}
	if _, err := c.Comment(ctx, job.Claim.ID, Prose(string(job.Slot.Role), rng), job.Slot.Role.CommentType()); err != nil {
		return slots.Job{}, err
	}
	return job, c.Done(ctx, job.Claim.ID, job.Slot.ID)
}

// ArenaPlayer plays one agent of a game until it completes or ctx ends.
func ArenaPlayer(ctx context.Context, c *client.Client, gameID, agentID string, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, seed+2))
	args := []string{"Five lives outweigh one.", "Pulling the lever makes us responsible.", "Inaction is also a choice.", "Every life counts the same."}
	version := int64(-1)
	for ctx.Err() == nil {
		s, err := c.WaitState(ctx, gameID, version, 2*time.Second)
		if err != nil {
			return err
		}
		version = s.Version
		if s.Status == "game_completed" {
			return nil
		}
		oa, err := c.OpenActions(ctx, gameID, agentID)
		if err != nil || !oa.CanAct || oa.AllowedAction == nil {
			continue
		}
		if *oa.AllowedAction == "decision" {
			d := "save_majority"
			if rng.IntN(4) == 0 {
				d = "save_minority"
			}
			err = c.Decide(ctx, gameID, oa.RoundID, agentID, d)
		} else {
			err = c.Argue(ctx, gameID, oa.RoundID, agentID, args[rng.IntN(len(args))])
		}
		var ce *client.Error
		if err != nil && !(errors.As(err, &ce) && errors.Is(err, store.ErrInvalid)) {
			return err // a 400 only means the phase moved on meanwhile
		}
	}
	return ctx.Err()
}

// Responder answers every discussion prompt it could answer until ctx
// ends.
func Responder(ctx context.Context, c *client.Client, name string) {
	for ctx.Err() == nil {
		prompts, err := c.OpenPrompts(ctx, name)
		if err == nil {
			for _, p := range prompts {
				_ = c.Respond(ctx, p.ID, name, fmt.Sprintf("From %s: consider the edge cases first.", name))
			}
		}
		pause(ctx, 50*time.Millisecond)
	}
}
