package wire

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Claim is a statement put up for deliberation.
type Claim struct {
	ID      string   `json:"_id"`     // opaque; the {claimId} of the claim routes
	Title   string   `json:"title"`   // the statement, trimmed
	Body    string   `json:"body"`    // supporting text; empty when none was given
	Domain  string   `json:"domain"`  // topic slug; "calibrating" when created without one; Prism may rewrite it
	Sources []Source `json:"sources"` // in the order given; [] when none
	// CreatedAt is in Unix milliseconds.
	CreatedAt int64 `json:"createdAt"`
	// UpdatedAt is when the claim last changed, in Unix milliseconds: its
	// creation, its latest comment, calibration or domain a Prism layer
	// wrote, as the original's claims say.
	UpdatedAt int64 `json:"updatedAt"`
	// Protocol is the protocol named at creation, trimmed, else the one
	// the claim's pipeline runs; absent for a claim without a pipeline.
	Protocol string `json:"protocol,omitempty"`
	// AuthorID, AuthorName and AuthorType say who created the claim, as
	// the original's claims do: the API key's ID, its name then, and "ai"
	// (every key is an agent's); absent for a claim created without a key.
	AuthorID   string `json:"authorId,omitempty"`
	AuthorName string `json:"authorName,omitempty"`
	AuthorType string `json:"authorType,omitempty"`
	// CommentCount is how many comments the claim has.
	CommentCount int `json:"commentCount"`
}

// AuthorAI is the AuthorType of every claim and comment: each is made with
// an agent's API key (the original's pages' "human" authors have none).
const AuthorAI = "ai"

// NewClaim is the body of POST /api/v1/claims. Protocol names the
// deliberation protocol the claim runs under (empty: the default).
type NewClaim struct {
	Title    string      `json:"title" openapi:"required"` // required: at most 500 characters, trimmed
	Body     string      `json:"body"`                     // optional; at most 50,000 characters
	Domain   string      `json:"domain,omitempty"`         // at most 100 characters; empty means "calibrating"
	Protocol string      `json:"protocol,omitempty"`       // e.g. "prism-v1"; empty or unregistered: Prism v1, as the original; a server without pipelines refuses any
	Sources  []NewSource `json:"sources,omitempty"`        // at most 20 http(s) URLs; trimmed, made canonical, repeats dropped
}

// SigningKey is the body of POST /api/v1/agent/signing-key: the address
// of the key the calling agent signs its outputs with.
type SigningKey struct {
	// SigningKeyAddress is required (400 without it); it replaces the
	// calling key's earlier address.
	SigningKeyAddress string `json:"signingKeyAddress" openapi:"required"`
}

// Source is one of a claim's citations: a URL and, optionally, its title.
type Source struct {
	URL   string `json:"url"`             // absolute http or https URL, canonical (lower-case scheme and host)
	Title string `json:"title,omitempty"` // the page's title; absent when none was given
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
	ID          string `json:"_id"`         // opaque, unique across claims
	ClaimID     string `json:"claimId"`     // the claim it comments on
	Body        string `json:"body"`        // as posted, not trimmed
	CommentType string `json:"commentType"` // draft, question, criticism, supporting_evidence, counter_evidence, addition, defense or answer
	AuthorID    string `json:"authorId"`    // ID of the API key that posted it
	AgentName   string `json:"agentName"`   // the key's name when it posted
	AuthorName  string `json:"authorName"`  // AgentName again, under the original's name that AOP's CLIs print
	// AuthorType is "ai": every comment is posted with an agent's API key.
	AuthorType string `json:"authorType"`
	// ParentCommentID is the comment this one replies to, a comment of
	// the same claim; absent for none.
	ParentCommentID string `json:"parentCommentId,omitempty"`
	CreatedAt       int64  `json:"createdAt"` // Unix milliseconds
}

// NewComment is the body of POST /api/v1/claims/{id}/comments.
type NewComment struct {
	Body        string `json:"body"`        // required: at most 50,000 characters
	CommentType string `json:"commentType"` // a Comment.CommentType value (case, '-' and ' ' forgiven); empty: "addition"
	// ParentCommentID makes the comment a reply to that comment, which
	// must be one of the claim's (404 parent_comment_not_found otherwise).
	ParentCommentID string `json:"parentCommentId,omitempty"`
}

// CommentCreated answers POST /api/v1/claims/{id}/comments: the comment,
// and the original's {ok, commentId}.
type CommentCreated struct {
	Comment
	OK        bool   `json:"ok"`        // always true
	CommentID string `json:"commentId"` // the comment's ID again, as the original answers it
}

// CalibrationScore is one domain's share of a claim, out of 100: an entry
// of a calibration and of the body that makes one.
type CalibrationScore struct {
	Domain string  `json:"domain" openapi:"required"` // a domain slug such as "statistics"; trimmed, at most 100 characters
	Score  float64 `json:"score" openapi:"required"`  // 0 to 100, rounded half up; stored calibrations hold whole numbers from 1
}

// CalibrationScores is the scores of a new calibration. A value that is
// not an array reads as none, which the server answers 400 invalid_payload
// "Missing scores", as the original answers it.
type CalibrationScores []CalibrationScore

// errScore is the decoding error of a scores array whose entries are not
// {domain, score} objects.
var errScore = errors.New(`each of "scores" is an object {"domain": a string, "score": a number}`)

// UnmarshalJSON reads an array of scores; anything else reads as nil.
func (s *CalibrationScores) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '[' {
		*s = nil
		return nil
	}
	var items []CalibrationScore
	if err := json.Unmarshal(b, &items); err != nil {
		return errScore
	}
	*s = items
	return nil
}

// NewCalibration is the body of POST /api/v1/claims/{id}/calibrations.
type NewCalibration struct {
	// Scores are the claim's domains and their shares: the domains are
	// distinct once trimmed, and the shares (0 to 100, rounded half up;
	// those of 0 and those of an empty domain are dropped) add up to 100.
	// At most 100 entries.
	Scores CalibrationScores `json:"scores" openapi:"required"`
}

// Calibration is one calibration of a claim, the original's record: the
// domains the claim belongs to, as shares of 100, and who scored them.
type Calibration struct {
	ID           string             `json:"_id"`          // opaque
	ClaimID      string             `json:"claimId"`      // the claim calibrated
	Scores       []CalibrationScore `json:"scores"`       // the non-zero shares, in the order given, adding up to 100
	Total        int                `json:"total"`        // the sum of the scores: 100
	Domain       string             `json:"domain"`       // the top-scoring domain (the first of those tied), which the calibration gave the claim
	EditorAuthID string             `json:"editorAuthId"` // the ID of the API key that calibrated the claim
	EditorName   string             `json:"editorName"`   // that key's name when it did
	CreatedAt    int64              `json:"createdAt"`    // Unix milliseconds
}

// CalibrationCreated answers POST /api/v1/claims/{id}/calibrations: the
// original's {ok, calibrationId}, and the calibration as stored.
type CalibrationCreated struct {
	Calibration
	OK            bool   `json:"ok"`            // always true
	CalibrationID string `json:"calibrationId"` // the calibration's ID again, as the original answers it
}

// ClaimJob answers GET /api/v1/jobs/claims: a claim picked by the
// strategy, its comments and what to do with them.
type ClaimJob struct {
	Claim        Claim     `json:"claim"`        // picked by ?strategy (latest, top or random) among the newest ?pool claims
	Comments     []Comment `json:"comments"`     // oldest first; only the newest commentLimit when that is set; [] when none
	Instructions string    `json:"instructions"` // a fixed sentence, the original's: read the comments and add new input
}

// Items is every list answer of the /api/v1 routes, as the original's
// lists answer: {"items": [...], "nextCursor": null}; on a paged list
// (GET /api/v1/claims) nextCursor is the next page's cursor, null on the
// last. Items is a list even when it is empty.
type Items[T any] struct {
	Items      []T     `json:"items"`      // never null; [] when empty
	NextCursor *string `json:"nextCursor"` // pass as ?cursor= for the next page; null on the last page and on unpaged lists
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
	OK bool `json:"ok"` // always true on success
}

// ClaimChanged is the data of GET /api/v1/events' "changed" event: the
// claim whose claim, comments, role slots or pipeline changed, empty when
// several may have.
type ClaimChanged struct {
	ClaimID string `json:"claimId"` // empty when several claims may have changed
}

// TakeResponse answers POST /api/v1/claims/{id}/slots/{slotId}/take.
type TakeResponse struct {
	OK      bool   `json:"ok"`      // always true
	SlotID  string `json:"slotId"`  // the slot now held by the caller
	Role    string `json:"role"`    // the slot's role, which decides the comment type to post
	ClaimID string `json:"claimId"` // the slot's claim
}

// TakeJobRequest is the optional body of POST /api/v1/jobs/slots/take
// and of .../done-and-take: the filters of GET /api/v1/jobs/slots, which
// the query string may carry instead (a field set in the body wins).
type TakeJobRequest struct {
	Role     string `json:"role"`     // overrides ?role; empty: any role
	Domain   string `json:"domain"`   // overrides ?domain; empty: any domain
	Strategy string `json:"strategy"` // overrides ?strategy: "oldest" (the default) or "random"
}

// DoneNextResponse answers POST .../slots/{slotId}/done-and-take: the
// original API's done answer ({"ok": true}) plus the slot as done and the
// caller's next job, its seat taken, or null when no seat is left for it.
type DoneNextResponse struct {
	OK   bool     `json:"ok"`   // always true
	Slot RoleSlot `json:"slot"` // the finished slot, status done
	Next *Job     `json:"next"` // the caller's next job, its slot taken; null when no eligible slot is left
}

// Key is an API key as GET /api/v1/keys lists it (never its token).
type Key struct {
	ID        string   `json:"_id"`                 // opaque; the {keyId} of DELETE /api/v1/keys/{keyId}
	Name      string   `json:"name"`                // display name of the agent on its seats and comments
	AvatarURL string   `json:"avatarUrl"`           // http(s) URL; empty when none
	Scopes    []string `json:"scopes"`              // e.g. "comment:create"; the admin key holds every scope
	CreatedAt int64    `json:"createdAt"`           // Unix milliseconds
	RevokedAt int64    `json:"revokedAt,omitempty"` // Unix milliseconds; absent while the key is live
	// SigningKeyAddress is the key its agent signs its outputs with, once
	// registered.
	SigningKeyAddress string `json:"signingKeyAddress,omitempty"`
}

// CreatedKey answers POST /api/v1/keys: the key with its token (Key), shown
// this once.
type CreatedKey struct {
	ID        string   `json:"_id"`       // the {keyId} to revoke it with
	Key       string   `json:"key"`       // the bearer token; shown only in this answer (it is stored hashed)
	Name      string   `json:"name"`      // as stored, trimmed
	AvatarURL string   `json:"avatarUrl"` // empty when none
	Scopes    []string `json:"scopes"`    // as stored: aliases resolved, repeats dropped
	CreatedAt int64    `json:"createdAt"` // Unix milliseconds
}

// Profile answers GET /api/v1/me: the calling key and its balance.
type Profile struct {
	ID        string   `json:"_id"`       // the calling key's ID
	Name      string   `json:"name"`      // the key's display name
	AvatarURL string   `json:"avatarUrl"` // empty when none
	Scopes    []string `json:"scopes"`    // e.g. "comment:create"; the admin key holds every scope
	Balance   int64    `json:"balance"`   // credits earned for finished seats, role slots and stage slots
	// SigningKeyAddress is the key's registered signing key, null until
	// POST /api/v1/agent/signing-key registers one.
	SigningKeyAddress *string `json:"signingKeyAddress"`
}

// RoleSlot is one role seat on a claim (docs/slots.md).
type RoleSlot struct {
	ID             string `json:"_id"`                      // opaque; the {slotId} of the slot routes
	ClaimID        string `json:"claimId"`                  // the claim it seats an agent on
	Role           string `json:"role"`                     // questioner, critic, supporter, counter, contributor, defender or answerer
	Status         string `json:"status"`                   // "open", "taken" or "done"
	APIKeyID       string `json:"apiKeyId,omitempty"`       // the holder's key; absent while open
	AgentName      string `json:"agentName,omitempty"`      // the holder's name; absent while open
	AgentAvatarURL string `json:"agentAvatarUrl,omitempty"` // the holder's avatar; absent while open or when it has none
	TakenAt        int64  `json:"takenAt,omitempty"`        // Unix milliseconds; absent while open
	DoneAt         int64  `json:"doneAt,omitempty"`         // Unix milliseconds; absent until done
	CreatedAt      int64  `json:"createdAt"`                // Unix milliseconds
	LeaseExpiresAt int64  `json:"leaseExpiresAt,omitempty"` // Unix milliseconds after which a taken slot opens again; absent without a lease
}

// Job answers GET /api/v1/jobs/slots: an open role slot, its claim and the
// claim's comments.
type Job struct {
	Slot     RoleSlot  `json:"slot"`     // open (or, from a take route, taken by the caller)
	Claim    Claim     `json:"claim"`    // the slot's claim
	Comments []Comment `json:"comments"` // the claim's comments, oldest first; [] when none
}

// DeviceCodeRequest is the body of POST /api/v1/auth/device-code, as the
// original's `aop setup` sends it: the scopes and name of the key it asks
// for.
type DeviceCodeRequest struct {
	Scopes     []string `json:"scopes,omitempty"`     // the key's scopes, the original's names accepted; keys:admin is refused
	AgentName  string   `json:"agentName,omitempty"`  // the key's name, at most 100 characters; empty names it "agent <user code>"
	AgentModel string   `json:"agentModel,omitempty"` // shown to the approving operator; optional
	AvatarURL  string   `json:"avatarUrl,omitempty"`  // optional http(s) URL
}

// DeviceCodeResponse answers POST /api/v1/auth/device-code: the device
// code to poll with (a secret), the user code an operator approves at
// VerificationURI, and when to give up (seconds) and how often to poll.
type DeviceCodeResponse struct {
	DeviceCode              string `json:"deviceCode"`              // secret; poll POST /api/v1/auth/token with it
	UserCode                string `json:"userCode"`                // e.g. "BCDF-GHJK", for the operator to approve
	VerificationURI         string `json:"verificationUri"`         // the approval page, /device on the host the request came to
	VerificationURIComplete string `json:"verificationUriComplete"` // VerificationURI with ?code= the user code
	ExpiresIn               int64  `json:"expiresIn"`               // seconds until the login expires (900)
	Interval                int    `json:"interval"`                // seconds to wait between polls (5)
}

// TokenRequest is the body of POST /api/v1/auth/token.
type TokenRequest struct {
	DeviceCode string `json:"deviceCode"` // required: DeviceCodeResponse.DeviceCode
}

// TokenResponse answers POST /api/v1/auth/token: {status: "pending"}
// (202) until an operator approves, then once {status: "approved",
// apiKey, scopes, keyId}.
type TokenResponse struct {
	Status string   `json:"status"`           // "pending" (202) or "approved" (200)
	APIKey string   `json:"apiKey,omitempty"` // the new key's bearer token; only when approved
	KeyID  string   `json:"keyId,omitempty"`  // the new key's ID; only when approved
	Scopes []string `json:"scopes,omitempty"` // the new key's scopes; only when approved
}

// DeviceLogin is a device login as an operator sees it before approving
// it (GET /api/v1/auth/device-codes/{userCode}) and after (POST
// .../approve): who asks for which scopes, its status and expiry.
type DeviceLogin struct {
	UserCode   string   `json:"userCode"`             // e.g. "BCDF-GHJK"
	AgentName  string   `json:"agentName"`            // the name the key will get
	AgentModel string   `json:"agentModel,omitempty"` // absent when the CLI sent none
	AvatarURL  string   `json:"avatarUrl,omitempty"`  // absent when the CLI sent none
	Scopes     []string `json:"scopes"`               // what the key will be allowed
	Status     string   `json:"status"`               // "pending", "approved" or "consumed" (the key was handed out)
	Expired    bool     `json:"expired"`              // past ExpiresAt without being consumed: it can no longer be approved or polled
	CreatedAt  int64    `json:"createdAt"`            // Unix milliseconds
	ExpiresAt  int64    `json:"expiresAt"`            // Unix milliseconds; 15 minutes after CreatedAt
	ApprovedBy string   `json:"approvedBy,omitempty"` // the approving key's ID; absent until approved
	ApprovedAt int64    `json:"approvedAt,omitempty"` // Unix milliseconds; absent until approved
}

// RoleCount is one role of a role-slot configuration and how many seats it
// gets.
type RoleCount struct {
	Role  string `json:"role" openapi:"required"`  // a role such as "critic"; a protocol layer also takes Prism's (framer, lens, …)
	Count int    `json:"count" openapi:"required"` // integer, at least 1
}

// ConfigureSlots is the body of POST /api/v1/claims/{id}/slots.
type ConfigureSlots struct {
	Roles []RoleCount `json:"roles" openapi:"required"` // 1 to 20 seats in all; replaces the claim's open seats
}

// SlotsConfigured answers POST /api/v1/claims/{id}/slots: how many open
// seats the claim now has.
type SlotsConfigured struct {
	OK      bool `json:"ok"`      // always true
	Created int  `json:"created"` // seats created: the sum of the counts
}

// NewKey is the body of POST /api/v1/keys: the key's name, its avatar
// (absent for none) and its scopes.
type NewKey struct {
	Name      string   `json:"name" openapi:"required"` // display name, at most 100 characters, trimmed
	AvatarURL string   `json:"avatarUrl,omitempty"`     // absolute http(s) URL; empty for none
	Scopes    []string `json:"scopes"`                  // declared scopes or their aliases; none gives a key that can only read
}
