package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// WithPrism adds the Prism pipeline routes to the AOP handler (stage
// slots, the work queue, pipeline, flags, consensus, protocols) and makes
// creating a claim start its pipeline.
func WithPrism(svc *prism.Service) Option { return func(c *config) { c.prism = svc } }

func (a *aop) routePrism(rt *router, auth func(slots.Scope, bool, func(http.ResponseWriter, *http.Request) error) route) {
	rt.handle("GET", "/api/v1/jobs/work", auth("", false, a.nextWork))
	rt.handle("POST", "/api/v1/claims/{claimId}/stage-slots/{slotId}/take", auth(slots.ScopeCommentCreate, true, a.stageTake))
	rt.handle("POST", "/api/v1/claims/{claimId}/stage-slots/{slotId}/done", auth(slots.ScopeCommentCreate, true, a.stageDone))
	rt.handle("GET", "/api/v1/claims/{claimId}/pipeline", auth("", false, a.pipeline))
	rt.handle("GET", "/api/v1/claims/{claimId}/flags", auth("", false, a.flags))
	rt.handle("POST", "/api/v1/claims/{claimId}/flags/{flagId}/resolve", auth(slots.ScopePipelineReview, false, a.resolveFlag))
	rt.handle("GET", "/api/v1/claims/{claimId}/consensus", auth("", false, a.consensus))
	rt.handle("GET", "/api/v1/protocols", auth("", false, a.protocols))
	rt.handle("POST", "/api/v1/protocols", auth(slots.ScopeKeysAdmin, false, a.registerProtocol))
}

// layerView is one layer of GET /pipeline.
type layerView struct {
	Layer         int               `json:"layer"`
	Name          string            `json:"name"`
	Phase         string            `json:"phase"` // pending, work, consensus, done
	Slots         []prism.StageSlot `json:"slots"`
	AvgConfidence *float64          `json:"avgConfidence,omitempty"`
}

type pipelineView struct {
	ClaimID      string                 `json:"claimId"`
	Protocol     string                 `json:"protocol"`
	Status       prism.Status           `json:"status"`
	CurrentLayer int                    `json:"currentLayer"`
	Phase        prism.Phase            `json:"phase,omitempty"`
	Layers       []layerView            `json:"layers"`
	Consensus    *prism.ConsensusRecord `json:"consensus,omitempty"`
	Version      int64                  `json:"version"`
}

func viewPipeline(p prism.Pipeline) pipelineView {
	v := pipelineView{ClaimID: p.ClaimID, Protocol: p.Protocol.ID, Status: p.Status, CurrentLayer: p.CurrentLayer, Phase: p.Phase, Consensus: p.Consensus, Version: p.Version}
	for _, l := range p.Protocol.Layers {
		lv := layerView{Layer: l.Number, Name: l.Name, Slots: []prism.StageSlot{}}
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
				lv.Slots = append(lv.Slots, s)
			}
		}
		if avg, ok := p.Averages[l.Number]; ok {
			lv.AvgConfidence = &avg
		}
		v.Layers = append(v.Layers, lv)
	}
	return v
}

// submission is one done slot's work, as handed to later agents.
type submission struct {
	SlotID     string          `json:"slotId"`
	Phase      prism.Phase     `json:"phase"`
	Role       string          `json:"role"`
	AgentName  string          `json:"agentName"`
	Body       string          `json:"body,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	Confidence *float64        `json:"confidence,omitempty"`
}

type priorLayer struct {
	Layer   int          `json:"layer"`
	Name    string       `json:"name"`
	Outputs []submission `json:"outputs"`
}

func submissionsOf(p prism.Pipeline, layer int, phase prism.Phase) []submission {
	out := []submission{}
	for _, s := range p.Slots {
		if s.Layer == layer && s.Status == slots.StatusDone && (phase == "" || s.Phase == phase) {
			out = append(out, submission{SlotID: s.ID, Phase: s.Phase, Role: s.Role, AgentName: s.AgentName, Body: s.Body, Output: s.Output, Confidence: s.Confidence})
		}
	}
	return out
}

func (a *aop) nextWork(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	layer, err := httpjson.QueryInt(r, "layer")
	if err != nil {
		return err
	}
	wq := prism.WorkQuery{Role: q.Get("role"), Layer: layer, Domain: q.Get("domain")}
	var work prism.Work
	switch q.Get("strategy") {
	case "", string(slots.StrategyOldest):
		work, err = a.prism.NextWork(r.Context(), principal(r), wq)
	case string(slots.StrategyRandom):
		work, err = a.prism.NextWorkRandom(r.Context(), principal(r), wq)
	default:
		return httpjson.Invalid("invalid_strategy", "strategy must be oldest or random")
	}
	if err != nil {
		return err
	}
	p := work.Pipeline
	prior := []priorLayer{}
	for _, l := range p.Protocol.Layers[:p.CurrentLayer-1] {
		prior = append(prior, priorLayer{Layer: l.Number, Name: l.Name, Outputs: submissionsOf(p, l.Number, "")})
	}
	httpjson.Write(w, http.StatusOK, map[string]any{
		"slot": work.Slot, "claim": work.Claim, "pipeline": viewPipeline(p),
		"context": map[string]any{"priorLayers": prior, "currentLayerWorkOutputs": submissionsOf(p, p.CurrentLayer, prism.PhaseWork)},
	})
	return nil
}

func (a *aop) stageTake(w http.ResponseWriter, r *http.Request) error {
	s, _, err := a.prism.Take(r.Context(), principal(r), r.PathValue("claimId"), r.PathValue("slotId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"ok": true, "slotId": s.ID, "claimId": s.ClaimID, "layer": s.Layer, "phase": s.Phase, "role": s.Role})
	return nil
}

func (a *aop) stageDone(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Body       string          `json:"body"`
		Output     json.RawMessage `json:"output"`
		Confidence *float64        `json:"confidence"`
	}
	// The body is optional: a work slot of a prose layer may finish without one.
	if err := httpjson.DecodeOptional(w, r, &in); err != nil {
		return err
	}
	p, err := a.prism.Done(r.Context(), principal(r), r.PathValue("claimId"), r.PathValue("slotId"), prism.DoneInput{Body: in.Body, Output: in.Output, Confidence: in.Confidence})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"ok": true, "pipeline": viewPipeline(p)})
	return nil
}

func (a *aop) pipeline(w http.ResponseWriter, r *http.Request) error {
	p, err := a.prism.Pipeline(r.Context(), r.PathValue("claimId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, viewPipeline(p))
	return nil
}

func (a *aop) flags(w http.ResponseWriter, r *http.Request) error {
	p, err := a.prism.Pipeline(r.Context(), r.PathValue("claimId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, list(p.Flags))
	return nil
}

func (a *aop) resolveFlag(w http.ResponseWriter, r *http.Request) error {
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
	httpjson.Write(w, http.StatusOK, map[string]any{"ok": true, "pipeline": viewPipeline(p)})
	return nil
}

var errNoConsensus = &store.Error{Kind: store.ErrNotFound, Code: "consensus_not_found", Message: "this claim has no consensus record yet"}

func (a *aop) consensus(w http.ResponseWriter, r *http.Request) error {
	p, err := a.prism.Pipeline(r.Context(), r.PathValue("claimId"))
	if err != nil {
		return err
	}
	if p.Consensus == nil {
		return errNoConsensus
	}
	httpjson.Write(w, http.StatusOK, map[string]any{
		"claimId": p.ClaimID, "summary": p.Consensus.Summary,
		"recommendation": p.Consensus.Recommendation, "confidence": p.Consensus.Confidence,
	})
	return nil
}

func (a *aop) protocols(w http.ResponseWriter, r *http.Request) error {
	ps, err := a.prism.Protocols(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, list(ps))
	return nil
}

func (a *aop) registerProtocol(w http.ResponseWriter, r *http.Request) error {
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
