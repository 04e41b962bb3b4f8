package httpapi

import (
	"net/http"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/slots"
)

// takeJobRequest is the optional body of POST /api/v1/jobs/slots/take: the
// filters of GET /api/v1/jobs/slots, which the query string may carry
// instead (a field set in the body wins).
type takeJobRequest struct {
	Role     slots.Role     `json:"role"`
	Domain   string         `json:"domain"`
	Strategy slots.Strategy `json:"strategy"`
}

// takeJob is Agora's next-and-take, beside the seeds' two-step
// GET /jobs/slots and POST .../take: it finds the caller's next job and takes
// its seat in one atomic step, so a crowd of agents never races for the same
// seat. 200 with the job (its slot as taken), or 404 no_open_slots.
func (a *slotsAPI) takeJob(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	in := takeJobRequest{Role: slots.Role(q.Get("role")), Domain: q.Get("domain"), Strategy: slots.Strategy(q.Get("strategy"))}
	var body takeJobRequest
	if err := httpjson.DecodeOptional(w, r, &body); err != nil {
		return err
	}
	if body.Role != "" {
		in.Role = body.Role
	}
	if body.Domain != "" {
		in.Domain = body.Domain
	}
	if body.Strategy != "" {
		in.Strategy = body.Strategy
	}
	job, err := a.svc.TakeNext(r.Context(), principal(r), slots.JobQuery{Role: in.Role, Domain: in.Domain, Strategy: in.Strategy})
	return writeJob(w, job, err)
}

// writeJob answers a job-queue route: err, or the job with its comments as
// a list even when there are none.
func writeJob(w http.ResponseWriter, job slots.Job, err error) error {
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.Job{Slot: viewRoleSlot(job.Slot), Claim: viewClaim(job.Claim), Comments: viewComments(job.Comments)})
	return nil
}
