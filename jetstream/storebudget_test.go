package jetstream

import "testing"

func TestDefaultReservation(t *testing.T) {
	for _, tc := range []struct{ limit, want int64 }{
		{0, 1 << 30},              // unknown: as before
		{48 << 20, 3 << 20},       // a 64 MiB disk: 48 MiB store, 3 MiB each
		{8 << 20, 1 << 20},        // never below 1 MiB
		{64 << 30, 1 << 30},       // never above 1 GiB
		{3 << 30, (3 << 30) / 16}, // 192 MiB each on a 4 GiB disk
	} {
		if got := DefaultReservation(tc.limit); got != tc.want {
			t.Errorf("DefaultReservation(%d) = %d, want %d", tc.limit, got, tc.want)
		}
	}
}
