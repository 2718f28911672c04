// Command gen writes the compact directory tables that package directory
// embeds, from a folder of UN/EDIFACT directories in the XML layout of the
// reference data (one sub-folder per directory: D96A/, Service_V4/, ...).
//
//	go run ./internal/gen -src ../../../shared/edifact-directories -out tables.bin.gz
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/edihub/edihub/edifact/directory"
)

func main() {
	src := flag.String("src", "", "folder holding one sub-folder per directory (D96A, Service_V3...)")
	out := flag.String("out", "tables.bin.gz", "file to write")
	flag.Parse()
	if err := run(*src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(src, out string) error {
	if src == "" {
		return fmt.Errorf("-src is required (the folder of directories, e.g. ../shared/edifact-directories)")
	}
	set, err := directory.LoadTree(src)
	if err != nil {
		return err
	}
	var dirs []*directory.Directory
	for _, n := range set.Names() {
		dirs = append(dirs, set.Directory(n))
	}
	var buf bytes.Buffer
	if err := directory.EncodeTables(&buf, dirs); err != nil {
		return err
	}
	// Round trip before writing: the tables must decode to what was loaded.
	back, err := directory.DecodeTables(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return fmt.Errorf("decoding what was written: %w", err)
	}
	if len(back) != len(dirs) {
		return fmt.Errorf("decoded %d directories, wrote %d", len(back), len(dirs))
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d directories, %d bytes\n", out, len(dirs), buf.Len())
	return nil
}
