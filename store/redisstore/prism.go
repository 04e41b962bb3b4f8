package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

var _ prism.Store = (*Store)(nil)

// Prism keys, under the store's hash tag:
//
//	protocols          hash: protocol ID -> JSON
//	pipeline:<claim>   hash: version, doc (the pipeline's JSON)
//	w|<role>|<layer>|<domain>  zsets of the work index (see lib.lua)
//	pwork:<claim>      list of the claim's work-index entries
//	pleases            zset of claims scored by their next lease expiry
//	consensus:<claim>  list of the records posted for the claim, newest first
var (
	claimPipelineCreateScript = newScript("claim_pipeline_create.lua")
	consensusAddScript        = newScript("consensus_add.lua")
	prismUpdateScript         = newScript("prism_update.lua")
	findWorkScript            = newScript("find_work.lua")
)

func (s *Store) pipelineKey(claimID string) string  { return s.key("pipeline", claimID) }
func (s *Store) consensusKey(claimID string) string { return s.key("consensus", claimID) }

// PutProtocol implements prism.Store.
func (s *Store) PutProtocol(ctx context.Context, p prism.Protocol) error {
	doc, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return interpretError(ctx, s.client.HSet(ctx, s.key("protocols"), p.ID, doc).Err(), nil)
}

// GetProtocol implements prism.Store.
func (s *Store) GetProtocol(ctx context.Context, id string) (prism.Protocol, error) {
	doc, err := s.client.HGet(ctx, s.key("protocols"), id).Bytes()
	if err != nil {
		return prism.Protocol{}, interpretError(ctx, err, prism.ErrProtocolNotFound)
	}
	var p prism.Protocol
	if err := json.Unmarshal(doc, &p); err != nil {
		return prism.Protocol{}, fmt.Errorf("redisstore: protocol %s: %w", id, err)
	}
	return p, nil
}

// ListProtocols implements prism.Store.
func (s *Store) ListProtocols(ctx context.Context) ([]prism.Protocol, error) {
	m, err := s.client.HGetAll(ctx, s.key("protocols")).Result()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]prism.Protocol, 0, len(m))
	for id, doc := range m {
		var p prism.Protocol
		if err := json.Unmarshal([]byte(doc), &p); err != nil {
			return nil, fmt.Errorf("redisstore: protocol %s: %w", id, err)
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func openTriples(p prism.Pipeline) []any {
	var out []any
	for _, sl := range p.OpenSlots() {
		out = append(out, sl.ID, sl.Role, layerName(sl.Layer))
	}
	return out
}

// CreateClaimPipeline implements prism.Store in one script. The work index
// takes the claim's domain, which is the new pipeline's.
func (s *Store) CreateClaimPipeline(ctx context.Context, c slots.Claim, p prism.Pipeline) error {
	if c.Sources == nil {
		c.Sources = []slots.Source{}
	}
	sources, err := json.Marshal(c.Sources)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(p)
	if err != nil {
		return err
	}
	args := append([]any{s.ns, c.ID, c.Title, c.Body, c.Domain, store.Millis(c.CreatedAt), sources, p.Version, doc, store.Millis(p.NextLease()), c.Protocol,
		c.AuthorID, c.AuthorName, store.Millis(c.UpdatedAt)}, openTriples(p)...)
	err = claimPipelineCreateScript.Run(ctx, s.client,
		[]string{s.claimKey(c.ID), s.claimsKey(), s.domainClaimsKey(c.Domain), s.pipelineKey(c.ID), s.protocolClaimsKey(c.Protocol),
			s.protocolsKey()}, args...).Err()
	return interpretError(ctx, err, nil)
}

// GetPipeline implements prism.Store.
func (s *Store) GetPipeline(ctx context.Context, claimID string) (prism.Pipeline, error) {
	doc, err := s.client.HGet(ctx, s.pipelineKey(claimID), "doc").Bytes()
	if err != nil {
		return prism.Pipeline{}, interpretError(ctx, err, prism.ErrPipelineNotFound)
	}
	var p prism.Pipeline
	if err := json.Unmarshal(doc, &p); err != nil {
		return prism.Pipeline{}, fmt.Errorf("redisstore: pipeline %s: %w", claimID, err)
	}
	return p, nil
}

// UpdatePipeline implements prism.Store in one script, which also reads
// the stored pipeline when the comparison fails.
func (s *Store) UpdatePipeline(ctx context.Context, next prism.Pipeline, fx prism.Effects) (prism.Pipeline, error) {
	doc, err := json.Marshal(next)
	if err != nil {
		return prism.Pipeline{}, err
	}
	args := []any{s.ns, next.ClaimID, next.Version, doc, store.Millis(next.NextLease()), next.Domain, fx.Domain, store.Millis(next.UpdatedAt), len(fx.Credits)}
	for _, c := range fx.Credits {
		args = append(args, c.KeyID, c.Amount)
	}
	args = append(args, openTriples(next)...)
	res, err := prismUpdateScript.Run(ctx, s.client,
		[]string{s.pipelineKey(next.ClaimID), s.claimKey(next.ClaimID), s.slotsKey(next.ClaimID), s.balancesKey()}, args...).Result()
	if err != nil {
		return prism.Pipeline{}, interpretError(ctx, err, nil)
	}
	stored, ok := res.(string)
	if !ok {
		return prism.Pipeline{}, nil
	}
	var cur prism.Pipeline
	if err := json.Unmarshal([]byte(stored), &cur); err != nil {
		return prism.Pipeline{}, fmt.Errorf("redisstore: pipeline %s: %w", next.ClaimID, err)
	}
	return cur, prism.ErrVersionConflict
}

// workKey is the name of the work index of a role, layer and domain (see
// lib.lua's set_work); a nil layer is every layer's.
func (s *Store) workKey(role string, layer *int, domain string) string {
	l := anyLayer
	if layer != nil {
		l = layerName(*layer)
	}
	return s.ns + "w|" + role + "|" + l + "|" + domain
}

// anyLayer names the work index of every layer. It is "0" from before
// layer 0 could be asked for, so layer 0's own index is named "=0" and the
// other layers' by their number: indexes stored then keep their meaning.
const anyLayer = "0"

// layerName is the name of one layer's work index.
func layerName(layer int) string {
	if layer == 0 {
		return "=0"
	}
	return strconv.Itoa(layer)
}

// FindWork implements prism.Store from the work-index sorted sets, in one
// script (find_work.lua), which passes over the consensus slots for
// prism.PhaseWork. A member is "<slot ID> <claim ID>", so the members past
// q.After are those above q.After followed by a space and the highest
// byte.
func (s *Store) FindWork(ctx context.Context, q prism.WorkQuery) ([]prism.WorkRef, error) {
	if q.Limit <= 0 {
		return nil, ctx.Err()
	}
	from, skip := "-", "0"
	if q.After != "" {
		from = "(" + q.After + " \xff"
	}
	if q.Phase == prism.PhaseWork && q.Role == "" { // a role names one phase's slots
		skip = "1"
	}
	members, err := findWorkScript.Run(ctx, s.client,
		[]string{s.workKey(q.Role, q.Layer, q.Domain), s.workKey(prism.RoleConsensus, q.Layer, q.Domain)}, q.Limit, from, skip).StringSlice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]prism.WorkRef, 0, len(members))
	for _, m := range members {
		slot, claim, ok := strings.Cut(m, " ")
		if ok {
			out = append(out, prism.WorkRef{ClaimID: claim, SlotID: slot})
		}
	}
	if q.Random >= 0 {
		rng := rand.New(rand.NewPCG(uint64(q.Random*(1<<53)), 0))
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out, nil
}

// LapsedPipelines implements prism.Store.
func (s *Store) LapsedPipelines(ctx context.Context, now time.Time) ([]string, error) {
	ids, err := s.client.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.key("pleases"), Start: "-inf", Stop: strconv.FormatInt(store.Millis(now), 10), ByScore: true}).Result()
	return ids, interpretError(ctx, err, nil)
}

// AddConsensus implements prism.Store in one script.
func (s *Store) AddConsensus(ctx context.Context, claimID string, rec prism.ConsensusRecord) error {
	doc, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("redisstore: encode consensus: %w", err)
	}
	err = consensusAddScript.Run(ctx, s.client, []string{s.claimKey(claimID), s.consensusKey(claimID)}, doc).Err()
	return interpretError(ctx, err, nil)
}

// ConsensusRecords implements prism.Store.
func (s *Store) ConsensusRecords(ctx context.Context, claimID string, limit int) ([]prism.ConsensusRecord, error) {
	if limit < 1 {
		// LRANGE 0 -1 would be every record.
		return []prism.ConsensusRecord{}, ctx.Err()
	}
	docs, err := s.client.LRange(ctx, s.consensusKey(claimID), 0, int64(limit)-1).Result()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]prism.ConsensusRecord, len(docs))
	for i, d := range docs {
		if err := json.Unmarshal([]byte(d), &out[i]); err != nil {
			return nil, fmt.Errorf("redisstore: consensus of %s: %w", claimID, err)
		}
	}
	return out, nil
}
