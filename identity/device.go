package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

// The device login: how the original's `aop setup` gets an API key. The
// CLI asks for a device code and shows its user code; an operator who
// holds the admin scope approves the user code on the console; the CLI,
// polling with the device code, receives a new key with the scopes it
// asked for. The device code is a secret (stored only as its hash); the
// user code is short, to be typed, and says nothing without approval.

// DeviceStatus is where a device login is.
type DeviceStatus string

// The device login statuses. An expired login is one whose ExpiresAt has
// passed before it was consumed, whatever its stored status.
const (
	DevicePending  DeviceStatus = "pending"  // waiting for an operator
	DeviceApproved DeviceStatus = "approved" // approved, the key not yet handed out
	DeviceConsumed DeviceStatus = "consumed" // the key was handed out
)

// DeviceCodeTTL is how long a device login waits for its approval and its
// poll.
const DeviceCodeTTL = 15 * time.Minute

// DevicePollInterval is how often a CLI should poll.
const DevicePollInterval = 5 * time.Second

// DeviceCode is a device login as stored. ID is the hex SHA-256 of the
// device code the CLI holds. A zero time is not set.
type DeviceCode struct {
	ID string // the hex SHA-256 of the device code
	// UserCode is what the operator types to approve the login: eight
	// consonants in two groups, as "BCDF-GHJK".
	UserCode string
	// Name is the name the key will have; "agent " and the user code when
	// the CLI gave none.
	Name string
	// AgentModel is the model the CLI said its agent runs, trimmed; shown
	// to the operator, not kept on the key.
	AgentModel string
	AvatarURL  string       // the key's avatar to be, checked as NewKey's
	Scopes     []Scope      // the key's scopes to be, never ScopeKeysAdmin
	Status     DeviceStatus // as stored; see Expired
	CreatedAt  time.Time    // when the CLI started the login
	ExpiresAt  time.Time    // CreatedAt plus DeviceCodeTTL
	// ApprovedBy is the ID of the approving operator's key; empty while
	// the login is pending.
	ApprovedBy string
	ApprovedAt time.Time // when the operator approved the login
	ConsumedAt time.Time // when a poll handed out the key
}

// Expired reports whether the login can no longer be approved or
// consumed at now.
func (d DeviceCode) Expired(now time.Time) bool {
	return d.Status != DeviceConsumed && !now.Before(d.ExpiresAt)
}

// The errors of device logins. Their codes are the original's where its
// CLI reads them.
var (
	ErrDeviceCodeNotFound = &store.Error{Kind: store.ErrNotFound, Code: "invalid_device_code", Message: "Unknown device code"}
	ErrDeviceCodeExpired  = &store.Error{Kind: store.ErrGone, Code: "expired_token", Message: "the device code has expired; run setup again"}
	ErrDeviceCodeConsumed = &store.Error{Kind: store.ErrGone, Code: "consumed_token", Message: "the device code was already used"}
	ErrDeviceCodeUsed     = &store.Error{Kind: store.ErrConflict, Code: "device_code_used", Message: "the device code is already approved"}
	ErrDeviceCodeExists   = &store.Error{Kind: store.ErrConflict, Code: "device_code_exists", Message: "the device code is taken"}
)

// NewDeviceLogin is what a CLI asks for when it starts a device login.
type NewDeviceLogin struct {
	Name       string  // the key's name; empty names it after the user code
	AgentModel string  // optional, at most MaxKeyNameLen characters
	AvatarURL  string  // optional, as NewKey's
	Scopes     []Scope // the original's names are accepted (claim:new)
}

// DeviceLogin is a started device login: the secret device code the CLI
// polls with and the user code it shows.
type DeviceLogin struct {
	DeviceCode string    // the secret the CLI polls with; never stored
	UserCode   string    // the code the CLI shows the operator
	ExpiresAt  time.Time // when the login can no longer be approved or polled
}

// userCodeAlphabet has no vowels (no words) and no look-alikes.
const userCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"

func newUserCode() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	out := make([]byte, 0, 9)
	for i, x := range b {
		if i == 4 {
			out = append(out, '-')
		}
		out = append(out, userCodeAlphabet[int(x)%len(userCodeAlphabet)])
	}
	return string(out)
}

// NormalizeUserCode turns what an operator typed ("bcdf ghjk", "BCDFGHJK")
// into a user code's form, "BCDF-GHJK", or "" when it cannot be one.
func NormalizeUserCode(s string) string {
	var b []byte
	for _, r := range strings.ToUpper(s) {
		switch {
		case r == '-' || r == ' ':
		case strings.ContainsRune(userCodeAlphabet, r):
			b = append(b, byte(r))
		default:
			return ""
		}
	}
	if len(b) != 8 {
		return ""
	}
	return string(b[:4]) + "-" + string(b[4:])
}

// deviceCodeID is the stored ID of a device code: its hex SHA-256.
func deviceCodeID(code string) string {
	h := sha256.Sum256([]byte(code))
	return hex.EncodeToString(h[:])
}

// StartDeviceLogin starts a device login for a key of in's name and
// scopes; an operator approves it with ApproveDeviceCode. A device login
// cannot ask for the admin scope.
func (s *Service) StartDeviceLogin(ctx context.Context, in NewDeviceLogin) (_ DeviceLogin, err error) {
	ctx, done := s.obs.Call(ctx, "identity.StartDeviceLogin")
	defer func() { done(err) }()
	nk := NewKey{Name: in.Name, AvatarURL: in.AvatarURL, Scopes: in.Scopes}
	if strings.TrimSpace(nk.Name) == "" {
		nk.Name = "agent" // checked now; the user code names it below
	}
	if err := s.validateNewKey(&nk); err != nil {
		return DeviceLogin{}, err
	}
	if slices.Contains(nk.Scopes, ScopeKeysAdmin) {
		return DeviceLogin{}, store.Errorf(store.ErrInvalid, "invalid_scope", "a device login cannot ask for %s", ScopeKeysAdmin)
	}
	model := strings.TrimSpace(in.AgentModel)
	if err := text.Check("agentModel", model, false, MaxKeyNameLen); err != nil {
		return DeviceLogin{}, err
	}
	now := s.clock()
	for range 3 { // a user code collision is rare; try another
		var b [32]byte
		_, _ = rand.Read(b[:])
		code := base64.RawURLEncoding.EncodeToString(b[:])
		d := DeviceCode{ID: deviceCodeID(code), UserCode: newUserCode(), Name: strings.TrimSpace(in.Name), AgentModel: model,
			AvatarURL: nk.AvatarURL, Scopes: nk.Scopes, Status: DevicePending,
			CreatedAt: now, ExpiresAt: now.Add(DeviceCodeTTL)}
		if d.Name == "" {
			d.Name = "agent " + d.UserCode
		}
		err := s.store.CreateDeviceCode(ctx, d)
		if errors.Is(err, ErrDeviceCodeExists) {
			continue
		}
		if err != nil {
			return DeviceLogin{}, err
		}
		return DeviceLogin{DeviceCode: code, UserCode: d.UserCode, ExpiresAt: d.ExpiresAt}, nil
	}
	return DeviceLogin{}, store.ErrBusy
}

// DeviceCodeByUserCode returns the device login of a user code, for an
// operator to see what it asks before approving it.
func (s *Service) DeviceCodeByUserCode(ctx context.Context, userCode string) (_ DeviceCode, err error) {
	ctx, done := s.obs.Call(ctx, "identity.DeviceCodeByUserCode")
	defer func() { done(err) }()
	uc := NormalizeUserCode(userCode)
	if uc == "" {
		return DeviceCode{}, ErrDeviceCodeNotFound
	}
	return s.store.DeviceCodeByUserCode(ctx, uc)
}

// ApproveDeviceCode approves the device login of userCode on behalf of
// the caller (FromContext); the CLI's next poll receives its key. Like
// CreateKey, the caller's key must hold ScopeKeysAdmin and every scope the
// login asks for.
func (s *Service) ApproveDeviceCode(ctx context.Context, userCode string) (_ DeviceCode, err error) {
	ctx, done := s.obs.Call(ctx, "identity.ApproveDeviceCode")
	defer func() { done(err) }()
	approver := FromContext(ctx).Key
	if !approver.Has(ScopeKeysAdmin) {
		return DeviceCode{}, store.Errorf(store.ErrForbidden, "insufficient_scope", "approving a device login needs the %s scope", ScopeKeysAdmin)
	}
	uc := NormalizeUserCode(userCode)
	if uc == "" {
		return DeviceCode{}, ErrDeviceCodeNotFound
	}
	// A login's scopes never change once asked for: reading them first
	// races with nothing.
	d, err := s.store.DeviceCodeByUserCode(ctx, uc)
	if err != nil {
		return DeviceCode{}, err
	}
	if err := mayGrant(approver, d.Scopes); err != nil {
		return DeviceCode{}, err
	}
	return s.store.ApproveDeviceCode(ctx, uc, approver.ID, s.clock())
}

// DevicePoll is the answer to a device login's poll: its status and, once
// approved, the new key and its token (handed out once).
type DevicePoll struct {
	Status DeviceStatus // DevicePending, or DeviceApproved with the key
	Key    Key          // the new key; zero while pending
	Token  string       // the new key's token, handed out this once; empty while pending
}

// PollDeviceLogin answers the CLI polling with its device code: pending
// until approved; then, once, the new key (the poll that consumes the
// login creates it). Errors: ErrDeviceCodeNotFound, ErrDeviceCodeExpired,
// ErrDeviceCodeConsumed, and ErrKeyNameTaken when another key has taken
// the login's name since it started (the login stays approved, unused).
func (s *Service) PollDeviceLogin(ctx context.Context, deviceCode string) (_ DevicePoll, err error) {
	ctx, done := s.obs.Call(ctx, "identity.PollDeviceLogin")
	defer func() { done(err) }()
	if deviceCode == "" || len(deviceCode) > 200 {
		return DevicePoll{}, ErrDeviceCodeNotFound
	}
	// The key is stored in the step that consumes the login, under the
	// login's name, avatar URL and scopes (validated when it started, its
	// scopes granted by the approver), or the login is not consumed.
	k, token := s.newKey(NewKey{})
	d, err := s.store.ConsumeDeviceCode(ctx, deviceCodeID(deviceCode), k)
	if err != nil {
		return DevicePoll{}, err
	}
	if d.Status != DeviceConsumed {
		return DevicePoll{Status: d.Status}, nil
	}
	k.Name, k.AvatarURL, k.Scopes = d.Name, d.AvatarURL, d.Scopes
	return DevicePoll{Status: DeviceApproved, Key: k, Token: token}, nil
}
