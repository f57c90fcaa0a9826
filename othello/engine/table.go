package engine

// table is the transposition table: a fixed number of buckets of two
// entries, found by a hash of the board and checked against the whole board
// (so a collision can never return another position's score). The first
// entry of a bucket keeps the deepest search (replaced only by one as deep
// or by an entry of an older search), the second always takes the newest.
// It belongs to one search at a time.
type table struct {
	buckets []bucket
	mask    uint64
	age     uint8
}

type bucket [2]entry

type entry struct {
	p, o  uint64
	score int16
	depth int8  // plies searched; for an endgame entry, the empties solved
	move  int8  // best move's square, or -1
	kind  uint8 // bound (lower, upper, exact) | endgame
	age   uint8
}

const (
	boundLower uint8 = 1
	boundUpper uint8 = 2
	boundExact       = boundLower | boundUpper
	kindEnd    uint8 = 4 // the score is an exact endgame search's, in discs
)

// entryBytes is the size of an entry, for the table's size in megabytes.
const entryBytes = 24

func newTable(megabytes int) *table {
	n := uint64(1)
	for n*2*2*entryBytes <= uint64(megabytes)<<20 {
		n *= 2
	}
	return &table{buckets: make([]bucket, n), mask: n - 1}
}

func hash(b Board) uint64 {
	h := b.P*0x9e3779b97f4a7c15 ^ (b.O+0x632be59bd9b4e019)*0xbf58476d1ce4e5b9
	h ^= h >> 31
	h *= 0x94d049bb133111eb
	return h ^ h>>29
}

// newSearch marks the entries written so far as older than the next
// search's.
func (t *table) newSearch() { t.age++ }

func (t *table) clear() {
	clear(t.buckets)
	t.age = 0
}

func (t *table) probe(b Board) (entry, bool) {
	bk := &t.buckets[hash(b)&t.mask]
	for i := range bk {
		if e := bk[i]; e.kind != 0 && e.p == b.P && e.o == b.O {
			return e, true
		}
	}
	return entry{}, false
}

func (t *table) store(b Board, depth, score int, kind uint8, move int) {
	bk := &t.buckets[hash(b)&t.mask]
	e := entry{p: b.P, o: b.O, score: int16(score), depth: int8(depth), move: int8(move), kind: kind, age: t.age}
	first := &bk[0]
	if first.kind == 0 || (first.p == b.P && first.o == b.O) || first.age != t.age || int(first.depth) <= depth {
		if first.p == b.P && first.o == b.O && move < 0 {
			e.move = first.move // keep the move a shallower bound lacks
		}
		*first = e
		return
	}
	bk[1] = e
}
