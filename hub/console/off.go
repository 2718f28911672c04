package console

import "net/http"

// offPage says why there is no console and how to turn it on. It is
// static: nothing of the request is echoed.
const offPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>edihub console: off</title></head>
<body>
<h1>The edihub web console is off</h1>
<p>The console (and the JSON API under /api/v1/ it calls) is served only when
<code>api.tokens</code> are configured: there is no anonymous access.</p>
<p>To turn it on, give the hub a token and restart it:</p>
<pre>export EDIHUB_TOKEN_ONCALL=$(openssl rand -hex 24)
edihub serve --config configs/console.yaml     # api.tokens: oncall, role operator, token from $EDIHUB_TOKEN_ONCALL</pre>
<p>or add to your own config:</p>
<pre>api:
  tokens:
    - name: oncall
      token_env: EDIHUB_TOKEN_ONCALL
      role: operator    # or read: list, show and dry-run only</pre>
<p>Then open this page again and log in with the token. The README's section
"Web console" says more.</p>
</body></html>
`

// OffHandler answers under Prefix when no API tokens are configured: a
// page (404, as there is no console) that says how to turn it on, instead
// of a bare "404 page not found".
func OffHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		setPageHeaders(h)
		h.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte(offPage))
		}
	})
}
