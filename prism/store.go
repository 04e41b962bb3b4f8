package prism

import (
	"context"
	"time"

	"github.com/agorahq/agora/slots"
)

// Store keeps protocols and pipelines. A pipeline is one aggregate saved
// with compare-and-set, together with its effects, in one atomic step of
// the backend.
type Store interface {
	// PutProtocol stores p, replacing a protocol with the same ID.
	PutProtocol(ctx context.Context, p Protocol) error
	// GetProtocol returns a protocol or ErrProtocolNotFound.
	GetProtocol(ctx context.Context, id string) (Protocol, error)
	// ListProtocols returns every protocol, by ID.
	ListProtocols(ctx context.Context) ([]Protocol, error)

	// CreateClaimPipeline stores the new claim c and its pipeline p
	// (Version 1, p.ClaimID being c.ID) in one atomic step: afterwards
	// both exist or, on any error, neither. It returns
	// slots.ErrClaimExists when c.ID is taken and ErrPipelineExists when
	// a pipeline is stored under it.
	CreateClaimPipeline(ctx context.Context, c slots.Claim, p Pipeline) error
	// GetPipeline returns a claim's pipeline or ErrPipelineNotFound.
	GetPipeline(ctx context.Context, claimID string) (Pipeline, error)
	// UpdatePipeline stores next if the stored pipeline's Version is
	// next.Version-1, and in the same atomic step credits fx.Credits to the
	// ledger and, when fx.Domain is set, writes it to the claim (and its
	// role slots' copy), making next.UpdatedAt the claim's UpdatedAt when
	// it is later. Otherwise it applies none of fx and returns
	// ErrVersionConflict together with the pipeline as it is stored now,
	// read in the same atomic step as the failed comparison (no extra round
	// trip), so the caller can apply its change again without reading;
	// current is meaningful only with ErrVersionConflict. An unknown claim
	// is ErrPipelineNotFound.
	UpdatePipeline(ctx context.Context, next Pipeline, fx Effects) (current Pipeline, err error)
	// FindWork returns up to q.Limit open slots of the current phase of
	// active pipelines matching q (with q.Phase PhaseWork, no consensus
	// slot), with IDs above q.After when it is set: the oldest such, in
	// that order or, when q.Random ≥ 0, in an order randomised with it.
	// It reads an index: its cost does not grow with the number of
	// pipelines. The refs are hints read from the index; the caller
	// re-reads the pipeline.
	FindWork(ctx context.Context, q WorkQuery) ([]WorkRef, error)
	// LapsedPipelines returns the claims whose pipeline has a taken slot
	// with a lease expired at or before now.
	LapsedPipelines(ctx context.Context, now time.Time) ([]string, error)

	// AddConsensus stores rec (ID, CreatedAt and Author set) as the
	// newest of the consensus records posted for a claim, in one atomic
	// step with the check that the claim exists: slots.ErrClaimNotFound
	// when it does not. A pipeline's own record is not among them.
	AddConsensus(ctx context.Context, claimID string, rec ConsensusRecord) error
	// ConsensusRecords returns up to limit of the records posted for a
	// claim, newest first, as AddConsensus stored them: none for a claim
	// without any, known or not, and none for a limit below 1.
	ConsensusRecords(ctx context.Context, claimID string, limit int) ([]ConsensusRecord, error)
}

// WorkQuery filters the work queue: Service.NextWork's query and FindWork's.
// Zero fields do not filter.
type WorkQuery struct {
	Role string // a slot's role, RoleConsensus for consensus slots
	// Layer keeps slots of one layer (nil: any), as the original's
	// ?layer= does: 0 is meta-v1's meta-classify, then from 1; negative is
	// store.ErrInvalid, beyond MaxLayers matches no slot.
	Layer *int
	// Domain is a claim's domain.
	Domain string
	// Phase keeps slots of one phase, work or consensus (another value is
	// store.ErrInvalid). Stores leave consensus slots out for PhaseWork;
	// for PhaseConsensus the Service asks for Role RoleConsensus, the role
	// of every consensus slot.
	Phase Phase
	// Strategy picks among eligible slots: slots.StrategyOldest (empty
	// means it) or slots.StrategyRandom; another value is
	// store.ErrInvalid. The Service turns it into Random; stores ignore it.
	Strategy slots.Strategy
	// Random and Limit are set by the Service for the store: Random
	// negative means oldest first, a value in [0,1) a randomised order;
	// Limit bounds the refs returned.
	Random float64
	Limit  int // see Random
	// After, set by the Service, pages on: only slots whose ID is above
	// it, the highest of the page before, which held none the caller may
	// take. Empty starts at the oldest.
	After string
}

// WorkRef points at an open stage slot.
type WorkRef struct {
	ClaimID string // the claim whose pipeline holds the slot
	SlotID  string // the StageSlot's ID
}
