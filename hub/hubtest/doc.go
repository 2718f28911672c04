// Package hubtest starts a real, embedded edihub for the tests of
// downstream apps: NATS with JetStream on a free loopback port, data in
// t.TempDir(), the built-in parse stage (or the stages you give), and
// cleanup with t.Cleanup. No mocks: what the test talks to is the hub.
//
//	url := hubtest.Start(t, nil)
//	nc, _ := nats.Connect(url)
//	// publish to edi.ingest.ACME, read edi.parsed.ACME.INVOIC ...
package hubtest
