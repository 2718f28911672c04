package directory

// The shipped tables are generated from the UN/EDIFACT directories in the
// XML layout of the reference data (see README, "Directory validation").
// From a checkout that has the shared reference data beside it:
//
//	go generate ./edifact/directory/
//
// The generator takes the folder as a flag; the path below is relative to
// this package's folder.
//go:generate go run ./internal/gen -src ../../../shared/edifact-directories -out tables.bin.gz -overrides overrides.xml
