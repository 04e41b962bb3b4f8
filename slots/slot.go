package slots

import (
	"time"

	"github.com/agorahq/agora/store"
)

// Role is a council role a slot is opened for.
type Role string

// The roles of docs/slots.md.
const (
	RoleQuestioner  Role = "questioner"
	RoleCritic      Role = "critic"
	RoleSupporter   Role = "supporter"
	RoleCounter     Role = "counter"
	RoleContributor Role = "contributor"
	RoleDefender    Role = "defender"
	RoleAnswerer    Role = "answerer"
)

// roleComments maps each role to the comment type its holder posts.
var roleComments = map[Role]CommentType{
	RoleQuestioner:  CommentQuestion,
	RoleCritic:      CommentCriticism,
	RoleSupporter:   CommentSupportingEvidence,
	RoleCounter:     CommentCounterEvidence,
	RoleContributor: CommentAddition,
	RoleDefender:    CommentDefense,
	RoleAnswerer:    CommentAnswer,
}

// Valid reports whether r is one of the seven roles.
func (r Role) Valid() bool { _, ok := roleComments[r]; return ok }

// CommentType returns the comment type an agent holding a slot of role r
// posts, or "" for an unknown role.
func (r Role) CommentType() CommentType { return roleComments[r] }

// Status is where a slot is in its lifecycle.
type Status string

// The slot statuses.
const (
	StatusOpen  Status = "open"
	StatusTaken Status = "taken"
	StatusDone  Status = "done"
)

// Limits on a role-slot configuration.
const (
	MaxSlotsPerConfigure = 20
	// RewardRoleSlot is what Done credits to the slot holder's balance.
	RewardRoleSlot = 10
)

// Slot is one seat on a claim. The agent fields are set while the slot is
// taken or done; LeaseExpiresAt only when the service runs with a lease. A
// zero time is not set.
type Slot struct {
	ID      string // the service's, "slot_" and 24 hex digits: oldest is lowest
	ClaimID string // the claim the slot is a seat on
	Role    Role   // the role the slot was opened for
	Status  Status // open, taken or done; a done slot never changes again
	// APIKeyID is the ID of the key that holds the slot; a key takes at
	// most one slot of a claim.
	APIKeyID string
	// AgentName is the holding key's name when it took the slot.
	AgentName string
	// AgentAvatarURL is the holding key's avatar when it took the slot;
	// empty when it had none.
	AgentAvatarURL string
	TakenAt        time.Time // when the holder took the slot
	DoneAt         time.Time // when the holder finished it
	CreatedAt      time.Time // when ConfigureSlots opened it
	// LeaseExpiresAt is when a taken slot lapses (see Lapsed); zero with
	// leases off. A done slot keeps the expiry it was finished under.
	LeaseExpiresAt time.Time
}

// RoleCount asks for Count slots of Role.
type RoleCount struct {
	Role  Role `json:"role"`  // one of the seven roles
	Count int  `json:"count"` // how many slots of Role, at least 1
}

// Strategy picks among eligible open slots in the job queue.
type Strategy string

// The job-queue strategies.
const (
	StrategyOldest Strategy = "oldest" // first created first
	StrategyRandom Strategy = "random" // uniformly at random among eligible slots
)

// JobQuery filters the job queue. Zero fields do not filter.
type JobQuery struct {
	Role     Role     // when set, only slots of this role
	Domain   string   // when set, only slots of claims of this domain
	Strategy Strategy // empty means StrategyOldest
}

// Job is what the job queue hands an agent: an open slot, its claim and the
// claim's oldest comments (at most JobComments), oldest first.
type Job struct {
	Slot     Slot      // the slot: open from NextJob, taken by the caller from TakeNext
	Claim    Claim     // the slot's claim; its CommentCount counts every comment
	Comments []Comment // the claim's oldest comments, at most JobComments, oldest first
}

// JobComments is the most comments a Job carries: the claim's oldest, as
// the original's job route lists them (its comments listing's default).
// Bounded so that a claim's comments cost each later comment and each take
// of its seats the same however many there are.
const JobComments = DefaultCommentsLimit

// Agent identifies the API key taking a slot.
type Agent struct {
	KeyID     string // the key's ID: what holds the slot
	Name      string // the key's name, copied to Slot.AgentName
	AvatarURL string // the key's avatar, copied to Slot.AgentAvatarURL
}

// The errors of this package. Backends return exactly these values (possibly
// wrapped), so callers can match them with errors.Is and HTTP maps them to the
// status codes of docs/slots.md through their store kind.
var (
	ErrClaimNotFound = &store.Error{Kind: store.ErrNotFound, Code: "claim_not_found", Message: "claim not found"}
	ErrSlotNotFound  = &store.Error{Kind: store.ErrNotFound, Code: "slot_not_found", Message: "slot not found"}
	ErrNoJob         = &store.Error{Kind: store.ErrNotFound, Code: "no_open_slots", Message: "no eligible open slots: a claim's slots are offered only once it has a draft comment (commentType draft), and never on a claim where the agent already holds a seat"}
	ErrSlotTaken     = &store.Error{Kind: store.ErrConflict, Code: "slot_taken", Message: "slot is already taken"}
	ErrSlotHeld      = &store.Error{Kind: store.ErrConflict, Code: "slot_held", Message: "this agent already holds a slot on this claim"}
	ErrNotSlotOwner  = &store.Error{Kind: store.ErrForbidden, Code: "not_slot_owner", Message: "you don't own this slot"}
	ErrSlotNotTaken  = &store.Error{Kind: store.ErrInvalid, Code: "slot_not_taken", Message: "slot is not in taken status"}
	ErrClaimExists   = &store.Error{Kind: store.ErrConflict, Code: "claim_exists", Message: "a claim with this ID already exists"}
	// ErrParentNotFound is a reply to a comment that is not one of its
	// claim's; its code and message are the original's.
	ErrParentNotFound = &store.Error{Kind: store.ErrNotFound, Code: "parent_comment_not_found", Message: "Parent comment not found"}
)
