//go:build race

package forensics

const forensicRaceEnabled = true
