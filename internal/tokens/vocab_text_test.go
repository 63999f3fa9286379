package tokens

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go-loader/assets"
	"github.com/stretchr/testify/require"
)

// The embedded vocabularies (vocab/*.vocab) are built here from the
// .tiktoken files tiktoken-go-loader embeds, one "base64-token rank" line
// per token, ranks 0, 1, 2 ... in order:
//
//	go test ./internal/tokens -run TestEmbeddedVocab -update
var update = flag.Bool("update", false, "write vocab/*.vocab from tiktoken-go-loader's files")

// maxProbe bounds the longest run of full slots in a built table. Nothing
// is inserted after the build, so a lookup never reads more.
const maxProbe = 64

// TestEmbeddedVocab: the files gencode reads are what the text form builds,
// byte for byte, so they cannot drift from tiktoken-go-loader's.
func TestEmbeddedVocab(t *testing.T) {
	t.Parallel()
	for name, embedded := range map[string][]byte{O200KBase: o200kVocab, CL100KBase: cl100kVocab} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, err := assets.Assets.Open(name + ".tiktoken")
			require.NoError(t, err)
			defer f.Close()
			data, off, err := parseVocabText(f)
			require.NoError(t, err)
			built, err := buildVocabFile(data, off)
			require.NoError(t, err)
			if *update {
				require.NoError(t, os.WriteFile(filepath.Join("vocab", name+".vocab"), built, 0o644))
				return
			}
			require.True(t, bytes.Equal(built, embedded),
				"vocab/%s.vocab is not what %s.tiktoken builds: go test ./internal/tokens -run TestEmbeddedVocab -update", name, name)
		})
	}
}

// parseVocabText reads the text form: the bytes of every token in rank
// order and the offset where each starts (and one past the last).
func parseVocabText(r io.Reader) (data []byte, off []uint32, err error) {
	off = []uint32{0}
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadSlice('\n')
		switch {
		case err == io.EOF && len(line) == 0:
			// the end
		case err == io.EOF, err == nil:
			line = bytes.TrimSuffix(line, []byte{'\n'})
		case err == bufio.ErrBufferFull:
			return nil, nil, fmt.Errorf("vocabulary line %d: too long", lineNo)
		default:
			return nil, nil, fmt.Errorf("read vocabulary: %w", err)
		}
		if len(line) > 0 {
			sp := bytes.IndexByte(line, ' ')
			if sp < 0 {
				return nil, nil, fmt.Errorf("vocabulary line %d: no rank", lineNo)
			}
			if rank := string(line[sp+1:]); rank != fmt.Sprint(len(off)-1) {
				return nil, nil, fmt.Errorf("vocabulary line %d: rank %q, want %d", lineNo, rank, len(off)-1)
			}
			tok, derr := base64.StdEncoding.AppendDecode(nil, line[:sp])
			if derr != nil {
				return nil, nil, fmt.Errorf("vocabulary line %d: %w", lineNo, derr)
			}
			data = append(data, tok...)
			off = append(off, uint32(len(data)))
		}
		if err != nil {
			break
		}
	}
	if len(off) == 1 {
		return nil, nil, fmt.Errorf("vocabulary is empty")
	}
	return data, off, nil
}

// buildVocabFile lays out a vocab file (see vocabMagic): the hash table at
// most half full, so that a miss, the common case inside BPE, ends after a
// probe or two.
func buildVocabFile(data []byte, off []uint32) ([]byte, error) {
	n := len(off) - 1
	slots := 1 << bits.Len(uint(2*n))
	table := make([]uint32, slots)
	mask := uint64(slots - 1)
	token := func(r uint32) []byte { return data[off[r]:off[r+1]] }
	for r := range n {
		tok := token(uint32(r))
		i := hashToken(tok) & mask
		for table[i] != 0 {
			if bytes.Equal(token(table[i]-1), tok) {
				return nil, fmt.Errorf("vocabulary token %d repeats token %d", r, table[i]-1)
			}
			i = (i + 1) & mask
		}
		table[i] = uint32(r) + 1
	}
	// A lookup probes until its token or an empty slot: at most the
	// longest run of full slots, plus one.
	run, longest := 0, 0
	for i := range 2 * slots { // twice round: a run may wrap
		if table[i%slots] == 0 {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	if longest >= maxProbe {
		return nil, fmt.Errorf("vocabulary table: a run of %d full slots", longest)
	}
	out := append([]byte(vocabMagic), make([]byte, 8)...)
	binary.LittleEndian.PutUint32(out[len(vocabMagic):], uint32(n))
	binary.LittleEndian.PutUint32(out[len(vocabMagic)+4:], uint32(slots))
	for _, o := range off {
		out = binary.LittleEndian.AppendUint32(out, o)
	}
	for _, e := range table {
		out = binary.LittleEndian.AppendUint32(out, e)
	}
	return append(out, data...), nil
}

func TestParseVocabErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, raw, wantErr string
	}{
		{"empty", "", "vocabulary is empty"},
		{"no rank", "IQ==\n", "vocabulary line 1: no rank"},
		{"rank out of order", "IQ== 0\nIg== 2\n", `vocabulary line 2: rank "2", want 1`},
		{"bad base64", "IQ== 0\n!!!! 1\n", "vocabulary line 2: illegal base64 data at input byte 0"},
		{"repeated token", "IQ== 0\nIQ== 1\n", "vocabulary token 1 repeats token 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data, off, err := parseVocabText(strings.NewReader(tt.raw))
			if err == nil {
				_, err = buildVocabFile(data, off)
			}
			require.EqualError(t, err, tt.wantErr)
		})
	}
}

// TestDecodeVocabErrors: a damaged embedded file is refused with a reason
// (the Counter then estimates, see TestLoadFailureFallsBackToEstimate)
// rather than read out of bounds.
func TestDecodeVocabErrors(t *testing.T) {
	t.Parallel()
	good, err := buildVocabFile([]byte("abc"), []uint32{0, 1, 2, 3})
	require.NoError(t, err)
	v, err := decodeVocab(good)
	require.NoError(t, err)
	require.Equal(t, 3, v.size())
	require.Equal(t, uint32(1), v.rank([]byte("b")))
	require.Equal(t, noRank, v.rank([]byte("ab")))

	header := func(n, slots uint32) []byte {
		b := append([]byte(vocabMagic), make([]byte, 8)...)
		binary.LittleEndian.PutUint32(b[len(vocabMagic):], n)
		binary.LittleEndian.PutUint32(b[len(vocabMagic)+4:], slots)
		return b
	}
	tests := []struct {
		name    string
		file    []byte
		wantErr string
	}{
		{"empty", nil, "vocabulary: not a gencode vocabulary file"},
		{"other magic", append([]byte("gencode vocab 2\n"), good[len(vocabMagic):]...), "vocabulary: not a gencode vocabulary file"},
		{"truncated", good[:len(good)-20], "vocabulary: bad header (3 tokens, 8 slots, 55 bytes)"},
		{"no tokens", header(0, 8), "vocabulary: bad header (0 tokens, 8 slots, 24 bytes)"},
		{"slots not a power of two", append(header(3, 7), make([]byte, 100)...), "vocabulary: bad header (3 tokens, 7 slots, 124 bytes)"},
		{"table too full", append(header(3, 4), make([]byte, 100)...), "vocabulary: bad header (3 tokens, 4 slots, 124 bytes)"},
		{"offsets past the data", good[:len(good)-1], "vocabulary: 2 bytes of tokens, the offsets say 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := decodeVocab(tt.file)
			require.EqualError(t, err, tt.wantErr)
		})
	}
}
