package api

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// Every route New registers is in openapi.json, and nothing else is.
func TestOpenAPIListsEveryRoute(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openapiJSON, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	registered := map[string]bool{}
	for _, r := range (&api{}).routes() {
		key := strings.ToLower(r.method) + " " + r.path
		registered[key] = true
		if _, ok := doc.Paths[r.path][strings.ToLower(r.method)]; !ok {
			t.Errorf("%s %s is registered but not in openapi.json", r.method, r.path)
		}
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			if !registered[method+" "+path] {
				t.Errorf("openapi.json describes %s %s, which is not registered", strings.ToUpper(method), path)
			}
		}
	}
	if len(registered) < 18 {
		t.Fatalf("only %d routes: %v", len(registered), slices.Sorted(maps.Keys(registered)))
	}
}

// openapi.json is served without credentials (it holds no data).
func TestOpenAPIServed(t *testing.T) {
	e := newOpsEnv(t)
	srv := apiServer(t, e)
	code, out := call(t, srv, "GET", "/api/v1/openapi.json", "", "")
	if code != 200 || out["paths"] == nil {
		t.Fatalf("openapi.json: %d", code)
	}
}
