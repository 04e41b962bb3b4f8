package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

var takeNextScript = newScript("take_next.lua")

// TakeNextSlot implements slots.SlotStore in one script: NextOpenSlot's
// pick and TakeSlot's take (lua/take_next.lua).
func (s *Store) TakeNextSlot(ctx context.Context, p slots.TakeNextParams) (slots.Job, error) {
	v, err := takeNextScript.Run(ctx, s.client,
		[]string{s.queueKey(p.Next.Role, p.Next.Domain)},
		s.ns, pickArg(p.Next.Random), p.Agent.KeyID, p.Agent.Name, p.Agent.AvatarURL, store.Millis(p.Now), store.Millis(p.LeaseUntil)).Slice()
	if err != nil {
		return slots.Job{}, interpretError(ctx, err, slots.ErrNoJob)
	}
	return decodeJob(v)
}

// decodeJob reads a script's job reply: {slot fields, claim fields, comment
// JSONs}.
func decodeJob(v []any) (slots.Job, error) {
	if len(v) != 3 {
		return slots.Job{}, fmt.Errorf("redisstore: job: unexpected reply of %d items", len(v))
	}
	sl, err := decodeSlotReply(v[0])
	if err != nil {
		return slots.Job{}, err
	}
	cm, err := toRecord(v[1])
	if err != nil {
		return slots.Job{}, err
	}
	c, err := decodeClaim(cm)
	if err != nil {
		return slots.Job{}, err
	}
	list, _ := v[2].([]any)
	comments, err := decodeComments(list)
	if err != nil {
		return slots.Job{}, err
	}
	return slots.Job{Slot: sl, Claim: c, Comments: comments}, nil
}

var finishManyScript = newScript("finish_many.lua")

// FinishSlots implements slots.SlotStore in one script (lua/finish_many.lua,
// finish.lua's step per slot).
func (s *Store) FinishSlots(ctx context.Context, ps []slots.FinishParams) ([]slots.FinishResult, error) {
	args := []any{s.ns}
	for _, p := range ps {
		args = append(args, p.ClaimID, p.SlotID, p.KeyID, store.Millis(p.Now), p.Credit)
	}
	v, err := finishManyScript.Run(ctx, s.client, []string{s.leasesKey(), s.balancesKey()}, args...).Slice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	if len(v) != len(ps) {
		return nil, fmt.Errorf("redisstore: finish: %d answers for %d slots", len(v), len(ps))
	}
	out := make([]slots.FinishResult, len(ps))
	for i, item := range v {
		if out[i], _, err = finishAnswer(item); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// finishAnswer reads one item of finish_many.lua's or
// finish_take_next_many.lua's reply: {error code} when the finish was
// refused, else {”, slot fields, …}, whose items it also returns. The
// error is for a reply it cannot read.
func finishAnswer(item any) (slots.FinishResult, []any, error) {
	a, _ := item.([]any)
	code := ""
	if len(a) > 0 {
		code, _ = a[0].(string)
	}
	switch {
	case code != "":
		e, ok := scriptErrors[code]
		if !ok {
			return slots.FinishResult{}, nil, fmt.Errorf("redisstore: finish: unknown code %q", code)
		}
		return slots.FinishResult{Err: e}, a, nil
	case len(a) >= 2:
		var r slots.FinishResult
		r.Slot, r.Err = decodeSlotReply(a[1])
		return r, a, nil
	}
	return slots.FinishResult{}, nil, fmt.Errorf("redisstore: finish: unexpected answer %v", item)
}

// pickArg is a script's r argument: -1 for the oldest, else the draw.
func pickArg(r float64) string {
	if r < 0 {
		r = -1
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}

var takeNextManyScript = newScript("take_next_many.lua")

// TakeNextSlots implements slots.SlotStore in one script
// (lua/take_next_many.lua, take_next.lua's step per agent).
func (s *Store) TakeNextSlots(ctx context.Context, ps []slots.TakeNextParams) ([]slots.JobResult, error) {
	args := []any{s.ns}
	for _, p := range ps {
		args = append(args, s.queueKey(p.Next.Role, p.Next.Domain), pickArg(p.Next.Random),
			p.Agent.KeyID, p.Agent.Name, p.Agent.AvatarURL, store.Millis(p.Now), store.Millis(p.LeaseUntil))
	}
	v, err := takeNextManyScript.Run(ctx, s.client, []string{s.leasesKey()}, args...).Slice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	if len(v) != len(ps) {
		return nil, fmt.Errorf("redisstore: take next: %d answers for %d agents", len(v), len(ps))
	}
	out := make([]slots.JobResult, len(ps))
	for i, item := range v {
		a, _ := item.([]any)
		if len(a) == 0 {
			out[i].Err = slots.ErrNoJob
			continue
		}
		out[i].Job, out[i].Err = decodeJob(a)
	}
	return out, nil
}

var finishTakeNextManyScript = newScript("finish_take_next_many.lua")

// FinishAndTakeNextSlots implements slots.SlotStore in one script
// (lua/finish_take_next_many.lua: finish.lua's step, then take_next.lua's,
// per item).
func (s *Store) FinishAndTakeNextSlots(ctx context.Context, ps []slots.FinishTakeParams) ([]slots.FinishTakeResult, error) {
	args := []any{s.ns}
	for _, p := range ps {
		f, n := p.Finish, p.Next
		args = append(args, f.ClaimID, f.SlotID, f.KeyID, store.Millis(f.Now), f.Credit,
			s.queueKey(n.Next.Role, n.Next.Domain), pickArg(n.Next.Random), n.Agent.Name, n.Agent.AvatarURL, store.Millis(n.Now), store.Millis(n.LeaseUntil))
	}
	v, err := finishTakeNextManyScript.Run(ctx, s.client, []string{s.leasesKey(), s.balancesKey()}, args...).Slice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	if len(v) != len(ps) {
		return nil, fmt.Errorf("redisstore: finish and take next: %d answers for %d items", len(v), len(ps))
	}
	out := make([]slots.FinishTakeResult, len(ps))
	for i, item := range v {
		f, a, err := finishAnswer(item)
		if err != nil {
			return nil, err
		}
		r := &out[i]
		r.Slot, r.Err = f.Slot, f.Err
		if r.Err != nil {
			continue
		}
		if len(a) != 3 {
			return nil, fmt.Errorf("redisstore: finish and take next: unexpected answer %v", item)
		}
		job, _ := a[2].([]any)
		if len(job) == 0 {
			r.NextErr = slots.ErrNoJob
			continue
		}
		r.Next, r.NextErr = decodeJob(job)
	}
	return out, nil
}
