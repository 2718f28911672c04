package api

import (
	_ "embed"
	"net/http"
)

// openapiJSON describes /api/v1/; TestOpenAPIListsEveryRoute keeps it
// equal to the routes New registers.
//
//go:embed openapi.json
var openapiJSON []byte

func (a *api) openapi(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(openapiJSON)
}
