// Package browser drives a headless Chromium from Go tests, through the
// DevTools protocol (github.com/chromedp/chromedp): the pages quire serves
// are opened in a real browser, their scripts run, and a test reads what
// they drew, what they wrote to the console, the dialogs they opened and
// the requests they made.
//
// The browser is Debian's chromium, which `make browser` installs (make test
// depends on it). When it cannot be found, Start answers an error that says
// so and how to install it, and Shared fails the test with it: a browser test
// never passes by skipping.
//
// Starting Chromium costs most of a second, so a test package shares one
// browser (Shared) and closes it from its TestMain (CloseShared); each test
// opens its own tab (NewPage), which costs a few milliseconds.
package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Path finds the Chromium to start: $QUIRE_CHROMIUM when set, else
// /usr/bin/chromium (Debian's), else chromium, chromium-browser or
// google-chrome on the PATH.
func Path() (string, error) {
	if p := os.Getenv("QUIRE_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("QUIRE_CHROMIUM names %s, which is not there: %w", p, err)
		}
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium to run the browser tests with: run `make browser` (as root it installs Debian's chromium with apt-get), or set QUIRE_CHROMIUM to a Chromium or Chrome binary")
}

// Browser is one headless Chromium, with a profile of its own that Close
// removes.
type Browser struct {
	ctx     context.Context // the browser's root context: its first tab
	cancel  func()
	dataDir string
}

// Start starts a headless Chromium with a fresh profile, with the flags
// this machine needs: no sandbox (the tests may run as root), no GPU, and
// none of the browser's own traffic (QUIC, updates, sync, background
// networking), so that a test sees only the requests its pages make.
//
// Chromium in one process now and then dies as it starts (a segmentation
// fault, seen once in make test on the 2-core machine, and not again in
// the runs after it): a start that fails so is tried again, twice at
// most.
func Start() (*Browser, error) {
	path, err := Path()
	if err != nil {
		return nil, err
	}
	for tries := 1; ; tries++ {
		b, err := start(path)
		if err == nil || tries == 3 || !strings.Contains(err.Error(), "browser process exited") {
			return b, err
		}
	}
}

func start(path string) (*Browser, error) {
	dir, err := os.MkdirTemp("", "quire-chromium-")
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		// One process for the browser and its pages: it starts in about
		// two thirds of the time on a loaded 2-core machine (8 s against
		// 12 s measured), and a test's pages need no isolation from
		// each other.
		chromedp.Flag("single-process", true),
		chromedp.Flag("no-zygote", true),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	b := &Browser{ctx: ctx, dataDir: dir, cancel: func() { cancelCtx(); cancelAlloc() }}
	// The first Do starts the browser, bound to ctx (so no timeout here).
	if err := chromedp.Do(ctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return b, nil
}

// Close stops the browser and removes its profile.
func (b *Browser) Close() {
	b.cancel()
	os.RemoveAll(b.dataDir)
}

var shared struct {
	sync.Mutex
	b   *Browser
	err error
}

// Shared is the test package's one browser, started at the first call. A
// browser that cannot start fails the test, with the reason.
func Shared(tb testing.TB) *Browser {
	tb.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.b == nil && shared.err == nil {
		shared.b, shared.err = Start()
	}
	if shared.err != nil {
		tb.Fatalf("browser: %v", shared.err)
	}
	return shared.b
}

// CloseShared stops the shared browser, if one was started; a TestMain
// calls it after m.Run.
func CloseShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.b != nil {
		shared.b.Close()
		shared.b = nil
	}
}

// Page is one tab. It records, from the moment it opens, the console's
// errors (console.error, uncaught exceptions, the browser's own error
// entries such as a Content-Security-Policy violation), the dialogs the page
// opened (each dismissed at once) and the URL of every request it made.
type Page struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	errors   []string
	dialogs  []string
	requests []string
}

// NewPage opens a tab.
func (b *Browser) NewPage() (*Page, error) {
	p := &Page{}
	dialogs := make(chan struct{}, 16)
	p.ctx, p.cancel = chromedp.NewContext(b.ctx, chromedp.WithListener(func(ev any) {
		// In the tab's loop: record, and leave the commands to others.
		p.mu.Lock()
		defer p.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range ev.Args {
					if a.Value != nil {
						var s string
						if json.Unmarshal(a.Value, &s) == nil {
							parts = append(parts, s)
							continue
						}
						parts = append(parts, string(a.Value))
					} else {
						parts = append(parts, a.Description)
					}
				}
				p.errors = append(p.errors, "console."+string(ev.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			text := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				text += " " + d.Exception.Description
			}
			p.errors = append(p.errors, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, text))
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError {
				p.errors = append(p.errors, fmt.Sprintf("%s error: %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		case *page.EventJavascriptDialogOpening:
			p.dialogs = append(p.dialogs, string(ev.Type)+": "+ev.Message)
			select {
			case dialogs <- struct{}{}:
			default:
			}
		case *network.EventRequestWillBeSent:
			p.requests = append(p.requests, ev.Request.URL)
		}
	}))
	// A dialog stops the page until it is answered: dismiss each.
	go func() {
		for {
			select {
			case <-p.ctx.Done():
				return
			case <-dialogs:
				chromedp.Call(p.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			}
		}
	}()
	if err := chromedp.Do(p.ctx); err != nil {
		p.cancel()
		return nil, err
	}
	return p, nil
}

// NewPage opens a tab in the shared browser, closed when the test ends.
func NewPage(tb testing.TB) *Page {
	tb.Helper()
	p, err := Shared(tb).NewPage()
	if err != nil {
		tb.Fatalf("browser: opening a tab: %v", err)
	}
	tb.Cleanup(p.Close)
	return p
}

// Close closes the tab.
func (p *Page) Close() { p.cancel() }

// Context is the tab's chromedp context, for what the helpers below do not
// cover (chromedp.Run(p.Context(), …)).
func (p *Page) Context() context.Context { return p.ctx }

func (p *Page) timeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(p.ctx, d)
}

// Open loads url and waits for its load event (its scripts have run).
func (p *Page) Open(url string) error {
	ctx, cancel := p.timeout(20 * time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("opening %s: %w", url, err)
	}
	return nil
}

// Wait waits until an element matches the CSS selector, for at most d.
func (p *Page) Wait(selector string, d time.Duration) error {
	ctx, cancel := p.timeout(d)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(selector))); err != nil {
		return fmt.Errorf("waiting for %s: %w", selector, err)
	}
	return nil
}

// Count is how many elements match the CSS selector now.
func (p *Page) Count(selector string) (int, error) {
	var n int
	err := p.Eval(fmt.Sprintf("document.querySelectorAll(%s).length", jsString(selector)), &n)
	return n, err
}

// Text is the textContent of the first element the selector matches, or
// "" when none does.
func (p *Page) Text(selector string) (string, error) {
	var s string
	err := p.Eval(fmt.Sprintf("(document.querySelector(%s) || {}).textContent || ''", jsString(selector)), &s)
	return s, err
}

// Eval evaluates a JavaScript expression in the page (awaiting it when it is
// a promise) and decodes its value, as JSON, into out (nil: ignored).
func (p *Page) Eval(expr string, out any) error {
	ctx, cancel := p.timeout(20 * time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		return fmt.Errorf("evaluating %s: %w", clip(expr), err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("evaluating %s: its value %s: %w", clip(expr), clip(string(raw)), err)
	}
	return nil
}

// Viewport sets the page's width and height in CSS pixels.
func (p *Page) Viewport(width, height int64) error {
	ctx, cancel := p.timeout(10 * time.Second)
	defer cancel()
	return chromedp.Do(ctx, chromedp.EmulateViewport(width, height))
}

// ColorScheme makes prefers-color-scheme answer "light" or "dark".
func (p *Page) ColorScheme(scheme string) error {
	ctx, cancel := p.timeout(10 * time.Second)
	defer cancel()
	_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	})
	return err
}

// Screenshot writes a PNG of the whole page to path.
func (p *Page) Screenshot(path string) error {
	return p.screenshot(path, chromedp.FullScreenshot(100))
}

// ScreenshotView writes a PNG of what the viewport shows to path: much
// cheaper than the whole of a long page.
func (p *Page) ScreenshotView(path string) error {
	return p.screenshot(path, chromedp.CaptureScreenshot())
}

func (p *Page) screenshot(path string, shot chromedp.Action[[]byte]) error {
	ctx, cancel := p.timeout(30 * time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, png, 0o644)
}

// Errors is what the page wrote to the console as errors so far: calls of
// console.error, uncaught exceptions and the browser's error entries (a
// refused script or style, a failed request).
func (p *Page) Errors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errors...)
}

// Dialogs is every alert, confirm or prompt the page opened so far.
func (p *Page) Dialogs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.dialogs...)
}

// Requests is the URL of every request the page made so far, in order.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// Reset forgets the errors, dialogs and requests recorded so far.
func (p *Page) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.errors, p.dialogs, p.requests = nil, nil, nil
}

// ScreenshotDir is the folder the tests write their screenshots to (never
// committed): $QUIRE_SCREENSHOTS when set, else quire-screenshots in the
// temporary folder, the same on every run so a person knows where to look.
// Tests log it (go test -v shows it).
func ScreenshotDir(tb testing.TB) string {
	tb.Helper()
	shotDir.Do(func() {
		shotDir.dir = os.Getenv("QUIRE_SCREENSHOTS")
		if shotDir.dir == "" {
			shotDir.dir = filepath.Join(os.TempDir(), "quire-screenshots")
		}
		shotDir.err = os.MkdirAll(shotDir.dir, 0o755)
	})
	if shotDir.err != nil {
		tb.Fatalf("browser: screenshot folder: %v", shotDir.err)
	}
	return shotDir.dir
}

var shotDir struct {
	sync.Once
	dir string
	err error
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
