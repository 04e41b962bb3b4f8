package prism

import (
	"math"
	"strings"
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

// ConsensusRecord is what Synthesis writes for a claim.
type ConsensusRecord struct {
	// Summary is the submissions' summaries joined (NewConsensusRecord).
	Summary string `json:"summary"`
	// Recommendation is the majority of the submissions'
	// recommendations; empty when none gave one.
	Recommendation string `json:"recommendation"`
	// Confidence is the layer's average consensus confidence as a whole
	// percentage, 0 to 100 (Percent).
	Confidence float64 `json:"confidence"`
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
