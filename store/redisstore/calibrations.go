package redisstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// calibrationDoc is a calibration as its claim's calibrations list keeps
// it, with the original's field names.
type calibrationDoc struct {
	ID         string                   `json:"_id"`
	ClaimID    string                   `json:"claimId"`
	Scores     []slots.CalibrationScore `json:"scores"`
	Total      int                      `json:"total"`
	EditorID   string                   `json:"editorId"`
	EditorName string                   `json:"editorName"`
	CreatedAt  int64                    `json:"createdAt"` // Unix milliseconds
}

// AddCalibration implements slots.ClaimStore in one script.
func (s *Store) AddCalibration(ctx context.Context, c slots.Calibration) error {
	doc, err := json.Marshal(calibrationDoc{ID: c.ID, ClaimID: c.ClaimID, Scores: c.Scores, Total: c.Total,
		EditorID: c.EditorID, EditorName: c.EditorName, CreatedAt: store.Millis(c.CreatedAt)})
	if err != nil {
		return fmt.Errorf("redisstore: encode calibration: %w", err)
	}
	err = calibrateScript.Run(ctx, s.client,
		[]string{s.claimKey(c.ClaimID), s.calibrationsKey(c.ClaimID), s.slotsKey(c.ClaimID)},
		s.ns, c.ClaimID, doc, c.TopDomain(), store.Millis(c.CreatedAt)).Err()
	return interpretError(ctx, err, nil)
}

// ListCalibrations implements slots.ClaimStore in one script.
func (s *Store) ListCalibrations(ctx context.Context, claimID string, limit int) ([]slots.Calibration, error) {
	docs, err := listCalibrationsScript.Run(ctx, s.client,
		[]string{s.claimKey(claimID), s.calibrationsKey(claimID)}, limit).StringSlice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]slots.Calibration, len(docs))
	for i, raw := range docs {
		var d calibrationDoc
		if err := json.Unmarshal([]byte(raw), &d); err != nil {
			return nil, fmt.Errorf("redisstore: calibration of claim %s: %w", claimID, err)
		}
		// The list is oldest first; the answer newest first.
		out[len(docs)-1-i] = slots.Calibration{ID: d.ID, ClaimID: d.ClaimID, Scores: d.Scores, Total: d.Total,
			EditorID: d.EditorID, EditorName: d.EditorName, CreatedAt: store.FromMillis(d.CreatedAt)}
	}
	return out, nil
}
