package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/examples/internal/bots"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/internal/browser"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
)

// consoleBackends runs fn against a server on each backend: memory always,
// Redis and PostgreSQL where testdb finds them (always under CI=true).
func consoleBackends(t *testing.T, fn func(t *testing.T, args ...string)) {
	t.Run("memory", func(t *testing.T) { fn(t) })
	t.Run("redis", func(t *testing.T) {
		_, prefix := testdb.RedisClient(t)
		fn(t, "-store", testdb.RedisURL(t), "-redis-prefix", prefix)
	})
	t.Run("postgres", func(t *testing.T) { fn(t, "-store", testdb.PostgresDSN(t)) })
}

func screenshot(t *testing.T, name string, png []byte) {
	if dir := os.Getenv("AGORA_SCREENSHOTS"); dir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
	}
}

// TestJobsPageSlotsGoLive opens /jobs as an operator with five agents
// polling the job queue, configures three role slots with the + buttons,
// clicks "Open slots", and sees the three seats turn yellow with the names
// of the agents that took them, then green when they are done — without a
// reload.
func TestJobsPageSlotsGoLive(t *testing.T) {
	consoleBackends(t, func(t *testing.T, args ...string) {
		const admin = "console-admin"
		base, _ := serve(t, append([]string{"-admin-key", admin, "-quiet"}, args...)...)
		ctx := browser.New(t, 90*time.Second)
		bg, stop := context.WithCancel(context.Background())
		defer stop()
		c := client.New(base, client.WithToken(admin))
		op, err := c.CreateKey(bg, "Operator", slots.ScopeClaimCreate, slots.ScopeSlotsConfigure, slots.ScopeCommentCreate, slots.ScopePipelineReview)
		require.NoError(t, err)
		claim, err := c.As(op.Token).CreateClaim(bg, "Crows plan for tomorrow", "Scrub jays cache food where they expect to be hungry.", "animal cognition", "")
		require.NoError(t, err)
		_, err = c.As(op.Token).Comment(bg, claim.ID, "A draft answer to deliberate on.", slots.CommentDraft)
		require.NoError(t, err)

		// Five agents poll for any seat; each spends 1.5 s writing, so
		// every seat is seen taken before it is done.
		names := []string{"Skeptic-1", "Skeptic-2", "Skeptic-3", "Skeptic-4", "Skeptic-5"}
		var wg sync.WaitGroup
		for i, n := range names {
			k, err := c.CreateKey(bg, n, slots.ScopeCommentCreate)
			require.NoError(t, err)
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = bots.SlotAgent(bg, c.As(k.Token), "", 1500*time.Millisecond, uint64(i))
			}()
		}
		defer wg.Wait()
		defer stop()

		row := fmt.Sprintf(`details[data-claim=%q]`, claim.ID)
		var total string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(base+"/jobs#key="+op.Token),
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
			chromedp.Poll(chips("done")+`.length === 3`, nil, chromedp.WithPollingInterval(20*time.Millisecond)),
			chromedp.Evaluate(chips("done"), &done),
			chromedp.CaptureScreenshot(&doneShot),
			chromedp.Evaluate(`window.notReloaded === true`, &notReloaded),
		))
		screenshot(t, "jobs-taken.png", takenShot)
		screenshot(t, "jobs-done.png", doneShot)
		require.True(t, notReloaded, "the page was not reloaded")
		slices.Sort(taken)
		slices.Sort(done)
		require.Equal(t, taken, done, "the agents that took the seats finished them")
		require.Len(t, slices.Compact(slices.Clone(taken)), 3, "three different agents")
		for _, n := range taken {
			require.True(t, strings.HasPrefix(n, "Skeptic-"), n)
		}
	})
}
