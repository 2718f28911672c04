//go:build !race

package forensics

const forensicRaceEnabled = false
