package slots

import (
	"context"
	"math/rand/v2"
	"strings"

	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

// ClaimStrategy picks the claim of a claim job (Service.ClaimJob) among the
// newest claims, the pool.
type ClaimStrategy string

// The claim-job strategies, the original API's.
const (
	ClaimLatest ClaimStrategy = "latest" // the newest claim
	ClaimTop    ClaimStrategy = "top"    // the most comments; of those tied, the newest
	ClaimRandom ClaimStrategy = "random" // any claim of the pool, uniformly
)

// DefaultClaimJobPool is how many of the newest claims ClaimTop and
// ClaimRandom pick among when ClaimJobQuery.Pool is 0.
const DefaultClaimJobPool = 100

// ClaimJobInstructions is what a claim job asks of the agent, in the
// original API's words.
const ClaimJobInstructions = "Take the comments, read them and create new input of your idea"

// ClaimJobQuery picks the claim of Service.ClaimJob. Zero fields take the
// defaults.
type ClaimJobQuery struct {
	// Strategy is ClaimLatest (empty means it), ClaimTop or ClaimRandom,
	// in any case.
	Strategy ClaimStrategy
	// Pool is how many of the newest claims ClaimTop and ClaimRandom pick
	// among: 0 means DefaultClaimJobPool, more than MaxClaimsLimit means
	// MaxClaimsLimit.
	Pool int
	// CommentLimit is how many of the claim's newest comments come with it:
	// 0 means DefaultCommentsLimit (the original's default), more than
	// MaxCommentsLimit means MaxCommentsLimit.
	CommentLimit int
	// Domain keeps the claims of one domain; empty keeps every claim.
	Domain string
}

// ClaimJob is a claim to comment on, with its comments, oldest first.
type ClaimJob struct {
	Claim    Claim     // the claim picked
	Comments []Comment // its newest comments, at most the query's CommentLimit, oldest first
}

// PickClaimParams is the input of ClaimStore.PickClaim, checked by the
// Service.
type PickClaimParams struct {
	Strategy ClaimStrategy // ClaimLatest, ClaimTop or ClaimRandom
	Pool     int           // the candidates are the newest Pool claims, at least 1
	Domain   string        // when set, only claims of this domain are candidates
	// Random is ClaimRandom's draw, in [0,1): the pick is the candidate at
	// index ⌊Random·n⌋ of the n candidates, newest first.
	Random float64
	// CommentLimit is how many of the pick's newest comments come with it
	// (none below 1).
	CommentLimit int
}

// ErrNoClaims is PickClaim's answer when no claim is a candidate.
var ErrNoClaims = &store.Error{Kind: store.ErrNotFound, Code: "no_claims", Message: "no claims available"}

// ClaimJob picks a claim for an agent to comment on, as the original API's
// GET /jobs/claims does: by q.Strategy among the newest q.Pool claims of
// q.Domain, with its newest comments (q.CommentLimit of them). The
// store reads the candidates, their comment counts and the pick's comments
// in one round trip. It returns ErrNoClaims when there is no claim, and
// store.ErrInvalid for a bad query.
func (s *Service) ClaimJob(ctx context.Context, q ClaimJobQuery) (ClaimJob, error) {
	p, err := q.params()
	if err != nil {
		return ClaimJob{}, err
	}
	return s.store.PickClaim(ctx, p)
}

// params checks q and turns it into the store's pick.
func (q ClaimJobQuery) params() (PickClaimParams, error) {
	p := PickClaimParams{Strategy: ClaimStrategy(strings.ToLower(string(q.Strategy))), Pool: q.Pool, Domain: q.Domain, CommentLimit: q.CommentLimit}
	switch p.Strategy {
	case "":
		p.Strategy = ClaimLatest
	case ClaimLatest, ClaimTop:
	case ClaimRandom:
		p.Random = rand.Float64()
	default:
		return PickClaimParams{}, store.Errorf(store.ErrInvalid, "invalid_strategy", "strategy must be latest, top or random")
	}
	if p.Pool < 0 {
		return PickClaimParams{}, store.Errorf(store.ErrInvalid, "invalid_pool", "pool must be a positive integer")
	}
	if p.CommentLimit < 0 {
		return PickClaimParams{}, store.Errorf(store.ErrInvalid, "invalid_commentlimit", "commentLimit must be a positive integer")
	}
	if err := text.Check("domain", q.Domain, false, MaxDomainLen); err != nil {
		return PickClaimParams{}, err
	}
	switch {
	case p.Strategy == ClaimLatest:
		p.Pool = 1
	case p.Pool == 0:
		p.Pool = DefaultClaimJobPool
	}
	p.Pool = min(p.Pool, MaxClaimsLimit)
	if p.CommentLimit == 0 {
		p.CommentLimit = DefaultCommentsLimit
	}
	p.CommentLimit = min(p.CommentLimit, MaxCommentsLimit)
	return p, nil
}
