package prompts

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"math/bits"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// rankTable holds an encoding's mergeable ranks (~100k tokens for
// cl100k_base, ~200k for o200k_base) in a handful of flat arrays instead of
// a map[string]int of 200k strings: half the heap and a sixth of the load
// time (BenchmarkLoadRanks: o200k 4.6 MB in ~45 ms against 9.8 MB in
// ~270 ms on the shared test machine).
//
//   - the bytes of the token of rank r are arena[off[r]:off[r+1]];
//   - slots is an open-addressing hash table (linear probing, load factor
//     under 0.4) of uint32: rank+1 in the low rankBits bits (0 is an empty
//     slot) and the top bits of the hash as a tag above them, so a probe
//     rarely touches the arena for a token it does not hold;
//   - pair gives the rank of every two-byte token directly, the lookups
//     byte-pair merging starts with.
type rankTable struct {
	arena    string
	off      []uint32
	slots    []uint32
	mask     uint64
	rankBits uint
	pair     []uint32 // by first byte<<8 | second byte; noRank if none
}

const noRank = math.MaxUint32

// loadRanks parses name (e.g. "cl100k_base.tiktoken") from the tables
// embedded by tiktoken-go-loader: one "base64(token) rank" per line, ranks
// 0, 1, 2... in order (checked).
func loadRanks(name string) (*rankTable, error) {
	data, err := assets.Assets.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return parseRanks(name, data)
}

func parseRanks(name string, data []byte) (*rankTable, error) {
	// Tokens decode to 3/4 of their base64, so len(data) is room enough.
	arena := make([]byte, 0, len(data))
	off := make([]uint32, 1, bytes.Count(data, []byte{'\n'})+1)
	for line := range bytes.Lines(data) {
		line = bytes.TrimSuffix(line, []byte{'\n'})
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 || !isRank(line[sp+1:], len(off)-1) {
			return nil, fmt.Errorf("%s: line %d is not \"<base64> %d\"", name, len(off), len(off)-1)
		}
		m, err := base64.StdEncoding.Decode(arena[len(arena):cap(arena)], line[:sp])
		if err != nil || m == 0 {
			return nil, fmt.Errorf("%s: line %d: bad token (%v)", name, len(off), err)
		}
		arena = arena[:len(arena)+m]
		off = append(off, uint32(len(arena)))
	}
	n := len(off) - 1
	t := &rankTable{arena: string(arena), off: off, rankBits: uint(bits.Len(uint(n)))}
	if t.rankBits > 24 {
		return nil, fmt.Errorf("%s: %d tokens is too many", name, n)
	}
	size := 1 << bits.Len(uint(n*5/2))
	t.slots = make([]uint32, size)
	t.mask = uint64(size - 1)
	t.pair = make([]uint32, 1<<16)
	for i := range t.pair {
		t.pair[i] = noRank
	}
	low := uint32(1)<<t.rankBits - 1
	singles := 0
	for r := range n {
		tok := t.arena[off[r]:off[r+1]]
		h := hashString(tok)
		i := h & t.mask
		for ; t.slots[i] != 0; i = (i + 1) & t.mask {
			if v := t.slots[i]; v&^low == t.tag(h) && t.arena[off[v&low-1]:off[v&low]] == tok {
				// Ranks must be unique per token, as in tiktoken (and
				// mergeLong relies on it).
				return nil, fmt.Errorf("%s: token of rank %d appears twice", name, r)
			}
		}
		t.slots[i] = t.tag(h) | uint32(r+1)
		switch len(tok) {
		case 1:
			singles++
		case 2:
			t.pair[int(tok[0])<<8|int(tok[1])] = uint32(r)
		}
	}
	if singles != 256 {
		// Counting takes every byte to be a token, as tiktoken does.
		return nil, fmt.Errorf("%s: %d of the 256 single bytes are tokens", name, singles)
	}
	return t, nil
}

// isRank reports whether b is the decimal form of want.
func isRank(b []byte, want int) bool {
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' || len(b) > 9 {
			return false
		}
		v = v*10 + int(c-'0')
	}
	return len(b) > 0 && v == want
}

// tag is the part of a slot taken from the hash: its top 32-rankBits bits.
func (t *rankTable) tag(h uint64) uint32 {
	return uint32(h>>32) &^ (1<<t.rankBits - 1)
}

// rank returns the rank of the token whose bytes are s.
func (t *rankTable) rank(s string) (uint32, bool) {
	h := hashString(s)
	tag := t.tag(h)
	low := uint32(1)<<t.rankBits - 1
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		v := t.slots[i]
		if v == 0 {
			return noRank, false
		}
		if v&^low == tag {
			r := v&low - 1
			if t.arena[t.off[r]:t.off[r+1]] == s {
				return r, true
			}
		}
	}
}

// hashString is a small multiply-mix hash (after wyhash): tokens are
// short, and hash/maphash's call into the runtime cost more than the
// hashing. The table's contents are fixed,
// so no input can lengthen its probe sequences: no seed is needed.
func hashString(s string) uint64 {
	const k0, k1 = 0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9
	h := uint64(len(s)) * k0
	for len(s) >= 8 {
		h = mix(h^le64(s), k1)
		s = s[8:]
	}
	switch n := len(s); {
	case n >= 4:
		h = mix(h^(uint64(le32(s))|uint64(le32(s[n-4:]))<<32), k0)
	case n > 0:
		h = mix(h^(uint64(s[0])|uint64(s[n/2])<<8|uint64(s[n-1])<<16), k0)
	}
	return mix(h, k1)
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// pairOf is the rank of the two bytes at s[i:], or noRank.
func (t *rankTable) pairOf(s string, i int) uint32 {
	return t.pair[int(s[i])<<8|int(s[i+1])]
}

// pairRank is the rank of s, or noRank.
func (t *rankTable) pairRank(s string) uint32 {
	r, _ := t.rank(s)
	return r
}

// tokens returns how many tokens byte-pair encoding gives for piece, one
// pre-token of the split: 1 when the piece is itself a token (the common
// case), otherwise the number of parts left by tiktoken's merge, which
// repeatedly joins the adjacent pair whose joined bytes have the lowest
// rank, the leftmost one on a tie.
func (t *rankTable) tokens(piece string) int {
	switch len(piece) {
	case 0, 1:
		return len(piece) // every single byte is a token
	case 2:
		if t.pairOf(piece, 0) != noRank {
			return 1
		}
		return 2
	}
	if _, ok := t.rank(piece); ok {
		return 1
	}
	if len(piece) > 128 {
		return t.mergeLong(piece)
	}
	return t.mergeShort(piece)
}

// part is a piece of the word being merged: its start offset and the rank
// of its bytes joined with the next part's (noRank if that is no token).
type part struct {
	start uint32
	rank  uint32
}

// mergeShort is tiktoken's own algorithm (a linear scan for the lowest rank
// after each merge), quadratic but allocation-free for short pieces.
func (t *rankTable) mergeShort(piece string) int {
	var buf [130]part
	parts := buf[:len(piece)+1]
	for i := range parts {
		parts[i] = part{uint32(i), noRank}
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = t.pairOf(piece, i)
	}
	// joinedRank is the rank of parts i..i+2 joined, as after merging i
	// and i+1 (the next part is i+3 before the merge removes i+1).
	joinedRank := func(i int) uint32 {
		if i+3 < len(parts) {
			return t.pairRank(piece[parts[i].start:parts[i+3].start])
		}
		return noRank
	}
	for len(parts) > 2 {
		best, k := uint32(noRank), -1
		for i := 0; i+1 < len(parts); i++ {
			if parts[i].rank < best {
				best, k = parts[i].rank, i
			}
		}
		if k < 0 {
			break
		}
		parts[k].rank = joinedRank(k)
		if k > 0 {
			parts[k-1].rank = joinedRank(k - 1)
		}
		parts = append(parts[:k+1], parts[k+2:]...)
	}
	return len(parts) - 1
}

// mergeLong gives the same result as mergeShort in O(n log n) for long
// pieces (runs of spaces, punctuation or letters in generated text): the
// parts form a linked list and the candidate merges a heap ordered by
// (rank, start), which picks the lowest rank and, on a tie, the leftmost
// pair, as the linear scan does. Entries made stale by an earlier merge
// are skipped when popped: a live entry's rank equals its part's current
// rank, and ranks are unique per byte string, so a merged part (longer
// bytes) never carries an old rank again.
func (t *rankTable) mergeLong(piece string) int {
	n := len(piece)
	next := make([]int32, n) // index of the next live part, n at the end
	prev := make([]int32, n)
	rank := make([]uint32, n) // rank of the part joined with the next one
	h := make(mergeHeap, 0, n)
	for i := range n {
		next[i], prev[i] = int32(i+1), int32(i-1)
		rank[i] = noRank
		if i+2 <= n {
			rank[i] = t.pairOf(piece, i)
			if rank[i] != noRank {
				h = append(h, uint64(rank[i])<<32|uint64(i))
			}
		}
	}
	h.init()
	pairAt := func(i int32) uint32 { // rank of part i joined with its next
		j := next[i]
		if j >= int32(n) {
			return noRank
		}
		end := int(next[j])
		return t.pairRank(piece[i:end])
	}
	live := n
	for len(h) > 0 {
		top := h.pop()
		r, i := uint32(top>>32), int32(uint32(top))
		if rank[i] != r || next[i] > int32(n) {
			continue // stale
		}
		// Merge i with its next part j.
		j := next[i]
		next[i] = next[j]
		if next[j] < int32(n) {
			prev[next[j]] = i
		}
		next[j] = int32(n + 1) // dead
		rank[j] = noRank
		live--
		if rank[i] = pairAt(i); rank[i] != noRank {
			h.push(uint64(rank[i])<<32 | uint64(i))
		}
		if p := prev[i]; p >= 0 {
			if rank[p] = pairAt(p); rank[p] != noRank {
				h.push(uint64(rank[p])<<32 | uint64(p))
			}
		}
	}
	return live
}

// mergeHeap is a binary min-heap of rank<<32|start.
type mergeHeap []uint64

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(v uint64) {
	*h = append(*h, v)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p] <= s[i] {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *mergeHeap) pop() uint64 {
	s := *h
	v := s[0]
	s[0] = s[len(s)-1]
	*h = s[:len(s)-1]
	h.down(0)
	return v
}

func (h mergeHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r] < h[l] {
			m = r
		}
		if h[i] <= h[m] {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
