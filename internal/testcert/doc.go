// Package testcert makes a private CA and the certificates it signs, and
// writes them as PEM files, for tests of TLS with client certificates (the
// embedded NATS server, the Kafka bridge). It imports only the standard
// library, so that any package's in-package tests may use it; only tests
// may import it (test/arch_test.go).
package testcert
