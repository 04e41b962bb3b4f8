package client_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/storetest"
)

// TestCalibrationsThroughTheClient: a key without scopes calibrates a
// claim, which takes the top domain, and lists its calibrations newest
// first; refusals come back as the library's errors with the server's
// code.
func TestCalibrationsThroughTheClient(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st)
		h := agent(t, c, "human", slots.ScopeClaimCreate)
		claim, err := h.CreateClaim(ctx, client.NewClaim{Title: "Entropy bounds compression"})
		require.NoError(t, err)
		calibrator := agent(t, c, "calibrator")
		me, err := calibrator.Me(ctx)
		require.NoError(t, err)

		first, err := calibrator.Calibrate(ctx, claim.ID, client.CalibrationScore{Domain: "statistics", Score: 40},
			client.CalibrationScore{Domain: "information-theory", Score: 60})
		require.NoError(t, err)
		require.True(t, first.OK)
		require.Equal(t, first.ID, first.CalibrationID)
		require.Equal(t, "information-theory", first.Domain)
		require.Equal(t, me.ID, first.EditorAuthID)
		require.Equal(t, "calibrator", first.EditorName)
		second, err := calibrator.Calibrate(ctx, claim.ID, client.CalibrationScore{Domain: "logic", Score: 100})
		require.NoError(t, err)
		got, err := c.Claim(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, "logic", got.Domain)

		list, err := calibrator.Calibrations(ctx, claim.ID, 0)
		require.NoError(t, err)
		require.Equal(t, []client.Calibration{second.Calibration, first.Calibration}, list)
		list, err = calibrator.Calibrations(ctx, claim.ID, 1)
		require.NoError(t, err)
		require.Equal(t, []client.Calibration{second.Calibration}, list)

		_, err = calibrator.Calibrate(ctx, claim.ID, client.CalibrationScore{Domain: "logic", Score: 99})
		require.ErrorIs(t, err, store.ErrInvalid)
		var e *client.Error
		require.True(t, errors.As(err, &e))
		require.Equal(t, slots.CodeCalibrationFailed, e.Code)
		require.Equal(t, "Scores must sum to 100", e.Message)
		_, err = calibrator.Calibrate(ctx, claim.ID)
		require.True(t, errors.As(err, &e))
		require.Equal(t, "invalid_payload", e.Code, "no scores at all")
		_, err = calibrator.Calibrate(ctx, "claim_missing", client.CalibrationScore{Domain: "logic", Score: 100})
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = calibrator.Calibrations(ctx, "claim_missing", 0)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}
