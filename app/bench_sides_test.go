package app

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// --sides is refused, before anything runs, unless it names known sides
// and holds plain and ledger (the ratios' two terms); noledger is optional.
func TestParseBenchSidesAreChecked(t *testing.T) {
	defer func(s []string) { parseSides = s }(parseSides)
	for _, c := range []struct {
		sides, want string
	}{
		{"plain,ledger,bogus", `"bogus" is not one of`},
		{"plain,nopipe,pipe,serial", "must hold plain and ledger"},
		{"ledger,noledger", "must hold plain and ledger"},
	} {
		_, err := runParseBench(context.Background(), &BenchOptions{Sides: c.sides, Classes: "1k", Messages: 10, Rounds: 1})
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--sides %s: %v, want a refusal saying %q", c.sides, err, c.want)
		}
	}
}
