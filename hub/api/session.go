package api

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"mime"
	"net"
	"net/http"
	"sync"
	"time"
)

// Console sessions: a person pastes a token once; the browser then holds
// only a random session ID in an HttpOnly cookie (no script can read it)
// with SameSite=Strict (no other site can send it). Writes also need the
// session's CSRF token in a header, which only a page of this origin can
// read (GET /api/v1/session). Sessions live in memory: a restart of serve
// logs everyone out.

// SessionCookie is the base name of the console's session cookie; the
// name used is cookieName's.
const SessionCookie = "edihub_session"

// cookieName: over TLS __Host-edihub_session (Secure, Path=/, no Domain:
// the browser sends it to this origin only); otherwise a name with the
// port, since a cookie without Secure is sent to every port of the host
// and another service there must not receive (or set) this one.
func cookieName(r *http.Request) string {
	if r.TLS != nil {
		return "__Host-" + SessionCookie
	}
	_, port, err := net.SplitHostPort(r.Host)
	if err != nil || port == "" {
		port = "80"
	}
	return SessionCookie + "_" + port
}

// CSRFHeader carries the session's CSRF token on every write.
const CSRFHeader = "X-CSRF-Token"

// maxSessionsPerToken bounds memory: a token's login beyond it drops that
// token's oldest session, never another token's (so a read token cannot
// log an operator out by logging in often).
const maxSessionsPerToken = 32

type session struct {
	id, csrf   string
	name, role string
	expires    time.Time
}

type sessionKey struct{}

type sessions struct {
	now func() time.Time
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]*session
}

func newSessions(now func() time.Time, ttl time.Duration) *sessions {
	return &sessions{now: now, ttl: ttl, m: map[string]*session{}}
}

func randomID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *sessions) create(name, role string) *session {
	ss := &session{id: randomID(), csrf: randomID(), name: name, role: role, expires: s.now().Add(s.ttl)}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for id, o := range s.m {
		if !now.Before(o.expires) {
			delete(s.m, id)
		}
	}
	var oldest *session
	n := 0
	for _, o := range s.m {
		if o.name != name {
			continue
		}
		n++
		if oldest == nil || o.expires.Before(oldest.expires) {
			oldest = o
		}
	}
	if n >= maxSessionsPerToken {
		delete(s.m, oldest.id)
	}
	s.m[ss.id] = ss
	return ss
}

func (s *sessions) delete(id string) {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
}

// fromRequest returns the request's live session, or the status and
// message of the refusal. A request that is not a GET (or HEAD) must
// carry the session's CSRF token.
func (s *sessions) fromRequest(r *http.Request) (*session, int, string) {
	c, err := r.Cookie(cookieName(r))
	if err != nil || c.Value == "" {
		return nil, http.StatusUnauthorized, "log in: a bearer token (Authorization: Bearer <token>) or a console session is required"
	}
	s.mu.Lock()
	ss := s.m[c.Value]
	if ss != nil && !s.now().Before(ss.expires) {
		delete(s.m, ss.id)
		ss = nil
	}
	s.mu.Unlock()
	if ss == nil {
		return nil, http.StatusUnauthorized, "the console session has expired or was logged out; log in again"
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		got := r.Header.Get(CSRFHeader)
		if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(ss.csrf)) != 1 {
			return nil, http.StatusForbidden, "missing or wrong CSRF token (" + CSRFHeader + "): reload the console"
		}
	}
	return ss, 0, ""
}

// sessionInfo is what the console learns about its session.
type sessionInfo struct {
	Name    string    `json:"name"`
	Role    string    `json:"role"`
	CSRF    string    `json:"csrf,omitempty"`
	Expires time.Time `json:"expires,omitzero"`
}

type loginBody struct {
	Token string `json:"token"`
}

// login turns a token into a session. It takes JSON only, so a form on
// another site cannot post it (a cross-origin JSON post needs a CORS
// preflight this API never grants).
func (a *api) login(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeJSONError(w, http.StatusUnsupportedMediaType, "send the token as JSON: {\"token\": \"...\"}")
		return
	}
	var b loginBody
	if !decode(w, r, 4096, &b) {
		return
	}
	client, now := clientKey(r), a.sessions.now()
	if d := a.logins.wait(client, now); d > 0 {
		retryAfter(w, d)
		return
	}
	t := a.lookupToken(b.Token)
	if b.Token == "" || t == nil {
		a.logins.failed(client, now)
		writeJSONError(w, http.StatusUnauthorized, "unknown token")
		return
	}
	if d := a.logins.succeeded(client, t.name, now); d > 0 {
		retryAfter(w, d)
		return
	}
	ss := a.sessions.create(t.name, t.role)
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(r), Value: ss.id, Path: "/", Expires: ss.expires, MaxAge: int(a.opt.SessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	a.log.Info().Str("actor", t.name).Str("role", t.role).Msg("console login")
	writeJSON(w, http.StatusOK, sessionInfo{Name: ss.name, Role: ss.role, CSRF: ss.csrf, Expires: ss.expires})
}

// sessionInfo tells the console who it is; with a bearer token it names
// the token (no CSRF: bearer requests need none).
func (a *api) sessionInfo(w http.ResponseWriter, r *http.Request) {
	if ss, _ := r.Context().Value(sessionKey{}).(*session); ss != nil {
		writeJSON(w, http.StatusOK, sessionInfo{Name: ss.name, Role: ss.role, CSRF: ss.csrf, Expires: ss.expires})
		return
	}
	c := caller(r)
	writeJSON(w, http.StatusOK, sessionInfo{Name: c.name, Role: c.role})
}

func (a *api) logout(w http.ResponseWriter, r *http.Request) {
	if ss, _ := r.Context().Value(sessionKey{}).(*session); ss != nil {
		a.sessions.delete(ss.id)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}
