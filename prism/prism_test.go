package prism_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

func TestPrismV1IsTheTable(t *testing.T) {
	p := prism.PrismV1()
	require.NoError(t, p.Validate())
	want := []struct {
		name      string
		work      int
		consensus int
	}{{"Framing", 2, 2}, {"Classification", 2, 2}, {"Evidence", 3, 2}, {"Critique", 3, 2}, {"Defense", 2, 2}, {"Deliberation", 6, 3}, {"Synthesis", 0, 3}}
	require.Len(t, p.Layers, 7)
	for i, w := range want {
		l := p.Layers[i]
		require.Equal(t, i+1, l.Number)
		require.Equal(t, w.name, l.Name)
		require.Equal(t, w.work, l.WorkSlots(), l.Name)
		require.Equal(t, w.consensus, l.ConsensusSlots, l.Name)
		require.Equal(t, 0.7, l.Threshold)
	}
	require.Equal(t, []slots.RoleCount{{Role: "critic", Count: 2}, {Role: "questioner", Count: 2}, {Role: "supporter", Count: 1}, {Role: "counter", Count: 1}}, p.Layers[5].WorkRoles)
	require.Equal(t, prism.EffectDomain, p.Layers[1].Effect)
	require.Equal(t, prism.EffectConsensus, p.Layers[6].Effect)
	require.Equal(t, prism.OutputConsensus, p.Layers[6].OutputFrom)
	require.Equal(t, prism.OutputNone, p.Layers[0].OutputFrom)

	// Each call is a fresh copy.
	p.Layers[0].Name = "changed"
	require.Equal(t, "Framing", prism.PrismV1().Layers[0].Name)
}

func TestProtocolValidate(t *testing.T) {
	mutate := func(f func(p *prism.Protocol)) prism.Protocol {
		p := prism.PrismV1()
		f(&p)
		return p
	}
	for name, p := range map[string]prism.Protocol{
		"no id":             mutate(func(p *prism.Protocol) { p.ID = "" }),
		"no layers":         mutate(func(p *prism.Protocol) { p.Layers = nil }),
		"misnumbered":       mutate(func(p *prism.Protocol) { p.Layers[2].Number = 7 }),
		"bad role":          mutate(func(p *prism.Protocol) { p.Layers[0].WorkRoles = []slots.RoleCount{{Role: "judge", Count: 1}} }),
		"no consensus":      mutate(func(p *prism.Protocol) { p.Layers[0].ConsensusSlots = 0 }),
		"threshold > 1":     mutate(func(p *prism.Protocol) { p.Layers[0].Threshold = 1.5 }),
		"threshold NaN":     mutate(func(p *prism.Protocol) { p.Layers[0].Threshold = nan() }),
		"enum no values":    mutate(func(p *prism.Protocol) { p.Layers[2].Output["strength"] = prism.Field{Type: prism.TypeEnum} }),
		"bad field type":    mutate(func(p *prism.Protocol) { p.Layers[2].Output["x"] = prism.Field{Type: "number"} }),
		"domain no field":   mutate(func(p *prism.Protocol) { p.Layers[1].Output = prism.Shape{"topic": {Type: prism.TypeString}} }),
		"work output none":  mutate(func(p *prism.Protocol) { p.Layers[6].OutputFrom = prism.OutputWork }),
		"unknown effect":    mutate(func(p *prism.Protocol) { p.Layers[0].Effect = "explode" }),
		"shape without src": mutate(func(p *prism.Protocol) { p.Layers[2].OutputFrom = prism.OutputNone }),
		// Text a backend would refuse (PostgreSQL: NUL) or alter (JSON:
		// bytes that are not UTF-8) is refused before any stores it.
		"NUL in the id":       mutate(func(p *prism.Protocol) { p.ID = "mine\x00" }),
		"id not UTF-8":        mutate(func(p *prism.Protocol) { p.ID = "mine\xff" }),
		"NUL in the name":     mutate(func(p *prism.Protocol) { p.Name = "Mine\x00" }),
		"NUL in a layer name": mutate(func(p *prism.Protocol) { p.Layers[3].Name = "Crit\x00ique" }),
		"NUL in a field name": mutate(func(p *prism.Protocol) { p.Layers[2].Output["x\x00"] = prism.Field{Type: prism.TypeString} }),
		"enum value not UTF-8": mutate(func(p *prism.Protocol) {
			p.Layers[2].Output["strength"] = prism.Field{Type: prism.TypeEnum, Values: []string{"\xff"}}
		}),
	} {
		err := p.Validate()
		require.ErrorIs(t, err, store.ErrInvalid, name)
	}
}

func nan() float64 {
	var zero float64
	return zero / zero
}

func TestShapeValidate(t *testing.T) {
	l4 := prism.PrismV1().Layers[3].Output
	got, err := l4.Validate(json.RawMessage(`{"weaknesses":["small n"],"questions":[],"severity":"high"}`))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"weaknesses": []string{"small n"}, "questions": []string{}, "severity": "high"}, got)
	for _, bad := range []string{
		``, `null`, `[]`, `"x"`, `{}`,
		`{"weaknesses":["a"],"questions":[],"severity":"extreme"}`,
		`{"weaknesses":"a","questions":[],"severity":"high"}`,
		`{"weaknesses":[1],"questions":[],"severity":"high"}`,
		`{"weaknesses":null,"questions":[],"severity":"high"}`,
		`{"weaknesses":[],"questions":[],"severity":"high","extra":1}`,
		`{"weaknesses":[],"severity":"high"}`,
	} {
		_, err := l4.Validate(json.RawMessage(bad))
		require.ErrorIs(t, err, store.ErrInvalid, bad)
	}
	l2 := prism.PrismV1().Layers[1].Output
	_, err = l2.Validate(json.RawMessage(`{"domain":"  "}`))
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = l2.Validate(json.RawMessage(`{"domain":"` + strings.Repeat("x", prism.MaxOutputBytes) + `"}`))
	require.ErrorIs(t, err, store.ErrInvalid)
}

func TestNormalizeDomain(t *testing.T) {
	for in, want := range map[string]string{
		"Cognitive Ethology":      "cognitive-ethology",
		"public_policy":           "public-policy",
		"  Machine--Learning!  ":  "machine-learning",
		"Économie Politique":      "economie-politique",
		"naïve  café -- crème":    "naive-cafe-creme",
		"---":                     "",
		"C++ & Go":                "c-go",
		"quantum-physics":         "quantum-physics",
		"Ñandú_2024":              "nandu-2024",
		"tab\tand\nnewline":       "tab-and-newline",
		"медицина":                "",
		"_leading and trailing_ ": "leading-and-trailing",
	} {
		require.Equal(t, want, prism.NormalizeDomain(in), in)
	}
}

// FuzzNormalizeDomain checks the slug's invariants on any input.
func FuzzNormalizeDomain(f *testing.F) {
	for _, s := range []string{"Cognitive Ethology", "Économie", "a--b", "-", "\xff\xfe", "x_y z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := prism.NormalizeDomain(in)
		if !utf8.ValidString(out) || strings.HasPrefix(out, "-") || strings.HasSuffix(out, "-") || strings.Contains(out, "--") {
			t.Fatalf("%q -> %q", in, out)
		}
		for _, r := range out {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				t.Fatalf("%q -> %q has %q", in, out, r)
			}
		}
		if again := prism.NormalizeDomain(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, again)
		}
	})
}

func TestMajorityAndConsensus(t *testing.T) {
	require.Equal(t, "", prism.Majority(nil))
	require.Equal(t, "b", prism.Majority([]string{"a", "b", "b"}))
	require.Equal(t, "a", prism.Majority([]string{"a", "b"}), "ties go to the earliest submission")
	require.Equal(t, "b", prism.Majority([]string{"b", "a", "a", "b"}))
	require.InDelta(t, 0.75, prism.Average([]float64{0.5, 1}), 1e-9)
	require.Zero(t, prism.Average(nil))
	l := prism.PrismV1().Layers[0]
	require.True(t, l.Passes(0.7))
	require.False(t, l.Passes(0.6999))

	// As the original's final layer: every summary given, joined; the
	// majority's recommendation; the average confidence.
	r := prism.NewConsensusRecord([]prism.Synthesis{
		{Summary: "weak", Recommendation: "reject", Prose: "p1", Confidence: new(0.6)},
		{Summary: " holds ", Recommendation: "accept", Prose: "p2", Confidence: new(0.9)},
		{Summary: "", Recommendation: "accept", Prose: "p3", Confidence: new(0.9)},
	})
	require.Equal(t, "accept", r.Recommendation)
	require.Equal(t, "weak\n\n---\n\nholds", r.Summary, "the summaries given, in submission order")
	require.Equal(t, 80.0, r.Confidence, "a whole percentage, as the original's Math.round(avg * 100): not 79.99999999999999")

	r = prism.NewConsensusRecord([]prism.Synthesis{{Prose: " a "}, {Prose: "b", Recommendation: "reject"}, {}})
	require.Equal(t, "a\n\n---\n\nb", r.Summary, "no summary given: the prose")
	require.Equal(t, "reject", r.Recommendation, "the majority of those given")

	r = prism.NewConsensusRecord([]prism.Synthesis{
		{Summary: "a", Recommendation: "accept", Confidence: new(0.71)},
		{Summary: "b", Recommendation: "accept", Confidence: new(0.72)},
		{Summary: "c", Recommendation: "accept", Confidence: new(0.72)},
	})
	require.Equal(t, 72.0, r.Confidence, "71.67 rounds to 72")
}
