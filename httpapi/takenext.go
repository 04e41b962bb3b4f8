package httpapi

import (
	"net/http"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/slots"
)

// takeJob is Agora's next-and-take, beside the original API's two-step
// GET /jobs/slots and POST .../take: it finds the caller's next job and takes
// its seat in one atomic step, so a crowd of agents never races for the same
// seat. 200 with the job (its slot as taken), or 404 no_open_slots.
func (a *slotsAPI) takeJob(w http.ResponseWriter, r *http.Request) error {
	q, err := jobFilters(w, r)
	if err != nil {
		return err
	}
	job, err := a.svc.TakeNext(r.Context(), q)
	return writeJob(w, job, err)
}

// jobFilters reads the filters of a take-next route: the query string's,
// then the optional body's (wire.TakeJobRequest), a field set in the body
// winning.
func jobFilters(w http.ResponseWriter, r *http.Request) (slots.JobQuery, error) {
	q := r.URL.Query()
	in := wire.TakeJobRequest{Role: q.Get("role"), Domain: q.Get("domain"), Strategy: q.Get("strategy")}
	var body wire.TakeJobRequest
	if err := httpjson.DecodeOptional(w, r, &body); err != nil {
		return slots.JobQuery{}, err
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
	return slots.JobQuery{Role: slots.Role(in.Role), Domain: in.Domain, Strategy: slots.Strategy(in.Strategy)}, nil
}

// doneAndTake is Agora's finish-and-take-next, beside the original API's done: it
// marks the caller's seat done, credits it, and takes the caller's next
// seat with the filters of POST /jobs/slots/take, in one atomic step, so
// an agent working through the queue pays one request per seat. Errors are
// done's; a done with no seat left to take is 200 with next null.
func (a *slotsAPI) doneAndTake(w http.ResponseWriter, r *http.Request) error {
	q, err := jobFilters(w, r)
	if err != nil {
		return err
	}
	dn, err := a.svc.DoneAndTakeNext(r.Context(), r.PathValue("claimId"), r.PathValue("slotId"), q)
	if err != nil {
		return err
	}
	out := wire.DoneNextResponse{OK: true, Slot: viewRoleSlot(dn.Slot)}
	if j := dn.Next; j != nil {
		v := viewJob(*j)
		out.Next = &v
	}
	httpjson.Write(w, http.StatusOK, out)
	return nil
}

// writeJob answers a job-queue route: err, or the job.
func writeJob(w http.ResponseWriter, job slots.Job, err error) error {
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, viewJob(job))
	return nil
}

// viewJob is a job on the wire, its comments a list even when there are
// none.
func viewJob(j slots.Job) wire.Job {
	return wire.Job{Slot: viewRoleSlot(j.Slot), Claim: viewClaim(j.Claim), Comments: viewComments(j.Comments)}
}

// takeWork is Prism's next-and-take, beside GET /jobs/work and
// POST .../stage-slots/{slotId}/take: the caller's next stage slot, with
// the filters of GET /jobs/work, found and taken in one request; a crowd
// asking at once is spread over the eligible slots, and a slot another
// agent took first sends the request on to another. 200 with the work as
// GET /jobs/work shows it (its slot taken), or 404 no_open_slots.
func (a *slotsAPI) takeWork(w http.ResponseWriter, r *http.Request) error {
	wq, err := workQuery(r)
	if err != nil {
		return err
	}
	work, err := a.prism.TakeNextWork(r.Context(), wq)
	if err != nil {
		return err
	}
	writeWork(w, work)
	return nil
}
