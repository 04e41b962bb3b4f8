package prism

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agorahq/agora/internal/jsmath"
	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// Majority returns the value submitted most often, values being in
// submission order; a tie goes to the value submitted first. It returns ""
// for no values.
func Majority(values []string) string {
	count := map[string]int{}
	best, bestN := "", 0
	for _, v := range values {
		count[v]++
	}
	// Walking in submission order, a later value only wins with strictly
	// more votes: ties stay with the earliest.
	for _, v := range values {
		if n := count[v]; n > bestN {
			best, bestN = v, n
		}
	}
	return best
}

// Average returns the mean of confidences, or 0 for none.
func Average(confidences []float64) float64 {
	if len(confidences) == 0 {
		return 0
	}
	sum := 0.0
	for _, c := range confidences {
		sum += c
	}
	return sum / float64(len(confidences))
}

// Passes reports whether a layer's average consensus confidence clears its
// threshold.
func (l Layer) Passes(avg float64) bool { return avg >= l.Threshold }

// ConsensusRecord is a claim's consensus: what a pipeline's synthesis or
// summary layer writes (Pipeline.Consensus), or what an agent posts
// (Service.PostConsensus).
type ConsensusRecord struct {
	// ID is the service's, "consensus_" and 24 hex digits; empty for a
	// pipeline's record written before records had IDs.
	ID string `json:"id,omitempty"`
	// Summary is the pipeline's submissions' summaries joined
	// (NewConsensusRecord), or the poster's summary.
	Summary string `json:"summary"`
	// Recommendation is the majority of the submissions'
	// recommendations; empty when none gave one, and on a posted record.
	Recommendation string `json:"recommendation"`
	// Confidence is a whole percentage, 0 to 100: the layer's average
	// consensus confidence (Percent), or the poster's.
	Confidence float64 `json:"confidence"`
	// KeyPoints are the prose of the recording layer's consensus seats,
	// or the poster's points; nil on a pipeline's record written before
	// they were kept (Pipeline.ConsensusRecord fills them in).
	KeyPoints []string `json:"keyPoints,omitempty"`
	// Dissent and OpenQuestions are a posted record's; nil when it gave
	// none, and on a pipeline's record.
	Dissent       []string `json:"dissent,omitempty"`
	OpenQuestions []string `json:"openQuestions,omitempty"` // see Dissent
	// Author is the agent that posted the record or, on a pipeline's, the
	// recording layer's first consensus seat (as the original's); zero on
	// a pipeline's record written before it was kept.
	Author slots.Agent `json:"author,omitzero"`
	// CreatedAt is when the record was written, UTC to the millisecond;
	// zero on a pipeline's record written before it was kept.
	CreatedAt time.Time `json:"createdAt,omitzero"`
}

// Clone returns a copy of r that shares none of its lists.
func (r ConsensusRecord) Clone() ConsensusRecord {
	r.KeyPoints, r.Dissent, r.OpenQuestions = slices.Clone(r.KeyPoints), slices.Clone(r.Dissent), slices.Clone(r.OpenQuestions)
	return r
}

// Limits of the consensus records.
const (
	// MaxConsensusText is the most characters of a posted record's
	// summary and of each of its points.
	MaxConsensusText = 50_000
	// MaxConsensusPoints is the most items of each of a posted record's
	// KeyPoints, Dissent and OpenQuestions.
	MaxConsensusPoints = 100
	// DefaultConsensusHistory and MaxConsensusHistory are how many
	// records Service.ConsensusHistory lists when not told, and at most,
	// as the original's history lists.
	DefaultConsensusHistory = 20
	MaxConsensusHistory     = 100 // see DefaultConsensusHistory
)

// NewConsensus is a consensus record an agent posts for a claim
// (Service.PostConsensus), in the original's terms.
type NewConsensus struct {
	ClaimID string // the claim it concludes
	// Summary is required; it is kept trimmed.
	Summary string
	// KeyPoints are required: at least one not blank. Each is trimmed
	// and blank ones dropped, as are Dissent's and OpenQuestions'.
	KeyPoints     []string
	Dissent       []string // optional; see KeyPoints
	OpenQuestions []string // optional; see KeyPoints
	// Confidence is required, from 0 to 100; it is rounded to a whole
	// number, half up.
	Confidence *float64
}

// Errors of posted consensus records, with the original's codes.
var (
	ErrConsensusNotFound = &store.Error{Kind: store.ErrNotFound, Code: "consensus_not_found", Message: "Consensus not found"}
	errConsensusMissing  = &store.Error{Kind: store.ErrInvalid, Code: "invalid_payload", Message: "Missing summary or keyPoints"}
)

// consensusInvalid is the original's refusal of a posted record that
// breaks one of its rules.
func consensusInvalid(msg string) error {
	return &store.Error{Kind: store.ErrInvalid, Code: "consensus_create_failed", Message: msg}
}

// record checks in as the original does and returns the record it makes,
// without ID, author and time.
func (in NewConsensus) record() (ConsensusRecord, error) {
	if in.Summary == "" || len(in.KeyPoints) == 0 {
		return ConsensusRecord{}, errConsensusMissing
	}
	summary, err := text.Trimmed("summary", in.Summary, false, MaxConsensusText)
	if err != nil {
		return ConsensusRecord{}, err
	}
	if summary == "" {
		return ConsensusRecord{}, consensusInvalid("Summary is required")
	}
	rec := ConsensusRecord{Summary: summary}
	for _, l := range []struct {
		field string
		in    []string
		out   *[]string
	}{{"keyPoints", in.KeyPoints, &rec.KeyPoints}, {"dissent", in.Dissent, &rec.Dissent}, {"openQuestions", in.OpenQuestions, &rec.OpenQuestions}} {
		if len(l.in) > MaxConsensusPoints {
			return ConsensusRecord{}, store.Errorf(store.ErrInvalid, "invalid_"+l.field, "%s has %d items; the limit is %d", l.field, len(l.in), MaxConsensusPoints)
		}
		for _, item := range l.in {
			item, err := text.Trimmed(l.field, item, false, MaxConsensusText)
			if err != nil {
				return ConsensusRecord{}, err
			}
			if item != "" {
				*l.out = append(*l.out, item)
			}
		}
	}
	if len(rec.KeyPoints) == 0 {
		return ConsensusRecord{}, consensusInvalid("Key points are required")
	}
	if in.Confidence == nil {
		return ConsensusRecord{}, consensusInvalid("Confidence is required: a number from 0 to 100")
	}
	// Math.round, as the original.
	c := jsmath.Round(*in.Confidence)
	if math.IsNaN(c) || c < 0 || c > 100 {
		return ConsensusRecord{}, consensusInvalid("Confidence must be between 0 and 100")
	}
	rec.Confidence = c
	return rec, nil
}

// Percent returns a confidence from 0 to 1 as the consensus record holds
// it: a whole percentage, rounded half up as the original's
// Math.round(avg * 100), so 0.8 is 80 and not 80.00000000000001.
func Percent(confidence float64) float64 { return math.Round(confidence * 100) }

// Synthesis is one submission of the layer that records the consensus.
type Synthesis struct {
	Summary        string   // its output's "summary" field, when a string
	Recommendation string   // its output's "recommendation" field, when a string
	Prose          string   // its body
	Confidence     *float64 // its confidence, 0 to 1; nil when it gave none
}

// NewConsensusRecord combines a layer's submissions, in submission order,
// as the original's final layer does: the summaries given, trimmed and
// joined by "\n\n---\n\n" (the prose when no summary was given), the
// majority of the recommendations given, and the average of the
// confidences given as a whole percentage.
func NewConsensusRecord(subs []Synthesis) ConsensusRecord {
	var summaries, prose, recs []string
	var confs []float64
	for _, s := range subs {
		if v := strings.TrimSpace(s.Summary); v != "" {
			summaries = append(summaries, v)
		}
		if v := strings.TrimSpace(s.Recommendation); v != "" {
			recs = append(recs, v)
		}
		if v := strings.TrimSpace(s.Prose); v != "" {
			prose = append(prose, v)
		}
		if s.Confidence != nil {
			confs = append(confs, *s.Confidence)
		}
	}
	if len(summaries) == 0 {
		summaries = prose
	}
	return ConsensusRecord{Summary: strings.Join(summaries, "\n\n---\n\n"), Recommendation: Majority(recs), Confidence: Percent(Average(confs))}
}
