package redisstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// releaseBatch bounds how many leases one release script looks at, so a
// sweep after a long outage does not block the server in one long script.
const releaseBatch = 256

// CreateClaim implements slots.ClaimStore.
func (s *Store) CreateClaim(ctx context.Context, c slots.Claim) error {
	if c.Sources == nil {
		c.Sources = []slots.Source{}
	}
	sources, err := json.Marshal(c.Sources)
	if err != nil {
		return err
	}
	err = createClaimScript.Run(ctx, s.client,
		[]string{s.claimKey(c.ID), s.claimsKey(), s.domainClaimsKey(c.Domain), s.protocolClaimsKey(c.Protocol), s.protocolsKey()},
		s.ns, c.ID, c.Title, c.Body, c.Domain, store.Millis(c.CreatedAt), sources, c.Protocol, c.AuthorID, c.AuthorName, store.Millis(c.UpdatedAt)).Err()
	return interpretError(ctx, err, nil)
}

// GetClaim implements slots.ClaimStore in one script.
func (s *Store) GetClaim(ctx context.Context, id string) (slots.Claim, error) {
	v, err := getClaimScript.Run(ctx, s.client, []string{s.claimKey(id), s.commentsKey(id)}).Result()
	if err != nil {
		return slots.Claim{}, interpretError(ctx, err, slots.ErrClaimNotFound)
	}
	return decodeCountedClaim(v)
}

// ListClaims implements slots.ClaimStore.
func (s *Store) ListClaims(ctx context.Context, p slots.ListClaimsParams) ([]slots.Claim, error) {
	if p.Limit <= 0 {
		// LIMIT 0 -1 would mean "no limit" to Redis.
		return []slots.Claim{}, ctx.Err()
	}
	max := "+"
	if p.Before != "" {
		max = "(" + p.Before
	}
	// The narrowest index, and the domain read from each claim when both
	// filters are set.
	index, domain := s.claimsKey(), ""
	switch {
	case p.Protocol != "":
		index, domain = s.protocolClaimsKey(p.Protocol), p.Domain
	case p.Domain != "":
		index = s.domainClaimsKey(p.Domain)
	}
	v, err := listClaimsScript.Run(ctx, s.client, []string{index}, s.ns, max, p.Limit, string(p.Order), domain).Slice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]slots.Claim, 0, len(v))
	for _, item := range v {
		c, err := decodeCountedClaim(item)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ProtocolUses implements slots.ClaimStore in one script
// (protocol_uses.lua), which reads the names' ranking (rank_protocol) from
// its start or one name's place in it, so a listing reads only the names
// it answers. A store whose claims may predate the ranking first ranks
// theirs (rankProtocols), once.
func (s *Store) ProtocolUses(ctx context.Context, p slots.ProtocolUsesParams) ([]slots.ProtocolUse, error) {
	keys := []string{s.protocolRankKey(), s.protocolRanksKey(), s.protocolsRankedKey()}
	v, err := protocolUsesScript.Run(ctx, s.client, keys, p.Name, p.Limit).StringSlice()
	if err = interpretError(ctx, err, nil); errors.Is(err, errProtocolsUnindexed) {
		if err := s.rankProtocols(ctx); err != nil {
			return nil, err
		}
		v, err = protocolUsesScript.Run(ctx, s.client, keys, p.Name, p.Limit).StringSlice()
		err = interpretError(ctx, err, nil)
	}
	if err != nil {
		return nil, err
	}
	out := make([]slots.ProtocolUse, len(v))
	for i, m := range v {
		if out[i], err = parseProtocolRank(m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseProtocolRank reads a member of the names' ranking: 2^53 less the
// name's claims and 2^52 less its newest claim's createdAt, each as 16
// digits, then the name (rank_protocol in lua/lib.lua).
func parseProtocolRank(m string) (slots.ProtocolUse, error) {
	if len(m) < 32 {
		return slots.ProtocolUse{}, fmt.Errorf("redisstore: protocol rank %q is too short", m)
	}
	inv, err1 := strconv.ParseInt(m[:16], 10, 64)
	at, err2 := strconv.ParseInt(m[16:32], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return slots.ProtocolUse{}, fmt.Errorf("redisstore: protocol rank %q: %w", m, err)
	}
	return slots.ProtocolUse{Name: m[32:], Claims: int(1<<53 - inv), LastUsedAt: store.FromMillis(1<<52 - at)}, nil
}

// rankProtocols builds what a store older than the names' ranking lacks: the
// names index, from every claim a page at a time (protocol_index.lua),
// unless an older release built it, then the ranking from the names index
// (protocol_rank.lua), and marks it done. Claims created meanwhile rank
// their names themselves, and ranking a name twice changes nothing.
func (s *Store) rankProtocols(ctx context.Context) error {
	indexed, err := s.client.Exists(ctx, s.protocolsIndexedKey()).Result()
	if err != nil {
		return interpretError(ctx, err, nil)
	}
	if indexed == 0 {
		if err := s.pages(ctx, protocolIndexScript, []string{s.claimsKey(), s.protocolsKey(), s.protocolsIndexedKey()}); err != nil {
			return err
		}
	}
	return s.pages(ctx, protocolRankScript, []string{s.protocolsKey(), s.protocolsRankedKey()})
}

// pages runs a paging script of 500 members a call (protocol_index.lua,
// protocol_rank.lua) until it answers that it has read the last page.
func (s *Store) pages(ctx context.Context, script *redis.Script, keys []string) error {
	for from := "-"; ; {
		last, err := script.Run(ctx, s.client, keys, s.ns, from, 500).Text()
		if err != nil {
			return interpretError(ctx, err, nil)
		}
		if last == "" {
			return nil
		}
		from = "(" + last
	}
}

// AddComment implements slots.ClaimStore.
func (s *Store) AddComment(ctx context.Context, c slots.Comment) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("redisstore: encode comment: %w", err)
	}
	draft := "0"
	if c.CommentType == slots.CommentDraft {
		draft = "1"
	}
	err = addCommentScript.Run(ctx, s.client,
		[]string{s.claimKey(c.ClaimID), s.commentsKey(c.ClaimID), s.slotsKey(c.ClaimID), s.commentIDsKey(c.ClaimID)},
		s.ns, b, draft, store.Millis(c.CreatedAt), c.ParentID, c.ID).Err()
	return interpretError(ctx, err, nil)
}

// ListComments implements slots.ClaimStore.
func (s *Store) ListComments(ctx context.Context, claimID string, p slots.ListCommentsParams) ([]slots.Comment, error) {
	if p.Limit < 1 {
		p.Limit = 0
	}
	v, err := listCommentsScript.Run(ctx, s.client,
		[]string{s.claimKey(claimID), s.commentsKey(claimID)}, p.Limit, p.Newest).Slice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	return decodeComments(v)
}

// PickClaim implements slots.ClaimStore in one script.
func (s *Store) PickClaim(ctx context.Context, p slots.PickClaimParams) (slots.ClaimJob, error) {
	index := s.claimsKey()
	if p.Domain != "" {
		index = s.domainClaimsKey(p.Domain)
	}
	v, err := pickClaimScript.Run(ctx, s.client, []string{index},
		s.ns, string(p.Strategy), p.Pool, p.Random, p.CommentLimit).Slice()
	if err != nil {
		return slots.ClaimJob{}, interpretError(ctx, err, nil)
	}
	if len(v) != 2 {
		return slots.ClaimJob{}, fmt.Errorf("redisstore: unexpected pick reply of %d items", len(v))
	}
	c, err := decodeCountedClaim(v[0])
	if err != nil {
		return slots.ClaimJob{}, err
	}
	raw, ok := v[1].([]any)
	if !ok {
		return slots.ClaimJob{}, fmt.Errorf("redisstore: unexpected comments reply %T", v[1])
	}
	comments, err := decodeComments(raw)
	return slots.ClaimJob{Claim: c, Comments: comments}, err
}

// ReplaceOpenSlots implements slots.SlotStore.
func (s *Store) ReplaceOpenSlots(ctx context.Context, claimID string, add []slots.Slot) error {
	args := make([]any, 0, 2+3*len(add))
	args = append(args, s.ns, claimID)
	for _, sl := range add {
		args = append(args, sl.ID, string(sl.Role), store.Millis(sl.CreatedAt))
	}
	err := replaceOpenSlotsScript.Run(ctx, s.client,
		[]string{s.claimKey(claimID), s.slotsKey(claimID)}, args...).Err()
	return interpretError(ctx, err, nil)
}

// ListSlots implements slots.SlotStore.
func (s *Store) ListSlots(ctx context.Context, claimID string) ([]slots.Slot, error) {
	v, err := listSlotsScript.Run(ctx, s.client,
		[]string{s.claimKey(claimID), s.slotsKey(claimID)}, s.ns).Slice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]slots.Slot, 0, len(v))
	for _, item := range v {
		sl, err := decodeSlot(item)
		if err != nil {
			return nil, err
		}
		out = append(out, sl)
	}
	return out, nil
}

// NextOpenSlot implements slots.SlotStore in one script: the pick and the
// check that the agent holds nothing on the slot's claim are one step.
func (s *Store) NextOpenSlot(ctx context.Context, p slots.NextSlotParams) (slots.Job, error) {
	v, err := nextOpenSlotScript.Run(ctx, s.client,
		[]string{s.queueKey(p.Role, p.Domain)},
		s.ns, pickArg(p.Random), p.AgentKeyID, p.Skip).Slice()
	if err != nil {
		return slots.Job{}, interpretError(ctx, err, slots.ErrNoJob)
	}
	return decodeJob(v, nil)
}

// TakeSlot implements slots.SlotStore.
func (s *Store) TakeSlot(ctx context.Context, p slots.TakeParams) (slots.Slot, error) {
	v, err := takeScript.Run(ctx, s.client,
		[]string{s.slotKey(p.SlotID), s.claimKey(p.ClaimID), s.holdersKey(p.ClaimID), s.leasesKey()},
		s.ns, p.ClaimID, p.SlotID, p.Agent.KeyID, p.Agent.Name, p.Agent.AvatarURL, store.Millis(p.Now), store.Millis(p.LeaseUntil)).Result()
	if err != nil {
		return slots.Slot{}, interpretError(ctx, err, nil)
	}
	return decodeSlot(v)
}

// FinishSlot implements slots.SlotStore.
func (s *Store) FinishSlot(ctx context.Context, p slots.FinishParams) (slots.Slot, error) {
	v, err := finishScript.Run(ctx, s.client,
		[]string{s.slotKey(p.SlotID), s.leasesKey(), s.balancesKey()},
		s.ns, p.ClaimID, p.SlotID, p.KeyID, store.Millis(p.Now), p.Credit).Result()
	if err != nil {
		return slots.Slot{}, interpretError(ctx, err, nil)
	}
	return decodeDone(p, v)
}

// ReleaseExpiredSlots implements slots.SlotStore.
func (s *Store) ReleaseExpiredSlots(ctx context.Context, now time.Time) (int, error) {
	total := 0
	for {
		v, err := releaseExpiredScript.Run(ctx, s.client,
			[]string{s.leasesKey()}, s.ns, store.Millis(now), releaseBatch).Int64Slice()
		if err != nil {
			return total, interpretError(ctx, err, nil)
		}
		if len(v) != 2 {
			return total, fmt.Errorf("redisstore: release expired: unexpected reply of %d items", len(v))
		}
		total += int(v[0])
		if v[1] < releaseBatch {
			return total, nil
		}
	}
}

// CreateKey implements identity.KeyStore.
func (s *Store) CreateKey(ctx context.Context, k identity.Key) error {
	scopes, err := json.Marshal(k.Scopes)
	if err != nil {
		return fmt.Errorf("redisstore: encode scopes: %w", err)
	}
	err = createKeyScript.Run(ctx, s.client,
		[]string{s.keyKey(k.ID), s.keysKey(), s.keyNamesKey()},
		k.ID, k.Name, k.AvatarURL, scopes, store.Millis(k.CreatedAt), store.Millis(k.RevokedAt), hex.EncodeToString(k.Hash), s.ns, k.SigningKeyAddress).Err()
	return interpretError(ctx, err, nil)
}

// GetKey implements identity.KeyStore.
func (s *Store) GetKey(ctx context.Context, id string) (identity.Key, error) {
	m, err := s.client.HGetAll(ctx, s.keyKey(id)).Result()
	if err != nil {
		return identity.Key{}, interpretError(ctx, err, identity.ErrKeyNotFound)
	}
	if len(m) == 0 {
		return identity.Key{}, identity.ErrKeyNotFound
	}
	return decodeKey(m)
}

// GetKeys implements identity.KeyStore: one HGETALL per ID, pipelined in
// one round trip.
func (s *Store) GetKeys(ctx context.Context, ids []string) ([]identity.Key, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, s.keyKey(id))
		}
		return nil
	})
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]identity.Key, 0, len(ids))
	for _, c := range cmds {
		if m := c.Val(); len(m) > 0 {
			k, err := decodeKey(m)
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
	}
	return out, nil
}

// ListKeys implements identity.KeyStore.
func (s *Store) ListKeys(ctx context.Context) ([]identity.Key, error) {
	v, err := listKeysScript.Run(ctx, s.client, []string{s.keysKey()}, s.ns).Slice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]identity.Key, 0, len(v))
	for _, item := range v {
		m, err := toRecord(item)
		if err != nil {
			return nil, err
		}
		k, err := decodeKey(m)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// RevokeKey implements identity.KeyStore.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	err := revokeKeyScript.Run(ctx, s.client, []string{s.keyKey(id)}, store.Millis(at)).Err()
	return interpretError(ctx, err, nil)
}

// SetSigningKey implements identity.KeyStore in one script.
func (s *Store) SetSigningKey(ctx context.Context, id, address string) error {
	err := setSigningKeyScript.Run(ctx, s.client, []string{s.keyKey(id)}, address).Err()
	return interpretError(ctx, err, nil)
}

// Balance implements identity.KeyStore.
func (s *Store) Balance(ctx context.Context, keyID string) (int64, error) {
	n, err := s.client.HGet(ctx, s.balancesKey(), keyID).Int64()
	if errors.Is(err, redis.Nil) {
		// Never credited: the contract's 0, not an error.
		return 0, nil
	}
	if err != nil {
		return 0, interpretError(ctx, err, nil)
	}
	return n, nil
}

// record is a hash as field -> value, whether it came from HGETALL or from
// a script's flat field/value array.
type record map[string]string

// toRecord turns a script's flat HGETALL array into a record.
func toRecord(v any) (record, error) {
	a, ok := v.([]any)
	if !ok || len(a)%2 != 0 {
		return nil, fmt.Errorf("redisstore: unexpected hash reply %T", v)
	}
	r := make(record, len(a)/2)
	for i := 0; i < len(a); i += 2 {
		k, ok1 := a[i].(string)
		val, ok2 := a[i+1].(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("redisstore: unexpected hash reply item %T %T", a[i], a[i+1])
		}
		r[k] = val
	}
	return r, nil
}

// times parses the named fields, Unix milliseconds, into the pointers
// (store.FromMillis), an absent field being the zero time (the hashes
// leave out what the JSON would omit).
func (r record) times(fields map[string]*time.Time) error {
	for f, p := range fields {
		v, ok := r[f]
		if !ok || v == "" {
			*p = time.Time{}
			continue
		}
		t, err := millis(v, f, r["_id"])
		if err != nil {
			return err
		}
		*p = t
	}
	return nil
}

func decodeKey(r record) (identity.Key, error) {
	k := identity.Key{ID: r["_id"], Name: r["name"], AvatarURL: r["avatarUrl"], SigningKeyAddress: r["signingKeyAddress"]}
	if err := json.Unmarshal([]byte(r["scopes"]), &k.Scopes); err != nil {
		return identity.Key{}, fmt.Errorf("redisstore: scopes of key %s: %w", k.ID, err)
	}
	h, err := hex.DecodeString(r["hash"])
	if err != nil {
		return identity.Key{}, fmt.Errorf("redisstore: hash of key %s: %w", k.ID, err)
	}
	if len(h) > 0 {
		k.Hash = h
	}
	return k, r.times(map[string]*time.Time{"createdAt": &k.CreatedAt, "revokedAt": &k.RevokedAt})
}

func decodeComments(v []any) ([]slots.Comment, error) {
	out := make([]slots.Comment, 0, len(v))
	for _, item := range v {
		b, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("redisstore: unexpected comment reply %T", item)
		}
		// UnmarshalJSON itself: through json.Unmarshal the comment would be
		// scanned once more before it, a third of a job's decoding.
		var c slots.Comment
		if err := c.UnmarshalJSON([]byte(b)); err != nil {
			return nil, fmt.Errorf("redisstore: decode comment: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// deviceForget is how long after its expiry a device login is kept: the
// keys of one live that long (a TTL), then Redis forgets them.
const deviceForget = 24 * time.Hour

func (s *Store) deviceKey(id string) string           { return s.key("device", id) }
func (s *Store) deviceUserKey(userCode string) string { return s.key("device", "user", userCode) }

// CreateDeviceCode implements identity.DeviceStore.
func (s *Store) CreateDeviceCode(ctx context.Context, d identity.DeviceCode) error {
	scopes, err := json.Marshal(d.Scopes)
	if err != nil {
		return err
	}
	ttl := d.ExpiresAt.Sub(d.CreatedAt) + deviceForget
	err = deviceCreateScript.Run(ctx, s.client, []string{s.deviceKey(d.ID), s.deviceUserKey(d.UserCode)},
		d.ID, d.UserCode, d.Name, d.AgentModel, d.AvatarURL, scopes, store.Millis(d.CreatedAt), store.Millis(d.ExpiresAt), ttl.Milliseconds()).Err()
	return interpretError(ctx, err, nil)
}

func decodeDevice(v any) (identity.DeviceCode, error) {
	r, err := toRecord(v)
	if err != nil {
		return identity.DeviceCode{}, err
	}
	if len(r) == 0 {
		return identity.DeviceCode{}, identity.ErrDeviceCodeNotFound // expired away between two reads
	}
	d := identity.DeviceCode{ID: r["id"], UserCode: r["userCode"], Name: r["name"], AgentModel: r["agentModel"], AvatarURL: r["avatarUrl"],
		Status: identity.DeviceStatus(r["status"]), ApprovedBy: r["approvedBy"]}
	if err := json.Unmarshal([]byte(r["scopes"]), &d.Scopes); err != nil {
		return identity.DeviceCode{}, fmt.Errorf("redisstore: device scopes: %w", err)
	}
	return d, r.times(map[string]*time.Time{"createdAt": &d.CreatedAt, "expiresAt": &d.ExpiresAt, "approvedAt": &d.ApprovedAt, "consumedAt": &d.ConsumedAt})
}

// DeviceCodeByUserCode implements identity.DeviceStore.
func (s *Store) DeviceCodeByUserCode(ctx context.Context, userCode string) (identity.DeviceCode, error) {
	v, err := deviceGetScript.Run(ctx, s.client, []string{s.deviceUserKey(userCode)}, s.ns).Result()
	if err != nil {
		return identity.DeviceCode{}, interpretError(ctx, err, nil)
	}
	return decodeDevice(v)
}

// ApproveDeviceCode implements identity.DeviceStore.
func (s *Store) ApproveDeviceCode(ctx context.Context, userCode, by string, now time.Time) (identity.DeviceCode, error) {
	v, err := deviceApproveScript.Run(ctx, s.client, []string{s.deviceUserKey(userCode)}, s.ns, by, store.Millis(now)).Result()
	if err != nil {
		return identity.DeviceCode{}, interpretError(ctx, err, nil)
	}
	return decodeDevice(v)
}

// ConsumeDeviceCode implements identity.DeviceStore.
func (s *Store) ConsumeDeviceCode(ctx context.Context, id string, key identity.Key) (identity.DeviceCode, error) {
	v, err := deviceConsumeScript.Run(ctx, s.client, []string{s.deviceKey(id), s.keyKey(key.ID), s.keysKey(), s.keyNamesKey()},
		store.Millis(key.CreatedAt), key.ID, hex.EncodeToString(key.Hash), s.ns).Result()
	if err != nil {
		return identity.DeviceCode{}, interpretError(ctx, err, nil)
	}
	return decodeDevice(v)
}
