// Command edihub runs and operates the edihub EDI message hub.
//
//	edihub serve            run the hub (embedded NATS, data in ./data)
//	edihub send FILE...     publish interchanges
//	edihub edifact check    check interchanges offline
//
// See README.md for the full list. The application itself is package app:
// serve turns its flags into an app.Config and runs app.New and Run; the
// other commands are clients of a running hub (send and drill through
// package client).
package main
