package hub

import "hash/fnv"

// PartitionOf is the partition INGEST stores a partner's interchanges in:
// the same FNV-1a hash the server's {{partition(n,1)}} transform uses, so
// tools can tell which partition a partner shares without asking.
func PartitionOf(partner string, partitions int) int {
	h := fnv.New32a()
	h.Write([]byte(partner))
	return int(h.Sum32() % uint32(partitions))
}
