package prism

import (
	"encoding/json"

	"github.com/agorahq/agora/store"
)

// The JSON of StageSlot, Flag and Pipeline carries their times as Unix
// milliseconds: it is the document the backends store a pipeline as
// (jsonb in PostgreSQL, a string in Redis), so pipelines stored before the
// times became time.Time read back unchanged. Each type's JSON is its
// other fields beside its times in milliseconds, a zero time being 0.

type (
	stageSlotFields StageSlot
	flagFields      Flag
	pipelineFields  Pipeline
)

type stageSlotJSON struct {
	stageSlotFields
	TakenAt        int64 `json:"takenAt,omitempty"`
	DoneAt         int64 `json:"doneAt,omitempty"`
	LeaseExpiresAt int64 `json:"leaseExpiresAt,omitempty"`
	CreatedAt      int64 `json:"createdAt"`
}

// MarshalJSON writes the slot with its times as Unix milliseconds.
func (s StageSlot) MarshalJSON() ([]byte, error) {
	return json.Marshal(stageSlotJSON{stageSlotFields(s),
		store.Millis(s.TakenAt), store.Millis(s.DoneAt), store.Millis(s.LeaseExpiresAt), store.Millis(s.CreatedAt)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *StageSlot) UnmarshalJSON(b []byte) error {
	var j stageSlotJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = StageSlot(j.stageSlotFields)
	s.TakenAt, s.DoneAt = store.FromMillis(j.TakenAt), store.FromMillis(j.DoneAt)
	s.LeaseExpiresAt, s.CreatedAt = store.FromMillis(j.LeaseExpiresAt), store.FromMillis(j.CreatedAt)
	return nil
}

type flagJSON struct {
	flagFields
	CreatedAt  int64 `json:"createdAt"`
	ResolvedAt int64 `json:"resolvedAt,omitempty"`
}

// MarshalJSON writes the flag with its times as Unix milliseconds.
func (f Flag) MarshalJSON() ([]byte, error) {
	return json.Marshal(flagJSON{flagFields(f), store.Millis(f.CreatedAt), store.Millis(f.ResolvedAt)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (f *Flag) UnmarshalJSON(b []byte) error {
	var j flagJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = Flag(j.flagFields)
	f.CreatedAt, f.ResolvedAt = store.FromMillis(j.CreatedAt), store.FromMillis(j.ResolvedAt)
	return nil
}

type pipelineJSON struct {
	pipelineFields
	CreatedAt int64 `json:"createdAt,omitempty"`
	UpdatedAt int64 `json:"updatedAt"`
}

// MarshalJSON writes the pipeline, the document the backends store, with
// its times as Unix milliseconds.
func (p Pipeline) MarshalJSON() ([]byte, error) {
	j := pipelineJSON{pipelineFields: pipelineFields(p), UpdatedAt: store.Millis(p.UpdatedAt)}
	if !p.CreatedAt.IsZero() {
		j.CreatedAt = store.Millis(p.CreatedAt)
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Pipeline) UnmarshalJSON(b []byte) error {
	var j pipelineJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = Pipeline(j.pipelineFields)
	p.UpdatedAt = store.FromMillis(j.UpdatedAt)
	if j.CreatedAt != 0 {
		p.CreatedAt = store.FromMillis(j.CreatedAt)
	}
	return nil
}
