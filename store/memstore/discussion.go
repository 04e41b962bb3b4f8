package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/agorahq/agora/discussion"
)

var _ discussion.Store = (*Store)(nil)

// discussionData is the discussion part of the store, under Store.mu.
type discussionData struct {
	prompts     map[string]*discussion.Prompt
	promptOrder []string // ascending IDs
	messages    map[string]discussion.Message
	msgOrder    []string            // ascending IDs
	responses   map[string][]string // prompt ID -> response message IDs
}

func (d *discussionData) init() {
	if d.prompts == nil {
		d.prompts = map[string]*discussion.Prompt{}
		d.messages = map[string]discussion.Message{}
		d.responses = map[string][]string{}
	}
}

func clonePrompt(p discussion.Prompt) discussion.Prompt {
	p.CollectedContext = slices.Clone(p.CollectedContext)
	if p.CollectedContext == nil {
		p.CollectedContext = []discussion.ContextEntry{}
	}
	return p
}

// CreatePrompt implements discussion.Store.
func (s *Store) CreatePrompt(ctx context.Context, p discussion.Prompt, m discussion.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := &s.disc
	d.init()
	if _, ok := d.prompts[p.ID]; ok {
		return discussion.ErrPromptExists
	}
	p = clonePrompt(p)
	d.prompts[p.ID] = &p
	d.promptOrder = insertSorted(d.promptOrder, p.ID)
	d.messages[m.ID] = m
	d.msgOrder = insertSorted(d.msgOrder, m.ID)
	return nil
}

// GetPrompt implements discussion.Store.
func (s *Store) GetPrompt(ctx context.Context, id string) (discussion.Prompt, error) {
	if err := ctx.Err(); err != nil {
		return discussion.Prompt{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.disc.prompts[id]
	if !ok {
		return discussion.Prompt{}, discussion.ErrPromptNotFound
	}
	return clonePrompt(*p), nil
}

// ListPrompts implements discussion.Store.
func (s *Store) ListPrompts(ctx context.Context, lp discussion.ListParams) ([]discussion.Prompt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []discussion.Prompt{}
	order := s.disc.promptOrder
	for i := len(order) - 1; i >= 0 && len(out) < lp.Limit; i-- {
		p := s.disc.prompts[order[i]]
		switch {
		case len(lp.Statuses) > 0 && !slices.Contains(lp.Statuses, p.AsOf(lp.Now).Status):
		case lp.TaskID != "" && (p.TaskID == nil || *p.TaskID != lp.TaskID):
		case lp.Agent != "" && !p.AnswerableBy(lp.Agent):
		default:
			out = append(out, clonePrompt(*p))
		}
	}
	return out, nil
}

// Respond implements discussion.Store: discussion.Prompt.Respond decides,
// under the store's mutex.
func (s *Store) Respond(ctx context.Context, rp discussion.RespondParams) (discussion.Prompt, error) {
	if err := ctx.Err(); err != nil {
		return discussion.Prompt{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := &s.disc
	p, ok := d.prompts[rp.PromptID]
	if !ok {
		return discussion.Prompt{}, discussion.ErrPromptNotFound
	}
	if err := p.Respond(rp.Entry); err != nil {
		return discussion.Prompt{}, err
	}
	d.messages[rp.Message.ID] = rp.Message
	d.msgOrder = insertSorted(d.msgOrder, rp.Message.ID)
	d.responses[p.ID] = append(d.responses[p.ID], rp.Message.ID)
	return clonePrompt(*p), nil
}

// ClosePrompt implements discussion.Store: discussion.Prompt.Close
// decides, under the store's mutex.
func (s *Store) ClosePrompt(ctx context.Context, id string, to discussion.Status, now time.Time) (discussion.Prompt, error) {
	if err := ctx.Err(); err != nil {
		return discussion.Prompt{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.disc.prompts[id]
	if !ok {
		return discussion.Prompt{}, discussion.ErrPromptNotFound
	}
	if err := p.Close(to, now); err != nil {
		return discussion.Prompt{}, err
	}
	return clonePrompt(*p), nil
}

// TimeOut implements discussion.Store. Memory has no index by deadline; it
// scans the prompts, which a sweep every few seconds can afford, and
// discussion.Prompt.TimeOut decides each.
func (s *Store) TimeOut(ctx context.Context, now time.Time) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, id := range s.disc.promptOrder {
		if s.disc.prompts[id].TimeOut(now) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// ListResponses implements discussion.Store.
func (s *Store) ListResponses(ctx context.Context, promptID string) ([]discussion.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.disc.prompts[promptID]; !ok {
		return nil, discussion.ErrPromptNotFound
	}
	out := []discussion.Message{}
	for _, id := range s.disc.responses[promptID] {
		out = append(out, s.disc.messages[id])
	}
	return out, nil
}

// PostMessage implements discussion.Store.
func (s *Store) PostMessage(ctx context.Context, m discussion.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.disc.init()
	if m.ReplyToID != nil {
		if _, ok := s.disc.messages[*m.ReplyToID]; !ok {
			return discussion.ErrReplyToNotFound
		}
	}
	s.disc.messages[m.ID] = m
	s.disc.msgOrder = insertSorted(s.disc.msgOrder, m.ID)
	return nil
}

// ListMessages implements discussion.Store.
func (s *Store) ListMessages(ctx context.Context, limit int, before string) ([]discussion.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	end := len(s.disc.msgOrder)
	if before != "" {
		end, _ = slices.BinarySearch(s.disc.msgOrder, before)
	}
	out := []discussion.Message{}
	for i := end - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, s.disc.messages[s.disc.msgOrder[i]])
	}
	return out, nil
}
