package tokens

import "math"

// Byte-pair encoding of one piece (a pre-token), counting the tokens.
//
// BPE starts from single bytes and repeatedly merges the adjacent pair whose
// concatenation has the lowest rank, the leftmost one on a tie, until no
// adjacent pair is a token. tiktoken (and tiktoken-go) find that pair by
// scanning all pairs after each merge: O(n²) for an n-byte piece, which is
// what made a 200 KB prompt without spaces take two minutes. Short pieces,
// nearly all of them, still use that scan; long ones keep the pairs in a
// heap ordered by (rank, position), which picks the same pair every time
// (the position is the byte offset, so "lowest position" is "leftmost") in
// O(n log n).

// shortPiece is the longest piece merged by scanning.
const shortPiece = 64

// pieceTokens returns how many tokens piece encodes to.
func (v *vocab) pieceTokens(piece []byte) int {
	switch {
	case len(piece) == 0:
		return 0
	case len(piece) == 1:
		return 1 // every byte is a token
	case v.rank(piece) != noRank:
		return 1 // as tiktoken: a piece that is a token is that token
	case len(piece) <= shortPiece:
		return v.scanMerge(piece)
	default:
		return v.heapMerge(piece)
	}
}

// scanMerge is tiktoken's merge loop (_byte_pair_merge), counting parts.
func (v *vocab) scanMerge(piece []byte) int {
	type part struct {
		start int
		rank  uint32
	}
	var buf [shortPiece + 1]part
	parts := buf[:0]
	if len(piece) >= len(buf) {
		parts = make([]part, 0, len(piece)+1) // only tests merge long pieces by scanning
	}
	parts = parts[:len(piece)+1]
	for i := range parts {
		parts[i] = part{start: i, rank: noRank}
	}
	// rankAt is the rank of parts i and i+1 merged, given parts[i+2] follows.
	rankAt := func(i int) uint32 {
		if i+2 < len(parts) {
			return v.rank(piece[parts[i].start:parts[i+2].start])
		}
		return noRank
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = rankAt(i)
	}
	for len(parts) > 1 {
		minRank, minIdx := noRank, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < minRank {
				minRank, minIdx = parts[i].rank, i
			}
		}
		if minIdx < 0 {
			break
		}
		i := minIdx
		// Merge parts i and i+1: part i now ends where i+2 started.
		parts = append(parts[:i+1], parts[i+2:]...)
		parts[i].rank = rankAt(i)
		if i > 0 {
			parts[i-1].rank = rankAt(i - 1)
		}
	}
	return len(parts) - 1
}

// heapMerge merges like scanMerge in O(n log n). Parts are a linked list
// over byte offsets; pair[i] is the rank of the part starting at i merged
// with the next one. Heap entries whose rank no longer matches pair[] are
// stale and skipped.
func (v *vocab) heapMerge(piece []byte) int {
	n := len(piece)
	if n > math.MaxInt32-1 {
		panic("tokens: piece too long") // callers cut text into segments of at most maxSegment bytes
	}
	next := make([]int32, n) // next[i]: start of the part after the one at i (n: end)
	prev := make([]int32, n) // prev[i]: start of the part before (-1: none)
	pair := make([]uint32, n)
	alive := make([]bool, n)
	h := mergeHeap(make([]mergeItem, 0, n))
	for i := range n {
		next[i], prev[i], alive[i] = int32(i+1), int32(i-1), true
	}
	rankAt := func(i int32) uint32 {
		j := next[i]
		if int(j) >= n {
			return noRank
		}
		return v.rank(piece[i:next[j]])
	}
	for i := range int32(n - 1) {
		pair[i] = rankAt(i)
		if pair[i] != noRank {
			h = append(h, item(pair[i], i))
		}
	}
	pair[n-1] = noRank
	h.init()
	parts := n
	for len(h) > 0 {
		it := h.pop()
		i := it.pos()
		if !alive[i] || pair[i] != it.rank() {
			continue // stale
		}
		j := next[i]
		alive[j] = false
		next[i] = next[j]
		if int(next[i]) < n {
			prev[next[i]] = i
		}
		parts--
		if pair[i] = rankAt(i); pair[i] != noRank {
			h.push(item(pair[i], i))
		}
		if p := prev[i]; p >= 0 {
			if pair[p] = rankAt(p); pair[p] != noRank {
				h.push(item(pair[p], p))
			}
		}
	}
	return parts
}

// mergeItem is a pair's rank and position in one word, rank first, so
// that comparing items compares (rank, position).
type mergeItem uint64

func item(rank uint32, pos int32) mergeItem { return mergeItem(rank)<<32 | mergeItem(uint32(pos)) }

func (it mergeItem) rank() uint32 { return uint32(it >> 32) }
func (it mergeItem) pos() int32   { return int32(uint32(it)) }

// mergeHeap is a 4-ary min-heap of mergeItems: shallower than a binary
// heap, and without container/heap's interface calls.
type mergeHeap []mergeItem

func (h mergeHeap) init() {
	for i := (len(h) - 2) / 4; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(it mergeItem) {
	*h = append(*h, it)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 4
		if s[p] <= it {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = it
}

func (h *mergeHeap) pop() mergeItem {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	*h = s[:last]
	h.down(0)
	return top
}

func (h mergeHeap) down(i int) {
	n := len(h)
	if n == 0 {
		return
	}
	it := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < min(c+4, n); k++ {
			if h[k] < h[m] {
				m = k
			}
		}
		if h[m] >= it {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = it
}
