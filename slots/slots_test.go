package slots_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

func TestParseCommentType(t *testing.T) {
	for in, want := range map[string]slots.CommentType{
		"":                    slots.CommentAddition,
		"   ":                 slots.CommentAddition,
		"draft":               slots.CommentDraft,
		"Question":            slots.CommentQuestion,
		"supporting-evidence": slots.CommentSupportingEvidence,
		"Counter Evidence":    slots.CommentCounterEvidence,
		" DEFENSE ":           slots.CommentDefense,
		"supporting_evidence": slots.CommentSupportingEvidence,
	} {
		got, err := slots.ParseCommentType(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"rant", "questions", "supporting--evidence", "dräft", "critic"} {
		_, err := slots.ParseCommentType(in)
		require.ErrorIs(t, err, store.ErrInvalid, in)
	}
}

// FuzzParseCommentType checks that the normaliser never panics, accepts only
// the eight types, and is idempotent on what it accepts.
func FuzzParseCommentType(f *testing.F) {
	for _, s := range []string{"", "draft", "Supporting-Evidence", "counter evidence", "x", "\xff", "ANSWER"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := slots.ParseCommentType(in)
		if err != nil {
			if !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		again, err := slots.ParseCommentType(string(got))
		if err != nil || again != got {
			t.Fatalf("%q -> %q -> %q, %v", in, got, again, err)
		}
		if !utf8.ValidString(string(got)) || strings.ContainsAny(string(got), " -") {
			t.Fatalf("%q normalised to %q", in, got)
		}
	})
}

func TestRoleCommentTypes(t *testing.T) {
	for role, want := range map[slots.Role]slots.CommentType{
		slots.RoleQuestioner: "question", slots.RoleCritic: "criticism", slots.RoleSupporter: "supporting_evidence",
		slots.RoleCounter: "counter_evidence", slots.RoleContributor: "addition", slots.RoleDefender: "defense",
		slots.RoleAnswerer: "answer",
	} {
		require.True(t, role.Valid())
		require.Equal(t, want, role.CommentType())
	}
	require.False(t, slots.Role("judge").Valid())
}

func TestValidateRoles(t *testing.T) {
	n, err := slots.ValidateRoles([]slots.RoleCount{{Role: "critic", Count: 2}, {Role: "critic", Count: 3}})
	require.NoError(t, err)
	require.Equal(t, 5, n)
	var se *store.Error
	_, err = slots.ValidateRoles([]slots.RoleCount{{Role: "critic", Count: 20}, {Role: "answerer", Count: 1}})
	require.ErrorAs(t, err, &se)
	require.Equal(t, "too_many_slots", se.Code)
}

func TestCreateClaimValidation(t *testing.T) {
	ctx := context.Background()
	svc := slots.New(memstore.New())
	for _, in := range []slots.NewClaim{
		{Title: ""},
		{Title: "   "},
		{Title: strings.Repeat("t", slots.MaxTitleLen+1)},
		{Title: "t", Domain: strings.Repeat("d", slots.MaxDomainLen+1)},
		{Title: "t", Body: "\xff"},
	} {
		_, err := svc.CreateClaim(ctx, in)
		require.ErrorIs(t, err, store.ErrInvalid)
	}
	c, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "  padded  ", Domain: " physics "})
	require.NoError(t, err)
	require.Equal(t, "padded", c.Title)
	require.Equal(t, "physics", c.Domain)
}

// TestClaimsPageLimits: the claims listing pages 20 claims when not told
// and at most 500, as the original's listing does.
func TestClaimsPageLimits(t *testing.T) {
	ctx := context.Background()
	svc := slots.New(memstore.New())
	for i := range 501 {
		_, err := svc.CreateClaim(ctx, slots.NewClaim{Title: fmt.Sprint("claim ", i)})
		require.NoError(t, err)
	}
	page, err := svc.Claims(ctx, slots.ClaimsQuery{})
	require.NoError(t, err)
	require.Len(t, page.Items, 20, "the original's default")
	require.NotEmpty(t, page.NextCursor)
	page, err = svc.Claims(ctx, slots.ClaimsQuery{Limit: 100000})
	require.NoError(t, err)
	require.Len(t, page.Items, 500, "the original's most: capped, not refused")
}

// windowSpy records the windows a Service asks the store for.
type windowSpy struct {
	*memstore.Store
	asked []slots.ListCommentsParams
}

func (s *windowSpy) ListComments(ctx context.Context, claimID string, p slots.ListCommentsParams) ([]slots.Comment, error) {
	s.asked = append(s.asked, p)
	return s.Store.ListComments(ctx, claimID, p)
}

// TestCommentsReadTheirWindow: a listing asks the store for the comments
// its order needs, never more than MaxCommentsLimit, and sort=top ranks the
// claim's oldest MaxCommentsLimit by the replies among them, as the
// original's does.
func TestCommentsReadTheirWindow(t *testing.T) {
	ctx := context.Background()
	spy := &windowSpy{Store: memstore.New()}
	svc := slots.New(spy)
	author := identity.WithKey(ctx, identity.Key{ID: "key_a", Name: "a"})
	c, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "Long thread"})
	require.NoError(t, err)
	var ids []string
	for i := range slots.MaxCommentsLimit + 1 {
		nc := slots.NewComment{ClaimID: c.ID, Body: fmt.Sprint("comment ", i)}
		if i == 1 {
			nc.ParentID = ids[0] // a reply within the oldest MaxCommentsLimit
		}
		m, err := svc.AddComment(author, nc)
		require.NoError(t, err)
		ids = append(ids, m.ID)
	}
	late := ids[slots.MaxCommentsLimit] // past the oldest MaxCommentsLimit
	for range 2 {
		_, err := svc.AddComment(author, slots.NewComment{ClaimID: c.ID, Body: "re", ParentID: late})
		require.NoError(t, err)
	}
	_, err = svc.AddComment(author, slots.NewComment{ClaimID: c.ID, Body: "re", ParentID: ids[2]}) // a reply past them
	require.NoError(t, err)

	for _, tc := range []struct {
		p    slots.CommentsParams
		want slots.ListCommentsParams
	}{
		{slots.CommentsParams{Sort: "new", Limit: 7}, slots.ListCommentsParams{Limit: 7, Newest: true}},
		{slots.CommentsParams{Sort: "OLD"}, slots.ListCommentsParams{Limit: slots.DefaultCommentsLimit}},
		{slots.CommentsParams{Sort: "old", Limit: 100000}, slots.ListCommentsParams{Limit: slots.MaxCommentsLimit}},
		{slots.CommentsParams{Limit: 3}, slots.ListCommentsParams{Limit: slots.MaxCommentsLimit}},
	} {
		spy.asked = nil
		_, err := svc.Comments(ctx, c.ID, tc.p)
		require.NoError(t, err)
		require.Equal(t, []slots.ListCommentsParams{tc.want}, spy.asked, "%+v", tc.p)
	}
	top, err := svc.Comments(ctx, c.ID, slots.CommentsParams{Limit: 3})
	require.NoError(t, err)
	require.Equal(t, []string{ids[0], ids[slots.MaxCommentsLimit-1], ids[slots.MaxCommentsLimit-2]}, commentIDs(top),
		"the oldest MaxCommentsLimit ranked by the replies among them, then the newest")
}

func commentIDs(cs []slots.Comment) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// TestChangesArePublished follows ClaimsTopic while a claim is created,
// commented on, configured, and its slot taken and done: each change
// publishes the claim's ID once it is stored; a refused change publishes
// nothing. Events go out in the background, in order, so each step waits
// for its own.
func TestChangesArePublished(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	svc := slots.New(st, slots.WithNotifier(st))
	sub, err := svc.SubscribeClaims(ctx)
	require.NoError(t, err)
	defer sub.Close()
	next := func() string {
		t.Helper()
		select {
		case b := <-sub.C:
			return string(b)
		case <-time.After(5 * time.Second):
			t.Fatal("no event published")
			return ""
		}
	}
	c, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "water boils at 100C"})
	require.NoError(t, err)
	require.Equal(t, c.ID, next())
	agent := identity.Key{ID: "key_ada", Name: "Ada", Scopes: []identity.Scope{slots.ScopeCommentCreate}}
	_, err = svc.AddComment(identity.WithKey(ctx, agent), slots.NewComment{ClaimID: c.ID, Body: "a draft", CommentType: "draft"})
	require.NoError(t, err)
	require.Equal(t, c.ID, next())
	_, err = svc.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})
	require.NoError(t, err)
	require.Equal(t, c.ID, next())
	ss, err := svc.Slots(ctx, c.ID)
	require.NoError(t, err)
	_, err = svc.Take(identity.WithKey(ctx, agent), c.ID, ss[0].ID)
	require.NoError(t, err)
	require.Equal(t, c.ID, next())
	_, err = svc.Take(identity.WithKey(ctx, agent), c.ID, ss[0].ID)
	require.Error(t, err)
	// Had the refused take published, its event would come before the
	// next claim's.
	other, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "ice floats"})
	require.NoError(t, err)
	require.Equal(t, other.ID, next(), "the refused take published nothing")
	_, err = svc.Done(identity.WithKey(ctx, agent), c.ID, ss[0].ID)
	require.NoError(t, err)
	require.Equal(t, c.ID, next())

	// Without a notifier a service announces its changes to its own
	// subscribers, whose subscriptions say so (they re-read every second
	// for the changes of other processes).
	alone := slots.New(st)
	sub2, err := alone.SubscribeClaims(ctx)
	require.NoError(t, err)
	defer sub2.Close()
	require.True(t, sub2.Local)
	third, err := alone.CreateClaim(ctx, slots.NewClaim{Title: "lead sinks"})
	require.NoError(t, err)
	select {
	case got := <-sub2.C:
		require.Equal(t, third.ID, string(got))
	case <-time.After(5 * time.Second):
		t.Fatal("a service without a notifier did not announce to its own subscriber")
	}
}

// nextSlotSpy records what the service asks NextOpenSlot.
type nextSlotSpy struct {
	slots.Store
	got []slots.NextSlotParams
}

func (s *nextSlotSpy) NextOpenSlot(ctx context.Context, p slots.NextSlotParams) (slots.Job, error) {
	s.got = append(s.got, p)
	return s.Store.NextOpenSlot(ctx, p)
}

// TestNextJobAsksForTheAgent: the calling key's ID reaches the store with
// either strategy, so the store can skip the claims it holds; a caller
// without a key asks for nobody in particular.
func TestNextJobAsksForTheAgent(t *testing.T) {
	ctx := context.Background()
	spy := &nextSlotSpy{Store: memstore.New()}
	svc := slots.New(spy)
	asA := identity.WithKey(ctx, identity.Key{ID: "key_a"})
	for _, c := range []struct {
		ctx context.Context
		q   slots.JobQuery
	}{
		{asA, slots.JobQuery{}},
		{asA, slots.JobQuery{Strategy: slots.StrategyRandom, Role: slots.RoleCritic, Domain: "law"}},
		{ctx, slots.JobQuery{}},
	} {
		_, err := svc.NextJob(c.ctx, c.q)
		require.ErrorIs(t, err, slots.ErrNoJob)
	}
	require.Len(t, spy.got, 3)
	require.Equal(t, slots.NextSlotParams{AgentKeyID: "key_a", Random: -1}, spy.got[0])
	require.Equal(t, "key_a", spy.got[1].AgentKeyID)
	require.Equal(t, slots.RoleCritic, spy.got[1].Role)
	require.Equal(t, "law", spy.got[1].Domain)
	require.True(t, spy.got[1].Random >= 0 && spy.got[1].Random < 1)
	require.Equal(t, slots.NextSlotParams{Random: -1}, spy.got[2])
}
