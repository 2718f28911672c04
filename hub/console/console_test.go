package console

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func TestHandlerSecurityHeaders(t *testing.T) {
	h := Handler()
	for _, path := range []string{"/console/", "/console/js/main.js", "/console/app.css", "/console/no/such/page"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d", path, rec.Code)
		}
		hd := rec.Header()
		if hd.Get("Content-Security-Policy") != CSP || hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("X-Frame-Options") != "DENY" {
			t.Fatalf("GET %s headers: %v", path, hd)
		}
		if strings.HasSuffix(path, ".js") && !strings.HasPrefix(hd.Get("Content-Type"), "text/javascript") {
			t.Fatalf("%s served as %q", path, hd.Get("Content-Type"))
		}
	}
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "connect-src 'self'"} {
		if !strings.Contains(CSP, want) {
			t.Fatalf("CSP lacks %s", want)
		}
	}
	if strings.Contains(CSP, "unsafe") || strings.Contains(CSP, "http") || strings.Contains(CSP, "*") {
		t.Fatalf("CSP allows too much: %s", CSP)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/console/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", rec.Code)
	}
}

// The assets never turn data into markup, load nothing from another
// origin and carry no inline script or style (the CSP would block them
// anyway; this keeps the code honest).
func TestAssetsRenderTextOnly(t *testing.T) {
	banned := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\("on|srcdoc|https?://`)
	n := 0
	err := fs.WalkDir(assets, "assets", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(path)
		if err != nil {
			return err
		}
		s := string(b)
		n++
		for _, m := range banned.FindAllString(s, -1) {
			if m == "http://" && strings.Contains(s, `"http://www.w3.org/2000/svg"`) && strings.Count(s, "http://") == 1 {
				continue // the SVG namespace name, not a URL that is loaded
			}
			t.Errorf("%s contains %q", path, m)
		}
		if strings.HasSuffix(path, ".html") && (strings.Contains(s, "<script>") || strings.Contains(s, "style=") || strings.Contains(s, "<style")) {
			t.Errorf("%s has inline script or style", path)
		}
		return nil
	})
	if err != nil || n < 8 {
		t.Fatalf("walked %d assets: %v", n, err)
	}
}
