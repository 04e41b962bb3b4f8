package slots

import (
	"cmp"
	"context"
	"strings"
	"time"
)

// ClaimStore keeps claims, their comments and their calibrations.
type ClaimStore interface {
	// CreateClaim stores c. It returns ErrClaimExists if c.ID is taken.
	CreateClaim(ctx context.Context, c Claim) error
	// GetClaim returns the claim, or ErrClaimNotFound.
	GetClaim(ctx context.Context, id string) (Claim, error)
	// ListClaims returns up to p.Limit claims, newest first (by ID, which is
	// time-ordered), with IDs strictly below p.Before when it is set, and
	// only claims whose domain is p.Domain and whose protocol is p.Protocol
	// when they are set.
	ListClaims(ctx context.Context, p ListClaimsParams) ([]Claim, error)
	// AddComment stores c, or returns ErrClaimNotFound if its claim does not
	// exist and ErrParentNotFound, storing nothing, if c.ParentID is set and
	// is not a comment of that claim. When c is the claim's first draft, the claim's open slots join
	// the job queue in the same atomic step, which also makes c.CreatedAt
	// the claim's UpdatedAt when it is later.
	AddComment(ctx context.Context, c Comment) error
	// ListComments returns the claim's oldest p.Limit comments, or its
	// newest with p.Newest, oldest first either way (none for a Limit
	// below 1), or ErrClaimNotFound. It reads no comment past the window,
	// so a listing costs the same however many the claim has.
	ListComments(ctx context.Context, claimID string, p ListCommentsParams) ([]Comment, error)
	// AddCalibration stores c and writes c.TopDomain() as its claim's
	// domain in the same atomic step, with everything a domain write
	// changes (the claim listed under its new domain, its open slots
	// offered under it), as a Prism domain layer's write does; concurrent
	// calls are applied one after the other, so the claim's domain is the
	// top domain of the calibration stored last; c.CreatedAt becomes the
	// claim's UpdatedAt when it is later. It returns
	// ErrClaimNotFound, storing nothing, if the claim does not exist.
	AddCalibration(ctx context.Context, c Calibration) error
	// ListCalibrations returns the claim's limit (at least 1) latest
	// calibrations, the one stored last first, or ErrClaimNotFound.
	ListCalibrations(ctx context.Context, claimID string, limit int) ([]Calibration, error)
	// PickClaim picks one of the candidates — the newest p.Pool claims,
	// of p.Domain when it is set — and returns it with its newest
	// p.CommentLimit comments (every one when 0), oldest first. ClaimLatest
	// picks the newest candidate; ClaimTop the one with the most comments,
	// the newest of those tied; ClaimRandom the one at index ⌊p.Random·n⌋
	// of the n candidates, newest first. The candidates, their comment
	// counts and the pick's comments are read in one atomic step (one
	// statement, script or lock): one round trip, whatever p.Pool. It
	// returns ErrNoClaims when there is no candidate.
	PickClaim(ctx context.Context, p PickClaimParams) (ClaimJob, error)
	// ProtocolUses returns, for the protocol names claims were created
	// under (Claim.Protocol, when not empty), how many were and when the
	// newest was, counted in the step that stores each claim: with p.Name
	// set, that name's alone (none when no claim has it); else up to
	// p.Limit (at least 1) of them, the most claims first, then the latest
	// used, then by name.
	ProtocolUses(ctx context.Context, p ProtocolUsesParams) ([]ProtocolUse, error)
}

// ProtocolUsesParams selects ProtocolUses.
type ProtocolUsesParams struct {
	Name  string // when set, only this protocol name's use
	Limit int    // the most uses returned when Name is empty, at least 1
}

// ProtocolUse is how often claims were created under a protocol name, as
// the original's protocol listing counts them.
type ProtocolUse struct {
	Name       string    // a Claim.Protocol, exactly
	Claims     int       // how many claims were created under it
	LastUsedAt time.Time // the newest such claim's CreatedAt
}

// CompareProtocolUses orders uses as ProtocolUses lists them: the most
// claims first, then the latest used, then by name.
func CompareProtocolUses(a, b ProtocolUse) int {
	if a.Claims != b.Claims {
		return cmp.Compare(b.Claims, a.Claims)
	}
	if c := b.LastUsedAt.Compare(a.LastUsedAt); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// ListClaimsParams pages through claims.
type ListClaimsParams struct {
	Limit  int    // the most claims returned, at least 1
	Before string // exclusive upper bound on the ID; empty starts at the newest
	Domain string // when set, only claims of this domain
	// Protocol, when set, keeps only claims whose Protocol is exactly it.
	Protocol string
	// Order is ClaimLatest (empty means it), newest first, or ClaimTop:
	// the same claims, the newest Limit, with the most comments first and
	// the newest of those tied first.
	Order ClaimStrategy
}

// LedgerStore keeps the ledger of balances: what each API key has been
// credited for finished slots (SlotStore.FinishSlot credits it).
type LedgerStore interface {
	// Balance returns the sum credited to the key; 0 for a key never
	// credited, known or not.
	Balance(ctx context.Context, keyID string) (int64, error)
}

// SlotStore keeps role slots. Every method that changes a slot decides in
// one atomic step of the backend: concurrent callers never both win.
type SlotStore interface {
	// ReplaceOpenSlots deletes the claim's open slots and stores slots (all
	// open, with IDs, roles and CreatedAt set) in one atomic step; taken and
	// done slots are kept. It returns ErrClaimNotFound for an unknown claim.
	ReplaceOpenSlots(ctx context.Context, claimID string, slots []Slot) error
	// ListSlots returns the claim's slots in creation order, or
	// ErrClaimNotFound.
	ListSlots(ctx context.Context, claimID string) ([]Slot, error)
	// NextOpenSlot returns an open slot of a claim with at least one draft
	// comment, matching p.Role and p.Domain when set, on a claim where the
	// agent p.AgentKeyID holds no slot in any status (the rule of TakeSlot's
	// ErrSlotHeld; with an empty p.AgentKeyID every claim qualifies). It
	// picks the oldest such slot (lowest ID) when p.Random is negative, else
	// one at random with p.Random in [0,1) as the source of randomness,
	// every eligible slot having a chance. Both strategies decide in one
	// atomic step: the claim is not held by the agent at the moment of the
	// pick. It returns ErrNoJob when no slot is eligible. It costs the same
	// however many claims and slots the store holds; the slots of claims the
	// agent holds may be stepped over, so for an agent holding a bounded
	// number of seats the cost stays bounded too.
	NextOpenSlot(ctx context.Context, p NextSlotParams) (Job, error)
	// TakeSlot gives the slot to p.Agent if it is open (or taken with a lease
	// that expired at or before p.Now) and the agent holds no other slot of
	// the claim in any status. Errors: ErrSlotNotFound (unknown slot, or a
	// slot of another claim), ErrSlotTaken, ErrSlotHeld. A lapsed lease keeps
	// counting as held until ReleaseExpiredSlots or another agent's take
	// re-opens the slot.
	TakeSlot(ctx context.Context, p TakeParams) (Slot, error)
	// TakeNextSlot picks as NextOpenSlot(p.Next) and takes the slot for
	// p.Agent as TakeSlot would, in one atomic step: concurrent callers
	// never receive the same slot, the agent never gets a second seat on a
	// claim, and a slot another caller is taking at that moment is passed
	// over for the next eligible one rather than lost. An oldest-first
	// pick's Skip is a hint (TakeNextParams.Next): the store may start past
	// that many eligible slots, and then takes an older one only when none
	// past them is free, so ErrNoJob still means none is. It returns the
	// job with the slot as taken, or ErrNoJob.
	TakeNextSlot(ctx context.Context, p TakeNextParams) (Job, error)
	// TakeNextSlots takes for each of ps as TakeNextSlot would, the items'
	// agents being distinct, and returns one result per item, in order; the
	// backend decides them together where it can (one statement, script or
	// lock). The error is for the batch as a whole.
	TakeNextSlots(ctx context.Context, ps []TakeNextParams) ([]JobResult, error)
	// FinishSlot marks the slot done and credits p.Credit to the holder's
	// balance in the same atomic step. Errors: ErrSlotNotFound,
	// ErrSlotNotTaken (the slot is open, already done, or its lease expired
	// at or before p.Now), ErrNotSlotOwner (taken by another key).
	FinishSlot(ctx context.Context, p FinishParams) (Slot, error)
	// FinishSlots finishes each of ps as FinishSlot would and returns one
	// result per item, in order; the backend decides them together (one
	// statement, script or lock) so concurrent dones cost one commit. Each
	// slot is finished and credited at most once, whatever the batch holds.
	// The error is for the batch as a whole (the backend unreachable).
	FinishSlots(ctx context.Context, ps []FinishParams) ([]FinishResult, error)
	// FinishAndTakeNextSlots finishes each item's slot as FinishSlots would
	// and, when that succeeds, takes the item's agent's next slot as
	// TakeNextSlots would (the agents of ps are distinct), in the same
	// atomic step: one statement, script or lock for the batch where the
	// backend can. It returns one result per item, in order; the error is
	// for the batch as a whole. The finished slot's claim stays held by the
	// agent, so the take never seats it there again.
	FinishAndTakeNextSlots(ctx context.Context, ps []FinishTakeParams) ([]FinishTakeResult, error)
	// ReleaseExpiredSlots re-opens every taken slot whose lease expired at or
	// before now, clearing its agent, and returns how many it re-opened.
	ReleaseExpiredSlots(ctx context.Context, now time.Time) (int, error)
	// CountOpenSlots returns how many slots the job queue holds now: open
	// slots of claims with at least one draft comment, which NextOpenSlot
	// with no filter could pick. It is read in one atomic step (one
	// statement, command or lock) and is meant for a metrics scrape, not
	// for a decision: the count may be stale by the time it is returned.
	CountOpenSlots(ctx context.Context) (int, error)
}

// NextSlotParams filters NextOpenSlot. Empty Role, Domain and AgentKeyID do
// not filter.
type NextSlotParams struct {
	Role   Role   // when set, only slots of this role
	Domain string // when set, only slots of claims of this domain
	// AgentKeyID is the asking agent: claims where it holds a slot, taken
	// or done, are skipped.
	AgentKeyID string
	// Random picks the slot: negative means the oldest; a value in [0,1),
	// drawn uniformly by the caller, makes the pick random.
	Random float64
	// Skip, with Random negative, passes over the Skip oldest eligible
	// slots: the pick is the (Skip+1)-th oldest, or the youngest eligible
	// when there are fewer. A crowd asking at once is spread this way. In
	// a take it is a hint instead (TakeNextParams.Next).
	Skip int
}

// TakeParams is the input of TakeSlot.
type TakeParams struct {
	ClaimID string    // the slot's claim; a slot of another claim is not found
	SlotID  string    // the slot to take
	Agent   Agent     // the key taking it
	Now     time.Time // becomes TakenAt
	// LeaseUntil is when the take lapses; zero means never.
	LeaseUntil time.Time
}

// FinishParams is the input of FinishSlot.
type FinishParams struct {
	ClaimID string    // the slot's claim
	SlotID  string    // the slot to finish
	KeyID   string    // the finishing key; it must hold the slot
	Now     time.Time // becomes DoneAt
	Credit  int64     // added to the holder's balance
}

// Store is everything the slots Service needs from a backend.
type Store interface {
	ClaimStore
	LedgerStore
	SlotStore
}
