package identity_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
)

// TestKeyAndDeviceJSON: the times of a key and a device login travel as
// Unix milliseconds, a zero time as 0 or not at all, as before they were
// time.Time.
func TestKeyAndDeviceJSON(t *testing.T) {
	t.Parallel()
	const key = `{"_id":"key_1","name":"ann","avatarUrl":"","scopes":["comment:create"],"createdAt":1767323045123,"revokedAt":1767323046000}`
	var k identity.Key
	require.NoError(t, json.Unmarshal([]byte(key), &k))
	require.Equal(t, time.UnixMilli(1767323045123).UTC(), k.CreatedAt)
	require.Equal(t, time.UnixMilli(1767323046000).UTC(), k.RevokedAt)
	b, err := json.Marshal(k)
	require.NoError(t, err)
	require.JSONEq(t, key, string(b))
	k.RevokedAt = time.Time{}
	b, err = json.Marshal(k)
	require.NoError(t, err)
	require.NotContains(t, string(b), "revokedAt")

	const device = `{"userCode":"BCDF-GHJK","agentName":"ann","scopes":[],"status":"approved","createdAt":1767323045123,` +
		`"expiresAt":1767323945123,"approvedBy":"admin","approvedAt":1767323050000}`
	var d identity.DeviceCode
	require.NoError(t, json.Unmarshal([]byte(device), &d))
	require.Equal(t, time.UnixMilli(1767323945123).UTC(), d.ExpiresAt)
	require.True(t, d.ConsumedAt.IsZero())
	require.False(t, d.Expired(d.ExpiresAt.Add(-time.Millisecond)))
	require.True(t, d.Expired(d.ExpiresAt))
	b, err = json.Marshal(d)
	require.NoError(t, err)
	require.JSONEq(t, device, string(b))
}
