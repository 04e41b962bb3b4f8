// Package bots holds LLM-free agents built only on the HTTP client, so
// they could run on any machine: a Prism worker, a role-slot agent, an
// arena player and a discussion responder. They write plausible,
// role-appropriate text from templates and always valid structured output.
//
// WithBrain lets a bot write its prose another way — NewClaude with the
// Claude Code CLI — from a prompt naming its role, layer, phase, claim or
// question; structured output, confidence and decisions stay with the
// templates, and a failed brain falls back to the template text.
package bots

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
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

// roleTask says what each role's text does, for a brain's prompt.
var roleTask = map[string]string{
	"contributor": "frame the claim: what it says and what it takes for granted",
	"critic":      "find the claim's weaknesses",
	"supporter":   "bring the evidence for the claim",
	"counter":     "bring the evidence against the claim",
	"questioner":  "ask the questions the claim must answer",
	"defender":    "answer the critique of the claim",
	"answerer":    "answer the open questions about the claim",
	"consensus":   "judge whether this layer's work is sound and agree or disagree",
}

func task(role string) string {
	if t, ok := roleTask[role]; ok {
		return t
	}
	return "contribute as the " + role
}

func quote(title, body string) string {
	return fmt.Sprintf("The claim: %q\n%s\n", title, body)
}

// StagePrompt is the prompt of a Prism stage slot's text.
func StagePrompt(w client.Work) string {
	var b strings.Builder
	name := ""
	if ls := prism.PrismV1().Layers; w.Slot.Layer >= 1 && w.Slot.Layer <= len(ls) {
		name = " (" + ls[w.Slot.Layer-1].Name + ")"
	}
	fmt.Fprintf(&b, "You are the %s of layer %d%s of a Prism deliberation, %s phase.\n", w.Slot.Role, w.Slot.Layer, name, w.Slot.Phase)
	b.WriteString(quote(w.Claim.Title, w.Claim.Body))
	fmt.Fprintf(&b, "As the %s, %s, in two or three sentences.", w.Slot.Role, task(w.Slot.Role))
	return b.String()
}

// CommentPrompt is the prompt of a role-slot comment.
func CommentPrompt(job slots.Job) string {
	var b strings.Builder
	role := string(job.Slot.Role)
	fmt.Fprintf(&b, "You hold the %s seat on a claim; your comment is a %s.\n", role, job.Slot.Role.CommentType())
	b.WriteString(quote(job.Claim.Title, job.Claim.Body))
	if cs := job.Comments; len(cs) > 0 {
		b.WriteString("The latest comments:\n")
		for _, cm := range cs[max(0, len(cs)-5):] {
			fmt.Fprintf(&b, "- %s\n", cm.Body)
		}
	}
	fmt.Fprintf(&b, "As the %s, %s, in two or three sentences.", role, task(role))
	return b.String()
}

// ArgumentPrompt is the prompt of an arena argument.
func ArgumentPrompt(role, phase string, round int) string {
	return fmt.Sprintf("You are the %s in round %d of the Trolley Problem Arena, %s. "+
		"A runaway trolley heads for the agents on the majority track; the operator at the lever decides "+
		"whether to save the majority or the minority. As the %s, argue your case to the operator in one or two sentences "+
		"(at most %d characters).", role, round, phase, role, arena.MaxArgumentChars)
}

// answerTemplates are the LLM-free answers to a discussion prompt: each a
// different angle, none naming its speaker (the chat names it).
var answerTemplates = []string{
	"Check that a round still ends when an agent drops out: the phase deadline should force the decision.",
	"Run it on PostgreSQL and Redis too, not only in memory; each backend decides the races itself.",
	"Make sure a newcomer can follow a round: which track the trolley took, who was lost, who survived.",
	"Watch the event stream with a few dozen spectators attached before inviting anyone.",
	"Try a game of three, the smallest there is, and one of fifty; both should finish.",
	"Read the transcript against the console: the two must tell the same story.",
	"Put a key on every write before the arena leaves the private network.",
	"Ask a few people outside the team to play one game and say where they got lost.",
}

// AnswerTemplate is the LLM-free answer of the squad member name: the
// same for a name on every run, and different for the demo's squad
// (Builder, Critic, Growth).
func AnswerTemplate(name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return answerTemplates[h.Sum32()%uint32(len(answerTemplates))]
}

// AnswerPrompt is the prompt of a discussion answer.
func AnswerPrompt(name, requester, question string) string {
	return fmt.Sprintf("You are %s, one member of an agent squad. %s asks the squad:\n%q\n"+
		"Answer from your perspective as %s, in two or three sentences.", name, requester, question, name)
}

// PrismWorker works the Prism queue until ctx ends: find, take, submit.
//
// What it submits for a slot — confidence, text, structured output — is a
// function of seed, the claim's title and the slot's place in the
// pipeline (stageRand), never of which worker took the slot or when: any
// number of workers given the same seed, racing for the slots, take a
// claim to the same averages, domain and consensus on every run.
func PrismWorker(ctx context.Context, c *client.Client, seed uint64, opts ...Option) {
	cfg := configure(opts)
	for ctx.Err() == nil {
		w, err := c.NextWork(ctx, client.WorkQuery{})
		if err != nil {
			pause(ctx, 30*time.Millisecond)
			continue
		}
		if c.TakeStage(ctx, w.Claim.ID, w.Slot.ID) != nil {
			continue // another bot was faster, or this one holds a seat in the layer
		}
		rng := stageRand(seed, w)
		conf := 0.75 + rng.Float64()*0.2
		tmpl := Prose(w.Slot.Role, rng)
		// The fields a layer votes on (domain, recommendation) come from the
		// claim and layer alone: every slot of the layer proposes the same,
		// so the majority does not hang on the order of submission.
		out := Output(w.Slot.Layer, prism.Phase(w.Slot.Phase), seeded(seed, w.Claim.Title, w.Slot.Layer))
		body := cfg.write(ctx, "prism stage", Prompt{Text: StagePrompt(w), Template: tmpl, Max: prism.MaxBodyLen})
		_ = c.FinishStage(ctx, w.Claim.ID, w.Slot.ID, client.StageSubmission{Body: body, Output: out, Confidence: &conf})
	}
}

// seeded returns a random source that is a function of seed and parts
// alone.
func seeded(seed uint64, parts ...any) *rand.Rand {
	h := fnv.New64a()
	for _, p := range parts {
		fmt.Fprintf(h, "%v\x00", p)
	}
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// stageRand returns the random source of the stage slot w hands out: a
// function of seed, the claim's title and the slot's place — layer,
// phase, round, role and its rank among the pipeline's slots of that same
// place — so that whichever worker takes which of several like slots, the
// layer's submissions are the same set.
func stageRand(seed uint64, w client.Work) *rand.Rand {
	s := w.Slot
	rank := 0
	var like []string
	for _, l := range w.Pipeline.Layers {
		for _, o := range l.Slots {
			if o.Layer == s.Layer && o.Phase == s.Phase && o.Round == s.Round && o.Role == string(s.Role) {
				like = append(like, o.ID)
			}
		}
	}
	slices.Sort(like)
	rank = max(0, slices.Index(like, s.ID))
	return seeded(seed, w.Claim.Title, s.Layer, s.Phase, s.Round, s.Role, rank)
}

// SlotAgent takes one role slot of role (any role when empty), spends
// think writing its comment, posts it and marks the slot done; it returns
// the job, or an error when ctx ends first.
func SlotAgent(ctx context.Context, c *client.Client, role slots.Role, think time.Duration, seed uint64, opts ...Option) (slots.Job, error) {
	cfg := configure(opts)
	rng := rand.New(rand.NewPCG(seed, seed+1))
	job, err := c.TakeNextJob(ctx, slots.JobQuery{Role: role}, 200*time.Millisecond)
	if err != nil {
		return slots.Job{}, err
	}
	if !pause(ctx, think) {
		return slots.Job{}, ctx.Err()
	}
	body := cfg.write(ctx, "role-slot comment", Prompt{Text: CommentPrompt(job), Template: Prose(string(job.Slot.Role), rng), Max: slots.MaxCommentLen})
	if _, err := c.Comment(ctx, job.Claim.ID, client.NewComment{Body: body, CommentType: string(job.Slot.Role.CommentType())}); err != nil {
		return slots.Job{}, err
	}
	return job, c.Done(ctx, job.Claim.ID, job.Slot.ID)
}

// ArenaPlayer plays one agent of a game until it completes or ctx ends.
func ArenaPlayer(ctx context.Context, c *client.Client, gameID, agentID string, seed uint64, opts ...Option) error {
	cfg := configure(opts)
	rng := rand.New(rand.NewPCG(seed, seed+2))
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
		turn := client.Turn{GameID: gameID, RoundID: oa.RoundID, AgentID: agentID}
		if *oa.AllowedAction == "decision" {
			d := arena.SaveMajority
			if rng.IntN(4) == 0 {
				d = arena.SaveMinority
			}
			err = c.Decide(ctx, turn, d)
		} else {
			role, phase := "player", "a debate phase"
			if oa.Role != nil {
				role = *oa.Role
			}
			if s.CurrentPhase != nil {
				phase = *s.CurrentPhase
			}
			p := Prompt{Text: ArgumentPrompt(role, phase, s.CurrentRoundNumber), Template: arena.TemplateArgument(arena.Role(role), rng.IntN(8)), Max: arena.MaxArgumentChars}
			err = c.Argue(ctx, turn, cfg.write(ctx, "arena argument", p))
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
func Responder(ctx context.Context, c *client.Client, name string, opts ...Option) {
	cfg := configure(opts)
	for ctx.Err() == nil {
		prompts, err := c.OpenPrompts(ctx, name)
		if err == nil {
			for _, p := range prompts {
				text := cfg.write(ctx, "discussion answer", Prompt{
					Text:     AnswerPrompt(name, p.RequesterAgent, p.PromptMessage),
					Template: AnswerTemplate(name),
					Max:      discussion.MaxMessageLen,
				})
				_ = c.Respond(ctx, p.ID, discussion.Response{AgentName: name, Message: text})
			}
		}
		pause(ctx, 50*time.Millisecond)
	}
}
