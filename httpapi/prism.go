package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// WithPrism adds the Prism pipeline routes to the AOP handler (stage
// slots, the work queue, pipeline, flags, consensus, protocols) and makes
// creating a claim start its pipeline.
func WithPrism(svc *prism.Service) SlotsOption {
	return slotsOptionFunc(func(c *config) { c.prism = svc })
}

func (a *slotsAPI) routePrism(rt *router, auth func(slots.Scope, bool, func(http.ResponseWriter, *http.Request) error) route) {
	rt.handle("GET", "/api/v1/jobs/work", auth("", false, a.nextWork))
	rt.handle("GET", "/api/v1/jobs/peek", auth("", false, a.peekWork))
	rt.handle("POST", "/api/v1/jobs/work/take", auth(slots.ScopeCommentCreate, true, a.takeWork))
	rt.handle("POST", "/api/v1/claims/{claimId}/stage-slots/{slotId}/take", auth(slots.ScopeCommentCreate, true, a.stageTake))
	rt.handle("POST", "/api/v1/claims/{claimId}/stage-slots/{slotId}/done", auth(slots.ScopeCommentCreate, true, a.stageDone))
	rt.handle("GET", "/api/v1/claims/{claimId}/pipeline", auth("", false, a.pipeline))
	rt.handle("GET", "/api/v1/claims/{claimId}/flags", auth("", false, a.flags))
	rt.handle("POST", "/api/v1/claims/{claimId}/flags/{flagId}/resolve", auth(slots.ScopePipelineReview, false, a.resolveFlag))
	rt.handle("GET", "/api/v1/claims/{claimId}/consensus", auth("", false, a.consensus))
	rt.handle("GET", "/api/v1/claims/{claimId}/consensus/history", auth("", false, a.consensusHistory))
	rt.handle("POST", "/api/v1/slots/release-stale", auth(slots.ScopeCommentCreate, false, a.releaseStale))
	rt.handle("GET", "/api/v1/protocols", auth("", false, a.protocols))
	rt.handle("GET", "/api/v1/protocols/{protocolId}", auth("", false, a.protocol))
	rt.handle("POST", "/api/v1/protocols", auth(slots.ScopeKeysAdmin, false, a.registerProtocol))
}

// stageName is a layer's name as the original's stages are named, such as
// "classification": the agent CLIs compare it.
func stageName(l prism.Layer) string { return prism.NormalizeDomain(l.Name) }

func viewSlot(s prism.StageSlot) wire.StageSlot {
	return wire.StageSlot{
		ID: s.ID, ClaimID: s.ClaimID, Layer: s.Layer, Phase: s.Phase, SlotType: s.Phase, Round: s.Round,
		Role: s.Role, Status: s.Status, APIKeyID: s.APIKeyID, AgentName: s.AgentName, AgentAvatarURL: s.AgentAvatarURL,
		AgentModel: s.AgentModel, TakenAt: s.TakenAt, DoneAt: s.DoneAt, LeaseExpiresAt: s.LeaseExpiresAt, CreatedAt: s.CreatedAt,
		Body: s.Body, Confidence: s.Confidence, Output: s.Output, StructuredOutput: s.Output, OutputSignature: s.OutputSignature,
		SigningKeyAddress: s.SigningKeyAddress,
	}
}

func viewFlag(f prism.Flag) wire.Flag {
	return wire.Flag{ID: f.ID, ClaimID: f.ClaimID, Layer: f.Layer, Reason: f.Reason, AvgConfidence: f.AvgConfidence, Threshold: f.Threshold,
		Status: f.Status, Action: f.Action, Note: f.Note, ResolvedBy: f.ResolvedBy, CreatedAt: f.CreatedAt, ResolvedAt: f.ResolvedAt}
}

// viewConsensus is the claim's consensus record with, as its key points,
// the prose of the consensus slots of the layer that wrote it.
func viewConsensus(p prism.Pipeline) *wire.Consensus {
	if p.Consensus == nil {
		return nil
	}
	c := &wire.Consensus{ClaimID: p.ClaimID, Summary: p.Consensus.Summary, Recommendation: p.Consensus.Recommendation,
		Confidence: p.Consensus.Confidence, KeyPoints: []string{}}
	for _, l := range p.Protocol.Layers {
		if !l.Effect.Records() {
			continue
		}
		for _, s := range doneSlots(p, l.Number, prism.PhaseConsensus) {
			if s.Round == roundOf(p, l.Number) && strings.TrimSpace(s.Body) != "" {
				c.KeyPoints = append(c.KeyPoints, s.Body)
			}
		}
	}
	return c
}

// roundOf is the consensus round a layer ended on: the pipeline's round
// for the current layer, else the highest round of its slots.
func roundOf(p prism.Pipeline, layer int) int {
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

func viewPipeline(p prism.Pipeline) wire.Pipeline {
	v := wire.Pipeline{ClaimID: p.ClaimID, Protocol: p.Protocol.ID, Status: p.Status, CurrentLayer: p.CurrentLayer,
		Phase: p.Phase, Slots: []wire.StageSlot{}, Flags: []wire.Flag{}, Consensus: viewConsensus(p), Version: p.Version}
	if v.Phase == "" && p.Status == prism.StatusComplete {
		// Complete: the last layer ended on its consensus phase, which is
		// where the original's currentPhase stays.
		v.Phase = prism.PhaseConsensus
	}
	v.CurrentPhase = v.Phase
	for _, l := range p.Protocol.Layers {
		lv := wire.PipelineLayer{Layer: l.Number, Name: l.Name, Slots: []wire.StageSlot{}}
		switch {
		case p.Status == prism.StatusComplete || l.Number < p.CurrentLayer:
			lv.Phase = "done"
		case l.Number == p.CurrentLayer:
			lv.Phase = string(p.Phase)
		default:
			lv.Phase = "pending"
		}
		for _, s := range p.Slots {
			if s.Layer == l.Number {
				lv.Slots = append(lv.Slots, viewSlot(s))
			}
		}
		if avg, ok := p.Averages[l.Number]; ok {
			lv.AvgConfidence = &avg
		}
		v.Layers = append(v.Layers, lv)
	}
	for _, s := range p.Slots {
		v.Slots = append(v.Slots, viewSlot(s))
	}
	for _, f := range p.Flags {
		v.Flags = append(v.Flags, viewFlag(f))
	}
	return v
}

// doneSlots returns the done slots of a layer, of one phase or ("") both.
func doneSlots(p prism.Pipeline, layer int, phase prism.Phase) []prism.StageSlot {
	var out []prism.StageSlot
	for _, s := range p.Slots {
		if s.Layer == layer && s.Status == slots.StatusDone && (phase == "" || s.Phase == phase) {
			out = append(out, s)
		}
	}
	return out
}

func submissionsOf(ss []prism.StageSlot) []wire.Submission {
	out := []wire.Submission{}
	for _, s := range ss {
		out = append(out, wire.Submission{SlotID: s.ID, Phase: string(s.Phase), Role: s.Role, AgentName: s.AgentName,
			AgentModel: s.AgentModel, Body: s.Body, Output: s.Output, Confidence: s.Confidence})
	}
	return out
}

// proseOf returns each slot's output as the original hands it on, a
// string: its prose, or its structured output as JSON text when it gave
// no prose. Slots with neither are left out.
func proseOf(ss []prism.StageSlot) []string {
	out := []string{}
	for _, s := range ss {
		switch {
		case strings.TrimSpace(s.Body) != "":
			out = append(out, s.Body)
		case len(s.Output) > 0:
			out = append(out, string(s.Output))
		}
	}
	return out
}

// workContext is the context of a work payload for slot.
func workContext(p prism.Pipeline, slot prism.StageSlot) wire.WorkContext {
	layer, _ := p.Protocol.Layer(slot.Layer)
	c := wire.WorkContext{
		StageName: stageName(layer), PriorLayers: []wire.PriorLayer{},
		CurrentLayerWorkOutputs: []string{}, CurrentLayerWork: submissionsOf(doneSlots(p, slot.Layer, prism.PhaseWork)),
	}
	for _, l := range p.Protocol.Layers {
		if l.Number >= slot.Layer {
			break
		}
		pl := wire.PriorLayer{Layer: l.Number, StageName: stageName(l), Name: l.Name,
			WorkOutputs:      proseOf(doneSlots(p, l.Number, prism.PhaseWork)),
			ConsensusOutputs: proseOf(doneSlots(p, l.Number, prism.PhaseConsensus)),
			Outputs:          submissionsOf(doneSlots(p, l.Number, ""))}
		if avg, ok := p.Averages[l.Number]; ok {
			pl.AvgConfidence = &avg
		}
		c.PriorLayers = append(c.PriorLayers, pl)
	}
	if slot.Phase == prism.PhaseConsensus {
		c.CurrentLayerWorkOutputs = proseOf(doneSlots(p, slot.Layer, prism.PhaseWork))
	}
	return c
}

// workQuery reads the filters of GET /jobs/work and /jobs/peek.
func workQuery(r *http.Request) (prism.WorkQuery, error) {
	q := r.URL.Query()
	layer, err := httpjson.QueryInt(r, "layer")
	if err != nil {
		return prism.WorkQuery{}, err
	}
	wq := prism.WorkQuery{Role: q.Get("role"), Layer: layer, Domain: q.Get("domain")}
	switch t := q.Get("type"); t {
	case "":
	case string(prism.PhaseWork), string(prism.PhaseConsensus):
		wq.Phase = prism.Phase(t)
	default:
		return prism.WorkQuery{}, httpjson.Invalid("invalid_type", "type must be work or consensus")
	}
	return wq, nil
}

// findWork runs the work queue for the request's filters and strategy.
func (a *slotsAPI) findWork(r *http.Request) (prism.Work, error) {
	wq, err := workQuery(r)
	if err != nil {
		return prism.Work{}, err
	}
	switch r.URL.Query().Get("strategy") {
	case "", string(slots.StrategyOldest):
		return a.prism.NextWork(r.Context(), principal(r), wq)
	case string(slots.StrategyRandom):
		return a.prism.NextWorkRandom(r.Context(), principal(r), wq)
	default:
		return prism.Work{}, httpjson.Invalid("invalid_strategy", "strategy must be oldest or random")
	}
}

func (a *slotsAPI) nextWork(w http.ResponseWriter, r *http.Request) error {
	work, err := a.findWork(r)
	if err != nil {
		return err
	}
	writeWork(w, work)
	return nil
}

// writeWork answers a work-queue route with the work and its context.
func writeWork(w http.ResponseWriter, work prism.Work) {
	httpjson.Write(w, http.StatusOK, ViewWork(work))
}

// peekWork answers whether GET /jobs/work would find work, without taking
// or showing it: {available: true}, or 404 no_job.
func (a *slotsAPI) peekWork(w http.ResponseWriter, r *http.Request) error {
	if _, err := a.findWork(r); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.Peek{Available: true})
	return nil
}

// doneInput reads a stage done body in either form (see wire.StageDone).
// The prose comes once, as body or as a string output; the structured
// output once, as an object output or as structuredOutput.
func doneInput(in wire.StageDone) (prism.DoneInput, error) {
	d := prism.DoneInput{Body: in.Body, Confidence: in.Confidence, AgentModel: strings.TrimSpace(in.AgentModel), OutputSignature: in.OutputSignature}
	out := bytes.TrimSpace(in.Output)
	if len(out) > 0 && out[0] == '"' {
		var prose string
		if err := json.Unmarshal(out, &prose); err != nil {
			return prism.DoneInput{}, httpjson.Invalid("invalid_output", "output must be a string (the prose) or an object (the structured output)")
		}
		if d.Body != "" {
			return prism.DoneInput{}, httpjson.Invalid("invalid_body", "give the prose once: as body or as output, not both")
		}
		d.Body, out = prose, nil
	}
	structured := bytes.TrimSpace(in.StructuredOutput)
	if string(structured) == "null" {
		structured = nil
	}
	switch {
	case len(structured) > 0 && len(out) > 0 && string(out) != "null":
		return prism.DoneInput{}, httpjson.Invalid("invalid_output", "give the structured output once: as output or as structuredOutput, not both")
	case len(structured) > 0:
		if structured[0] != '{' {
			return prism.DoneInput{}, httpjson.Invalid("invalid_output", "structuredOutput must be a JSON object")
		}
		d.Output = structured
	default:
		d.Output = out
	}
	return d, nil
}

func (a *slotsAPI) stageTake(w http.ResponseWriter, r *http.Request) error {
	s, _, err := a.prism.Take(r.Context(), principal(r), r.PathValue("claimId"), r.PathValue("slotId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.StageTaken{OK: true, SlotID: s.ID, ClaimID: s.ClaimID, Layer: s.Layer, Phase: s.Phase, SlotType: s.Phase, Role: s.Role})
	return nil
}

func (a *slotsAPI) stageDone(w http.ResponseWriter, r *http.Request) error {
	var in wire.StageDone
	// The body is optional: a work slot of a prose layer may finish without one.
	if err := httpjson.DecodeOptional(w, r, &in); err != nil {
		return err
	}
	done, err := doneInput(in)
	if err != nil {
		return err
	}
	p, err := a.prism.Done(r.Context(), principal(r), r.PathValue("claimId"), r.PathValue("slotId"), done)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.StageChanged{OK: true, Pipeline: viewPipeline(p)})
	return nil
}

func (a *slotsAPI) pipeline(w http.ResponseWriter, r *http.Request) error {
	p, err := a.prism.Pipeline(r.Context(), r.PathValue("claimId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, viewPipeline(p))
	return nil
}

func (a *slotsAPI) flags(w http.ResponseWriter, r *http.Request) error {
	p, err := a.prism.Pipeline(r.Context(), r.PathValue("claimId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, list(p.Flags))
	return nil
}

func (a *slotsAPI) resolveFlag(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Action prism.FlagAction `json:"action"`
		Note   string           `json:"note"`
	}
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	p, err := a.prism.ResolveFlag(r.Context(), principal(r), r.PathValue("claimId"), r.PathValue("flagId"), in.Action, in.Note)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.StageChanged{OK: true, Pipeline: viewPipeline(p)})
	return nil
}

var errNoConsensus = &store.Error{Kind: store.ErrNotFound, Code: "consensus_not_found", Message: "this claim has no consensus record yet"}

func (a *slotsAPI) consensus(w http.ResponseWriter, r *http.Request) error {
	p, err := a.prism.Pipeline(r.Context(), r.PathValue("claimId"))
	if err != nil {
		return err
	}
	if p.Consensus == nil {
		return errNoConsensus
	}
	httpjson.Write(w, http.StatusOK, viewConsensus(p))
	return nil
}

// consensusHistory lists the claim's consensus records, newest first, as
// the original does: Agora's pipeline writes at most one.
func (a *slotsAPI) consensusHistory(w http.ResponseWriter, r *http.Request) error {
	p, err := a.prism.Pipeline(r.Context(), r.PathValue("claimId"))
	if err != nil {
		return err
	}
	out := wire.Items[wire.Consensus]{Items: []wire.Consensus{}}
	if c := viewConsensus(p); c != nil {
		out.Items = append(out.Items, *c)
	}
	httpjson.Write(w, http.StatusOK, out)
	return nil
}

// releaseStale re-opens the stage slots the caller holds, as the
// original's agent runner asks after a failed run.
func (a *slotsAPI) releaseStale(w http.ResponseWriter, r *http.Request) error {
	n, err := a.prism.ReleaseHeld(r.Context(), principal(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.ReleaseStale{OK: true, Released: n})
	return nil
}

func (a *slotsAPI) protocol(w http.ResponseWriter, r *http.Request) error {
	p, err := a.prism.Protocol(r.Context(), r.PathValue("protocolId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, p)
	return nil
}

func (a *slotsAPI) protocols(w http.ResponseWriter, r *http.Request) error {
	ps, err := a.prism.Protocols(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, list(ps))
	return nil
}

func (a *slotsAPI) registerProtocol(w http.ResponseWriter, r *http.Request) error {
	var p prism.Protocol
	if err := httpjson.Decode(w, r, &p); err != nil {
		return err
	}
	if err := a.prism.RegisterProtocol(r.Context(), p); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, p)
	return nil
}
