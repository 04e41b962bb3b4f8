package memstore

import (
	"context"
	"slices"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// AddCalibration implements slots.ClaimStore under the mutex.
func (s *Store) AddCalibration(ctx context.Context, c slots.Calibration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.claims[c.ClaimID]
	if !ok {
		return slots.ErrClaimNotFound
	}
	c.Scores = slices.Clone(c.Scores)
	c.CreatedAt = store.Milli(c.CreatedAt)
	r.calibrations = append(r.calibrations, c)
	s.setDomain(r, c.TopDomain(), c.CreatedAt)
	return nil
}

// ListCalibrations implements slots.ClaimStore.
func (s *Store) ListCalibrations(ctx context.Context, claimID string, limit int) ([]slots.Calibration, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.claims[claimID]
	if !ok {
		return nil, slots.ErrClaimNotFound
	}
	out := []slots.Calibration{}
	for i := len(r.calibrations) - 1; i >= 0 && len(out) < limit; i-- {
		c := r.calibrations[i]
		c.Scores = slices.Clone(c.Scores)
		out = append(out, c)
	}
	return out, nil
}
