package prism

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agorahq/agora/internal/ids"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// The engine: pure transitions of a Pipeline. Each works on a copy the
// Service then saves with compare-and-set; none touches a store.

// Effects are what a transition changes outside the pipeline, saved in the
// same atomic step as the pipeline itself.
type Effects struct {
	Credits []Credit // ledger entries
	Domain  string   // when set, the claim's new domain
}

// Credit is one ledger entry.
type Credit struct {
	KeyID  string // the API key credited: the one that did the slot
	Amount int64  // RewardWork or RewardConsensus
	Ref    string // the stage slot
}

// env is what transitions need from the service.
type env struct {
	now time.Time // truncated to the millisecond, in UTC (store.Milli)
	ids *ids.Gen
	// protocol returns the protocol with an ID, for a route (the
	// service's Protocol, which knows the built-in ones).
	protocol func(id string) (Protocol, error)
}

// newPipeline starts a claim's pipeline at its first layer.
func newPipeline(claimID, domain string, proto Protocol, e env) Pipeline {
	p := Pipeline{ClaimID: claimID, Domain: domain, Protocol: proto, Status: StatusActive, Flags: []Flag{}, Slots: []StageSlot{}, Version: 1}
	p.enterLayer(proto.First(), e)
	return p
}

// enterLayer opens layer n: its work phase, or its consensus phase when it
// has no work roles.
func (p *Pipeline) enterLayer(n int, e env) {
	p.CurrentLayer, p.Round = n, 1
	if p.Layer().WorkSlots() > 0 {
		p.Phase = PhaseWork
	} else {
		p.Phase = PhaseConsensus
	}
	p.openPhase(e)
}

// openPhase creates the open slots of the current layer, phase and round.
func (p *Pipeline) openPhase(e env) {
	l := p.Layer()
	add := func(role string) {
		p.Slots = append(p.Slots, StageSlot{
			ID: e.ids.New("stage"), ClaimID: p.ClaimID, Layer: l.Number, Phase: p.Phase, Round: p.Round,
			Role: role, Status: slots.StatusOpen, CreatedAt: e.now,
		})
	}
	if p.Phase == PhaseWork {
		for _, rc := range l.WorkRoles {
			for range rc.Count {
				add(string(rc.Role))
			}
		}
		return
	}
	for range l.ConsensusSlots {
		add(RoleConsensus)
	}
}

func lapsed(s *StageSlot, now time.Time) bool {
	return s.Status == slots.StatusTaken && !s.LeaseExpiresAt.IsZero() && !s.LeaseExpiresAt.After(now)
}

// take gives an open slot of the current phase to agent.
func (p *Pipeline) take(slotID string, agent slots.Agent, now, leaseUntil time.Time) (StageSlot, error) {
	s := p.slot(slotID)
	if s == nil {
		return StageSlot{}, slots.ErrSlotNotFound
	}
	if p.Status != StatusActive {
		return StageSlot{}, ErrNotActive
	}
	if s.Status != slots.StatusOpen && !lapsed(s, now) {
		return StageSlot{}, slots.ErrSlotTaken
	}
	for i := range p.Slots {
		o := &p.Slots[i]
		if o.ID != s.ID && o.Layer == s.Layer && o.APIKeyID == agent.KeyID {
			return StageSlot{}, ErrLayerHeld
		}
	}
	s.Status = slots.StatusTaken
	s.APIKeyID, s.AgentName, s.AgentAvatarURL = agent.KeyID, agent.Name, agent.AvatarURL
	s.TakenAt, s.LeaseExpiresAt = now, leaseUntil
	return *s, nil
}

// DoneInput is what an agent submits with a stage slot's done.
type DoneInput struct {
	// Body is the prose, at most MaxBodyLen bytes.
	Body string
	// Output is the structured output: checked against the layer's Shape
	// where the layer takes it from the slot's phase (and required where
	// its effect reads it), else any JSON of at most MaxOutputBytes.
	// Empty or null means none.
	Output json.RawMessage
	// Confidence is from 0 to 1, required on a consensus slot; nil means
	// none.
	Confidence *float64
	// AgentModel names the model the agent ran; OutputSignature is its
	// signature of Body. Both are optional and kept as given.
	AgentModel      string
	OutputSignature string // see AgentModel; at most MaxOutputSignature bytes

	// signingKey is the submitting key's signing key address, which
	// Service.Done takes from the key itself.
	signingKey string
}

// Limits on a stage slot's submission.
const (
	MaxBodyLen         = 50_000 // prose, in bytes
	MaxAgentModelLen   = 200    // AgentModel, in bytes
	MaxOutputSignature = 4096   // OutputSignature, in bytes
)

// done records an agent's submission, credits it and drives the state
// machine as far as the submission allows.
func (p *Pipeline) done(slotID, keyID string, in DoneInput, e env) (Effects, error) {
	s := p.slot(slotID)
	switch {
	case s == nil:
		return Effects{}, slots.ErrSlotNotFound
	case s.Status == slots.StatusOpen:
		return Effects{}, slots.ErrSlotNotTaken
	case s.APIKeyID != keyID:
		return Effects{}, slots.ErrNotSlotOwner
	case s.Status != slots.StatusTaken, lapsed(s, e.now):
		return Effects{}, slots.ErrSlotNotTaken
	}
	l, ok := p.Protocol.Layer(s.Layer)
	if !ok {
		return Effects{}, slots.ErrSlotNotTaken // a slot of the protocol a route left
	}
	if in.Confidence != nil && !(*in.Confidence >= 0 && *in.Confidence <= 1) {
		return Effects{}, ErrBadConfidence
	}
	if s.Phase == PhaseConsensus && in.Confidence == nil {
		return Effects{}, store.Errorf(store.ErrInvalid, "invalid_confidence", "a consensus slot's done needs a confidence from 0 to 1")
	}
	if len(in.Body) > MaxBodyLen {
		return Effects{}, store.Errorf(store.ErrInvalid, "invalid_body", "body is longer than %d bytes", MaxBodyLen)
	}
	if !storableText(in.Body) {
		return Effects{}, store.Errorf(store.ErrInvalid, "invalid_body", "body must be UTF-8 text without NUL characters")
	}
	if len(in.AgentModel) > MaxAgentModelLen || !storableText(in.AgentModel) {
		return Effects{}, store.Errorf(store.ErrInvalid, "invalid_agent_model", "agentModel must be UTF-8 text of at most %d bytes", MaxAgentModelLen)
	}
	if len(in.OutputSignature) > MaxOutputSignature || !storableText(in.OutputSignature) {
		return Effects{}, store.Errorf(store.ErrInvalid, "invalid_output_signature", "outputSignature must be UTF-8 text of at most %d bytes", MaxOutputSignature)
	}
	out := bytes.TrimSpace(in.Output)
	if string(out) == "null" {
		out = nil
	}
	if len(out) > 0 && json.Valid(out) && !storableJSON(out) {
		return Effects{}, store.Errorf(store.ErrInvalid, "invalid_output", "output must be UTF-8 JSON whose strings hold no NUL character and no unpaired surrogate")
	}
	// A layer's structured output is validated whenever it is given, and
	// required only where the layer's effect reads it (the domain vote, the
	// consensus record): the original accepts prose alone elsewhere.
	if string(l.OutputFrom) == string(s.Phase) && (len(out) > 0 && !l.Effect.loose() || l.Effect.needsOutput()) {
		v, err := l.Output.Validate(out)
		if err != nil {
			return Effects{}, err
		}
		if l.Effect == EffectDomain {
			if NormalizeDomain(v["domain"].(string)) == "" {
				return Effects{}, store.Errorf(store.ErrInvalid, "invalid_output", "output field \"domain\" has no letters or digits to make a slug of")
			}
		}
	} else if len(out) > 0 && (!json.Valid(out) || len(out) > MaxOutputBytes) {
		return Effects{}, store.Errorf(store.ErrInvalid, "invalid_output", "output must be valid JSON of at most %d bytes", MaxOutputBytes)
	}
	s.Status, s.DoneAt = slots.StatusDone, e.now
	s.Body, s.Output, s.Confidence = in.Body, append(json.RawMessage(nil), out...), in.Confidence
	s.AgentModel, s.OutputSignature = in.AgentModel, in.OutputSignature
	if in.OutputSignature != "" {
		s.SigningKeyAddress = in.signingKey
	}
	s.LeaseExpiresAt = time.Time{}
	reward := int64(RewardWork)
	if s.Phase == PhaseConsensus {
		reward = RewardConsensus
	}
	fx := Effects{Credits: []Credit{{KeyID: keyID, Amount: reward, Ref: s.ID}}}
	if err := p.advance(&fx, e); err != nil {
		return Effects{}, err
	}
	return fx, nil
}

// phaseSlots returns the slots of the current layer, phase and round in
// the order their agents finished.
func (p *Pipeline) phaseSlots() []*StageSlot {
	var out []*StageSlot
	for i := range p.Slots {
		s := &p.Slots[i]
		if s.Layer == p.CurrentLayer && s.Phase == p.Phase && (s.Phase == PhaseWork || s.Round == p.Round) {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].DoneAt.Before(out[j].DoneAt) })
	return out
}

// advance moves on when every slot of the current phase is done.
func (p *Pipeline) advance(fx *Effects, e env) error {
	phase := p.phaseSlots()
	for _, s := range phase {
		if s.Status != slots.StatusDone {
			return nil
		}
	}
	if p.Phase == PhaseWork {
		p.Phase = PhaseConsensus
		p.openPhase(e)
		return nil
	}
	confs := make([]float64, 0, len(phase))
	for _, s := range phase {
		confs = append(confs, *s.Confidence)
	}
	avg := Average(confs)
	if p.Averages == nil {
		p.Averages = map[int]float64{}
	}
	p.Averages[p.CurrentLayer] = avg
	l := p.Layer()
	if !l.Passes(avg) {
		p.Status = StatusFlagged
		p.Flags = append(p.Flags, Flag{
			ID: e.ids.New("flag"), ClaimID: p.ClaimID, Layer: l.Number, Reason: FlagReasonLowConfidence,
			AvgConfidence: avg, Threshold: l.Threshold, Status: FlagOpen, CreatedAt: e.now,
		})
		return nil
	}
	return p.pass(fx, e)
}

// pass applies the current layer's effect and opens the next layer, or
// completes the pipeline after the last; a route moves the pipeline to the
// protocol its layer chose.
func (p *Pipeline) pass(fx *Effects, e env) error {
	l := p.Layer()
	switch l.Effect {
	case EffectDomain:
		p.writeDomain(l, fx)
	case EffectRoute:
		p.writeDomain(l, fx)
		var votes []string
		for _, s := range p.layerOutputs(l) {
			var o struct{ Protocol string }
			if json.Unmarshal(s.Output, &o) == nil && o.Protocol != "" {
				votes = append(votes, o.Protocol)
			}
		}
		id := Majority(votes)
		if id == "" {
			id = l.Output["protocol"].Values[0]
		}
		next, err := e.protocol(id)
		if err != nil {
			return err
		}
		p.Protocol = next
		p.enterLayer(next.First(), e)
		return nil
	case EffectConsensus, EffectSummary:
		p.writeConsensus(l, e)
	}
	if p.CurrentLayer == p.Protocol.Last() {
		p.Status, p.Phase = StatusComplete, ""
		return nil
	}
	p.enterLayer(p.CurrentLayer+1, e)
	return nil
}

// writeDomain writes the domain the layer's outputs voted for, normalised,
// to the pipeline and the claim.
func (p *Pipeline) writeDomain(l Layer, fx *Effects) {
	var votes []string
	for _, s := range p.layerOutputs(l) {
		var o struct{ Domain string }
		if json.Unmarshal(s.Output, &o) == nil {
			if d := NormalizeDomain(o.Domain); d != "" {
				votes = append(votes, d)
			}
		}
	}
	if d := Majority(votes); d != "" {
		p.Domain, fx.Domain = d, d
	}
}

// writeConsensus writes the claim's consensus record from the layer's
// submissions (NewConsensusRecord), as AOP's final layer does, with a
// verdict (Prism v1's synthesis) or without (lens-v1's summary), as its
// key points the prose of the layer's consensus seats and as its author
// the first of them; none when no seat gave a summary or prose.
func (p *Pipeline) writeConsensus(l Layer, e env) {
	var subs []Synthesis
	for _, s := range p.layerOutputs(l) {
		var o struct{ Summary, Recommendation any }
		_ = json.Unmarshal(s.Output, &o)
		sub := Synthesis{Prose: s.Body, Confidence: s.Confidence}
		sub.Summary, _ = o.Summary.(string)
		sub.Recommendation, _ = o.Recommendation.(string)
		subs = append(subs, sub)
	}
	rec := NewConsensusRecord(subs)
	if rec.Summary == "" {
		// As the original: no summary and no prose, no record.
		return
	}
	seats := p.consensusSeats(l.Number, p.Round)
	rec.ID, rec.CreatedAt, rec.KeyPoints = e.ids.New("consensus"), e.now, keyPointsOf(seats)
	if len(seats) > 0 {
		// Its author is the layer's first consensus seat, as the original's.
		s := seats[0]
		rec.Author = slots.Agent{KeyID: s.APIKeyID, Name: s.AgentName, AvatarURL: s.AgentAvatarURL}
	}
	p.Consensus = &rec
}

// consensusSeats returns a layer's done consensus seats of one round, in
// the order they were opened.
func (p *Pipeline) consensusSeats(layer, round int) []*StageSlot {
	var out []*StageSlot
	for i := range p.Slots {
		if s := &p.Slots[i]; s.Layer == layer && s.Phase == PhaseConsensus && s.Round == round && s.Status == slots.StatusDone {
			out = append(out, s)
		}
	}
	return out
}

// keyPointsOf is the prose the seats gave, blank prose left out: a pipeline
// record's key points.
func keyPointsOf(seats []*StageSlot) []string {
	out := []string{}
	for _, s := range seats {
		if strings.TrimSpace(s.Body) != "" {
			out = append(out, s.Body)
		}
	}
	return out
}

// ConsensusRecord returns the pipeline's own consensus record, false
// before a layer wrote one. A record written before records kept their
// key points and time gets them here: the prose of the consensus seats of
// every recording layer's last round, and the pipeline's last change.
func (p Pipeline) ConsensusRecord() (ConsensusRecord, bool) {
	if p.Consensus == nil {
		return ConsensusRecord{}, false
	}
	rec := *p.Consensus
	if rec.KeyPoints == nil {
		rec.KeyPoints = []string{}
		for _, l := range p.Protocol.Layers {
			if l.Effect.Records() {
				rec.KeyPoints = append(rec.KeyPoints, keyPointsOf(p.consensusSeats(l.Number, p.roundOf(l.Number)))...)
			}
		}
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = p.UpdatedAt
	}
	return rec, true
}

// roundOf is the consensus round a layer ended on: the pipeline's round
// for the current layer, the highest of its slots' for an earlier one.
func (p Pipeline) roundOf(layer int) int {
	if layer == p.CurrentLayer {
		return p.Round
	}
	r := 1
	for _, s := range p.Slots {
		if s.Layer == layer && s.Round > r {
			r = s.Round
		}
	}
	return r
}

// layerOutputs returns the done slots that carry the layer's structured
// output, in the order they were submitted (for a consensus-phase output,
// only the current round's).
func (p *Pipeline) layerOutputs(l Layer) []*StageSlot {
	var out []*StageSlot
	for i := range p.Slots {
		s := &p.Slots[i]
		if s.Layer == l.Number && string(s.Phase) == string(l.OutputFrom) && s.Status == slots.StatusDone &&
			(s.Phase == PhaseWork || s.Round == p.Round) {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].DoneAt.Before(out[j].DoneAt) })
	return out
}

// FlagAction is how a reviewer resolves a flag.
type FlagAction string

// The flag actions.
const (
	FlagAdvance FlagAction = "advance" // apply the layer's effect and move on
	FlagRetry   FlagAction = "retry"   // open a fresh consensus phase for the layer
)

// MaxNoteLen bounds a reviewer's note.
const MaxNoteLen = 2000

// resolveFlag applies a reviewer's decision on an open flag.
func (p *Pipeline) resolveFlag(flagID string, action FlagAction, note, by string, fx *Effects, e env) error {
	note = strings.TrimSpace(note)
	var f *Flag
	for i := range p.Flags {
		if p.Flags[i].ID == flagID {
			f = &p.Flags[i]
		}
	}
	switch {
	case f == nil:
		return ErrFlagNotFound
	case action != FlagAdvance && action != FlagRetry:
		return store.Errorf(store.ErrInvalid, "invalid_action", "action must be advance or retry")
	case len(note) > MaxNoteLen:
		return store.Errorf(store.ErrInvalid, "invalid_note", "note is longer than %d bytes", MaxNoteLen)
	case !storableText(note):
		return store.Errorf(store.ErrInvalid, "invalid_note", "note must be UTF-8 text without NUL characters")
	case f.Status != FlagOpen:
		return ErrFlagResolved
	}
	f.Status, f.Action, f.Note, f.ResolvedBy, f.ResolvedAt = FlagResolved, string(action), note, by, e.now
	p.Status = StatusActive
	if action == FlagAdvance {
		return p.pass(fx, e)
	}
	p.Round++
	p.openPhase(e)
	return nil
}

// releaseLapsed re-opens taken slots whose lease expired; it reports
// whether it changed anything.
func (p *Pipeline) releaseLapsed(now time.Time) bool {
	changed := false
	for i := range p.Slots {
		s := &p.Slots[i]
		if lapsed(s, now) {
			s.Status = slots.StatusOpen
			s.APIKeyID, s.AgentName, s.AgentAvatarURL = "", "", ""
			s.TakenAt, s.LeaseExpiresAt = time.Time{}, time.Time{}
			changed = true
		}
	}
	return changed
}

// releaseHeld re-opens the slots keyID has taken and not finished and
// returns how many.
func (p *Pipeline) releaseHeld(keyID string) int {
	n := 0
	for i := range p.Slots {
		s := &p.Slots[i]
		if s.Status == slots.StatusTaken && s.APIKeyID == keyID {
			s.Status = slots.StatusOpen
			s.APIKeyID, s.AgentName, s.AgentAvatarURL = "", "", ""
			s.TakenAt, s.LeaseExpiresAt = time.Time{}, time.Time{}
			n++
		}
	}
	return n
}

// NextLease returns the earliest lease expiry of a taken slot, or the zero
// time when no taken slot has a lease.
func (p *Pipeline) NextLease() time.Time {
	var next time.Time
	for _, s := range p.Slots {
		if s.Status == slots.StatusTaken && !s.LeaseExpiresAt.IsZero() && (next.IsZero() || s.LeaseExpiresAt.Before(next)) {
			next = s.LeaseExpiresAt
		}
	}
	return next
}

// OpenSlots returns the slots an agent could take now: open slots of the
// current phase of an active pipeline.
func (p *Pipeline) OpenSlots() []StageSlot {
	if p.Status != StatusActive {
		return nil
	}
	var out []StageSlot
	for _, s := range p.Slots {
		if s.Status == slots.StatusOpen && s.Layer == p.CurrentLayer && s.Phase == p.Phase {
			out = append(out, s)
		}
	}
	return out
}

// storableText reports whether s is text every backend keeps as given:
// UTF-8 (JSON would turn other bytes into U+FFFD on the backends that
// store the pipeline as JSON) without NUL (PostgreSQL's jsonb refuses it).
func storableText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// storableJSON reports whether the valid JSON text raw is one every
// backend keeps as given: UTF-8, its strings escaping no NUL and no
// unpaired surrogate, which PostgreSQL's jsonb refuses.
func storableJSON(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	escaped := func(at int) (rune, bool) { // the code unit of a \uXXXX at raw[at]
		if at+6 > len(raw) || raw[at] != '\\' || raw[at+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(raw[at+2:at+6]), 16, 16)
		return rune(n), err == nil
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		r, ok := escaped(i)
		if !ok {
			i++ // a one-character escape: \\, \", \n, …
			continue
		}
		switch {
		case r == 0, r >= 0xDC00 && r < 0xE000:
			return false
		case r >= 0xD800 && r < 0xDC00:
			low, ok := escaped(i + 6)
			if !ok || low < 0xDC00 || low >= 0xE000 {
				return false
			}
			i += 6
		}
		i += 5
	}
	return true
}
