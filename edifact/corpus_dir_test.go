package edifact

import (
	"os"
	"path/filepath"
)

// corpusDir is the shared corpus: $EDIHUB_CORPUS or ../../shared/corpus.
func corpusDir() string {
	if d := os.Getenv("EDIHUB_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "corpus")
}
