package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/browser"
)

// TestDemoConsoles opens the consoles after a demo in headless Chromium,
// as a reader of the README would, and checks what each shows: /jobs the
// Prism claim's outputs by agent name with confidence and the race
// claim's comments; /arena/{id} a finished game whose feed names agents
// by name; /squad the question and its three answers on a 24-hour clock.
// The screenshots are kept as test artifacts ($AGORA_SCREENSHOTS), and
// written over the README's (docs/console-*.png) when
// $AGORA_DOCS_SCREENSHOTS is set, so they are refreshed by running this.
func TestDemoConsoles(t *testing.T) {
	t.Parallel()
	ctx := browser.New(t, 90*time.Second)
	text, urls := serveDemo(t, "-claude", "/nonexistent/claude")
	jobs, arena, squad := urls["jobs"], urls["arena game"], urls["squad chat"]
	require.NotEmpty(t, jobs, text)

	keep := func(name string, png []byte) {
		browser.SaveScreenshot(t, name, png)
		if os.Getenv("AGORA_DOCS_SCREENSHOTS") != "" {
			require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", name), png, 0o644))
		}
	}
	count := func(sel string, n *int) chromedp.Action {
		return chromedp.Evaluate(`document.querySelectorAll('`+sel+`').length`, n)
	}

	// /jobs: both claims open; the Prism claim's last layer lists its
	// votes, the race claim its comments.
	var claims, votes, comments int
	var agents []string
	var shot []byte
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(jobs),
		chromedp.WaitVisible(`.live.on`, chromedp.ByQuery),
		chromedp.WaitVisible(`details.claim summary .bar`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('details.claim').forEach(d => d.open = true)`, nil),
		chromedp.WaitVisible(`.outputs details[data-layer="7"][open] .entry`, chromedp.ByQuery),
		chromedp.WaitVisible(`.comments .entry`, chromedp.ByQuery),
		count(`details.claim`, &claims),
		count(`.outputs details[data-layer="7"] .entry`, &votes),
		count(`.comments .entry`, &comments),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('.outputs .entry .agent')).map(e => e.textContent)`, &agents),
		chromedp.Evaluate(`document.querySelector('.outputs details[data-layer="7"]').closest('details.claim').scrollIntoView({block: "start"})`, nil),
		chromedp.Sleep(100*time.Millisecond), // the scroll settles
		chromedp.CaptureScreenshot(&shot),
	))
	require.Equal(t, 2, claims)
	require.Equal(t, 3, votes, "Synthesis's three votes")
	require.GreaterOrEqual(t, comments, 4, "the race claim's draft and its three criticisms")
	for _, a := range agents {
		require.True(t, strings.HasPrefix(a, "prism-bot-"), "a Prism bot's name, not %q", a)
	}
	keep("console-jobs.png", shot)

	// /arena/{id}: the game is over, and the feed never shows an agent's ID.
	var status, feed string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(arena),
		chromedp.WaitVisible(`//span[@id="status" and starts-with(text(), "game over")]`, chromedp.BySearch),
		chromedp.WaitVisible(`#feed li`, chromedp.ByQuery),
		chromedp.Text(`#status`, &status, chromedp.ByID),
		chromedp.Evaluate(`document.querySelector('#feed').textContent`, &feed),
		chromedp.CaptureScreenshot(&shot),
	))
	require.NotContains(t, feed, "agent_", "agents by name, not by ID")
	keep("console-arena.png", shot)

	// /squad: the question and the three distinct answers, 24-hour times.
	var answers, times []string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(squad),
		chromedp.WaitVisible(`.live.on`, chromedp.ByQuery),
		chromedp.WaitVisible(`.prompt .status-resolved`, chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('.prompt .responses .msg .text')).map(e => e.textContent)`, &answers),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('.msg .when')).map(e => e.textContent)`, &times),
		chromedp.CaptureScreenshot(&shot),
	))
	keep("console-squad.png", shot)
	require.Len(t, answers, 3, "three answers threaded under the question")
	require.Len(t, map[string]bool{answers[0]: true, answers[1]: true, answers[2]: true}, 3, "distinct answers")
	for _, tm := range times {
		require.Regexp(t, `^\d{2}:\d{2}:\d{2}$`, tm)
	}
}
