package tokens

import (
	_ "embed"
	"encoding/binary"
	"fmt"
)

// vocab is one encoding's mergeable ranks in a compact form: the token
// bytes of every rank back to back, their offsets, and an open-addressing
// hash table from token bytes to rank. The three are built ahead of time
// from tiktoken-go-loader's .tiktoken files (vocab_text_test.go builds them
// and checks that the embedded files are what it builds) and read in place:
// a process does not parse or hash 200,000 tokens before its first count.
// Parsing the text form cost a print-mode turn 35-40 ms of its ~150 ms.
//
// The table's hash function is fixed rather than seeded: nothing is ever
// inserted after the build, so no input can lengthen a probe sequence; the
// longest one is checked when the file is built.
type vocab struct {
	data  []byte // the bytes of every token, in rank order
	off   []byte // n+1 little-endian uint32s: rank r is data[off[r]:off[r+1]]
	table []byte // little-endian uint32 per slot: rank+1; 0 is an empty slot
	mask  uint64 // slots-1
}

// The files are "gencode vocab 1\n", the token count n and the slot count
// (uint32, little-endian), then off, table and data.
const vocabMagic = "gencode vocab 1\n"

var (
	//go:embed vocab/o200k_base.vocab
	o200kVocab []byte
	//go:embed vocab/cl100k_base.vocab
	cl100kVocab []byte
)

// noRank is what rank returns for bytes that are not a token.
const noRank = ^uint32(0)

// decodeVocab reads a vocab file without copying it.
func decodeVocab(b []byte) (*vocab, error) {
	head := len(vocabMagic) + 8
	if len(b) < head || string(b[:len(vocabMagic)]) != vocabMagic {
		return nil, fmt.Errorf("vocabulary: not a gencode vocabulary file")
	}
	n := uint64(binary.LittleEndian.Uint32(b[len(vocabMagic):]))
	slots := uint64(binary.LittleEndian.Uint32(b[len(vocabMagic)+4:]))
	offEnd := uint64(head) + 4*(n+1)
	tableEnd := offEnd + 4*slots
	if n == 0 || slots&(slots-1) != 0 || slots < 2*n || tableEnd > uint64(len(b)) {
		return nil, fmt.Errorf("vocabulary: bad header (%d tokens, %d slots, %d bytes)", n, slots, len(b))
	}
	v := &vocab{off: b[head:offEnd], table: b[offEnd:tableEnd], data: b[tableEnd:], mask: slots - 1}
	if last := v.offset(uint32(n)); uint64(last) != uint64(len(v.data)) {
		return nil, fmt.Errorf("vocabulary: %d bytes of tokens, the offsets say %d", len(v.data), last)
	}
	return v, nil
}

func (v *vocab) offset(r uint32) uint32 { return binary.LittleEndian.Uint32(v.off[4*uint64(r):]) }

func (v *vocab) slot(i uint64) uint32 { return binary.LittleEndian.Uint32(v.table[4*i:]) }

func (v *vocab) token(r uint32) []byte { return v.data[v.offset(r):v.offset(r+1)] }

// size is the number of tokens.
func (v *vocab) size() int { return len(v.off)/4 - 1 }

// rank returns b's rank, or noRank when b is not a token.
func (v *vocab) rank(b []byte) uint32 {
	for i := hashToken(b) & v.mask; ; i = (i + 1) & v.mask {
		e := v.slot(i)
		if e == 0 {
			return noRank
		}
		if string(v.token(e-1)) == string(b) {
			return e - 1
		}
	}
}

// hashToken is FNV-1a over b with a final mix, so that the table's low
// bits depend on every byte.
func hashToken(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}
