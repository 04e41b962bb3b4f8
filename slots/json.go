package slots

import (
	"encoding/json"
	"strings"

	"github.com/agorahq/agora/internal/jsontext"
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

// UnmarshalJSON reads what MarshalJSON writes: by readComment where it can,
// else by encoding/json, which reads any key order, spacing and escape, at
// about six times the cost (BenchmarkCommentUnmarshalJSON).
func (c *Comment) UnmarshalJSON(b []byte) error {
	if r, ok := readComment(b); ok {
		*c = r
		return nil
	}
	var j commentJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Comment(j.commentFields)
	c.CreatedAt = store.FromMillis(j.CreatedAt)
	return nil
}

// commentKeys open the string fields of MarshalJSON's object, in its order.
var commentKeys = [...]string{`{"_id":`, `,"claimId":`, `,"body":`, `,"commentType":`, `,"authorId":`, `,"agentName":`}

// readComment reads b if it is MarshalJSON's object as it writes it (its
// keys in order, no space) with strings that jsontext.String reads; ok is
// false for anything else. The texts share one copy of b.
func readComment(b []byte) (c Comment, ok bool) {
	s := string(b)
	var f [len(commentKeys)]string
	for k, key := range commentKeys {
		if !strings.HasPrefix(s, key) {
			return Comment{}, false
		}
		text, n, ok := jsontext.String(s[len(key):])
		if !ok {
			return Comment{}, false
		}
		f[k], s = text, s[len(key)+n:]
	}
	var parent string
	if key := `,"parentCommentId":`; strings.HasPrefix(s, key) {
		text, n, ok := jsontext.String(s[len(key):])
		if !ok {
			return Comment{}, false
		}
		parent, s = text, s[len(key)+n:]
	}
	const key = `,"createdAt":`
	if !strings.HasPrefix(s, key) {
		return Comment{}, false
	}
	ms, n, ok := jsontext.Int(s[len(key):])
	if !ok || s[len(key)+n:] != "}" {
		return Comment{}, false
	}
	return Comment{ID: f[0], ClaimID: f[1], Body: f[2], CommentType: CommentType(f[3]), AuthorID: f[4], AgentName: f[5],
		ParentID: parent, CreatedAt: store.FromMillis(ms)}, true
}
