// Package escape is the one place that makes untrusted text safe to show:
// on a terminal, in a one-line table cell or log field, in a NATS header
// value. Dead letters are untrusted: a partner (or an attacker posing as
// one) chose every byte of the payload and of most headers. Written raw to
// a terminal, ESC sequences can retitle the window, move the cursor over
// the lines above, hide text or answer back into the shell; bidi controls
// make text read differently than it is.
//
// It imports only the standard library.
package escape
