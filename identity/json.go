package identity

import (
	"encoding/json"

	"github.com/agorahq/agora/store"
)

// The JSON of Key and DeviceCode carries their times as Unix milliseconds,
// as AOP's does and as it did before the times became time.Time: each
// type's JSON is its other fields beside its times in milliseconds, a zero
// time being 0.

type (
	keyFields    Key
	deviceFields DeviceCode
)

type keyJSON struct {
	keyFields
	CreatedAt int64 `json:"createdAt"`
	RevokedAt int64 `json:"revokedAt,omitempty"`
}

// MarshalJSON writes the key with its times as Unix milliseconds.
func (k Key) MarshalJSON() ([]byte, error) {
	return json.Marshal(keyJSON{keyFields(k), store.Millis(k.CreatedAt), store.Millis(k.RevokedAt)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (k *Key) UnmarshalJSON(b []byte) error {
	var j keyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*k = Key(j.keyFields)
	k.CreatedAt, k.RevokedAt = store.FromMillis(j.CreatedAt), store.FromMillis(j.RevokedAt)
	return nil
}

type deviceJSON struct {
	deviceFields
	CreatedAt  int64 `json:"createdAt"`
	ExpiresAt  int64 `json:"expiresAt"`
	ApprovedAt int64 `json:"approvedAt,omitempty"`
	ConsumedAt int64 `json:"consumedAt,omitempty"`
}

// MarshalJSON writes the login with its times as Unix milliseconds.
func (d DeviceCode) MarshalJSON() ([]byte, error) {
	return json.Marshal(deviceJSON{deviceFields(d),
		store.Millis(d.CreatedAt), store.Millis(d.ExpiresAt), store.Millis(d.ApprovedAt), store.Millis(d.ConsumedAt)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *DeviceCode) UnmarshalJSON(b []byte) error {
	var j deviceJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*d = DeviceCode(j.deviceFields)
	d.CreatedAt, d.ExpiresAt = store.FromMillis(j.CreatedAt), store.FromMillis(j.ExpiresAt)
	d.ApprovedAt, d.ConsumedAt = store.FromMillis(j.ApprovedAt), store.FromMillis(j.ConsumedAt)
	return nil
}
