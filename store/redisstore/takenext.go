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
	return decodeJob(v, &p)
}

// decodeJob reads a script's job reply, as push_job writes it, taken by
// take (nil: a pick's).
func decodeJob(v []any, take *slots.TakeNextParams) (slots.Job, error) {
	r := reply{a: v}
	job := r.job(take)
	return job, answered(&r, "job")
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
	r := reply{a: v}
	out := make([]slots.FinishResult, len(ps))
	for i := range out {
		out[i] = r.finish(ps[i])
	}
	if err := answered(&r, "finish"); err != nil {
		return nil, err
	}
	return out, nil
}

// answered reports a reply's fault, or items left over after its last
// answer.
func answered(r *reply, op string) error {
	if r.err == nil && !r.done() {
		r.err = fmt.Errorf("redisstore: %s: %d items past the last answer", op, len(r.a)-r.i)
	}
	return r.err
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
	r := reply{a: v}
	out := make([]slots.JobResult, len(ps))
	for i := range out {
		out[i].Job, out[i].Err = r.next(ps[i])
	}
	if err := answered(&r, "take next"); err != nil {
		return nil, err
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
	r := reply{a: v}
	out := make([]slots.FinishTakeResult, len(ps))
	for i := range out {
		f := r.finish(ps[i].Finish)
		out[i].Slot, out[i].Err = f.Slot, f.Err
		if f.Err == nil {
			out[i].Next, out[i].NextErr = r.next(ps[i].Next)
		}
	}
	if err := answered(&r, "finish and take next"); err != nil {
		return nil, err
	}
	return out, nil
}
