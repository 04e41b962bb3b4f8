package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/console"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/browser"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// newSquadServer serves /squad over the discussion routes on memory; with
// keys, those routes require the API keys of the returned identity
// service, and /api/v1 is served too.
func newSquadServer(t *testing.T, keyed bool) (*discussion.Service, *identity.Service, *httptest.Server) {
	st := memstore.New()
	svc := discussion.New(st, discussion.WithNotifier(st))
	keys := identity.New(st, identity.WithScopes(httpapi.Scopes()))
	var opts []httpapi.DiscussionOption
	mux := http.NewServeMux()
	if keyed {
		opts = append(opts, httpapi.WithKeys(keys))
		mux.Handle("/api/v1/", httpapi.Slots(slots.New(st), keys))
	}
	d := httpapi.Discussion(svc, opts...)
	for _, p := range []string{"/api/discussion", "/api/discussion/", "/api/squad-chat", "/api/squad-chat/"} {
		mux.Handle(p, d)
	}
	c := console.Handler()
	mux.Handle("/squad", c)
	mux.Handle("/console/", c)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return svc, keys, srv
}

// TestSquadPageLive opens /squad, asks the squad a question needing two
// answers, and watches the page go from 0/2 to resolved without reloading
// while two agents answer through the API.
func TestSquadPageLive(t *testing.T) {
	svc, _, srv := newSquadServer(t, false)
	ctx := browser.New(t, 60*time.Second)

	bg := context.Background()
	_, err := svc.PostMessage(bg, discussion.Post{AgentName: "Builder", Message: "morning, squad <b>all</b>"})
	require.NoError(t, err)
	p, _, err := svc.Create(bg, discussion.NewPrompt{RequesterAgent: "Developer", PromptMessage: "Before shipping, what should I check?", RequiredResponses: intp(2)})
	require.NoError(t, err)

	// The page re-renders the prompt when its stream opens, so both texts
	// are read in one evaluation: two reads could straddle a re-render and
	// read a detached node's empty text.
	var texts []string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/squad"),
		chromedp.WaitVisible(`.prompt .count`, chromedp.ByQuery),
		chromedp.WaitVisible(`.live.on`, chromedp.ByQuery),
		chromedp.Evaluate(`[document.querySelector('.prompt .count').textContent, document.querySelector('.prompt .status').textContent]`, &texts),
	))
	require.Equal(t, []string{"0/2 responses", "⏱ collecting answers"}, texts)

	_, _, err = svc.Respond(bg, p.ID, discussion.Response{AgentName: "Builder", Message: "check the migrations"})
	require.NoError(t, err)
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible(`//span[@class="count" and text()="1/2 responses"]`, chromedp.BySearch)))
	_, _, err = svc.Respond(bg, p.ID, discussion.Response{AgentName: "Growth", Message: "and the error pages"})
	require.NoError(t, err)
	var threaded int
	var bold int
	var shot []byte
	require.NoError(t, chromedp.Run(ctx,
		chromedp.WaitVisible(`.prompt .status-resolved`, chromedp.ByQuery),
		chromedp.WaitVisible(`//span[@class="count" and text()="2/2 responses"]`, chromedp.BySearch),
		// The count may be drawn a render before the second response is:
		// wait for both under the prompt, then read how many there are.
		chromedp.Poll(`document.querySelectorAll(".prompt .responses .msg").length >= 2`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Evaluate(`document.querySelectorAll(".prompt .responses .msg").length`, &threaded),
		chromedp.Evaluate(`document.querySelectorAll(".feed b").length`, &bold),
		chromedp.CaptureScreenshot(&shot),
	))
	require.Equal(t, 2, threaded, "responses are threaded under their prompt")
	require.Zero(t, bold, "message text is never markup")
	browser.SaveScreenshot(t, "squad.png", shot)
}

func intp(n int) *int { return &n }

// TestSquadPageThreads replies to a message from /squad and sees the reply
// threaded under it, stored with reply_to_id; a task_ref is shown as a tag.
func TestSquadPageThreads(t *testing.T) {
	svc, _, srv := newSquadServer(t, false)
	ctx := browser.New(t, 60*time.Second)

	bg := context.Background()
	task := "task-9"
	root, err := svc.PostMessage(bg, discussion.Post{AgentName: "Builder", Message: "who takes the login bug?", TaskRef: &task})
	require.NoError(t, err)
	_, err = svc.PostMessage(bg, discussion.Post{AgentName: "Growth", Message: "unrelated"})
	require.NoError(t, err)

	var tag, parent string
	var shot []byte
	sel := `.msg[data-msg="` + root.ID + `"]`
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/squad"),
		chromedp.WaitVisible(sel+` .reply-to`, chromedp.ByQuery),
		chromedp.WaitVisible(`.live.on`, chromedp.ByQuery),
		// Read and clicked from the page in one step each: the list
		// re-renders on each event of its stream, so a node found by one
		// call may be gone (and read empty) by the next.
		chromedp.Evaluate(`document.querySelector('`+sel+` .task').textContent.trim()`, &tag),
		chromedp.Evaluate(`document.querySelector('`+sel+` .reply-to').click()`, nil),
		chromedp.WaitVisible(`#replying`, chromedp.ByQuery),
		browser.Type(`#text`, "I will", chromedp.ByQuery),
		chromedp.Click(`#post button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(sel+` .thread .msg`, chromedp.ByQuery),
		chromedp.WaitNotVisible(`#replying`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('`+sel+` .thread .msg').parentElement.parentElement.dataset.msg`, &parent),
		chromedp.CaptureScreenshot(&shot),
	))
	require.Equal(t, "#task-9", tag)
	require.Equal(t, root.ID, parent, "the reply is threaded under the message it answers")
	ms, err := svc.Messages(bg, 1, "")
	require.NoError(t, err)
	require.Equal(t, "I will", ms[0].Message)
	require.Equal(t, &root.ID, ms[0].ReplyToID)
	require.True(t, ms[0].IsHuman)
	browser.SaveScreenshot(t, "squad-threads.png", shot)
}

// newArenaServer serves /arena/ over the arena routes on memory; with
// keys (not nil), those routes require them.
func newArenaServer(t *testing.T, keys func(st *memstore.Store) *identity.Service) (*arena.Service, *identity.Service, *httptest.Server) {
	st := memstore.New()
	games := arena.New(st, arena.WithNotifier(st))
	var opts []httpapi.ArenaOption
	var ks *identity.Service
	if keys != nil {
		ks = keys(st)
		opts = append(opts, httpapi.WithKeys(ks))
	}
	mux := http.NewServeMux()
	mux.Handle("/api/games/", httpapi.Arena(games, opts...))
	c := console.Handler()
	mux.Handle("/arena/", c)
	mux.Handle("/console/", c)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return games, ks, srv
}

// TestArenaPageDrawsTheDecision watches a game and sees the decision drawn
// after it happens, without reloading.
func TestArenaPageDrawsTheDecision(t *testing.T) {
	games, _, srv := newArenaServer(t, nil)
	ctx := browser.New(t, 60*time.Second)

	bg := context.Background()
	g, err := games.Create(bg, 0, 0)
	require.NoError(t, err)
	for _, n := range []string{"Alice", "Bob", "Charlie", "Dana"} {
		_, err := games.Register(bg, g.ID, n, nil)
		require.NoError(t, err)
	}
	g, err = games.Start(bg, g.ID)
	require.NoError(t, err)
	var op string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/arena/"+g.ID),
		chromedp.WaitVisible(`.live.on`, chromedp.ByQuery),
		chromedp.WaitVisible(`#majority .agent`, chromedp.ByQuery),
		chromedp.Text(`#operator`, &op, chromedp.ByID),
	))
	require.Equal(t, "Alice", op)

	r := g.Current()
	for range 3 {
		for _, id := range append(append([]string{}, r.Majority...), r.Minority...) {
			g, err = games.Argue(bg, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: id, Text: "Pull the lever"})
			require.NoError(t, err)
		}
		r = g.Current()
	}
	resolved := r
	g, err = games.Decide(bg, arena.DecideParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Operator, Decision: arena.SaveMajority})
	require.NoError(t, err)
	next := g.Current()
	require.NotEqual(t, resolved.ID, next.ID, "the next round started at once")
	name := map[string]string{}
	for _, a := range g.Agents {
		name[a.ID] = a.DisplayName
	}
	names := func(ids []string) []string {
		out := []string{}
		for _, id := range ids {
			out = append(out, name[id])
		}
		return out
	}
	track := func(id, class string) string {
		return `Array.from(document.querySelectorAll('#` + id + ` .agent` + class + `')).map(e => e.textContent)`
	}

	// While the trolley runs, the tracks still show the resolved round:
	// the minority track taken, its agents lost, the majority saved.
	var outcome, status string
	var lost, survived []string
	var shot []byte
	require.NoError(t, chromedp.Run(ctx,
		chromedp.WaitVisible(`#outcome[data-branch="minority"]`, chromedp.ByQuery),
		chromedp.Text(`#outcome`, &outcome, chromedp.ByID),
		chromedp.Text(`#status`, &status, chromedp.ByID),
		chromedp.Text(`#operator`, &op, chromedp.ByID),
		chromedp.Evaluate(track("minority", ".lost"), &lost),
		chromedp.Evaluate(track("majority", ".survived"), &survived),
		chromedp.Sleep(1300*time.Millisecond), // let the trolley arrive for the screenshot
		chromedp.CaptureScreenshot(&shot),
	))
	browser.SaveScreenshot(t, "arena.png", shot)
	require.Contains(t, outcome, "the trolley took the minority track. Survived:")
	require.Contains(t, outcome, "Charlie")
	require.Equal(t, "round 1 resolved", status)
	require.Equal(t, "Alice", op, "the resolved round's operator stays at the lever")
	require.Equal(t, names(resolved.Minority), lost)
	require.Equal(t, names(resolved.Majority), survived)

	// Then the page moves on to the round that started.
	var majority, minority, marked []string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.WaitVisible(`//span[@id="status" and contains(text(), "round 2")]`, chromedp.BySearch),
		chromedp.Text(`#operator`, &op, chromedp.ByID),
		chromedp.Evaluate(track("majority", ""), &majority),
		chromedp.Evaluate(track("minority", ""), &minority),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('.agent.lost, .agent.survived')).map(e => e.textContent)`, &marked),
	))
	require.Equal(t, name[next.Operator], op)
	require.Equal(t, names(next.Majority), majority)
	require.Equal(t, names(next.Minority), minority)
	require.Empty(t, marked, "the new round's agents carry no outcome")
	browser.SaveScreenshot(t, "arena.png", shot)
}

// TestSquadPageWithKeys: on a server that requires keys, /squad asks for
// one; given one (a "#key=" fragment), it follows the chat live and posts
// under the key's name.
func TestSquadPageWithKeys(t *testing.T) {
	svc, keys, srv := newSquadServer(t, true)
	bg := context.Background()
	_, token, err := keys.CreateKey(identity.WithKey(bg, keys.Admin()), identity.NewKey{Name: "Ops Lead", Scopes: []identity.Scope{discussion.ScopeWrite, discussion.ScopeAdmin}})
	require.NoError(t, err)
	_, err = svc.PostMessage(bg, discussion.Post{AgentName: "Builder", Message: "morning"})
	require.NoError(t, err)

	ctx := browser.New(t, 60*time.Second)
	var live, name string
	var readOnly bool
	var shot []byte
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/squad"),
		chromedp.WaitVisible(`#keyform`, chromedp.ByQuery),
		chromedp.Text(`#live`, &live, chromedp.ByQuery),
	))
	require.Equal(t, "○ key needed", live)

	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate("about:blank"), // a new fragment alone would not load the page again
		chromedp.Navigate(srv.URL+"/squad#key="+token),
		chromedp.WaitVisible(`.live.on`, chromedp.ByQuery),
		chromedp.WaitVisible(`.msg .text`, chromedp.ByQuery),
		chromedp.Value(`#name`, &name, chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("name").readOnly`, &readOnly),
		browser.Type(`#text`, "ship it", chromedp.ByQuery),
		chromedp.Click(`#post button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`//div[contains(@class,"human")]/span[@class="text" and text()="ship it"]`, chromedp.BySearch),
		chromedp.CaptureScreenshot(&shot),
	))
	require.Equal(t, "Ops Lead", name, "the name is the key's")
	require.True(t, readOnly)
	ms, err := svc.Messages(bg, 1, "")
	require.NoError(t, err)
	require.Equal(t, "ship it", ms[0].Message)
	require.Equal(t, "Ops Lead", ms[0].AgentName)
	require.True(t, ms[0].IsHuman)
	browser.SaveScreenshot(t, "squad-keys.png", shot)
}

// TestArenaPageWithKeys: on a server that requires keys, /arena/{id} asks
// for one; given one, it draws the game and follows it live.
func TestArenaPageWithKeys(t *testing.T) {
	games, keys, srv := newArenaServer(t, func(st *memstore.Store) *identity.Service {
		return identity.New(st, identity.WithScopes(httpapi.Scopes()))
	})
	bg := context.Background()
	_, token, err := keys.CreateKey(identity.WithKey(bg, keys.Admin()), identity.NewKey{Name: "Spectator"})
	require.NoError(t, err)
	g, err := games.Create(bg, 0, 0)
	require.NoError(t, err)
	keyOf := map[string]string{}
	for _, n := range []string{"Alice", "Bob", "Charlie"} {
		a, err := games.Register(identity.WithKey(bg, identity.Key{ID: "key_" + n}), g.ID, n, nil)
		require.NoError(t, err)
		keyOf[a.ID] = a.KeyID
	}
	g, err = games.Start(bg, g.ID)
	require.NoError(t, err)

	ctx := browser.New(t, 60*time.Second)
	var live, op string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/arena/"+g.ID),
		chromedp.WaitVisible(`#keyform`, chromedp.ByQuery),
		chromedp.Text(`#live`, &live, chromedp.ByQuery),
	))
	require.Contains(t, live, "key needed")

	var rows int
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(srv.URL+"/arena/"+g.ID+"#key="+token),
		chromedp.WaitVisible(`.live.on`, chromedp.ByQuery),
		chromedp.WaitVisible(`#majority .agent`, chromedp.ByQuery),
		chromedp.Text(`#operator`, &op, chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll("#scores tr").length`, &rows),
	))
	require.Equal(t, "Alice", op)
	require.Equal(t, 3, rows)
	r := g.Current()
	_, err = games.Argue(identity.WithKey(bg, identity.Key{ID: keyOf[r.Majority[0]]}), arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: r.Majority[0], Text: "Pull the lever"})
	require.NoError(t, err)
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible(`//li[contains(text(), "Pull the lever")]`, chromedp.BySearch)),
		"the argument arrives over the keyed stream")
}
