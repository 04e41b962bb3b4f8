package client

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// TakeJob finds this agent's next role-slot job and takes its seat in one
// atomic step (POST /api/v1/jobs/slots/take, scope comment:create): two
// agents never get the same seat, and none loses a race for one. The job's
// slot comes back as taken. store.ErrNotFound (404 no_open_slots) when there
// is no eligible seat.
func (c *Client) TakeJob(ctx context.Context, q slots.JobQuery) (slots.Job, error) {
	var j wire.Job
	err := c.do(ctx, "POST", "/api/v1/jobs/slots/take"+query("role", string(q.Role), "domain", q.Domain, "strategy", string(q.Strategy)), nil, &j)
	return JobOf(j), err
}

// takeNextJob is TakeNextJob: TakeJob in takeNext's loop, or the original API's two
// steps once the server shows it lacks the route.
func (c *Client) takeNextJob(ctx context.Context, q slots.JobQuery, maxWait time.Duration) (slots.Job, error) {
	return takeNextInOne(ctx, maxWait,
		func() (slots.Job, error) { return c.TakeJob(ctx, q) },
		func() (slots.Job, error) { return c.NextJob(ctx, q) },
		func(j slots.Job) error { return c.Take(ctx, j.Claim.ID, j.Slot.ID) })
}

// TakeWork finds this agent's next Prism stage slot, with the filters of
// NextWork, and takes it in one request (POST /api/v1/jobs/work/take,
// scope comment:create); the work's slot comes back as taken.
// store.ErrNotFound when no slot is eligible.
func (c *Client) TakeWork(ctx context.Context, q WorkQuery) (Work, error) {
	var w Work
	err := c.do(ctx, "POST", "/api/v1/jobs/work/take"+query("role", q.Role, "layer", layerParam(q.Layer), "type", string(q.Type), "domain", q.Domain), nil, &w)
	return w, err
}

// takeNextInOne is takeNext's loop with one-request tries (takeOne), or
// the two steps next and take once the server shows it lacks takeOne's
// route.
func takeNextInOne[T any](ctx context.Context, maxWait time.Duration, takeOne, next func() (T, error), take func(T) error) (T, error) {
	twoStep := false
	find := func() (T, error) {
		if twoStep {
			return next()
		}
		w, err := takeOne()
		if routeMissing(err) {
			twoStep = true
			return next()
		}
		return w, err
	}
	takeIt := func(w T) error {
		if !twoStep {
			return nil // takeOne took it
		}
		return take(w)
	}
	return takeNext(ctx, maxWait, find, takeIt)
}

// routeMissing reports an answer saying the server has no such route (a
// 404 other than no_open_slots, or a 405): a server older than the route,
// or one of the original protocol's.
func routeMissing(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Status == http.StatusMethodNotAllowed || (e.Status == http.StatusNotFound && e.Code != slots.ErrNoJob.Code)
}

// DoneAndTakeJob marks this agent's seat done and takes its next seat with
// the filters of q in one atomic step (POST
// /api/v1/claims/{claimId}/slots/{slotId}/done-and-take, scope
// comment:create): an agent working through the queue pays one request
// per seat. It returns the next job, its slot taken, or nil when no seat is
// left for this agent; the error is Done's. A server without the route is
// asked with Done and then TakeJob.
func (c *Client) DoneAndTakeJob(ctx context.Context, claimID, slotID string, q slots.JobQuery) (*slots.Job, error) {
	var out wire.DoneNextResponse
	path := "/api/v1/claims/" + esc(claimID) + "/slots/" + esc(slotID) + "/done-and-take" +
		query("role", string(q.Role), "domain", q.Domain, "strategy", string(q.Strategy))
	err := c.do(ctx, "POST", path, nil, &out)
	if !routeMissing(err) {
		if out.Next == nil {
			return nil, err
		}
		next := JobOf(*out.Next)
		return &next, err
	}
	if err := c.Done(ctx, claimID, slotID); err != nil {
		return nil, err
	}
	job, err := c.TakeJob(ctx, q)
	if routeMissing(err) { // the original API's two steps; a lost race is the Take's 409
		if job, err = c.NextJob(ctx, q); err == nil {
			err = c.Take(ctx, job.Claim.ID, job.Slot.ID)
		}
	}
	if errors.Is(err, store.ErrNotFound) && !routeMissing(err) {
		return nil, nil // no seat left for this agent
	}
	if err != nil {
		return nil, err
	}
	return &job, nil
}
