package main

import (
	"github.com/edihub/edihub/ubl"
)

// runUBLJSON prints the JSON view of one document (ubl.Document.JSON).
func runUBLJSON(e *env, args []string) error {
	fs := newFlagSet(e, "ubl json", "[--max-size N] FILE")
	var f ublFlags
	f.register(fs, false)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageErr("ubl json needs exactly one FILE")
	}
	if err := f.limits().Validate(); err != nil {
		return usageErr("%v", err)
	}
	data, err := readUBLFile(e, files[0], f.maxSize)
	if err != nil {
		return usageErr("%v", err)
	}
	doc, err := ubl.ParseBytes(data, f.limits())
	if err != nil {
		return failedErr("%s: %v", files[0], err)
	}
	return doc.JSON(e.stdout)
}
