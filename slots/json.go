package slots

import (
	"encoding/json"

	"github.com/agorahq/agora/store"
)

// The JSON of a Comment is the form the backends store it in (Redis keeps
// it, PostgreSQL builds it in SQL), with CreatedAt as Unix milliseconds, so
// comments stored before the times became time.Time read back unchanged.

type commentFields Comment

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
