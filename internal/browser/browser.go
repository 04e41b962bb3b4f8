// Package browser gives tests a real headless Chromium driven through
// chromedp. Without Chromium on the machine a test is skipped with a
// message naming the package to install — except when CI=true, where it
// fails, so a green CI run always means the pages were really tested.
package browser

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// path finds the Chromium binary.
func path() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New returns a chromedp context of a fresh headless Chromium, closed when
// t ends, with a timeout for the whole test.
func New(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	bin := path()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and no Chromium: install the chromium package")
		}
		t.Skip("no Chromium for this browser test: install the chromium package")
	}
	// Not t.TempDir: Chromium may still write its profile for a moment
	// after it was told to quit, and TempDir's cleanup fails the test then.
	profile, err := os.MkdirTemp("", "agora-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1200, 800),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
		for i := 0; i < 40 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	})
	return ctx
}

// SaveScreenshot keeps png as a test artifact named name in the directory
// $AGORA_SCREENSHOTS (.ci/run sets it), so a person can look at what the
// test saw; without the variable it keeps nothing.
func SaveScreenshot(t *testing.T, name string, png []byte) {
	t.Helper()
	dir := os.Getenv("AGORA_SCREENSHOTS")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Type types text into the first visible element sel matches, as a person
// would: it focuses the element, then sends the keys. It stands in for
// chromedp.SendKeys, which reads the node's attributes without their lock
// and so races, under -race, with a page that changes them meanwhile.
func Type(sel, text string, opts ...chromedp.QueryOption) chromedp.Action {
	return chromedp.Tasks{
		chromedp.Focus(sel, append(opts, chromedp.NodeVisible)...),
		chromedp.KeyEvent(text),
	}
}
