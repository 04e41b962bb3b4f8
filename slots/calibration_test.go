package slots_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

func sc(domain string, score float64) slots.NewCalibrationScore {
	return slots.NewCalibrationScore{Domain: domain, Score: score}
}

func kept(pairs ...any) []slots.CalibrationScore {
	out := []slots.CalibrationScore{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, slots.CalibrationScore{Domain: pairs[i].(string), Score: pairs[i+1].(int)})
	}
	return out
}

// TestNormalizeScores walks every rule of a calibration's scores, with
// the original's rounding, order of checks and messages.
func TestNormalizeScores(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		in   []slots.NewCalibrationScore
		want []slots.CalibrationScore
	}{
		"the skill's example":         {[]slots.NewCalibrationScore{sc("statistics", 60), sc("information-theory", 40)}, kept("statistics", 60, "information-theory", 40)},
		"trimmed":                     {[]slots.NewCalibrationScore{sc("  logic\t", 100)}, kept("logic", 100)},
		"rounded halves up":           {[]slots.NewCalibrationScore{sc("a", 2.5), sc("b", 97.4999)}, kept("a", 3, "b", 97)},
		"Math.round, not Floor(x+.5)": {[]slots.NewCalibrationScore{sc("a", 0.49999999999999994), sc("b", 100)}, kept("b", 100)},
		"negative halves round to 0":  {[]slots.NewCalibrationScore{sc("a", -0.5), sc("b", 100)}, kept("b", 100)},
		"up to 100.4":                 {[]slots.NewCalibrationScore{sc("a", 100.4)}, kept("a", 100)},
		"empty domains dropped":       {[]slots.NewCalibrationScore{sc("", 500), sc("   ", -3), sc("a", 100)}, kept("a", 100)},
		"zero scores dropped":         {[]slots.NewCalibrationScore{sc("a", 0), sc("b", 100), sc("a", 0.2)}, kept("b", 100)},
		"a zero score repeats freely": {[]slots.NewCalibrationScore{sc("a", 100), sc("a", 0)}, kept("a", 100)},
		"in the order given":          {[]slots.NewCalibrationScore{sc("z", 10), sc("a", 90)}, kept("z", 10, "a", 90)},
		"a domain of the limit":       {[]slots.NewCalibrationScore{sc(strings.Repeat("é", slots.MaxDomainLen), 100)}, kept(strings.Repeat("é", slots.MaxDomainLen), 100)},
		"as many entries as allowed":  {append(make([]slots.NewCalibrationScore, slots.MaxCalibrationScores-1), sc("a", 100)), kept("a", 100)},
	} {
		got, err := slots.NormalizeScores(c.in)
		require.NoError(t, err, name)
		require.Equal(t, c.want, got, name)
	}

	many := make([]slots.NewCalibrationScore, slots.MaxCalibrationScores+1)
	for name, c := range map[string]struct {
		in            []slots.NewCalibrationScore
		code, message string
	}{
		"none sent":           {nil, "invalid_payload", "Missing scores"},
		"too many":            {many, "too_many_scores", "at most 100 scores may be given"},
		"empty":               {[]slots.NewCalibrationScore{}, slots.CodeCalibrationFailed, "At least one domain is required"},
		"all dropped":         {[]slots.NewCalibrationScore{sc("", 100), sc("a", 0)}, slots.CodeCalibrationFailed, "At least one domain is required"},
		"above 100":           {[]slots.NewCalibrationScore{sc("a", 100.5)}, slots.CodeCalibrationFailed, "Scores must be between 0 and 100"},
		"below 0":             {[]slots.NewCalibrationScore{sc("b", 100), sc("a", -0.6)}, slots.CodeCalibrationFailed, "Scores must be between 0 and 100"},
		"NaN":                 {[]slots.NewCalibrationScore{sc("b", 100), sc("a", math.NaN())}, slots.CodeCalibrationFailed, "Scores must be between 0 and 100"},
		"infinite":            {[]slots.NewCalibrationScore{sc("a", math.Inf(1))}, slots.CodeCalibrationFailed, "Scores must be between 0 and 100"},
		"range before total":  {[]slots.NewCalibrationScore{sc("a", 101), sc("a", 1)}, slots.CodeCalibrationFailed, "Scores must be between 0 and 100"},
		"duplicate":           {[]slots.NewCalibrationScore{sc("a", 50), sc(" a ", 50)}, slots.CodeCalibrationFailed, "Duplicate domain"},
		"duplicate first":     {[]slots.NewCalibrationScore{sc("a", 10), sc("a", 10)}, slots.CodeCalibrationFailed, "Duplicate domain"},
		"short of 100":        {[]slots.NewCalibrationScore{sc("a", 60), sc("b", 39.4)}, slots.CodeCalibrationFailed, "Scores must sum to 100"},
		"over 100":            {[]slots.NewCalibrationScore{sc("a", 60), sc("b", 40.5)}, slots.CodeCalibrationFailed, "Scores must sum to 100"},
		"a domain too long":   {[]slots.NewCalibrationScore{sc(strings.Repeat("x", slots.MaxDomainLen+1), 100)}, "invalid_domain", "domain is 101 characters long; the limit is 100"},
		"a NUL in a domain":   {[]slots.NewCalibrationScore{sc("a\x00b", 100)}, "invalid_domain", "domain contains a NUL character"},
		"a domain not UTF-8":  {[]slots.NewCalibrationScore{sc("a\xffb", 100)}, "invalid_domain", "domain is not valid UTF-8"},
		"the text rule first": {[]slots.NewCalibrationScore{sc("a\x00", 50), sc("a\x00", 50)}, "invalid_domain", "domain contains a NUL character"},
	} {
		_, err := slots.NormalizeScores(c.in)
		require.ErrorIs(t, err, store.ErrInvalid, name)
		var se *store.Error
		require.ErrorAs(t, err, &se, name)
		require.Equal(t, c.code, se.Code, name)
		require.Equal(t, c.message, se.Message, name)
	}
}

func TestTopDomain(t *testing.T) {
	t.Parallel()
	for want, s := range map[string][]slots.CalibrationScore{
		"statistics": kept("statistics", 60, "information-theory", 40),
		"b":          kept("a", 20, "b", 40, "c", 40),
		"only":       kept("only", 100),
		"":           nil,
	} {
		require.Equal(t, want, slots.Calibration{Scores: s}.TopDomain())
	}
}

// FuzzNormalizeScores: whatever the input, NormalizeScores answers
// store.ErrInvalid or scores of distinct, trimmed, non-empty domains, each
// 1 to 100, that add up to 100, and never panics.
func FuzzNormalizeScores(f *testing.F) {
	f.Add("statistics", 60.0, "information-theory", 40.0)
	f.Add(" a ", 99.5, "a", 0.4)
	f.Add("a\x00", 100.0, "", 0.0)
	f.Fuzz(func(t *testing.T, d1 string, s1 float64, d2 string, s2 float64) {
		got, err := slots.NormalizeScores([]slots.NewCalibrationScore{sc(d1, s1), sc(d2, s2)})
		if err != nil {
			require.ErrorIs(t, err, store.ErrInvalid)
			return
		}
		total := 0
		seen := map[string]bool{}
		for _, s := range got {
			require.Equal(t, strings.TrimSpace(s.Domain), s.Domain)
			require.NotEmpty(t, s.Domain)
			require.False(t, seen[s.Domain])
			seen[s.Domain] = true
			require.True(t, s.Score >= 1 && s.Score <= 100, "%d", s.Score)
			total += s.Score
		}
		require.Equal(t, slots.CalibrationTotal, total)
	})
}
