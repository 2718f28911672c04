package console

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// Prefix is where Handler expects to be mounted.
const Prefix = "/console/"

//go:embed assets
var assets embed.FS

// CSP allows only this origin's own scripts, styles and API calls: no
// inline script or style, no other origin, no framing, no plugins.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"

// Handler serves the console's files under Prefix with security headers.
// A path that is not a file gets index.html (the console routes with
// #fragments, so this only matters for a typed URL).
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		setPageHeaders(h)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p := strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(Prefix, "/"))
		p = strings.TrimPrefix(p, "/")
		if p == "" || p == "index.html" {
			serveIndex(w, r, sub)
			return
		}
		if st, err := fs.Stat(sub, p); err != nil || st.IsDir() {
			serveIndex(w, r, sub)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + p
		files.ServeHTTP(w, r2)
	})
}

// setPageHeaders sets the security headers of every page the console
// serves (also the page that says it is off): CSP, no sniffing, no
// framing, no referrer, no opener, revalidated.
func setPageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-cache")
}

func serveIndex(w http.ResponseWriter, r *http.Request, sub fs.FS) {
	b, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		http.Error(w, "console not built in", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b)
}
