package console_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"image"
	"image/color/palette"
	"image/draw"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rs/zerolog"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/api"
	"github.com/edihub/edihub/hub/console"
	"github.com/edihub/edihub/hub/forensics"
	"github.com/edihub/edihub/hub/hubtest"
	"github.com/edihub/edihub/hub/ops"
	"github.com/edihub/edihub/jetstream/jetstreamtest"
)

const (
	readTok = "read-token-0123456789abcdef"
	opTok   = "operator-token-0123456789abcdef"
)

// One browser for the whole test binary; each test opens its own browser
// context (separate cookies) in it.
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	err    error
	path   string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// chromiumPath finds the Debian package's browser (CI installs it) or
// another Chromium on PATH.
func chromiumPath() string {
	if p := os.Getenv("EDIHUB_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// newTab returns a tab in a fresh browser context (no cookies), or skips
// the test when no Chromium is installed.
func newTab(t *testing.T) context.Context {
	t.Helper()
	browser.once.Do(func() {
		browser.path = chromiumPath()
		if browser.path == "" {
			return
		}
		opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.ExecPath(browser.path),
			chromedp.NoSandbox, chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.WindowSize(1280, 900))
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, cancelBrowser := chromedp.NewContext(actx)
		browser.ctx, browser.cancel = bctx, func() { cancelBrowser(); cancelAlloc() }
		browser.err = chromedp.Do(bctx) // starts the browser
	})
	if browser.path == "" {
		t.Skip("no Chromium found (apt-get install chromium, or set EDIHUB_CHROMIUM): the browser tests need a real browser")
	}
	if browser.err != nil {
		t.Fatalf("start %s: %v", browser.path, browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

// env is a real hub with the parse stage, the API with two tokens and
// the console, on one HTTP server, as serve mounts them.
type env struct {
	*hubtest.Env
	srv  *httptest.Server
	ops  *ops.Ops
	keys *audit.Keyring
}

func newEnv(t *testing.T) *env {
	t.Helper()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	keys, err := audit.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := hubtest.FastConfig()
	h := hubtest.Run(t, &hubtest.Options{Config: &cfg, Keyring: keys})
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	auditor := audit.New(h.JS, "AUDIT", audit.WithKeyring(keys))
	o, err := ops.NewOps(ops.OpsOptions{JS: h.JS, Auditor: auditor, Actor: "api", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(api.Prefix, api.NewWithOptions(api.Options{Ops: o, Logger: log, Auditor: auditor, JS: h.JS, Status: h.Hub.Status,
		Forensics: &forensics.Config{}, PauseBucket: hub.DefaultPauseBucket,
		Tokens: []api.Token{{Name: "viewer", Token: readTok, Role: api.RoleRead}, {Name: "alice", Token: opTok, Role: api.RoleOperator}}}))
	mux.Handle(console.Prefix, console.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &env{Env: h, srv: srv, ops: o, keys: keys}
}

// deadLetter publishes a payload for partner through the hub and waits
// for its dead letter.
func (e *env) deadLetter(t *testing.T, partner, payload string) {
	t.Helper()
	before := jetstreamtest.CountMsgs(t, e.JS, "DLQ")
	jetstreamtest.PublishIngest(t, e.JS, partner, payload, nil)
	jetstreamtest.Eventually(t, 10*time.Second, func() bool { return jetstreamtest.CountMsgs(t, e.JS, "DLQ") > before })
}

// do runs browser steps with a time limit.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page (promises awaited).
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it holds.
func waitFor(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 2000)`))
		t.Fatalf("waiting for %s: %v\npage:\n%s", cond, err, text)
	}
}

// login logs in through the form.
func login(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	do(t, ctx, "open the console", chromedp.Navigate(base+"/console/"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.ID("login-button")))
	waitFor(t, ctx, `document.querySelector('#whoami') !== null`)
}

// page navigates the console to a #fragment and waits for its view.
func page(t *testing.T, ctx context.Context, fragment, ready string) {
	t.Helper()
	eval[bool](t, ctx, fmt.Sprintf(`(location.hash = %q, true)`, fragment))
	waitFor(t, ctx, fmt.Sprintf(`(location.hash === %q && %s && document.querySelector('#view').dataset.ready === %q) || document.querySelector('#page-error') !== null`, fragment, viewReady, ready))
	if msg := eval[string](t, ctx, `(document.querySelector('#page-error') || {}).textContent || ""`); msg != "" {
		t.Fatalf("%s: %s", fragment, msg)
	}
}

// screenshot saves the page as a PNG into $EDIHUB_SCREENSHOTS (the
// README's pictures: EDIHUB_SCREENSHOTS=$PWD/docs/console); nothing
// without it.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("EDIHUB_SCREENSHOTS")
	if dir == "" {
		return
	}
	eval[bool](t, ctx, `(document.getElementById("toast") && document.getElementById("toast").remove(), true)`)
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	shot, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), smallPNG(t, shot), 0o644); err != nil {
		t.Fatal(err)
	}
}

// smallPNG keeps the README's pictures small: 256 colours (the page is
// flat colours and text), best compression.
func smallPNG(t *testing.T, b []byte) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	pal := image.NewPaletted(img.Bounds(), palette.Plan9)
	draw.Draw(pal, pal.Rect, img, img.Bounds().Min, draw.Src)
	var out bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&out, pal); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
