package discussion

import (
	"slices"
	"time"
)

// The rules of a prompt's life, each written once. Every backend decides a
// change by calling these inside its own atomic step (memstore under its
// mutex, pgstore on the row it locked), so the store guarantees the
// atomicity and this package the decision. Where Redis must decide inside a
// Lua script, the script names the method it mirrors, and storetest's
// PromptRules case runs every branch of the method against every backend,
// so that a copy that drifts fails.

// OpenAt reports whether the prompt accepts a response or a close at t: it
// is pending or collecting and t is not past its deadline. As the seed's
// sweep (created_at + timeout_minutes < now), it times out only after the
// deadline, not at it.
func (p *Prompt) OpenAt(t time.Time) bool {
	return p.Status.Open() && !t.After(p.Deadline())
}

// Answered reports whether agent's response is in the collected context.
func (p *Prompt) Answered(agent string) bool {
	return slices.ContainsFunc(p.CollectedContext, func(e ContextEntry) bool { return e.Agent == agent })
}

// AnswerableBy reports whether agent could answer the prompt, as a listing
// for that agent keeps it (ListParams.Agent): not its own, not answered by
// it yet. The prompt's status is filtered apart.
func (p *Prompt) AnswerableBy(agent string) bool {
	return p.RequesterAgent != agent && !p.Answered(agent)
}

// Respond adds e to the prompt, checking in this order: the requester
// cannot answer its own prompt (ErrOwnPrompt); the prompt must be open at
// e.CreatedAt (ErrPromptClosed); an agent answers once
// (ErrAlreadyResponded). The entry is appended, and the one that brings
// the collected context to RequiredResponses resolves the prompt at
// e.CreatedAt. On error p is unchanged. The order matters: the requester
// of a closed prompt hears ErrOwnPrompt, and an agent that answered a
// prompt since closed hears ErrPromptClosed.
//
// store/redisstore/lua/discussion_respond.lua mirrors this method.
func (p *Prompt) Respond(e ContextEntry) error {
	switch {
	case e.Agent == p.RequesterAgent:
		return ErrOwnPrompt
	case !p.OpenAt(e.CreatedAt):
		return ErrPromptClosed
	case p.Answered(e.Agent):
		return ErrAlreadyResponded
	}
	p.CollectedContext = append(p.CollectedContext, e)
	if len(p.CollectedContext) >= p.RequiredResponses {
		p.Status = StatusResolved
		at := e.CreatedAt
		p.ResolvedAt = &at
	}
	return nil
}

// Close moves a prompt open at now to status to (resolved or cancelled,
// as the action of a human says) with ResolvedAt = now, or returns
// ErrPromptClosed and leaves p unchanged.
//
// store/redisstore/lua/discussion_close.lua mirrors this method.
func (p *Prompt) Close(to Status, now time.Time) error {
	if !p.OpenAt(now) {
		return ErrPromptClosed
	}
	p.Status = to
	p.ResolvedAt = &now
	return nil
}

// TimeOut records the timeout of a prompt that is still pending or
// collecting after its deadline: timed out, resolved at the deadline
// (not at now, however late the sweep runs). It reports whether it did.
//
// The sweeps of store/pgstore (TimeOut's UPDATE) and
// store/redisstore/lua/discussion_timeout.lua select and change prompts by
// this rule.
func (p *Prompt) TimeOut(now time.Time) bool {
	if !p.Status.Open() || p.OpenAt(now) {
		return false
	}
	p.Status = StatusTimedOut
	d := p.Deadline()
	p.ResolvedAt = &d
	return true
}
