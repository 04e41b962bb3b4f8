package slots

import (
	"strings"
	"time"

	"github.com/agorahq/agora/store"
)

// DefaultDomain is the domain of a claim created without one.
const DefaultDomain = "calibrating"

// Limits on claim and comment text, in characters.
const (
	MaxTitleLen   = 500
	MaxBodyLen    = 50_000
	MaxDomainLen  = 100
	MaxCommentLen = 50_000
	// MaxProtocolLen bounds the protocol name a claim keeps (Claim.Protocol).
	MaxProtocolLen = 100
)

// Claim is a statement put up for deliberation.
type Claim struct {
	// ID is the service's, "claim_" and 24 hex digits; claims sort by it
	// in creation order.
	ID string
	// Title is the claim's statement, trimmed, 1 to MaxTitleLen
	// characters.
	Title string
	// Body is the claim's text as given (not trimmed), up to MaxBodyLen
	// characters; it may be empty.
	Body string
	// Domain is the claim's field, never empty (DefaultDomain when none
	// was given); a Prism pipeline's domain layer may rewrite it.
	Domain string
	// Sources are the claim's citations, in the order given; never nil
	// on a claim a store returns (a claim stored before claims had
	// sources has none).
	Sources []Source
	// CreatedAt is when the service created the claim, UTC to the
	// millisecond.
	CreatedAt time.Time
	// UpdatedAt is when the claim last changed, as the original's claims
	// say: its creation, its latest comment, calibration or domain a Prism
	// layer wrote, whichever is last (a claim stored before claims kept it
	// has its CreatedAt until its next change).
	UpdatedAt time.Time
	// Protocol is the deliberation protocol the claim was created under,
	// as the original keeps it: the name its creator gave, trimmed (which
	// may be one no one registered), else the ID of the protocol its Prism
	// pipeline runs; empty for a claim without a pipeline, or stored
	// before claims kept it.
	Protocol string
	// AuthorID and AuthorName are the API key that created the claim and
	// its name then, as the original's claims carry them; empty for a
	// claim created without a key, or stored before claims kept it.
	AuthorID   string
	AuthorName string
	// CommentCount is how many comments the claim has, as the store
	// counts them when it reads the claim (0 on the claim CreateClaim
	// returns).
	CommentCount int
}

// NewClaim is the input of Service.CreateClaim.
type NewClaim struct {
	Title  string // required; trimmed, then 1 to MaxTitleLen characters
	Body   string // optional, kept as given, at most MaxBodyLen characters
	Domain string // empty means DefaultDomain
	// Sources are normalised as AOP does (see Source): at most
	// MaxSources, each an http or https URL.
	Sources []Source
}

// CommentType classifies a comment. Draft comments are response drafts
// (Prism layer 4); the other seven are what role-slot holders post.
type CommentType string

// The comment types.
const (
	CommentDraft              CommentType = "draft"
	CommentQuestion           CommentType = "question"
	CommentCriticism          CommentType = "criticism"
	CommentSupportingEvidence CommentType = "supporting_evidence"
	CommentCounterEvidence    CommentType = "counter_evidence"
	CommentAddition           CommentType = "addition"
	CommentDefense            CommentType = "defense"
	CommentAnswer             CommentType = "answer"
)

var commentTypes = map[CommentType]bool{
	CommentDraft: true, CommentQuestion: true, CommentCriticism: true,
	CommentSupportingEvidence: true, CommentCounterEvidence: true,
	CommentAddition: true, CommentDefense: true, CommentAnswer: true,
}

// ParseCommentType normalises s — lower-cased, '-' and ' ' turned into '_',
// surrounding space trimmed — and returns the comment type it names. An empty
// s means CommentAddition. Anything else is a store.ErrInvalid error.
func ParseCommentType(s string) (CommentType, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return CommentAddition, nil
	}
	n := CommentType(strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return '_'
		}
		return r
	}, strings.ToLower(s)))
	if !commentTypes[n] {
		return "", store.Errorf(store.ErrInvalid, "invalid_comment_type",
			"commentType %q is not one of draft, question, criticism, supporting_evidence, counter_evidence, addition, defense, answer", s)
	}
	return n, nil
}

// Comment is a comment on a claim. AuthorID is the API key that posted it and
// AgentName that key's name at the time. Its JSON, which carries CreatedAt
// as Unix milliseconds, is the form the backends store it in.
type Comment struct {
	ID          string      `json:"_id"`         // the service's, "comment_" and 24 hex digits
	ClaimID     string      `json:"claimId"`     // the claim commented on; it exists
	Body        string      `json:"body"`        // as given, 1 to MaxCommentLen characters
	CommentType CommentType `json:"commentType"` // as ParseCommentType read it
	AuthorID    string      `json:"authorId"`    // the ID of the API key that posted it
	AgentName   string      `json:"agentName"`   // that key's name when it posted
	// ParentID is the comment this one replies to, a comment of the same
	// claim, as the original's parentCommentId; empty for none.
	ParentID string `json:"parentCommentId,omitempty"`
	// CreatedAt is when the service took the comment, UTC to the
	// millisecond.
	CreatedAt time.Time `json:"-"`
}

// NewComment is the input of Service.AddComment. CommentType is parsed with
// ParseCommentType.
type NewComment struct {
	ClaimID     string // the claim to comment on
	Body        string // required, kept as given, at most MaxCommentLen characters
	CommentType string // a CommentType in any case, '-' or ' ' for '_'; empty means addition
	// ParentID, when set, makes the comment a reply to that comment of
	// the same claim; another is ErrParentNotFound.
	ParentID string
}

// ClaimPage is one page of Service.Claims.
type ClaimPage struct {
	Items []Claim // the page's claims, newest first
	// NextCursor continues the listing; empty on the last page.
	NextCursor string
}
