// Command gen writes the compact directory tables that package directory
// embeds, from a folder of UN/EDIFACT directories in the XML layout of the
// reference data (one sub-folder per directory: D96A/, Service_V4/, ...),
// and the overrides file that corrects the data's truncated composites.
//
//	go run ./internal/gen -src ../../../shared/edifact-directories -out tables.bin.gz -overrides overrides.xml
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
	out := flag.String("out", "tables.bin.gz", "tables file to write")
	ov := flag.String("overrides", "overrides.xml", "overrides file to write (corrections of truncated composites)")
	flag.Parse()
	if err := run(*src, *out, *ov); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(src, out, ovPath string) error {
	if src == "" {
		return fmt.Errorf("-src is required (the folder of directories, e.g. ../shared/edifact-directories)")
	}
	set, err := directory.LoadTreeUncorrected(src)
	if err != nil {
		return err
	}
	var dirs []*directory.Directory
	for _, n := range set.Names() {
		dirs = append(dirs, set.Directory(n))
	}
	ov := directory.SuggestOverrides(dirs)
	for _, d := range dirs {
		if err := directory.ApplyOverrides(d, ov); err != nil {
			return err
		}
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
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d directories, %d bytes; %s: %d bytes\n", out, len(dirs), buf.Len(), ovPath, len(ov))
	return nil
}
