package prism_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// storedPipeline is a pipeline as the backends stored it before its times
// became time.Time: written by that code (a one-layer protocol, its work
// done, a consensus flagged and retried, the retry's seat taken under a
// lease).
const storedPipeline = `{"claimId":"claim_019b7ca98d030000c1f73420","domain":"biology","protocol":{"id":"one-layer","name":"One layer","layers":[{"layer":1,"name":"Only","workRoles":[{"role":"critic","count":2}],"consensusSlots":1,"threshold":0.7,"effect":"none"}]},"status":"active","currentLayer":1,"phase":"consensus","round":2,"slots":[` +
	`{"_id":"stage_019b7ca98d0300016f8721c9","claimId":"claim_019b7ca98d030000c1f73420","layer":1,"phase":"work","round":1,"role":"critic","status":"done","apiKeyId":"key_0","agentName":"agent-0","takenAt":1767323046123,"doneAt":1767323048123,"createdAt":1767323045123,"body":"done"},` +
	`{"_id":"stage_019b7ca98d030002758cbb7d","claimId":"claim_019b7ca98d030000c1f73420","layer":1,"phase":"work","round":1,"role":"critic","status":"done","apiKeyId":"key_1","agentName":"agent-1","takenAt":1767323047123,"doneAt":1767323049123,"createdAt":1767323045123,"body":"done"},` +
	`{"_id":"stage_019b7ca99ca30000a58b1e13","claimId":"claim_019b7ca98d030000c1f73420","layer":1,"phase":"consensus","round":1,"role":"consensus","status":"done","apiKeyId":"key_2","agentName":"agent-2","takenAt":1767323050123,"doneAt":1767323051123,"createdAt":1767323049123,"body":"meh","confidence":0.25},` +
	`{"_id":"stage_019b7ca9a85b0000e30f43f2","claimId":"claim_019b7ca98d030000c1f73420","layer":1,"phase":"consensus","round":2,"role":"consensus","status":"taken","apiKeyId":"key_4","agentName":"agent-4","takenAt":1767323053123,"leaseExpiresAt":1767323353123,"createdAt":1767323052123}` +
	`],"flags":[{"_id":"flag_019b7ca9a47300000474d72f","claimId":"claim_019b7ca98d030000c1f73420","layer":1,"reason":"low_consensus_confidence","avgConfidence":0.25,"threshold":0.7,"status":"resolved","action":"retry","resolvedBy":"key_3","createdAt":1767323051123,"resolvedAt":1767323052123}],` +
	`"averages":{"1":0.25},"version":9,"updatedAt":1767323053123}`

// TestPipelineStoredJSON: a pipeline document stored before the times
// were time.Time reads back with its times, and is written again as the
// same document, so both the stored pipelines and the ones written now
// stay readable by either.
func TestPipelineStoredJSON(t *testing.T) {
	t.Parallel()
	ms := func(n int64) time.Time { return time.UnixMilli(n).UTC() }
	var p prism.Pipeline
	require.NoError(t, json.Unmarshal([]byte(storedPipeline), &p))
	require.Equal(t, ms(1767323053123), p.UpdatedAt)
	require.Len(t, p.Slots, 4)
	require.Equal(t, ms(1767323045123), p.Slots[0].CreatedAt)
	require.Equal(t, ms(1767323046123), p.Slots[0].TakenAt)
	require.Equal(t, ms(1767323048123), p.Slots[0].DoneAt)
	require.True(t, p.Slots[0].LeaseExpiresAt.IsZero(), "a done slot's lease is cleared")
	taken := p.Slots[3]
	require.Equal(t, slots.StatusTaken, taken.Status)
	require.True(t, taken.DoneAt.IsZero())
	require.Equal(t, ms(1767323353123), taken.LeaseExpiresAt)
	require.Equal(t, taken.LeaseExpiresAt, p.NextLease())
	require.Equal(t, ms(1767323051123), p.Flags[0].CreatedAt)
	require.Equal(t, ms(1767323052123), p.Flags[0].ResolvedAt)

	b, err := json.Marshal(p)
	require.NoError(t, err)
	require.JSONEq(t, storedPipeline, string(b))
}
