// Package console is the web console served at /console/: plain HTML, CSS
// and JavaScript modules embedded in the binary (no build step, no CDN;
// it works offline), with a strict Content-Security-Policy. The page does
// nothing on its own: every read and every action is a call to the JSON
// API under /api/v1/ (hub/api), with the role of the token the person
// logged in with, so the console, the CLI and scripts behave and audit
// alike.
//
// Untrusted data is rendered with text nodes only (textContent,
// createElement), never as markup, and control and bidi characters are
// shown escaped as the CLI shows them (assets/js/esc.js mirrors
// escape.Line; a browser test checks both on the same cases).
//
// It imports nothing of this module; cmd mounts it next to the API.
package console
