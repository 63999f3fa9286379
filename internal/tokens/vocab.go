package tokens

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/maphash"
	"io"
	"math/bits"
	"slices"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// vocab is one encoding's mergeable ranks in a compact form: the token
// bytes of every rank back to back, and an open-addressing hash table from
// token bytes to rank. tiktoken-go keeps the same data in two Go maps and a
// sorted copy (about 265 ms and 24 MB to build for o200k_base); this form
// is built from the same embedded file in a few tens of milliseconds,
// allocates four slices instead of 400,000 strings, and looks tokens up
// without converting them to strings.
type vocab struct {
	data  []byte   // the bytes of every token, in rank order
	off   []uint32 // rank r is data[off[r]:off[r+1]]
	table []uint32 // slot -> rank+1; 0 is an empty slot
	mask  uint64   // len(table)-1
	seed  maphash.Seed
}

// noRank is what rank returns for bytes that are not a token.
const noRank = ^uint32(0)

// loadVocab reads name's .tiktoken file (one "base64-token rank" line per
// token, ranks 0, 1, 2 ... in order) from the vocabularies embedded by
// tiktoken-go-loader. It reads the file through a small buffer:
// embed.FS.ReadFile would copy all of it (3.6 MB for o200k_base) first,
// which cost a print-mode turn more than the parsing.
func loadVocab(name string) (*vocab, error) {
	f, err := assets.Assets.Open(name + ".tiktoken")
	if err != nil {
		return nil, fmt.Errorf("read vocabulary: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read vocabulary: %w", err)
	}
	return parseVocab(f, int(fi.Size()))
}

// parseVocab builds a vocab from the text of a .tiktoken file of about
// size bytes.
func parseVocab(r io.Reader, size int) (*vocab, error) {
	v := &vocab{
		// Decoded tokens are at most 3/4 of their base64 text.
		data: make([]byte, 0, size*3/4),
		// Lines average 16 to 18 bytes (cl100k_base, o200k_base); a
		// vocabulary of shorter ones only makes append grow it.
		off:  make([]uint32, 1, size/12+2),
		seed: maphash.MakeSeed(),
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadSlice('\n')
		switch {
		case err == io.EOF && len(line) == 0:
			// the end
		case err == io.EOF, err == nil:
			line = bytes.TrimSuffix(line, []byte{'\n'})
		case err == bufio.ErrBufferFull:
			return nil, fmt.Errorf("vocabulary line %d: too long", lineNo)
		default:
			return nil, fmt.Errorf("read vocabulary: %w", err)
		}
		if len(line) > 0 {
			if err := v.add(line, lineNo); err != nil {
				return nil, err
			}
		}
		if err != nil {
			break
		}
	}
	n := len(v.off) - 1
	if n == 0 {
		return nil, fmt.Errorf("vocabulary is empty")
	}
	// At most half full, so that a miss, the common case inside BPE, ends
	// after a probe or two.
	slots := 1 << bits.Len(uint(2*n))
	v.table = make([]uint32, slots)
	v.mask = uint64(slots - 1)
	for r := range n {
		tok := v.token(uint32(r))
		i := maphash.Bytes(v.seed, tok) & v.mask
		for v.table[i] != 0 {
			if bytes.Equal(v.token(v.table[i]-1), tok) {
				return nil, fmt.Errorf("vocabulary token %d repeats token %d", r, v.table[i]-1)
			}
			i = (i + 1) & v.mask
		}
		v.table[i] = uint32(r) + 1
	}
	return v, nil
}

// add appends the token of one "base64-token rank" line.
func (v *vocab) add(line []byte, lineNo int) error {
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return fmt.Errorf("vocabulary line %d: no rank", lineNo)
	}
	rank, ok := atoi(line[sp+1:])
	if !ok || rank != len(v.off)-1 {
		return fmt.Errorf("vocabulary line %d: rank %q, want %d", lineNo, line[sp+1:], len(v.off)-1)
	}
	enc := line[:sp]
	start := len(v.data)
	v.data = slices.Grow(v.data, base64.StdEncoding.DecodedLen(len(enc)))
	v.data = v.data[:start+base64.StdEncoding.DecodedLen(len(enc))]
	n, err := base64.StdEncoding.Decode(v.data[start:], enc)
	if err != nil {
		return fmt.Errorf("vocabulary line %d: %w", lineNo, err)
	}
	v.data = v.data[:start+n]
	v.off = append(v.off, uint32(len(v.data)))
	return nil
}

func (v *vocab) token(r uint32) []byte { return v.data[v.off[r]:v.off[r+1]] }

// size is the number of tokens.
func (v *vocab) size() int { return len(v.off) - 1 }

// rank returns b's rank, or noRank when b is not a token.
func (v *vocab) rank(b []byte) uint32 {
	i := maphash.Bytes(v.seed, b) & v.mask
	for {
		e := v.table[i]
		if e == 0 {
			return noRank
		}
		if bytes.Equal(v.data[v.off[e-1]:v.off[e]], b) {
			return e - 1
		}
		i = (i + 1) & v.mask
	}
}

// atoi parses a non-negative decimal number of at most 9 digits.
func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
