package tools

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRead(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	writeFile(t, filepath.Join(dir, "a.txt"), "alpha\nbeta\r\ngamma\ndelta\nepsilon")
	writeFile(t, filepath.Join(dir, "long.txt"), strings.Repeat("é", 3000)+"\nshort\n")
	writeFile(t, filepath.Join(dir, "empty.txt"), "")
	writeFile(t, filepath.Join(dir, "bin.dat"), "ELF\x00\x01\x02text")
	writeFile(t, filepath.Join(dir, "latin1.txt"), "caf\xe9\n")
	writeFile(t, filepath.Join(dir, "esc.txt"), "\x1b[31mred\x1b[0m\n")
	// A multi-byte rune straddling the 8 KB sniff boundary is still text.
	writeFile(t, filepath.Join(dir, "boundary.txt"), strings.Repeat("a", sniffBytes-1)+"é and more\n")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))

	tests := []struct {
		name    string
		args    map[string]any
		want    string
		wantErr string
	}{
		{"whole file", map[string]any{"file_path": "a.txt"}, "     1\talpha\n     2\tbeta\n     3\tgamma\n     4\tdelta\n     5\tepsilon", ""},
		{"absolute path", map[string]any{"file_path": filepath.Join(dir, "a.txt"), "limit": 1}, "     1\talpha\n[lines 1-1 of a.txt (31 bytes); more follow: Read with offset=2]", ""},
		{"offset and limit", map[string]any{"file_path": "a.txt", "offset": 2, "limit": 2}, "     2\tbeta\n     3\tgamma\n[lines 2-3 of a.txt (31 bytes); more follow: Read with offset=4]", ""},
		{"offset to the end", map[string]any{"file_path": "a.txt", "offset": 4}, "     4\tdelta\n     5\tepsilon\n[lines 4-5 of 5]", ""},
		{"offset past the end", map[string]any{"file_path": "a.txt", "offset": 9}, "", "offset 9 is past the end of a.txt (5 lines)"},
		{"long line cut on a rune", map[string]any{"file_path": "long.txt", "limit": 1}, "     1\t" + strings.Repeat("é", 1000) + " [line cut: 4000 more bytes]\n[lines 1-1", ""},
		{"empty file", map[string]any{"file_path": "empty.txt"}, "empty.txt is empty (0 bytes)", ""},
		{"escape sequences stripped", map[string]any{"file_path": "esc.txt"}, "     1\tred", ""},
		{"rune across the sniff boundary", map[string]any{"file_path": "boundary.txt"}, "     1\taaaa", ""},
		{"binary file", map[string]any{"file_path": "bin.dat"}, "", "bin.dat is a binary or non-UTF-8 file (10 bytes); Read shows UTF-8 text only"},
		{"non-utf8 file", map[string]any{"file_path": "latin1.txt"}, "", "latin1.txt is a binary or non-UTF-8 file"},
		{"missing file", map[string]any{"file_path": "nope.txt"}, "", "nope.txt does not exist"},
		{"directory", map[string]any{"file_path": "sub"}, "", "sub is a directory; use LS to list it"},
		{"not a directory", map[string]any{"file_path": "a.txt/x"}, "", "a.txt/x: not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, s, ToolRead, tt.args)
			if tt.wantErr != "" {
				assert.True(t, r.IsError, "IsError for %q", r.Content)
				assert.Contains(t, r.Content, tt.wantErr)
				return
			}
			require.False(t, r.IsError, r.Content)
			assert.True(t, strings.HasPrefix(r.Content, tt.want), "Read(%v) = %q, want prefix %q", tt.args, r.Content, tt.want)
			assert.Equal(t, ToolRead, r.Meta.Tool)
			assert.True(t, r.Meta.Success)
			wantPath := tt.args["file_path"].(string)
			if filepath.IsAbs(wantPath) {
				wantPath, _ = filepath.Rel(dir, wantPath)
			}
			assert.Equal(t, wantPath, r.Meta.FilePath, "Meta.FilePath is relative to WorkDir")
		})
	}
}

func TestReadFIFOIsRefused(t *testing.T) {
	t.Parallel()
	s, dir := yoloSet(t)
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan Result, 1)
	go func() { done <- run(t, s, ToolRead, map[string]any{"file_path": "fifo"}) }()
	select {
	case r := <-done:
		assert.True(t, r.IsError)
		assert.Contains(t, r.Content, "not a regular file")
	case <-time.After(5 * time.Second):
		t.Fatal("Read of a FIFO blocked")
	}
}

func TestReadStopsAtTheOutputBudget(t *testing.T) {
	t.Parallel()
	s, dir := newTestSet(t, Options{Yolo: true, OutputCapTokens: 100}) // 300 bytes
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "line number %d\n", i)
	}
	writeFile(t, filepath.Join(dir, "f.txt"), b.String())
	r := run(t, s, ToolRead, map[string]any{"file_path": "f.txt"})
	require.False(t, r.IsError, r.Content)
	assert.Empty(t, r.Full, "Read pages instead of eliding")
	assert.Contains(t, r.Content, "     1\tline number 1\n")
	assert.Regexp(t, `\[lines 1-\d+ of f.txt \(1\.\d KB\); more follow: Read with offset=\d+\]$`, r.Content)
	assert.NotContains(t, r.Content, "elided")
}

// A 50 MB file is streamed: reading a window near its end returns just that
// window, quickly, without loading the file into memory.
func TestReadHugeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50 MB")
	}
	s, dir := yoloSet(t)
	path := filepath.Join(dir, "huge.log")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	// Each line is its number in 8 digits and the same words, written
	// without fmt: a million Fprintf calls under -race were most of the
	// test's CPU.
	lines := 0
	line := []byte("00000000 the quick brown fox jumps over the lazy dog\n")
	for size := 0; size < 50<<20; lines++ {
		for i, n := 7, lines+1; i >= 0; i, n = i-1, n/10 {
			line[i] = byte('0' + n%10)
		}
		_, _ = w.Write(line)
		size += len(line)
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())

	tests := []struct {
		name      string
		offset    int
		limit     int
		wantFirst int
		wantLast  int
	}{
		{"head with default limit", 0, 0, 1, readDefaultLimit},
		{"window near the end", lines - 10, 5, lines - 10, lines - 6},
		{"last lines", lines - 1, 10, lines - 1, lines},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"file_path": "huge.log"}
			if tt.offset > 0 {
				args["offset"] = tt.offset
			}
			if tt.limit > 0 {
				args["limit"] = tt.limit
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			r := run(t, s, ToolRead, args)
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			require.False(t, r.IsError, r.Content)

			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("Read(%v): %s, %d KB allocated", args, elapsed, allocated>>10)
			assert.Less(t, allocated, uint64(16<<20), "Read must not load the 50 MB file")
			assert.Less(t, elapsed, 10*time.Second)

			body := r.Content
			if i := strings.LastIndex(body, "\n["); i >= 0 {
				body = body[:i]
			}
			got := strings.Split(body, "\n")
			if tt.name == "head with default limit" {
				// the token budget stops it before 2000 lines
				assert.Contains(t, r.Content, "more follow: Read with offset=")
				assert.Equal(t, fmt.Sprintf("%6d\t%08d the quick brown fox jumps over the lazy dog", 1, 1), got[0])
				return
			}
			require.Len(t, got, tt.wantLast-tt.wantFirst+1, "lines returned")
			assert.Equal(t, fmt.Sprintf("%6d\t%08d the quick brown fox jumps over the lazy dog", tt.wantFirst, tt.wantFirst), got[0])
			assert.Equal(t, fmt.Sprintf("%6d\t%08d the quick brown fox jumps over the lazy dog", tt.wantLast, tt.wantLast), got[len(got)-1])
		})
	}
}
