//go:build !race

package hub

const forensicRaceEnabled = false
