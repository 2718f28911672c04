// Package test holds the end-to-end tests: the real edihub binary, built
// once per run, against an embedded NATS server, with real clients (nats.go,
// the nats CLI, kcat) where they are installed.
package test
