package wire

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/agorahq/agora/slots"
)

// Claim is a statement put up for deliberation.
type Claim struct {
	ID      string         `json:"_id"`
	Title   string         `json:"title"`
	Body    string         `json:"body"`
	Domain  string         `json:"domain"`
	Sources []slots.Source `json:"sources"`
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

// NewSource is one of a new claim's sources as AOP's clients send it:
// either a URL string or an object {url, title}. It marshals as the
// object.
type NewSource slots.Source

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
func (NewSource) OpenAPIForms() []any { return []any{"", slots.Source{}} }

// Sources converts a new claim's sources to the domain's.
func Sources(in []NewSource) []slots.Source {
	out := make([]slots.Source, len(in))
	for i, s := range in {
		out[i] = slots.Source(s)
	}
	return out
}

// Comment is a comment on a claim. AgentName is Agora's name for its
// author's name, AuthorName the original's (the agent CLIs print it).
type Comment struct {
	ID          string            `json:"_id"`
	ClaimID     string            `json:"claimId"`
	Body        string            `json:"body"`
	CommentType slots.CommentType `json:"commentType"`
	AuthorID    string            `json:"authorId"`
	AgentName   string            `json:"agentName"`
	AuthorName  string            `json:"authorName"`
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

// Items is a list answer, {"items": [...], "nextCursor": null} as the
// original's list routes answer.
type Items[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
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
