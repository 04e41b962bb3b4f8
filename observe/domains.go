package observe

import (
	"context"
	"time"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/discussion"
)

// prompt counts n prompts reaching status.
func (o *observer) prompt(status string, n int) {
	if o.m != nil && n > 0 {
		o.m.prompts.WithLabelValues(o.backend, status).Add(float64(n))
	}
}

// CreatePrompt implements discussion.Store; a success is a prompt created.
func (s discussionStore) CreatePrompt(ctx context.Context, p discussion.Prompt, m discussion.Message) error {
	ctx, c := s.o.start(ctx, &s.ops[opDiscussionCreatePrompt])
	err := s.next.CreatePrompt(ctx, p, m)
	c.end(err)
	if err == nil {
		s.o.prompt("created", 1)
	}
	return err
}

// Respond implements discussion.Store; an answer that meets the quorum
// resolves its prompt, once.
func (s discussionStore) Respond(ctx context.Context, p discussion.RespondParams) (discussion.Prompt, error) {
	ctx, c := s.o.start(ctx, &s.ops[opDiscussionRespond])
	r, err := s.next.Respond(ctx, p)
	c.end(err)
	if err == nil && r.Status == discussion.StatusResolved {
		s.o.prompt(string(r.Status), 1)
	}
	return r, err
}

// ClosePrompt implements discussion.Store; a success closes the prompt
// with the status it reached.
func (s discussionStore) ClosePrompt(ctx context.Context, id string, to discussion.Status, now time.Time) (discussion.Prompt, error) {
	ctx, c := s.o.start(ctx, &s.ops[opDiscussionClosePrompt])
	r, err := s.next.ClosePrompt(ctx, id, to, now)
	c.end(err)
	if err == nil {
		s.o.prompt(string(r.Status), 1)
	}
	return r, err
}

// TimeOut implements discussion.Store; each ID is a prompt timed out.
func (s discussionStore) TimeOut(ctx context.Context, now time.Time) ([]string, error) {
	ctx, c := s.o.start(ctx, &s.ops[opDiscussionTimeOut])
	ids, err := s.next.TimeOut(ctx, now)
	c.end(err)
	s.o.prompt(string(discussion.StatusTimedOut), len(ids))
	return ids, err
}

// chat counts n conversations moved to status.
func (o *observer) chat(status agentchat.Status, n int) {
	if o.m != nil && n > 0 {
		o.m.chatRuns.WithLabelValues(o.backend, string(status)).Add(float64(n))
	}
}

// chatRun times conversation id's run: it starts when the conversation
// becomes running and ends with the next status that is not running or
// queued. The agent chat runs its runs in the process that started them,
// so both ends pass through this process's store.
func (o *observer) chatRun(id string, status agentchat.Status) {
	if o.m == nil {
		return
	}
	switch {
	case status == agentchat.StatusRunning:
		o.runs.Store(id, time.Now())
	case status.Busy():
	default:
		if start, ok := o.runs.LoadAndDelete(id); ok {
			o.m.chatRunTime.WithLabelValues(o.backend, string(status)).Observe(time.Since(start.(time.Time)).Seconds())
		}
	}
}

// UpdateConversation implements agentchat.Store; a success without a
// title is a conversation moved to status (the service writes a title
// alone with the status the conversation already has).
func (s agentchatStore) UpdateConversation(ctx context.Context, u agentchat.ConversationUpdate) error {
	ctx, c := s.o.start(ctx, &s.ops[opAgentchatUpdateConversation])
	err := s.next.UpdateConversation(ctx, u)
	c.end(err)
	if err == nil && u.Title == "" {
		s.o.chatRun(u.ID, u.Status) // before the count, which a reader may wait for
		s.o.chat(u.Status, 1)
	}
	return err
}

// InterruptRunning implements agentchat.Store; each conversation it marks
// is a run interrupted.
func (s agentchatStore) InterruptRunning(ctx context.Context, at time.Time) ([]string, error) {
	ctx, c := s.o.start(ctx, &s.ops[opAgentchatInterruptRunning])
	ids, err := s.next.InterruptRunning(ctx, at)
	c.end(err)
	s.o.chat(agentchat.StatusInterrupted, len(ids))
	return ids, err
}
