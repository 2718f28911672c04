//go:build race

package hub

const forensicRaceEnabled = true
