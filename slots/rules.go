package slots

// The rules of a role slot's take and finish, written once. memstore
// applies them under its lock and pgstore classifies a refused statement
// with them; the PostgreSQL statements (takeQuery, finishQuery and the
// take-next picks) and lib.lua's lapsed and finish_slot must decide inside
// their one atomic step, so they carry a copy that names these functions,
// and storetest's SlotRules walks every branch on every backend so a copy
// that drifts fails.

import "time"

// Lapsed reports whether s is taken under a lease that expired at or
// before now. A lapsed slot may be taken again (even before a sweep
// re-opens it) and may no longer be finished.
func (s Slot) Lapsed(now time.Time) bool {
	return s.Status == StatusTaken && !s.LeaseExpiresAt.IsZero() && !s.LeaseExpiresAt.After(now)
}

// Takeable reports whether a take at now may have s: it is open, or its
// lease lapsed.
func (s Slot) Takeable(now time.Time) bool {
	return s.Status == StatusOpen || s.Lapsed(now)
}

// FinishError says why the key keyID may not finish s at now, in the
// contract's order: an open slot is ErrSlotNotTaken; a slot another key
// holds (or held) is ErrNotSlotOwner, lapsed or not; the holder's slot
// already done or lapsed is ErrSlotNotTaken. Nil when the key may finish
// it.
func (s Slot) FinishError(keyID string, now time.Time) error {
	switch {
	case s.Status == StatusOpen:
		return ErrSlotNotTaken
	case s.APIKeyID != keyID:
		return ErrNotSlotOwner
	case s.Status != StatusTaken || s.Lapsed(now):
		return ErrSlotNotTaken
	}
	return nil
}
