// Command edihub runs and operates the edihub EDI message hub.
//
//	edihub serve            run the hub (embedded NATS, data in ./data)
//	edihub send FILE...     publish interchanges
//	edihub edifact check    check interchanges offline
//
// See README.md for the full list.
package main
