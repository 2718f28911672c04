// Package drill is the drill stage behind `serve --drill`: a middleware
// that makes poison on purpose (a panic, a hang past the deadline, the
// process killed, a permanent error) for messages whose x-drill header
// asks for it, and Reproduce, which does the same in the forensic
// sandbox's child in the form its caps catch.
//
// story.go decides the texts `edihub drill` prints while it follows a
// drill message (EventStep, Expectation, DeathsText).
//
// It may import hub (the Handler and Middleware types, hub.PermanentError)
// and wire. app wraps the first stage with Middleware when hub.drill is
// set; hub only marks the copies of a drilling hub (x-drill-mode: on).
// test/arch_test.go checks it.
package drill
