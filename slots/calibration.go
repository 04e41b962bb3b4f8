package slots

import (
	"context"
	"strings"
	"time"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/jsmath"
	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

// A calibration says which domains a claim belongs to, as shares of 100
// that agents score; the top-scoring domain becomes the claim's domain.
// These are the rules of the Agent Orchestration Protocol's calibrations
// (its POST and GET /claims/{id}/calibrations), with its error messages.

// CalibrationTotal is what a calibration's scores add up to.
const CalibrationTotal = 100

// MaxCalibrationScores is the most score entries Calibrate reads, those
// it drops included.
const MaxCalibrationScores = 100

// The bounds of Calibrations' limit, the original's.
const (
	DefaultCalibrationsLimit = 20
	MaxCalibrationsLimit     = 100
)

// CodeCalibrationFailed is the code of the calibration rules' errors, the
// original's for each of them.
const CodeCalibrationFailed = "calibration_create_failed"

// CalibrationScore is one domain's share of a calibrated claim.
type CalibrationScore struct {
	Domain string `json:"domain"` // trimmed, 1 to MaxDomainLen characters, once per calibration
	Score  int    `json:"score"`  // 1 to 100
}

// NewCalibrationScore is one entry of Calibrate's input, as a client sends
// it: the domain is trimmed, the score rounded.
type NewCalibrationScore struct {
	Domain string
	Score  float64
}

// Calibration is one calibration of a claim: every call of Calibrate
// stores a new one.
type Calibration struct {
	// ID is the service's, "calibration_" and 24 hex digits.
	ID string
	// ClaimID is the claim calibrated; it exists.
	ClaimID string
	// Scores are the non-zero shares, in the order given, each domain
	// once, adding up to CalibrationTotal.
	Scores []CalibrationScore
	// Total is the sum of Scores: CalibrationTotal.
	Total int
	// EditorID is the ID of the API key that calibrated the claim.
	EditorID string
	// EditorName is that key's name when it did.
	EditorName string
	// CreatedAt is when the service took the calibration, UTC to the
	// millisecond.
	CreatedAt time.Time
}

// TopDomain is the domain the calibration gives the claim: the one with
// the highest score, the first of them in Scores when several share it;
// empty when Scores is.
func (c Calibration) TopDomain() string {
	top := -1
	domain := ""
	for _, s := range c.Scores {
		if s.Score > top {
			top, domain = s.Score, s.Domain
		}
	}
	return domain
}

// calibrationError is an error of the calibration rules: store.ErrInvalid
// with the original's code and message.
func calibrationError(message string) error {
	return store.Errorf(store.ErrInvalid, CodeCalibrationFailed, "%s", message)
}

// NormalizeScores checks a calibration's scores as the original does and
// returns those it keeps. Nil scores (none sent) are store.ErrInvalid
// invalid_payload; more than MaxCalibrationScores entries too_many_scores.
// Then each domain is trimmed and an entry whose domain is empty dropped;
// each score is rounded (halves up), and one that is not finite or not
// within 0 to 100 is refused; entries scored 0 are dropped. A kept domain
// must pass the text rule (at most MaxDomainLen characters, no NUL:
// invalid_domain) and appear once; at least one must be kept, and the kept
// scores must add up to CalibrationTotal. The rules' own errors are
// store.ErrInvalid with CodeCalibrationFailed and the original's message.
func NormalizeScores(in []NewCalibrationScore) ([]CalibrationScore, error) {
	switch {
	case in == nil:
		return nil, store.Errorf(store.ErrInvalid, "invalid_payload", "Missing scores")
	case len(in) > MaxCalibrationScores:
		return nil, store.Errorf(store.ErrInvalid, "too_many_scores", "at most %d scores may be given", MaxCalibrationScores)
	}
	type entry struct {
		domain string
		score  float64
	}
	entries := make([]entry, 0, len(in))
	for _, s := range in {
		if d := strings.TrimSpace(s.Domain); d != "" {
			entries = append(entries, entry{d, jsmath.Round(s.Score)})
		}
	}
	for _, e := range entries {
		// NaN fails both comparisons, so it is refused too.
		if !(e.score >= 0 && e.score <= CalibrationTotal) {
			return nil, calibrationError("Scores must be between 0 and 100")
		}
	}
	out := []CalibrationScore{}
	seen := map[string]bool{}
	total := 0
	for _, e := range entries {
		if e.score == 0 {
			continue
		}
		if err := text.Check("domain", e.domain, true, MaxDomainLen); err != nil {
			return nil, err
		}
		if seen[e.domain] {
			return nil, calibrationError("Duplicate domain")
		}
		seen[e.domain] = true
		out = append(out, CalibrationScore{Domain: e.domain, Score: int(e.score)})
		total += int(e.score)
	}
	// The original checks the total first, so that its "At least one
	// domain" never shows; with none left the total is 0, and the message
	// that says so is the clearer one.
	if len(out) == 0 {
		return nil, calibrationError("At least one domain is required")
	}
	if total != CalibrationTotal {
		return nil, calibrationError("Scores must sum to 100")
	}
	return out, nil
}

// Calibrate stores a new calibration of the claim as the caller's key
// (identity.KeyFrom), its scores normalised by NormalizeScores, and makes
// its TopDomain the claim's domain in the same atomic step: the claim is
// listed and its open slots are offered under the new domain from then
// on. ErrClaimNotFound for no claim.
func (s *Service) Calibrate(ctx context.Context, claimID string, scores []NewCalibrationScore) (_ Calibration, err error) {
	ctx, done := s.obs.Call(ctx, "slots.Calibrate")
	defer func() { done(err) }()
	editor, err := identity.KeyFrom(ctx)
	if err != nil {
		return Calibration{}, err
	}
	kept, err := NormalizeScores(scores)
	if err != nil {
		return Calibration{}, err
	}
	c := Calibration{ID: s.ids.New("calibration"), ClaimID: claimID, Scores: kept, Total: CalibrationTotal,
		EditorID: editor.ID, EditorName: editor.Name, CreatedAt: s.clock()}
	if err := s.store.AddCalibration(ctx, c); err != nil {
		return Calibration{}, err
	}
	PublishClaimChange(ctx, s.notifier, claimID)
	return c, nil
}

// Calibrations lists the claim's newest calibrations, newest first, as the
// original's GET /claims/{id}/calibrations does: at most limit of them,
// DefaultCalibrationsLimit when limit is 0 or less, MaxCalibrationsLimit
// when it is more. ErrClaimNotFound for no claim.
func (s *Service) Calibrations(ctx context.Context, claimID string, limit int) (_ []Calibration, err error) {
	ctx, done := s.obs.Call(ctx, "slots.Calibrations")
	defer func() { done(err) }()
	if limit <= 0 {
		limit = DefaultCalibrationsLimit
	}
	return s.store.ListCalibrations(ctx, claimID, min(limit, MaxCalibrationsLimit))
}
