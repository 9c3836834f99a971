package server

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// One Chromium process serves every browser test of the package: starting one per test
// costs seconds each on a busy machine. Each test gets its own browser context (like a
// fresh incognito profile: no cookies, storage or cache shared with any other) and its
// own tab, so tests stay as isolated as with separate browsers.
var sharedChromium struct {
	sync.Mutex
	path string
	ctx  context.Context // the browser's first tab; cancelling it ends the browser
	stop func()
}

// chromiumProcess returns the shared browser, starting it on first use.
func chromiumProcess(t *testing.T, chromium string) context.Context {
	t.Helper()
	sharedChromium.Lock()
	defer sharedChromium.Unlock()
	if sharedChromium.ctx != nil && sharedChromium.ctx.Err() == nil && sharedChromium.path == chromium {
		return sharedChromium.ctx
	}
	if sharedChromium.stop != nil { // it died, or another binary is asked for
		sharedChromium.stop()
	}
	dir, err := os.MkdirTemp("", "interviewd-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(dir),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	stop := func() {
		cancelBrowser()
		cancelAlloc()
		_ = os.RemoveAll(dir)
	}
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		stop()
		t.Fatalf("start %s: %v", chromium, err)
	}
	sharedChromium.path, sharedChromium.ctx, sharedChromium.stop = chromium, bctx, stop
	return bctx
}

// stopChromium ends the shared browser, if one was started (TestMain, after the tests).
func stopChromium() {
	sharedChromium.Lock()
	defer sharedChromium.Unlock()
	if sharedChromium.stop != nil {
		sharedChromium.stop()
		sharedChromium.ctx, sharedChromium.stop = nil, nil
	}
}

// newBrowser opens a fresh browser (its own browser context, so no cookies shared with
// any other) with a phone viewport. It ends with the test or when closed.
func newBrowser(t *testing.T, chromium string) (ctx context.Context, closeBrowser func()) {
	t.Helper()
	return newBrowserAt(t, chromium, phoneWidth, phoneHeight)
}

// newBrowserAt is newBrowser with a width × height viewport (CSS pixels); a viewport
// narrower than a tablet is a phone, drawn at twice the density.
func newBrowserAt(t *testing.T, chromium string, width, height int64) (ctx context.Context, closeBrowser func()) {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(chromiumProcess(t, chromium), chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(tab, browserTimeout)
	closeBrowser = func() {
		cancelTimeout()
		cancelTab() // closes the tab and disposes of its browser context
	}
	t.Cleanup(closeBrowser)
	scale := 1.0
	if width < 700 {
		scale = 2
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height, chromedp.EmulateScale(scale))); err != nil {
		t.Fatalf("open a tab in %s: %v", chromium, err)
	}
	return ctx, closeBrowser
}
