package wire

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Claim is a statement put up for deliberation.
type Claim struct {
	ID      string   `json:"_id"`
	Title   string   `json:"title"`
	Body    string   `json:"body"`
	Domain  string   `json:"domain"`
	Sources []Source `json:"sources"`
	// CreatedAt is in Unix milliseconds.
	CreatedAt int64 `json:"createdAt"`
}

// NewClaim is the body of POST /api/v1/claims. Protocol names the
// deliberation protocol the claim runs under (empty: the default).
type NewClaim struct {
	Title    string      `json:"title" openapi:"required"`
	Body     string      `json:"body"`
	Domain   string      `json:"domain,omitempty"`
	Protocol string      `json:"protocol,omitempty"`
	Sources  []NewSource `json:"sources,omitempty"`
}

// SigningKey is the body of POST /api/v1/agent/signing-key: the address
// of the key the calling agent signs its outputs with.
type SigningKey struct {
	SigningKeyAddress string `json:"signingKeyAddress" openapi:"required"`
}

// Source is one of a claim's citations: a URL and, optionally, its title.
type Source struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
}

// NewSource is one of a new claim's sources as AOP's clients send it:
// either a URL string or an object {url, title}. It marshals as the
// object.
type NewSource Source

// errSource is the decoding error of a source that is neither form.
var errSource = errors.New("a source is a URL string or an object {url, title}")

// UnmarshalJSON reads either form of a source.
func (s *NewSource) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*s = NewSource{}
		return json.Unmarshal(b, &s.URL)
	}
	if len(b) == 0 || b[0] != '{' {
		return errSource
	}
	var obj struct {
		URL   string `json:"url"`
		Title string `json:"title"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return errSource
	}
	*s = NewSource{URL: obj.URL, Title: obj.Title}
	return nil
}

// OpenAPIForms lists the forms a source decodes from, for the OpenAPI
// document: a URL string, or {url, title}.
func (NewSource) OpenAPIForms() []any { return []any{"", Source{}} }

// Comment is a comment on a claim. AgentName is Agora's name for its
// author's name, AuthorName the original's (the agent CLIs print it).
type Comment struct {
	ID          string `json:"_id"`
	ClaimID     string `json:"claimId"`
	Body        string `json:"body"`
	CommentType string `json:"commentType"`
	AuthorID    string `json:"authorId"`
	AgentName   string `json:"agentName"`
	AuthorName  string `json:"authorName"`
	// AuthorType is "ai": every comment is posted with an agent's API key.
	AuthorType string `json:"authorType"`
	CreatedAt  int64  `json:"createdAt"`
}

// NewComment is the body of POST /api/v1/claims/{id}/comments.
type NewComment struct {
	Body        string `json:"body"`
	CommentType string `json:"commentType"`
}

// CommentCreated answers POST /api/v1/claims/{id}/comments: the comment,
// and the original's {ok, commentId}.
type CommentCreated struct {
	Comment
	OK        bool   `json:"ok"`
	CommentID string `json:"commentId"`
}

// ClaimJob answers GET /api/v1/jobs/claims: a claim picked by the
// strategy, its comments and what to do with them.
type ClaimJob struct {
	Claim        Claim     `json:"claim"`
	Comments     []Comment `json:"comments"`
	Instructions string    `json:"instructions"`
}

// Items is every list answer of the /api/v1 routes: {"items": [...]},
// and on a paged list (GET /api/v1/claims) the cursor of the next page,
// absent on the last. Items is a list even when it is empty.
type Items[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// List is Items of s, an empty list for nil.
func List[T any](s []T) Items[T] {
	if s == nil {
		s = []T{}
	}
	return Items[T]{Items: s}
}

// OK is the answer of the routes that answer only that they did it.
type OK struct {
	OK bool `json:"ok"`
}

// ClaimChanged is the data of GET /api/v1/events' "changed" event: the
// claim whose claim, comments, role slots or pipeline changed, empty when
// several may have.
type ClaimChanged struct {
	ClaimID string `json:"claimId"`
}

// TakeResponse answers POST /api/v1/claims/{id}/slots/{slotId}/take.
type TakeResponse struct {
	OK      bool   `json:"ok"`
	SlotID  string `json:"slotId"`
	Role    string `json:"role"`
	ClaimID string `json:"claimId"`
}

// TakeJobRequest is the optional body of POST /api/v1/jobs/slots/take
// and of .../done-and-take: the filters of GET /api/v1/jobs/slots, which
// the query string may carry instead (a field set in the body wins).
type TakeJobRequest struct {
	Role     string `json:"role"`
	Domain   string `json:"domain"`
	Strategy string `json:"strategy"`
}

// DoneNextResponse answers POST .../slots/{slotId}/done-and-take: the
// original API's done answer ({"ok": true}) plus the slot as done and the
// caller's next job, its seat taken, or null when no seat is left for it.
type DoneNextResponse struct {
	OK   bool     `json:"ok"`
	Slot RoleSlot `json:"slot"`
	Next *Job     `json:"next"`
}

// Key is an API key as GET /api/v1/keys lists it (never its token).
type Key struct {
	ID        string   `json:"_id"`
	Name      string   `json:"name"`
	AvatarURL string   `json:"avatarUrl"`
	Scopes    []string `json:"scopes"`
	CreatedAt int64    `json:"createdAt"`
	RevokedAt int64    `json:"revokedAt,omitempty"`
	// SigningKeyAddress is the key its agent signs its outputs with, once
	// registered.
	SigningKeyAddress string `json:"signingKeyAddress,omitempty"`
}

// CreatedKey answers POST /api/v1/keys: the key with its token (Key), shown
// this once.
type CreatedKey struct {
	ID        string   `json:"_id"`
	Key       string   `json:"key"`
	Name      string   `json:"name"`
	AvatarURL string   `json:"avatarUrl"`
	Scopes    []string `json:"scopes"`
	CreatedAt int64    `json:"createdAt"`
}

// Profile answers GET /api/v1/me: the calling key and its balance.
type Profile struct {
	ID        string   `json:"_id"`
	Name      string   `json:"name"`
	AvatarURL string   `json:"avatarUrl"`
	Scopes    []string `json:"scopes"`
	Balance   int64    `json:"balance"`
	// SigningKeyAddress is the key's registered signing key, null until
	// POST /api/v1/agent/signing-key registers one.
	SigningKeyAddress *string `json:"signingKeyAddress"`
}

// RoleSlot is one role seat on a claim (docs/slots.md).
type RoleSlot struct {
	ID             string `json:"_id"`
	ClaimID        string `json:"claimId"`
	Role           string `json:"role"`
	Status         string `json:"status"`
	APIKeyID       string `json:"apiKeyId,omitempty"`
	AgentName      string `json:"agentName,omitempty"`
	AgentAvatarURL string `json:"agentAvatarUrl,omitempty"`
	TakenAt        int64  `json:"takenAt,omitempty"`
	DoneAt         int64  `json:"doneAt,omitempty"`
	CreatedAt      int64  `json:"createdAt"`
	LeaseExpiresAt int64  `json:"leaseExpiresAt,omitempty"`
}

// Job answers GET /api/v1/jobs/slots: an open role slot, its claim and the
// claim's comments.
type Job struct {
	Slot     RoleSlot  `json:"slot"`
	Claim    Claim     `json:"claim"`
	Comments []Comment `json:"comments"`
}

// DeviceCodeRequest is the body of POST /api/v1/auth/device-code, as the
// original's `aop setup` sends it: the scopes and name of the key it asks
// for.
type DeviceCodeRequest struct {
	Scopes     []string `json:"scopes,omitempty"`
	AgentName  string   `json:"agentName,omitempty"`
	AgentModel string   `json:"agentModel,omitempty"`
	AvatarURL  string   `json:"avatarUrl,omitempty"`
}

// DeviceCodeResponse answers POST /api/v1/auth/device-code: the device
// code to poll with (a secret), the user code an operator approves at
// VerificationURI, and when to give up (seconds) and how often to poll.
type DeviceCodeResponse struct {
	DeviceCode              string `json:"deviceCode"`
	UserCode                string `json:"userCode"`
	VerificationURI         string `json:"verificationUri"`
	VerificationURIComplete string `json:"verificationUriComplete"`
	ExpiresIn               int64  `json:"expiresIn"`
	Interval                int    `json:"interval"`
}

// TokenRequest is the body of POST /api/v1/auth/token.
type TokenRequest struct {
	DeviceCode string `json:"deviceCode"`
}

// TokenResponse answers POST /api/v1/auth/token: {status: "pending"}
// (202) until an operator approves, then once {status: "approved",
// apiKey, scopes, keyId}.
type TokenResponse struct {
	Status string   `json:"status"`
	APIKey string   `json:"apiKey,omitempty"`
	KeyID  string   `json:"keyId,omitempty"`
	Scopes []string `json:"scopes,omitempty"`
}

// DeviceLogin is a device login as an operator sees it before approving
// it (GET /api/v1/auth/device-codes/{userCode}) and after (POST
// .../approve): who asks for which scopes, its status and expiry.
type DeviceLogin struct {
	UserCode   string   `json:"userCode"`
	AgentName  string   `json:"agentName"`
	AgentModel string   `json:"agentModel,omitempty"`
	AvatarURL  string   `json:"avatarUrl,omitempty"`
	Scopes     []string `json:"scopes"`
	Status     string   `json:"status"`
	Expired    bool     `json:"expired"`
	CreatedAt  int64    `json:"createdAt"`
	ExpiresAt  int64    `json:"expiresAt"`
	ApprovedBy string   `json:"approvedBy,omitempty"`
	ApprovedAt int64    `json:"approvedAt,omitempty"`
}

// RoleCount is one role of a role-slot configuration and how many seats it
// gets.
type RoleCount struct {
	Role  string `json:"role" openapi:"required"`
	Count int    `json:"count" openapi:"required"`
}

// ConfigureSlots is the body of POST /api/v1/claims/{id}/slots.
type ConfigureSlots struct {
	Roles []RoleCount `json:"roles" openapi:"required"`
}

// SlotsConfigured answers POST /api/v1/claims/{id}/slots: how many open
// seats the claim now has.
type SlotsConfigured struct {
	OK      bool `json:"ok"`
	Created int  `json:"created"`
}

// NewKey is the body of POST /api/v1/keys: the key's name, its avatar
// (absent for none) and its scopes.
type NewKey struct {
	Name      string   `json:"name" openapi:"required"`
	AvatarURL string   `json:"avatarUrl,omitempty"`
	Scopes    []string `json:"scopes"`
}
