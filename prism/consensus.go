package prism

import "math"

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
	// Summary is the summary of the first submission that made the
	// majority recommendation, or for a summary layer (EffectSummary) the
	// submissions' summaries joined.
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

// Synthesis is one consensus submission of the synthesis layer.
type Synthesis struct {
	Summary        string  // the submission's "summary" output field
	Recommendation string  // the submission's "recommendation" output field
	Confidence     float64 // the submission's confidence, 0 to 1
}

// NewConsensusRecord combines the synthesis submissions, in submission
// order: the majority recommendation, the summary of the first submission
// that recommended it, and the average confidence as a whole percentage.
func NewConsensusRecord(subs []Synthesis) ConsensusRecord {
	recs := make([]string, len(subs))
	confs := make([]float64, len(subs))
	for i, s := range subs {
		recs[i], confs[i] = s.Recommendation, s.Confidence
	}
	r := ConsensusRecord{Recommendation: Majority(recs), Confidence: Percent(Average(confs))}
	for _, s := range subs {
		if s.Recommendation == r.Recommendation {
			r.Summary = s.Summary
			break
		}
	}
	return r
}
