package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/agorahq/agora/slots"
)

var takeNextScript = newScript("take_next.lua")

// TakeNextSlot implements slots.SlotStore in one script: NextOpenSlot's
// pick and TakeSlot's take (lua/take_next.lua).
func (s *Store) TakeNextSlot(ctx context.Context, p slots.TakeNextParams) (slots.Job, error) {
	v, err := takeNextScript.Run(ctx, s.client,
		[]string{s.queueKey(p.Next.Role, p.Next.Domain)},
		s.ns, pickArg(p.Next.Random), p.Agent.KeyID, p.Agent.Name, p.Agent.AvatarURL, p.Now, p.LeaseUntil).Slice()
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
		args = append(args, p.ClaimID, p.SlotID, p.KeyID, p.Now, p.Credit)
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
		a, _ := item.([]any)
		code := ""
		if len(a) > 0 {
			code, _ = a[0].(string)
		}
		switch {
		case code != "":
			e, ok := scriptErrors[code]
			if !ok {
				return nil, fmt.Errorf("redisstore: finish: unknown code %q", code)
			}
			out[i].Err = e
		case len(a) == 2:
			out[i].Slot, out[i].Err = decodeSlotReply(a[1])
		default:
			return nil, fmt.Errorf("redisstore: finish: unexpected answer %v", item)
		}
	}
	return out, nil
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
			p.Agent.KeyID, p.Agent.Name, p.Agent.AvatarURL, p.Now, p.LeaseUntil)
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
