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
	r := p.Next.Random
	if r < 0 {
		r = -1
	}
	v, err := takeNextScript.Run(ctx, s.client,
		[]string{s.queueKey(p.Next.Role, p.Next.Domain)},
		s.ns, strconv.FormatFloat(r, 'g', -1, 64), p.Agent.KeyID, p.Agent.Name, p.Agent.AvatarURL, p.Now, p.LeaseUntil).Slice()
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
