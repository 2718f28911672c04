package api

import (
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Login attempts are limited per client (its IP address) and per token: a
// client's failures earn it an exponential back-off (free attempts first,
// then 1 s doubling to 5 min); a token's logins are capped per minute, so
// a leaked read token cannot churn sessions either. Both tables are
// bounded: past maxLimited keys the oldest is forgotten.
const (
	freeFailures    = 5
	firstBackoff    = time.Second
	maxBackoff      = 5 * time.Minute
	loginsPerMinute = 30
	maxLimited      = 10000
)

type attempts struct {
	n     int       // failures (client) or logins in the window (token)
	since time.Time // window start (token) or last failure (client)
	until time.Time // refused before this
}

type loginLimiter struct {
	mu      sync.Mutex
	clients map[string]*attempts
	tokens  map[string]*attempts
}

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{clients: map[string]*attempts{}, tokens: map[string]*attempts{}}
}

// clientKey is the request's IP address (not its port).
func clientKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func entry(m map[string]*attempts, k string, now time.Time) *attempts {
	a := m[k]
	if a == nil {
		if len(m) >= maxLimited {
			var oldest string
			for key, v := range m {
				if oldest == "" || v.since.Before(m[oldest].since) {
					oldest = key
				}
			}
			delete(m, oldest)
		}
		a = &attempts{since: now}
		m[k] = a
	}
	return a
}

// wait is how long client must wait before another attempt (0: now).
func (l *loginLimiter) wait(client string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a := l.clients[client]; a != nil && now.Before(a.until) {
		return a.until.Sub(now)
	}
	return 0
}

// failed records a failed attempt of client and sets its back-off.
func (l *loginLimiter) failed(client string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := entry(l.clients, client, now)
	a.n++
	a.since = now
	if a.n > freeFailures {
		d := firstBackoff << min(a.n-freeFailures-1, 20)
		a.until = now.Add(min(d, maxBackoff))
	}
}

// succeeded forgets client's failures and counts a login of token; it
// reports how long to wait when token is over its rate (0: allowed).
func (l *loginLimiter) succeeded(client, token string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.clients, client)
	a := entry(l.tokens, token, now)
	if now.Sub(a.since) >= time.Minute {
		a.n, a.since = 0, now
	}
	if a.n >= loginsPerMinute {
		return a.since.Add(time.Minute).Sub(now)
	}
	a.n++
	return 0
}

func retryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(int(d.Round(time.Second)/time.Second)+1))
	writeJSONError(w, http.StatusTooManyRequests, "too many login attempts: wait "+d.Round(time.Second).String())
}
