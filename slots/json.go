package slots

import (
	"encoding/json"

	"github.com/agorahq/agora/store"
)

// The JSON of Slot, Claim and Comment carries their times as Unix
// milliseconds, as AOP's does: it is the form the backends store a Comment
// in (and build one in, in SQL and Lua), so comments stored before the
// times became time.Time read back unchanged. Each type's JSON is its
// other fields beside its times in milliseconds, a zero time being 0.

type (
	slotFields    Slot
	claimFields   Claim
	commentFields Comment
)

type slotJSON struct {
	slotFields
	TakenAt        int64 `json:"takenAt,omitempty"`
	DoneAt         int64 `json:"doneAt,omitempty"`
	CreatedAt      int64 `json:"createdAt"`
	LeaseExpiresAt int64 `json:"leaseExpiresAt,omitempty"`
}

// MarshalJSON writes the slot with its times as Unix milliseconds.
func (s Slot) MarshalJSON() ([]byte, error) {
	return json.Marshal(slotJSON{slotFields(s),
		store.Millis(s.TakenAt), store.Millis(s.DoneAt), store.Millis(s.CreatedAt), store.Millis(s.LeaseExpiresAt)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Slot) UnmarshalJSON(b []byte) error {
	var j slotJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Slot(j.slotFields)
	s.TakenAt, s.DoneAt = store.FromMillis(j.TakenAt), store.FromMillis(j.DoneAt)
	s.CreatedAt, s.LeaseExpiresAt = store.FromMillis(j.CreatedAt), store.FromMillis(j.LeaseExpiresAt)
	return nil
}

type claimJSON struct {
	claimFields
	CreatedAt int64 `json:"createdAt"`
}

// MarshalJSON writes the claim with CreatedAt as Unix milliseconds.
func (c Claim) MarshalJSON() ([]byte, error) {
	return json.Marshal(claimJSON{claimFields(c), store.Millis(c.CreatedAt)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Claim) UnmarshalJSON(b []byte) error {
	var j claimJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Claim(j.claimFields)
	c.CreatedAt = store.FromMillis(j.CreatedAt)
	return nil
}

type commentJSON struct {
	commentFields
	CreatedAt int64 `json:"createdAt"`
}

// MarshalJSON writes the comment with CreatedAt as Unix milliseconds: the
// form the backends store.
func (c Comment) MarshalJSON() ([]byte, error) {
	return json.Marshal(commentJSON{commentFields(c), store.Millis(c.CreatedAt)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Comment) UnmarshalJSON(b []byte) error {
	var j commentJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Comment(j.commentFields)
	c.CreatedAt = store.FromMillis(j.CreatedAt)
	return nil
}
