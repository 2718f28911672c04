package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
	"time"

	"github.com/edihub/edihub/audit"
	"github.com/edihub/edihub/hub"
	"github.com/edihub/edihub/hub/forensics"
	"github.com/edihub/edihub/hub/ops"
	"github.com/edihub/edihub/wire"
	js "github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
)

// Options are the dependencies of the API. Ops is required; the rest may
// be zero.
type Options struct {
	Ops    *ops.Ops
	Tokens []Token
	Logger zerolog.Logger
	// Forensics names the buckets of the forensic reports and tickets
	// (the sandbox section of the config); nil: the poison endpoints
	// answer 404. Needs JS.
	Forensics *forensics.Config
	// Auditor records ticket transitions (required with Forensics).
	Auditor *audit.Auditor
	// JS and Streams let the overview read the partitions' lag (nil JS:
	// no lag shown).
	JS      js.JetStream
	Streams wire.StreamNames
	// Status reports the running hub's leak probe and recent alerts for
	// the overview (nil: not shown).
	Status func() hub.Status
	// SessionTTL is how long a console session lasts after login
	// (default 8h); there is no renewal: log in again.
	SessionTTL time.Duration
	// WarmUp, if set, makes the API read the three streams once in the
	// background at start (needs JS), so that the console's first page
	// does not wait for it; the read stops with this context.
	WarmUp context.Context
	// PauseBucket is the bulkhead's pause bucket (hub.bulkhead.bucket);
	// empty: the partner endpoints answer 404. Needs JS and Auditor.
	PauseBucket string
	// Now is the clock of sessions and the overview chart (default time.Now).
	Now func() time.Time
}

// DefaultSessionTTL is how long a console login lasts.
const DefaultSessionTTL = 8 * time.Hour

// route is one endpoint: the mux pattern's method and path, and whether
// it changes something (an operator's action).
type route struct {
	method, path string
	h            http.HandlerFunc
}

// routes lists every endpoint; openapi.json must describe each one (a
// test keeps them in sync).
func (a *api) routes() []route {
	return []route{
		{"GET", "/api/v1/dlq", a.list},
		{"GET", "/api/v1/dlq/{id}", a.show},
		{"POST", "/api/v1/dlq/replay", a.replayBulk},
		{"POST", "/api/v1/dlq/park", a.parkBulk}, // a dry run needs no operator token
		{"POST", "/api/v1/dlq/drop", a.dropBulk},
		{"POST", "/api/v1/dlq/{id}/replay", a.replayOne},
		{"GET", "/api/v1/replays", a.replays},
		{"GET", "/api/v1/replays/{id}", a.replayBatch},
		{"POST", "/api/v1/dlq/{id}/park", a.write(a.park)},
		{"POST", "/api/v1/dlq/{id}/drop", a.write(a.drop)},
		{"POST", "/api/v1/dlq/{id}/edit", a.write(a.edit)},
		{"GET", "/api/v1/audit", a.auditList},
		{"GET", "/api/v1/audit/verify", a.auditVerify},
		{"GET", "/api/v1/overview", a.overview},
		{"GET", "/api/v1/poison/{id}", a.poisonShow},
		{"POST", "/api/v1/poison/{id}/ticket/{action}", a.write(a.ticket)},
		{"GET", "/api/v1/partners/paused", a.pausedPartners},
		{"POST", "/api/v1/partners/{id}/resume", a.write(a.resumePartner)},
		{"GET", "/api/v1/session", a.sessionInfo},
		{"POST", "/api/v1/session", a.login},
		{"DELETE", "/api/v1/session", a.logout},
		{"GET", "/api/v1/openapi.json", a.openapi},
	}
}

// NewWithOptions returns the JSON API of Ops under /api/v1/ for a web console and
// scripts. Every request needs Authorization: Bearer <token>; read tokens
// may look (show is audited under the token's name), operator tokens may
// also act. Writes are audited exactly as the CLI's are, with the token's
// name as the actor.
//
//	GET  /api/v1/dlq                      summary (view=messages|groups with filter params: kind, stage, cause, partner, error_class, fingerprint, since)
//	GET  /api/v1/dlq/{id}                 headers, payload (base64), segments; audited
//	POST /api/v1/dlq/{id}/replay          {"to","force","reason","dry_run","allow_poison","outcome":"5s"}
//	POST /api/v1/dlq/{id}/park            {"reason"}
//	POST /api/v1/dlq/{id}/drop            {"reason"} (required)
//	POST /api/v1/dlq/{id}/edit            {"payload": base64, "reason"}
//	POST /api/v1/dlq/replay               {"filter": "cause=schema,partner=ACME", "ids", "to", "max", "rate", "dry_run", "force", "reason", "allow_poison", "outcome"}
//	GET  /api/v1/replays                  replay batches, newest first (limit=N)
//	GET  /api/v1/replays/{id}             one batch, each copy's outcome and the live tally
//	GET  /api/v1/audit                    events (since=2h, limit=N, actor, action, message=ID, human=true)
//	GET  /api/v1/audit/verify             chain check (anchor=HASH)
//	GET  /api/v1/partners/paused          the partners the bulkhead paused
//	POST /api/v1/partners/{id}/resume     {"reason"} (required; audited)
//
// and the console's endpoints (session, overview, bulk park/drop, poison
// tickets): openapi.json, served at /api/v1/openapi.json, lists them all.
//
// Besides bearer tokens it accepts a console session: POST /api/v1/session with a
// token sets an HttpOnly, SameSite=Strict cookie; requests with the cookie
// act with that token's name and role, and every request that is not a
// GET must carry the session's CSRF token in X-CSRF-Token.
func NewWithOptions(o Options) http.Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Streams.SetDefaults()
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	a := &api{ops: o.Ops, log: o.Logger.With().Str("component", "api").Logger(), opt: o, sessions: newSessions(o.Now, o.SessionTTL), logins: newLoginLimiter()}
	if o.JS != nil {
		a.cache = newEntryCache(o.Ops, o.JS, o.Streams, o.Now)
		if o.WarmUp != nil {
			a.cache.warm(o.WarmUp)
		}
	}
	for _, t := range o.Tokens {
		a.tokens = append(a.tokens, apiToken{name: t.Name, sum: sha256.Sum256([]byte(t.Token)), role: t.Role})
	}
	mux := http.NewServeMux()
	for _, r := range a.routes() {
		mux.HandleFunc(r.method+" "+r.path, r.h)
	}
	return a.auth(mux)
}

// public endpoints need no credentials: the login itself and the API's
// description.
func public(r *http.Request) bool {
	return (r.Method == http.MethodPost && r.URL.Path == "/api/v1/session") ||
		(r.Method == http.MethodGet && r.URL.Path == "/api/v1/openapi.json")
}

// lookupToken finds a configured token. Every token is compared, in
// constant time over fixed-length hashes, so timing reveals neither which
// token nor how much of one matched.
func (a *api) lookupToken(tok string) *apiToken {
	sum := sha256.Sum256([]byte(tok))
	var found *apiToken
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(sum[:], a.tokens[i].sum[:]) == 1 && found == nil {
			found = &a.tokens[i]
		}
	}
	return found
}

// auth finds the caller: a bearer token, or a console session cookie
// (then a write must carry the session's CSRF token).
func (a *api) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store") // payloads may hold personal data
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		if public(r) {
			next.ServeHTTP(w, r)
			return
		}
		if authz := r.Header.Get("Authorization"); authz != "" {
			tok, ok := strings.CutPrefix(authz, "Bearer ")
			if !ok || tok == "" {
				h.Set("WWW-Authenticate", `Bearer realm="edihub"`)
				writeJSONError(w, http.StatusUnauthorized, "a bearer token is required (Authorization: Bearer <token>)")
				return
			}
			found := a.lookupToken(tok)
			if found == nil {
				h.Set("WWW-Authenticate", `Bearer realm="edihub", error="invalid_token"`)
				writeJSONError(w, http.StatusUnauthorized, "unknown token")
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, found)))
			return
		}
		s, status, msg := a.sessions.fromRequest(r)
		if s == nil {
			h.Set("WWW-Authenticate", `Bearer realm="edihub"`)
			writeJSONError(w, status, msg)
			return
		}
		tok := &apiToken{name: s.name, role: s.role}
		next.ServeHTTP(w, r.WithContext(context.WithValue(context.WithValue(r.Context(), ctxKey{}, tok), sessionKey{}, s)))
	})
}
