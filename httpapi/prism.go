package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/identity"
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

// prismRoutes is the table of the Prism routes WithPrism adds to the AOP
// handler: each row mounts its handler and describes it in the OpenAPI
// document.
func (a *slotsAPI) prismRoutes() []operation {
	return []operation{
		{id: "findWork", method: "GET", path: "/api/v1/jobs/work", query: "layer:integer domain type strategy", tag: tagPrism, summary: "The next open stage slot with its work context", auth: keyRequired, status: 200, resp: wire.Work{}, fn: a.nextWork},
		{id: "takeWork", method: "POST", path: "/api/v1/jobs/work/take", query: "layer:integer domain type", tag: tagPrism, summary: "Find and take the next open stage slot in one step, with its work context", auth: keyRequired, scope: slots.ScopeCommentCreate, status: 200, resp: wire.Work{}, limited: true, fn: a.takeWork},
		{id: "peekWork", method: "GET", path: "/api/v1/jobs/peek", query: "layer:integer domain type strategy", tag: tagPrism, summary: "Whether a stage slot is open", auth: keyRequired, status: 200, resp: wire.Peek{}, fn: a.peekWork},
		{id: "takeStageSlot", method: "POST", path: "/api/v1/claims/{claimId}/stage-slots/{slotId}/take", tag: tagPrism, summary: "Take an open stage slot", auth: keyRequired, scope: slots.ScopeCommentCreate, status: 200, resp: wire.StageTaken{}, limited: true, fn: a.stageTake},
		{id: "finishStageSlot", method: "POST", path: "/api/v1/claims/{claimId}/stage-slots/{slotId}/done", optionalBody: true, tag: tagPrism, summary: "Submit a taken stage slot's work", auth: keyRequired, scope: slots.ScopeCommentCreate, body: wire.StageDone{}, status: 200, resp: wire.StageChanged{}, limited: true, fn: a.stageDone},
		{id: "getPipeline", method: "GET", path: "/api/v1/claims/{claimId}/pipeline", tag: tagPrism, summary: "A claim's pipeline", auth: keyRequired, status: 200, resp: wire.Pipeline{}, fn: a.pipeline},
		{id: "listFlags", method: "GET", path: "/api/v1/claims/{claimId}/flags", tag: tagPrism, summary: "A pipeline's flags", auth: keyRequired, status: 200, resp: wire.Items[wire.Flag]{}, fn: a.flags},
		{id: "resolveFlag", method: "POST", path: "/api/v1/claims/{claimId}/flags/{flagId}/resolve", tag: tagPrism, summary: "Resolve a flag", auth: keyRequired, scope: prism.ScopePipelineReview,
			body: wire.ResolveFlag{}, status: 200, resp: wire.StageChanged{}, fn: a.resolveFlag},
		{id: "getConsensus", method: "GET", path: "/api/v1/claims/{claimId}/consensus", tag: tagPrism, summary: "A claim's latest consensus record, posted or its pipeline's (404 consensus_not_found until there is one)", auth: keyRequired, status: 200, resp: wire.Consensus{}, fn: a.consensus},
		{id: "postConsensus", method: "POST", path: "/api/v1/claims/{claimId}/consensus", tag: tagPrism, summary: "Post a consensus record for a claim, as the original's agents do", auth: keyRequired, scope: prism.ScopeConsensusWrite, body: wire.NewConsensus{}, status: 200, resp: wire.ConsensusPosted{}, limited: true, fn: a.postConsensus},
		{id: "listConsensus", method: "GET", path: "/api/v1/claims/{claimId}/consensus/history", query: "limit", tag: tagPrism, summary: "A claim's consensus records, newest first (limit 20 by default, at most 100)", auth: keyRequired, status: 200, resp: wire.Items[wire.Consensus]{}, fn: a.consensusHistory},
		{id: "releaseStaleSlots", method: "POST", path: "/api/v1/slots/release-stale", tag: tagPrism, summary: "Release stage slots taken too long ago", auth: keyRequired, scope: slots.ScopeCommentCreate, status: 200, resp: wire.ReleaseStale{}, fn: a.releaseStale},
		{id: "listProtocols", method: "GET", path: "/api/v1/protocols", tag: tagPrism, summary: "List protocols: the registered ones and the names claims were created under, with how often", auth: keyRequired, status: 200, resp: wire.Items[wire.ProtocolSummary]{}, fn: a.protocols},
		{id: "getProtocol", method: "GET", path: "/api/v1/protocols/{protocolId}", tag: tagPrism, summary: "Get a protocol: a registered one, or a name claims were created under", auth: keyRequired, status: 200, resp: wire.ProtocolSummary{}, fn: a.protocol},
		{id: "listProtocolClaims", method: "GET", path: "/api/v1/protocols/{protocolId}/claims", query: "limit cursor domain sort", tag: tagPrism, summary: "List the claims created under a protocol (the name given at creation, registered or not), as GET /api/v1/claims?protocolId= does", auth: keyRequired, status: 200, resp: wire.Items[wire.Claim]{}, fn: a.protocolClaims},
		{id: "registerProtocol", method: "POST", path: "/api/v1/protocols", tag: tagPrism, summary: "Register a protocol", auth: keyRequired, scope: identity.ScopeKeysAdmin, body: wire.Protocol{}, status: 201, resp: wire.Protocol{}, fn: a.registerProtocol},
	}
}

// stageName is a layer's name as the original's stages are named, such as
// "classification": the agent CLIs compare it.
func stageName(l prism.Layer) string { return prism.NormalizeDomain(l.Name) }

func viewSlot(s prism.StageSlot) wire.StageSlot {
	return wire.StageSlot{
		ID: s.ID, ClaimID: s.ClaimID, Layer: s.Layer, Phase: string(s.Phase), SlotType: string(s.Phase), Round: s.Round,
		Role: s.Role, Status: string(s.Status), APIKeyID: s.APIKeyID, AgentName: s.AgentName, AgentAvatarURL: s.AgentAvatarURL,
		AgentModel: s.AgentModel, TakenAt: store.Millis(s.TakenAt), DoneAt: store.Millis(s.DoneAt), LeaseExpiresAt: store.Millis(s.LeaseExpiresAt), CreatedAt: store.Millis(s.CreatedAt),
		Body: s.Body, Confidence: s.Confidence, Output: s.Output, StructuredOutput: s.Output, OutputSignature: s.OutputSignature,
		SigningKeyAddress: s.SigningKeyAddress,
	}
}

func viewFlag(f prism.Flag) wire.Flag {
	return wire.Flag{ID: f.ID, ClaimID: f.ClaimID, Layer: f.Layer, Reason: f.Reason, AvgConfidence: f.AvgConfidence, Threshold: f.Threshold,
		Status: string(f.Status), Action: f.Action, Note: f.Note, ResolvedBy: f.ResolvedBy, CreatedAt: store.Millis(f.CreatedAt), ResolvedAt: store.Millis(f.ResolvedAt)}
}

// viewConsensus is a claim's consensus record on the wire.
func viewConsensus(claimID string, rec prism.ConsensusRecord) wire.Consensus {
	c := wire.Consensus{ID: rec.ID, ClaimID: claimID, Summary: rec.Summary, Recommendation: rec.Recommendation, Confidence: rec.Confidence,
		KeyPoints: rec.KeyPoints, Dissent: rec.Dissent, OpenQuestions: rec.OpenQuestions, APIKeyID: rec.Author.KeyID, AgentName: rec.Author.Name,
		CreatedAt: store.Millis(rec.CreatedAt)}
	if c.KeyPoints == nil {
		c.KeyPoints = []string{}
	}
	return c
}

// viewPipelineConsensus is the pipeline's own consensus record on the
// wire; nil before a layer wrote one.
func viewPipelineConsensus(p prism.Pipeline) *wire.Consensus {
	rec, ok := p.ConsensusRecord()
	if !ok {
		return nil
	}
	c := viewConsensus(p.ClaimID, rec)
	return &c
}

// viewProtocol is p on the wire; protocolIn is the reverse.
func viewProtocol(p prism.Protocol) wire.Protocol {
	v := wire.Protocol{ID: p.ID, Name: p.Name}
	if p.Layers != nil {
		v.Layers = make([]wire.Layer, len(p.Layers))
	}
	for i, l := range p.Layers {
		v.Layers[i] = wire.Layer{Layer: l.Number, Name: l.Name, ConsensusSlots: l.ConsensusSlots, Threshold: l.Threshold,
			OutputFrom: string(l.OutputFrom), Effect: string(l.Effect)}
		if l.WorkRoles != nil {
			v.Layers[i].WorkRoles = make([]wire.RoleCount, len(l.WorkRoles))
		}
		for j, rc := range l.WorkRoles {
			v.Layers[i].WorkRoles[j] = wire.RoleCount{Role: string(rc.Role), Count: rc.Count}
		}
		if l.Output != nil {
			v.Layers[i].Output = make(map[string]wire.Field, len(l.Output))
		}
		for name, f := range l.Output {
			v.Layers[i].Output[name] = wire.Field{Type: string(f.Type), Values: f.Values}
		}
	}
	return v
}

func viewProtocolSummary(p prism.ProtocolSummary) wire.ProtocolSummary {
	return wire.ProtocolSummary{Protocol: viewProtocol(p.Protocol), ClaimCount: p.Claims, LastUsedAt: store.Millis(p.LastUsedAt)}
}

func protocolIn(in wire.Protocol) prism.Protocol {
	p := prism.Protocol{ID: in.ID, Name: in.Name}
	if in.Layers != nil {
		p.Layers = make([]prism.Layer, len(in.Layers))
	}
	for i, l := range in.Layers {
		p.Layers[i] = prism.Layer{Number: l.Layer, Name: l.Name, ConsensusSlots: l.ConsensusSlots, Threshold: l.Threshold,
			OutputFrom: prism.OutputFrom(l.OutputFrom), Effect: prism.Effect(l.Effect)}
		if l.WorkRoles != nil {
			p.Layers[i].WorkRoles = make([]slots.RoleCount, len(l.WorkRoles))
		}
		for j, rc := range l.WorkRoles {
			p.Layers[i].WorkRoles[j] = slots.RoleCount{Role: slots.Role(rc.Role), Count: rc.Count}
		}
		if l.Output != nil {
			p.Layers[i].Output = make(prism.Shape, len(l.Output))
		}
		for name, f := range l.Output {
			p.Layers[i].Output[name] = prism.Field{Type: prism.FieldType(f.Type), Values: f.Values}
		}
	}
	return p
}

func viewPipeline(p prism.Pipeline) wire.Pipeline {
	v := wire.Pipeline{ClaimID: p.ClaimID, Protocol: p.Protocol.ID, ProtocolID: p.Protocol.ID, Status: string(p.Status), CurrentLayer: p.CurrentLayer,
		Phase: string(p.Phase), Slots: []wire.StageSlot{}, Flags: []wire.Flag{}, Consensus: viewPipelineConsensus(p), Version: p.Version,
		UpdatedAt: store.Millis(p.UpdatedAt)}
	if !p.CreatedAt.IsZero() {
		v.CreatedAt = store.Millis(p.CreatedAt)
	}
	if p.Status == prism.StatusComplete {
		v.CompletedAt = v.UpdatedAt
	}
	if v.Phase == "" && p.Status == prism.StatusComplete {
		// Complete: the last layer ended on its consensus phase, which is
		// where the original's currentPhase stays.
		v.Phase = string(prism.PhaseConsensus)
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

// workQuery reads the filters of GET /jobs/work, /jobs/peek and POST
// /jobs/work/take; the service checks them. An empty or absent layer is
// any layer, and layer=0 is layer 0, as in the original.
func workQuery(r *http.Request) (prism.WorkQuery, error) {
	q := r.URL.Query()
	wq := prism.WorkQuery{Role: q.Get("role"), Domain: q.Get("domain"), Phase: prism.Phase(q.Get("type"))}
	if q.Get("layer") != "" {
		layer, err := httpjson.QueryInt(r, "layer")
		if err != nil {
			return prism.WorkQuery{}, err
		}
		wq.Layer = &layer
	}
	return wq, nil
}

// findWork runs the work queue for the request's filters and strategy.
func (a *slotsAPI) findWork(r *http.Request) (prism.Work, error) {
	wq, err := workQuery(r)
	if err != nil {
		return prism.Work{}, err
	}
	wq.Strategy = slots.Strategy(r.URL.Query().Get("strategy"))
	return a.prism.NextWork(r.Context(), wq)
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
// or showing it: {available: true}, or the 404 that route answers when
// it finds none.
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
	s, _, err := a.prism.Take(r.Context(), r.PathValue("claimId"), r.PathValue("slotId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.StageTaken{OK: true, SlotID: s.ID, ClaimID: s.ClaimID, Layer: s.Layer, Phase: string(s.Phase), SlotType: string(s.Phase), Role: s.Role})
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
	p, err := a.prism.Done(r.Context(), r.PathValue("claimId"), r.PathValue("slotId"), done)
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
	httpjson.Write(w, http.StatusOK, wire.List(viewAll(p.Flags, viewFlag)))
	return nil
}

func (a *slotsAPI) resolveFlag(w http.ResponseWriter, r *http.Request) error {
	var in wire.ResolveFlag
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	p, err := a.prism.ResolveFlag(r.Context(), prism.ResolveFlagParams{ClaimID: r.PathValue("claimId"), FlagID: r.PathValue("flagId"), Action: prism.FlagAction(in.Action), Note: in.Note})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.StageChanged{OK: true, Pipeline: viewPipeline(p)})
	return nil
}

func (a *slotsAPI) consensus(w http.ResponseWriter, r *http.Request) error {
	claimID := r.PathValue("claimId")
	rec, err := a.prism.Consensus(r.Context(), claimID)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, viewConsensus(claimID, rec))
	return nil
}

func (a *slotsAPI) postConsensus(w http.ResponseWriter, r *http.Request) error {
	var in wire.NewConsensus
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	rec, err := a.prism.PostConsensus(r.Context(), prism.NewConsensus{ClaimID: r.PathValue("claimId"), Summary: in.Summary,
		KeyPoints: in.KeyPoints, Dissent: in.Dissent, OpenQuestions: in.OpenQuestions, Confidence: in.Confidence})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.ConsensusPosted{OK: true, ConsensusID: rec.ID})
	return nil
}

// consensusHistory lists the claim's consensus records, newest first, as
// the original does.
func (a *slotsAPI) consensusHistory(w http.ResponseWriter, r *http.Request) error {
	claimID := r.PathValue("claimId")
	recs, err := a.prism.ConsensusHistory(r.Context(), claimID, looseLimit(r))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.List(viewAll(recs, func(rec prism.ConsensusRecord) wire.Consensus { return viewConsensus(claimID, rec) })))
	return nil
}

// releaseStale re-opens the stage slots the caller holds, as the
// original's agent runner asks after a failed run.
func (a *slotsAPI) releaseStale(w http.ResponseWriter, r *http.Request) error {
	n, err := a.prism.ReleaseHeld(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.ReleaseStale{OK: true, Released: n})
	return nil
}

func (a *slotsAPI) protocol(w http.ResponseWriter, r *http.Request) error {
	p, err := a.prism.ProtocolSummary(r.Context(), r.PathValue("protocolId"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, viewProtocolSummary(p))
	return nil
}

func (a *slotsAPI) protocols(w http.ResponseWriter, r *http.Request) error {
	ps, err := a.prism.ProtocolSummaries(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.List(viewAll(ps, viewProtocolSummary)))
	return nil
}

func (a *slotsAPI) registerProtocol(w http.ResponseWriter, r *http.Request) error {
	var in wire.Protocol
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	p := protocolIn(in)
	if err := a.prism.RegisterProtocol(r.Context(), p); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, viewProtocol(p))
	return nil
}
