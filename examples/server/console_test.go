package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/examples/internal/bots"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/browser"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// consoleAdmin is the admin key of the servers the console tests start.
const consoleAdmin = "console-admin"

// consoleBackends runs fn once per backend with the base URLs of two
// servers: page, where the browser looks, and agents, where the agents and
// the test's own client act. On Redis and PostgreSQL they are two servers
// sharing the backend, so every page is also shown to follow what another
// process did; on memory they are one server.
func consoleBackends(t *testing.T, fn func(t *testing.T, page, agents string)) {
	args := func(more ...string) []string { return append([]string{"-admin-key", consoleAdmin, "-quiet"}, more...) }
	t.Run("memory", func(t *testing.T) {
		base, _ := serve(t, args()...)
		fn(t, base, base)
	})
	t.Run("redis", func(t *testing.T) {
		_, prefix := testdb.RedisClient(t)
		a := args("-store", testdb.RedisURL(t), "-redis-prefix", prefix)
		page, _ := serve(t, a...)
		agents, _ := serve(t, a...)
		fn(t, page, agents)
	})
	t.Run("postgres", func(t *testing.T) {
		a := args("-store", testdb.PostgresDSN(t))
		page, _ := serve(t, a...)
		agents, _ := serve(t, a...)
		fn(t, page, agents)
	})
}

// TestJobsPageSlotsGoLive opens /jobs as an operator with five agents
// polling the job queue, configures three role slots with the + buttons,
// clicks "Open slots", and sees the three seats turn yellow with the names
// of the agents that took them, then green when they are done — without a
// reload.
func TestJobsPageSlotsGoLive(t *testing.T) {
	consoleBackends(t, func(t *testing.T, page, agents string) {
		ctx := browser.New(t, 90*time.Second)
		bg, stop := context.WithCancel(context.Background())
		defer stop()
		c := client.New(agents, client.WithToken(consoleAdmin))
		op, err := c.CreateKey(bg, identity.NewKey{Name: "Operator", Scopes: []identity.Scope{slots.ScopeClaimCreate, slots.ScopeSlotsConfigure, slots.ScopeCommentCreate, prism.ScopePipelineReview}})
		require.NoError(t, err)
		claim, err := c.As(op.Key).CreateClaim(bg, client.NewClaim{Title: "Crows plan for tomorrow", Body: "Scrub jays cache food where they expect to be hungry.", Domain: "animal cognition"})
		require.NoError(t, err)
		_, err = c.As(op.Key).Comment(bg, claim.ID, client.NewComment{Body: "A draft answer to deliberate on.", CommentType: string(slots.CommentDraft)})
		require.NoError(t, err)

		// Five agents poll for any seat; a winner holds its seat until the
		// page has shown all three taken (release), then comments and marks
		// it done: the page is seen in both states however slow the machine.
		names := []string{"Skeptic-1", "Skeptic-2", "Skeptic-3", "Skeptic-4", "Skeptic-5"}
		release := make(chan struct{})
		var wg sync.WaitGroup
		for _, n := range names {
			k, err := c.CreateKey(bg, identity.NewKey{Name: n, Scopes: []identity.Scope{slots.ScopeCommentCreate}})
			require.NoError(t, err)
			wg.Add(1)
			go func() {
				defer wg.Done()
				agent := c.As(k.Key)
				job, err := agent.TakeNextJob(bg, slots.JobQuery{}, 200*time.Millisecond)
				if err != nil {
					return
				}
				select {
				case <-release:
				case <-bg.Done():
					return
				}
				if _, err := agent.Comment(bg, job.Claim.ID, client.NewComment{Body: "The samples are small.", CommentType: string(job.Slot.Role.CommentType())}); err == nil {
					_ = agent.Done(bg, job.Claim.ID, job.Slot.ID)
				}
			}()
		}
		defer wg.Wait()
		defer stop()

		row := fmt.Sprintf(`details[data-claim=%q]`, claim.ID)
		var total string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(page+"/jobs#key="+op.Key),
			chromedp.WaitVisible(`.live.on`, chromedp.ByQuery),
			chromedp.WaitVisible(row+` summary .bar`, chromedp.ByQuery),
			chromedp.Evaluate(`window.notReloaded = true`, nil),
			chromedp.Click(row+` summary`, chromedp.ByQuery),
			chromedp.WaitVisible(row+` .configurator`, chromedp.ByQuery),
			chromedp.Click(row+` .role[data-role="critic"] .plus`, chromedp.ByQuery),
			chromedp.Click(row+` .role[data-role="critic"] .plus`, chromedp.ByQuery),
			chromedp.Click(row+` .role[data-role="questioner"] .plus`, chromedp.ByQuery),
			chromedp.Click(row+` .role[data-role="questioner"] .plus`, chromedp.ByQuery),
			chromedp.Click(row+` .role[data-role="questioner"] .minus`, chromedp.ByQuery),
			chromedp.Text(row+` .total`, &total, chromedp.ByQuery),
		))
		require.Equal(t, "3/20 slots", total)

		chips := func(state string) string {
			return fmt.Sprintf(`Array.from(document.querySelectorAll('%s .role-slots .chip.%s')).map(e => e.textContent)`, row, state)
		}
		var taken, done []string
		var takenShot, doneShot []byte
		var notReloaded bool
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Click(row+` .open-slots`, chromedp.ByQuery),
			chromedp.Poll(chips("taken")+`.length === 3`, nil, chromedp.WithPollingInterval(20*time.Millisecond)),
			chromedp.Evaluate(chips("taken"), &taken),
			chromedp.CaptureScreenshot(&takenShot),
		))
		close(release)
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Poll(chips("done")+`.length === 3`, nil, chromedp.WithPollingInterval(20*time.Millisecond)),
			chromedp.Evaluate(chips("done"), &done),
			chromedp.CaptureScreenshot(&doneShot),
			chromedp.Evaluate(`window.notReloaded === true`, &notReloaded),
		))
		browser.SaveScreenshot(t, "jobs-taken.png", takenShot)
		browser.SaveScreenshot(t, "jobs-done.png", doneShot)
		require.True(t, notReloaded, "the page was not reloaded")
		slices.Sort(taken)
		slices.Sort(done)
		require.Equal(t, taken, done, "the agents that took the seats finished them")
		require.Len(t, slices.Compact(slices.Clone(taken)), 3, "three different agents")
		for _, n := range taken {
			require.True(t, strings.HasPrefix(n, "Skeptic-"), n)
		}

		// The claim's comments: the draft and the three criticisms, each
		// under its author's name, on a 24-hour clock.
		var authors, times []string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Poll(`document.querySelectorAll('`+row+` .comments .entry').length === 4`, nil, chromedp.WithPollingInterval(20*time.Millisecond)),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('`+row+` .comments .entry .agent')).map(e => e.textContent)`, &authors),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('`+row+` .comments .entry .when')).map(e => e.textContent)`, &times),
		))
		require.Equal(t, "Operator", authors[0], "the draft")
		slices.Sort(authors[1:])
		require.Equal(t, done, authors[1:], "each criticism under the name of the agent that wrote it")
		for _, tm := range times {
			require.Regexp(t, `^\d{2}:\d{2}:\d{2}$`, tm, "a 24-hour clock")
		}
	})
}

// TestJobsPageFlagAdvance drives a claim's first layer to a low-confidence
// consensus, sees /jobs draw the layer red with an open flag, clicks
// Advance, and sees the layer turn green and the pipeline move on to layer
// 2 — without a reload.
func TestJobsPageFlagAdvance(t *testing.T) {
	consoleBackends(t, func(t *testing.T, page, agents string) {
		ctx := browser.New(t, 60*time.Second)
		bg := context.Background()
		c := client.New(agents, client.WithToken(consoleAdmin))
		op, err := c.CreateKey(bg, identity.NewKey{Name: "Reviewer", Scopes: []identity.Scope{slots.ScopeClaimCreate, prism.ScopePipelineReview}})
		require.NoError(t, err)
		claim, err := c.As(op.Key).CreateClaim(bg, client.NewClaim{Title: "Octopuses dream", Domain: "animal cognition"})
		require.NoError(t, err)

		row := fmt.Sprintf(`details[data-claim=%q]`, claim.ID)
		var stage string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(page+"/jobs#key="+op.Key),
			chromedp.WaitVisible(`.live.on`, chromedp.ByQuery),
			chromedp.WaitVisible(row+` summary .bar .seg.work`, chromedp.ByQuery),
			chromedp.Evaluate(`window.notReloaded = true`, nil),
			chromedp.Click(row+` summary`, chromedp.ByQuery),
			chromedp.WaitVisible(row+` .role-slots`, chromedp.ByQuery),
			chromedp.Text(row+` summary .stage`, &stage, chromedp.ByQuery),
		))
		require.Equal(t, "layer 1/7 · Framing · work phase · waiting for agents (2 open seats)", stage)

		// Two agents do the framing work, two others (one seat per agent
		// per layer) agree on it with little confidence.
		framers := make([]*client.Client, 4)
		for i := range framers {
			k, err := c.CreateKey(bg, identity.NewKey{Name: fmt.Sprintf("Framer-%d", i+1), Scopes: []identity.Scope{slots.ScopeCommentCreate}})
			require.NoError(t, err)
			framers[i] = c.As(k.Key)
		}
		for i, a := range framers {
			conf := 0.9
			if i >= 2 {
				conf = 0.2
			}
			w, err := a.NextWork(bg, client.WorkQuery{})
			require.NoError(t, err)
			require.NoError(t, a.TakeStage(bg, w.Claim.ID, w.Slot.ID))
			if i == 0 { // a seat taken: the layer reads in progress, no longer waiting
				require.NoError(t, chromedp.Run(ctx,
					chromedp.WaitVisible(`//details[@data-claim="`+claim.ID+`"]//span[contains(@class, "stage") and text()="layer 1/7 · Framing · work phase · in progress (1/2 seats taken, 0 done)"]`, chromedp.BySearch),
					chromedp.WaitVisible(row+` .layer[data-layer="1"] .stage-slots .chip.taken`, chromedp.ByQuery),
				))
			}
			require.NoError(t, a.FinishStage(bg, w.Claim.ID, w.Slot.ID, client.StageSubmission{Body: "framing notes", Output: bots.Output(1, prism.Phase(w.Slot.Phase), nil), Confidence: &conf}))
		}

		var flaggedShot, shot []byte
		var notReloaded bool
		require.NoError(t, chromedp.Run(ctx,
			chromedp.WaitVisible(row+` summary .bar .seg.flagged`, chromedp.ByQuery),
			chromedp.WaitVisible(row+` .flag.open .flag-advance`, chromedp.ByQuery),
			chromedp.Text(row+` summary .stage`, &stage, chromedp.ByQuery),
			chromedp.CaptureScreenshot(&flaggedShot),
		))
		require.Equal(t, "⚑ flagged for review · layer 1/7 · Framing", stage)
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Click(row+` .flag.open .flag-advance`, chromedp.ByQuery),
			chromedp.WaitVisible(row+` .flag.resolved`, chromedp.ByQuery),
			chromedp.WaitVisible(row+` summary .bar .seg.done`, chromedp.ByQuery),
			chromedp.Text(row+` summary .stage`, &stage, chromedp.ByQuery),
			chromedp.Evaluate(`window.notReloaded === true`, &notReloaded),
			chromedp.CaptureScreenshot(&shot),
		))
		browser.SaveScreenshot(t, "jobs-flagged.png", flaggedShot)
		browser.SaveScreenshot(t, "jobs-advanced.png", shot)
		require.Equal(t, "layer 2/7 · Classification · work phase · waiting for agents (2 open seats)", stage)
		var inFirst, inSecond, lists int
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Evaluate(`document.querySelectorAll('`+row+` .layer[data-layer="1"] .slot').length`, &inFirst),
			chromedp.Evaluate(`document.querySelectorAll('`+row+` .layer[data-layer="2"] .stage-slots .slot').length`, &inSecond),
			chromedp.Evaluate(`document.querySelectorAll('`+row+` .stage-slots').length`, &lists),
		))
		require.Equal(t, 0, inFirst, "the done layer's column lists no seats")
		require.Equal(t, 2, inSecond, "the current layer's seats sit under its own column")
		require.Equal(t, 1, lists)
		require.True(t, notReloaded, "the page was not reloaded")
		p, err := c.Pipeline(bg, claim.ID)
		require.NoError(t, err)
		require.Equal(t, 2, p.CurrentLayer)
	})
}

// TestJobsPageConsensusRecord keeps /jobs open while Prism workers drive a
// claim through all seven layers, and sees the bar fill green and the
// consensus record appear.
func TestJobsPageConsensusRecord(t *testing.T) {
	consoleBackends(t, func(t *testing.T, page, agents string) {
		ctx := browser.New(t, 90*time.Second)
		bg, stop := context.WithCancel(context.Background())
		defer stop()
		c := client.New(agents, client.WithToken(consoleAdmin))
		op, err := c.CreateKey(bg, identity.NewKey{Name: "Operator", Scopes: []identity.Scope{slots.ScopeClaimCreate}})
		require.NoError(t, err)
		claim, err := c.As(op.Key).CreateClaim(bg, client.NewClaim{Title: "Bees can count to four", Body: "Honeybees trained on landmarks count up to four.", Domain: "animal cognition"})
		require.NoError(t, err)

		row := fmt.Sprintf(`details[data-claim=%q]`, claim.ID)
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(page+"/jobs#key="+op.Key),
			chromedp.WaitVisible(`.live.on`, chromedp.ByQuery),
			chromedp.Click(row+` summary`, chromedp.ByQuery),
			chromedp.WaitVisible(row+` .role-slots`, chromedp.ByQuery),
		))
		var wg sync.WaitGroup
		defer wg.Wait()
		defer stop()
		// Deliberation has nine seats (six work, three consensus) and an agent
		// holds at most one seat of a layer: nine workers at least.
		for i := range 10 {
			k, err := c.CreateKey(bg, identity.NewKey{Name: fmt.Sprintf("Worker-%d", i+1), Scopes: []identity.Scope{slots.ScopeCommentCreate}})
			require.NoError(t, err)
			wg.Add(1)
			go func() { defer wg.Done(); bots.PrismWorker(bg, c.As(k.Key), uint64(i)) }()
		}
		var rec, stage string
		var done int
		var shot []byte
		require.NoError(t, chromedp.Run(ctx,
			chromedp.WaitVisible(row+` .consensus .rec`, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelector('`+row+` .consensus .rec').textContent`, &rec), // rebuilt on every change: read in one step
			chromedp.Text(row+` summary .stage`, &stage, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll('`+row+` summary .bar .seg.done').length`, &done),
			chromedp.CaptureScreenshot(&shot),
		))
		browser.SaveScreenshot(t, "jobs-complete.png", shot)
		cons, err := c.Consensus(bg, claim.ID)
		require.NoError(t, err)
		require.Equal(t, cons.Recommendation, rec)
		require.Equal(t, "✓ complete · 7/7 layers", stage)
		require.Equal(t, 7, done)

		// What each layer's agents wrote: every layer listed, the last one
		// open with its three consensus votes, each by a worker's name
		// with its confidence and text; Classification's work carries its
		// structured output.
		var layers, synthesis, confidences []string
		var texts []string
		var classification string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.WaitVisible(row+` .outputs details[data-layer="7"][open] .entry`, chromedp.ByQuery),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('`+row+` .outputs details')).map(e => e.dataset.layer)`, &layers),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('`+row+` .outputs details[data-layer="7"] .entry .agent')).map(e => e.textContent)`, &synthesis),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('`+row+` .outputs details[data-layer="7"] .entry .confidence')).map(e => e.textContent)`, &confidences),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('`+row+` .outputs details[data-layer="7"] .entry .text')).map(e => e.textContent)`, &texts),
			chromedp.Evaluate(`document.querySelector('`+row+` .outputs details[data-layer="2"] .entry.work .output').textContent`, &classification),
		))
		require.Equal(t, []string{"1", "2", "3", "4", "5", "6", "7"}, layers)
		require.Len(t, synthesis, 3)
		for i, n := range synthesis {
			require.True(t, strings.HasPrefix(n, "Worker-"), n)
			require.Regexp(t, `^\d+%$`, confidences[i])
			require.NotEmpty(t, texts[i])
		}
		require.Contains(t, classification, `"domain"`)
	})
}

// untilSettled runs actions, again (up to five times) when the page
// replaced a node they had found before acting on it: the squad page
// rebuilds its feed on every change, carrying drafts over.
func untilSettled(t *testing.T, ctx context.Context, actions ...chromedp.Action) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		err := chromedp.Run(ctx, actions...)
		if err == nil || attempt == 5 || !replaced(err) {
			require.NoError(t, err)
			return
		}
	}
}

// replaced says whether err is Chromium's answer for a node the page
// replaced after it was found; the DevTools protocol words it two ways.
func replaced(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "No node with given id found") || strings.Contains(msg, "Could not find node with given id")
}

// TestSquadPageLive keeps /squad open while a prompt is asked through the
// other server, answered once from the page's reply box and once by an
// agent, and sees it go from 0/2 to resolved without a reload.
func TestSquadPageLive(t *testing.T) {
	consoleBackends(t, func(t *testing.T, page, agents string) {
		ctx := browser.New(t, 60*time.Second)
		bg := context.Background()
		c := client.New(agents)
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(page+"/squad"),
			chromedp.WaitVisible(`.live.on`, chromedp.ByQuery),
			chromedp.Evaluate(`window.notReloaded = true`, nil),
		))
		p, err := c.AskSquad(bg, client.Question{RequesterAgent: "Developer", PromptMessage: "What breaks first under load?", RequiredResponses: 2, TimeoutMinutes: 5})
		require.NoError(t, err)
		box := fmt.Sprintf(`.prompt[data-prompt=%q]`, p.ID)
		// The page rebuilds its feed on every change: read an element's
		// text in one evaluation, never from a node found a step earlier.
		text := func(sel string) string { return `document.querySelector('` + sel + `').textContent` }
		var count string
		// The prompt's arrival may re-render the feed more than once (the
		// prompt, then its chat message); a re-render between finding the
		// reply box and typing in it is typed again from an empty box.
		untilSettled(t, ctx,
			chromedp.WaitVisible(box+` .status-collecting`, chromedp.ByQuery),
			chromedp.Evaluate(text(box+` .count`), &count),
			chromedp.SetValue(box+` .reply .who-input`, "Operator", chromedp.ByQuery),
			chromedp.Clear(box+` .reply .text`, chromedp.ByQuery),
			browser.Type(box+` .reply .text`, "the connection", chromedp.ByQuery),
		)
		require.Equal(t, "0/2 responses", count)

		// A message from elsewhere re-renders the feed while the operator
		// is typing: the half-written reply and its focus survive.
		_, err = c.PostMessage(bg, client.NewMessage{AgentName: "Growth", Message: "deploying at noon"})
		require.NoError(t, err)
		var draft, active string
		var focused bool
		require.NoError(t, chromedp.Run(ctx,
			chromedp.WaitVisible(`//span[@class="text" and text()="deploying at noon"]`, chromedp.BySearch),
			chromedp.Value(box+` .reply .text`, &draft, chromedp.ByQuery),
			chromedp.Evaluate(`document.activeElement.matches('`+box+` .reply .text')`, &focused),
			chromedp.Evaluate(`document.activeElement.tagName + "." + document.activeElement.className`, &active),
			browser.Type(box+` .reply .text`, " pool", chromedp.ByQuery),
			chromedp.Click(box+` .reply button`, chromedp.ByQuery),
			chromedp.Poll(`document.querySelector('`+box+` .count').textContent === "1/2 responses"`, nil, chromedp.WithPollingInterval(20*time.Millisecond)),
		))
		require.Equal(t, "the connection", draft, "the draft survived the re-render")
		require.True(t, focused, "the reply box kept the focus, not %s", active)
		require.NoError(t, c.Respond(bg, p.ID, discussion.Response{AgentName: "Builder", Message: "the cache"}))
		var status string
		var notReloaded bool
		var shot []byte
		require.NoError(t, chromedp.Run(ctx,
			chromedp.WaitVisible(box+` .status-resolved`, chromedp.ByQuery),
			chromedp.Evaluate(text(box+` .count`), &count),
			chromedp.Evaluate(text(box+` .status`), &status),
			chromedp.Evaluate(`window.notReloaded === true`, &notReloaded),
			chromedp.CaptureScreenshot(&shot),
		))
		browser.SaveScreenshot(t, "squad-live.png", shot)
		var times []string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Evaluate(`Array.from(document.querySelectorAll('.msg .when')).map(e => e.textContent)`, &times),
		))
		require.NotEmpty(t, times)
		for _, tm := range times {
			require.Regexp(t, `^\d{2}:\d{2}:\d{2}$`, tm, "a 24-hour clock, not AM/PM")
		}
		require.Equal(t, "2/2 responses", count)
		require.Contains(t, status, "resolved")
		require.True(t, notReloaded, "the page was not reloaded")
		got, err := c.WaitForDiscussion(bg, p.ID)
		require.NoError(t, err)
		require.Len(t, got.CollectedContext, 2)
		require.Equal(t, "Operator", got.CollectedContext[0].Agent, "the reply from the page counted")
		require.Equal(t, "the connection pool", got.CollectedContext[0].Message)
		require.True(t, got.CollectedContext[0].IsHuman)
	})
}

// TestArenaPageLive keeps /arena/{id} open while five bots play a game
// through the other server, and sees the game end there: the last
// decision drawn and every agent's coverage complete.
func TestArenaPageLive(t *testing.T) {
	consoleBackends(t, func(t *testing.T, page, agents string) {
		ctx := browser.New(t, 90*time.Second)
		bg := context.Background()
		c := client.New(agents)
		game, err := c.CreateGame(bg, client.NewGame{MinPlayers: 5})
		require.NoError(t, err)
		var ids []string
		for _, n := range []string{"Alice", "Bob", "Charlie", "Dana", "Eve"} {
			id, err := c.Register(bg, game, client.NewAgent{DisplayName: n})
			require.NoError(t, err)
			ids = append(ids, id)
		}
		require.NoError(t, c.StartGame(bg, game))
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(page+"/arena/"+game),
			chromedp.WaitVisible(`.live.on`, chromedp.ByQuery),
			chromedp.WaitVisible(`#majority .agent`, chromedp.ByQuery),
			chromedp.Evaluate(`window.notReloaded = true`, nil),
		))
		errs := make(chan error, len(ids))
		for i, id := range ids {
			go func() { errs <- bots.ArenaPlayer(bg, c, game, id, uint64(i)) }()
		}
		for range ids {
			require.NoError(t, <-errs)
		}
		var outcome string
		var complete int
		var notReloaded bool
		var shot []byte
		require.NoError(t, chromedp.Run(ctx,
			chromedp.WaitVisible(`//span[@id="status" and starts-with(text(), "game over")]`, chromedp.BySearch),
			chromedp.Text(`#outcome`, &outcome, chromedp.ByID),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('#scores tr')).filter(tr => tr.textContent.endsWith("all roles")).length`, &complete),
			chromedp.Evaluate(`window.notReloaded === true`, &notReloaded),
			chromedp.CaptureScreenshot(&shot),
		))
		browser.SaveScreenshot(t, "arena-complete.png", shot)
		require.Regexp(t, `^Last decision: the trolley took the (majority|minority) track\. Survived: \w+`, outcome)
		var feed string
		require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#feed').textContent`, &feed)))
		require.Contains(t, feed, "lost: ")
		for _, id := range ids {
			require.NotContains(t, feed, id, "the feed names agents by their display names")
		}
		require.Equal(t, 5, complete)
		require.True(t, notReloaded, "the page was not reloaded")
	})
}
