package httpapi

import (
	"net/http"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// calibrate answers POST /api/v1/claims/{claimId}/calibrations:
// slots.Service.Calibrate.
func (a *slotsAPI) calibrate(w http.ResponseWriter, r *http.Request) error {
	var in wire.NewCalibration
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	c, err := a.svc.Calibrate(r.Context(), r.PathValue("claimId"), calibrationScoresIn(in.Scores))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.CalibrationCreated{Calibration: viewCalibration(c), OK: true, CalibrationID: c.ID})
	return nil
}

// listCalibrations answers GET /api/v1/claims/{claimId}/calibrations:
// slots.Service.Calibrations.
func (a *slotsAPI) listCalibrations(w http.ResponseWriter, r *http.Request) error {
	cs, err := a.svc.Calibrations(r.Context(), r.PathValue("claimId"), looseLimit(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.List(viewAll(cs, viewCalibration)))
	return nil
}

// calibrationScoresIn is a calibration body's scores as the domain's: nil
// (none sent) stays nil.
func calibrationScoresIn(in wire.CalibrationScores) []slots.NewCalibrationScore {
	if in == nil {
		return nil
	}
	out := make([]slots.NewCalibrationScore, len(in))
	for i, s := range in {
		out[i] = slots.NewCalibrationScore{Domain: s.Domain, Score: s.Score}
	}
	return out
}

func viewCalibration(c slots.Calibration) wire.Calibration {
	scores := make([]wire.CalibrationScore, len(c.Scores))
	for i, s := range c.Scores {
		scores[i] = wire.CalibrationScore{Domain: s.Domain, Score: float64(s.Score)}
	}
	return wire.Calibration{ID: c.ID, ClaimID: c.ClaimID, Scores: scores, Total: c.Total, Domain: c.TopDomain(),
		EditorAuthID: c.EditorID, EditorName: c.EditorName, CreatedAt: store.Millis(c.CreatedAt)}
}
