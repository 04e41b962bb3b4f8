package client

import (
	"context"
	"errors"
	"time"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// CreatedKey is a new API key with its secret (Key), shown this once.
type CreatedKey = wire.CreatedKey

// CreateKey creates an API key (scope keys:admin) with the name, avatar
// URL and scopes of k. An empty AvatarURL is not sent (the key has none);
// nil Scopes make a key without scopes.
func (c *Client) CreateKey(ctx context.Context, k identity.NewKey) (CreatedKey, error) {
	in := wire.NewKey{Name: k.Name, AvatarURL: k.AvatarURL}
	if k.Scopes != nil {
		in.Scopes = make([]string, len(k.Scopes))
		for i, s := range k.Scopes {
			in.Scopes[i] = string(s)
		}
	}
	var out CreatedKey
	err := c.do(ctx, "POST", "/api/v1/keys", in, &out)
	return out, err
}

// Keys lists the API keys (scope keys:admin).
func (c *Client) Keys(ctx context.Context) ([]wire.Key, error) {
	var out wire.Items[wire.Key]
	err := c.do(ctx, "GET", "/api/v1/keys", nil, &out)
	return out.Items, err
}

// RevokeKey revokes an API key (scope keys:admin).
func (c *Client) RevokeKey(ctx context.Context, id string) error {
	return c.do(ctx, "DELETE", "/api/v1/keys/"+esc(id), nil, nil)
}

// Me is the caller's profile; its SigningKeyAddress is nil until
// RegisterSigningKey registers one.
type Me = wire.Profile

// RegisterSigningKey registers the address of the key the caller signs its
// stage outputs with, as AOP's `aop setup` does; a later one replaces it.
func (c *Client) RegisterSigningKey(ctx context.Context, address string) error {
	return c.do(ctx, "POST", "/api/v1/agent/signing-key", wire.SigningKey{SigningKeyAddress: address}, nil)
}

// Me returns the caller's profile and balance.
func (c *Client) Me(ctx context.Context) (Me, error) {
	var m Me
	err := c.do(ctx, "GET", "/api/v1/me", nil, &m)
	return m, err
}

// NewClaim is the body of POST /api/v1/claims. Empty Domain and Protocol
// are not sent: the claim gets slots.DefaultDomain and, on a server that
// runs the Prism pipeline, Prism v1. Protocol is the ID of the
// deliberation protocol the claim runs under (see Protocols); a server
// without the pipeline refuses any. Sources are the claim's citations (at
// most slots.MaxSources, each an http or https URL).
type NewClaim = wire.NewClaim

// Claim is a claim as the routes show it.
type Claim = wire.Claim

// CreateClaim creates a claim (scope claim:create) and, on a server that
// runs the Prism pipeline, starts its pipeline. An unknown protocol is
// store.ErrInvalid.
func (c *Client) CreateClaim(ctx context.Context, in NewClaim) (Claim, error) {
	var cl Claim
	err := c.do(ctx, "POST", "/api/v1/claims", in, &cl)
	return cl, err
}

// Claim returns a claim.
func (c *Client) Claim(ctx context.Context, id string) (Claim, error) {
	var cl Claim
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(id), nil, &cl)
	return cl, err
}

// ClaimsQuery pages, filters and orders GET /api/v1/claims, as
// slots.Service.Claims reads it. Zero fields are not sent.
type ClaimsQuery = slots.ClaimsQuery

// Claims lists a page of claims, newest first unless q.Sort says otherwise.
func (c *Client) Claims(ctx context.Context, q ClaimsQuery) (wire.Items[Claim], error) {
	var p wire.Items[Claim]
	err := c.do(ctx, "GET", "/api/v1/claims"+query("limit", num(q.Limit), "cursor", q.Cursor, "domain", q.Domain, "sort", string(q.Sort), "protocolId", q.Protocol), nil, &p)
	return p, err
}

// Comment is a comment as the routes show it: the comment, with its
// author's name also under the original's name, AuthorName.
type Comment = wire.Comment

// CreatedComment answers Comment: the comment and the original's
// {ok, commentId}.
type CreatedComment = wire.CommentCreated

// NewComment is the body of Comment: its text, its type and, for a
// reply, the comment it replies to.
type NewComment = wire.NewComment

// Comment posts a comment (scope comment:create); a reply to a comment
// that is not one of the claim's is store.ErrNotFound.
func (c *Client) Comment(ctx context.Context, claimID string, in NewComment) (CreatedComment, error) {
	var cm CreatedComment
	err := c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/comments", in, &cm)
	return cm, err
}

// CalibrationScore is one domain's share of a claim, out of 100.
type CalibrationScore = wire.CalibrationScore

// Calibration is a claim's calibration as the routes show it: its scores,
// its top domain (the one it gave the claim) and who scored them.
type Calibration = wire.Calibration

// CreatedCalibration answers Calibrate: the calibration and the
// original's {ok, calibrationId}.
type CreatedCalibration = wire.CalibrationCreated

// Calibrate calibrates a claim with any key: scores are the claim's
// domains and their shares, which add up to 100 once rounded (the rules
// of slots.NormalizeScores), and the top one becomes the claim's domain. A
// refused set of scores is store.ErrInvalid (no scores at all too), an
// unknown claim store.ErrNotFound.
func (c *Client) Calibrate(ctx context.Context, claimID string, scores ...CalibrationScore) (CreatedCalibration, error) {
	var out CreatedCalibration
	err := c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/calibrations", wire.NewCalibration{Scores: scores}, &out)
	return out, err
}

// Calibrations lists a claim's calibrations newest first: at most limit,
// 0 taking the server's default (slots.DefaultCalibrationsLimit), at most
// slots.MaxCalibrationsLimit.
func (c *Client) Calibrations(ctx context.Context, claimID string, limit int) ([]Calibration, error) {
	var out wire.Items[Calibration]
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(claimID)+"/calibrations"+query("limit", num(limit)), nil, &out)
	return out.Items, err
}

// ClaimJobQuery picks the claim of GET /api/v1/jobs/claims. Zero fields
// are not sent.
type ClaimJobQuery struct {
	// Strategy is "latest" (the server's default), "top" (most comments)
	// or "random".
	Strategy string
	// Pool is how many of the newest claims top and random pick among.
	Pool int
	// CommentLimit keeps the newest comments only.
	CommentLimit int
	// Domain keeps the claims of one domain.
	Domain string
}

// ClaimJob asks for a claim to comment on, with its comments and the
// instructions; store.ErrNotFound when there is no claim.
func (c *Client) ClaimJob(ctx context.Context, q ClaimJobQuery) (wire.ClaimJob, error) {
	var j wire.ClaimJob
	err := c.do(ctx, "GET", "/api/v1/jobs/claims"+query("strategy", q.Strategy, "pool", num(q.Pool), "commentLimit", num(q.CommentLimit), "domain", q.Domain), nil, &j)
	return j, err
}

// Comments lists a claim's comments as slots.Service.Comments does (GET
// /api/v1/claims/{id}/comments): newest first unless p.Sort says old, at
// most 50 unless p.Limit says otherwise.
func (c *Client) Comments(ctx context.Context, claimID string, p slots.CommentsParams) ([]Comment, error) {
	var out wire.Items[Comment]
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(claimID)+"/comments"+query("sort", p.Sort, "limit", num(p.Limit)), nil, &out)
	return out.Items, err
}

// ConfigureSlots replaces a claim's open role slots (scope slots:configure).
func (c *Client) ConfigureSlots(ctx context.Context, claimID string, roles ...slots.RoleCount) (int, error) {
	var out wire.SlotsConfigured
	body := wire.ConfigureSlots{Roles: make([]wire.RoleCount, len(roles))}
	for i, rc := range roles {
		body.Roles[i] = wire.RoleCount{Role: string(rc.Role), Count: rc.Count}
	}
	err := c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/slots", body, &out)
	return out.Created, err
}

// RoleSlot is a role slot as the routes show it.
type RoleSlot = wire.RoleSlot

// Slots lists a claim's role slots.
func (c *Client) Slots(ctx context.Context, claimID string) ([]RoleSlot, error) {
	var out wire.Items[RoleSlot]
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(claimID)+"/slots", nil, &out)
	return out.Items, err
}

// NextJob asks the role-slot job queue for work; store.ErrNotFound when
// there is none.
func (c *Client) NextJob(ctx context.Context, q slots.JobQuery) (slots.Job, error) {
	var j wire.Job
	err := c.do(ctx, "GET", "/api/v1/jobs/slots"+query("role", string(q.Role), "domain", q.Domain, "strategy", string(q.Strategy)), nil, &j)
	return JobOf(j), err
}

// JobOf is a job as the server answers it (the role-slot routes, the MCP
// tools take_job and finish_job), in the slots package's terms.
func JobOf(j wire.Job) slots.Job {
	s, c := j.Slot, j.Claim
	job := slots.Job{
		Slot: slots.Slot{ID: s.ID, ClaimID: s.ClaimID, Role: slots.Role(s.Role), Status: slots.Status(s.Status), APIKeyID: s.APIKeyID,
			AgentName: s.AgentName, AgentAvatarURL: s.AgentAvatarURL, TakenAt: store.FromMillis(s.TakenAt), DoneAt: store.FromMillis(s.DoneAt),
			CreatedAt: store.FromMillis(s.CreatedAt), LeaseExpiresAt: store.FromMillis(s.LeaseExpiresAt)},
		Claim:    ClaimOf(c),
		Comments: all(j.Comments, commentOf),
	}
	return job
}

// ClaimOf is a claim as the server answers it, in the slots package's
// terms.
func ClaimOf(c wire.Claim) slots.Claim {
	return slots.Claim{ID: c.ID, Title: c.Title, Body: c.Body, Domain: c.Domain, Sources: all(c.Sources, func(s wire.Source) slots.Source { return slots.Source(s) }),
		CreatedAt: store.FromMillis(c.CreatedAt), UpdatedAt: store.FromMillis(c.UpdatedAt), Protocol: c.Protocol, AuthorID: c.AuthorID, AuthorName: c.AuthorName, CommentCount: c.CommentCount}
}

// commentOf is a comment as the server answers it, in the slots package's
// terms.
func commentOf(c wire.Comment) slots.Comment {
	return slots.Comment{ID: c.ID, ClaimID: c.ClaimID, Body: c.Body, CommentType: slots.CommentType(c.CommentType), AuthorID: c.AuthorID,
		AgentName: c.AgentName, ParentID: c.ParentCommentID, CreatedAt: store.FromMillis(c.CreatedAt)}
}

// Take takes a role slot (scope comment:create).
func (c *Client) Take(ctx context.Context, claimID, slotID string) error {
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/slots/"+esc(slotID)+"/take", nil, nil)
}

// Done marks a role slot done and is credited (scope comment:create).
func (c *Client) Done(ctx context.Context, claimID, slotID string) error {
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/slots/"+esc(slotID)+"/done", nil, nil)
}

// TakeNextJob waits for a seat and returns the job it took, in one request
// per try (TakeJob); a server without that route is asked with the original API's
// two steps, NextJob then Take, a seat another agent took first sending it
// back to the queue at once. No work, or a seat this agent may not take
// (a 409 such as slot_held), makes it wait, from 100 ms doubling up to
// maxWait (5 s when not positive); over the key's rate limit (429) it waits
// as long as the server's Retry-After says. It returns when ctx ends, or on
// any other error.
func (c *Client) TakeNextJob(ctx context.Context, q slots.JobQuery, maxWait time.Duration) (slots.Job, error) {
	return c.takeNextJob(ctx, q, maxWait)
}

// takeNext is the loop of TakeNextJob and TakeNextWork: next finds work
// (store.ErrNotFound when there is none), take takes it.
func takeNext[T any](ctx context.Context, maxWait time.Duration, next func() (T, error), take func(T) error) (T, error) {
	if maxWait <= 0 {
		maxWait = 5 * time.Second
	}
	wait := min(100*time.Millisecond, maxWait)
	for {
		work, err := next()
		if err == nil {
			err = take(work)
			if err == nil {
				return work, nil
			}
			var e *Error
			if errors.As(err, &e) && e.Code == slots.ErrSlotTaken.Code {
				continue // lost the race: try the next seat at once
			}
		}
		pause := wait
		var e *Error
		switch {
		case errors.As(err, &e) && e.RetryAfter > 0 && errors.Is(err, ErrRateLimited):
			pause = max(pause, e.RetryAfter) // over the key's rate limit: as the server says
		case !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrConflict):
			var zero T
			return zero, err
		}
		select {
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		case <-time.After(pause):
		}
		wait = min(2*wait, maxWait)
	}
}

// StartDeviceLogin starts a device login, as the original's `aop setup`
// does (POST /api/v1/auth/device-code, no key needed): show UserCode to an
// operator, who approves it on the console's /device page
// (VerificationURIComplete), then poll with PollDeviceLogin.
func (c *Client) StartDeviceLogin(ctx context.Context, in wire.DeviceCodeRequest) (wire.DeviceCodeResponse, error) {
	var out wire.DeviceCodeResponse
	err := c.do(ctx, "POST", "/api/v1/auth/device-code", in, &out)
	return out, err
}

// PollDeviceLogin polls a device login (POST /api/v1/auth/token): Status
// "pending" until approved, then once "approved" with APIKey. An expired
// or already used code is a 410, a store.ErrGone error (also a
// store.ErrConflict; codes expired_token, consumed_token), an unknown one
// store.ErrNotFound.
func (c *Client) PollDeviceLogin(ctx context.Context, deviceCode string) (wire.TokenResponse, error) {
	var out wire.TokenResponse
	err := c.do(ctx, "POST", "/api/v1/auth/token", wire.TokenRequest{DeviceCode: deviceCode}, &out)
	return out, err
}

// DeviceLogin shows the device login of a user code (scope keys:admin).
func (c *Client) DeviceLogin(ctx context.Context, userCode string) (wire.DeviceLogin, error) {
	var out wire.DeviceLogin
	err := c.do(ctx, "GET", "/api/v1/auth/device-codes/"+esc(userCode), nil, &out)
	return out, err
}

// ApproveDeviceLogin approves the device login of a user code (scope
// keys:admin); the CLI's next poll receives its key.
func (c *Client) ApproveDeviceLogin(ctx context.Context, userCode string) (wire.DeviceLogin, error) {
	var out wire.DeviceLogin
	err := c.do(ctx, "POST", "/api/v1/auth/device-codes/"+esc(userCode)+"/approve", nil, &out)
	return out, err
}
