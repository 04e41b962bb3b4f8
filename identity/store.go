package identity

import (
	"context"
	"time"
)

// KeyStore keeps API keys.
type KeyStore interface {
	// CreateKey stores k, or returns ErrKeyExists if k.ID is taken and
	// ErrKeyNameTaken if another key, revoked or not, has k.Name (exactly):
	// both checked and the key written in one atomic step.
	CreateKey(ctx context.Context, k Key) error
	// GetKey returns the key, revoked or not, or ErrKeyNotFound.
	GetKey(ctx context.Context, id string) (Key, error)
	// GetKeys returns the keys, revoked or not, of those of ids that
	// exist, each once and in any order, in one read: the Service
	// coalesces concurrent callers' lookups into it. An ID no key has is
	// left out; none is an error.
	GetKeys(ctx context.Context, ids []string) ([]Key, error)
	// ListKeys returns every key, revoked ones included, oldest first.
	ListKeys(ctx context.Context) ([]Key, error)
	// RevokeKey sets the key's RevokedAt to at unless it is already revoked
	// (then it changes nothing and returns nil). It returns ErrKeyNotFound for
	// an unknown key.
	RevokeKey(ctx context.Context, id string, at time.Time) error
	// SetSigningKey sets the key's SigningKeyAddress, replacing any, or
	// returns ErrKeyNotFound for an unknown key.
	SetSigningKey(ctx context.Context, id, address string) error
}

// DeviceStore keeps device logins. Each method that changes one decides in
// one atomic step of the backend.
type DeviceStore interface {
	// CreateDeviceCode stores d (pending), or returns ErrDeviceCodeExists
	// when its ID or user code is taken by a login not yet expired long
	// ago. A store may forget logins a day after they expired.
	CreateDeviceCode(ctx context.Context, d DeviceCode) error
	// DeviceCodeByUserCode returns the login of a user code, or
	// ErrDeviceCodeNotFound.
	DeviceCodeByUserCode(ctx context.Context, userCode string) (DeviceCode, error)
	// ApproveDeviceCode approves the pending login of userCode at now (before
	// its ExpiresAt), recording by, and returns it. Errors:
	// ErrDeviceCodeNotFound, ErrDeviceCodeExpired, ErrDeviceCodeUsed (already
	// approved or consumed).
	ApproveDeviceCode(ctx context.Context, userCode, by string, now time.Time) (DeviceCode, error)
	// ConsumeDeviceCode hands out the login with ID id at key.CreatedAt: an
	// approved login not expired becomes consumed and is returned with
	// Status DeviceConsumed, and key is stored with the login's Name,
	// AvatarURL and Scopes in place of its own, in the same atomic step;
	// exactly one of concurrent callers gets that. When the key cannot be
	// stored (ErrKeyNameTaken, ErrKeyExists: CreateKey's checks) neither
	// happens and the login stays approved. A pending one is returned
	// unchanged. Errors also: ErrDeviceCodeNotFound, ErrDeviceCodeExpired,
	// ErrDeviceCodeConsumed (consumed before).
	ConsumeDeviceCode(ctx context.Context, id string, key Key) (DeviceCode, error)
}

// Store is everything the identity Service needs from a backend.
type Store interface {
	KeyStore
	DeviceStore
}
