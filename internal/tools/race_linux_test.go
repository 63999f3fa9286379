package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// swapper exchanges work/d (a real directory) and work/l (a symlink to a
// directory outside) in a loop, as a background process the model started
// could: with renameat2(RENAME_EXCHANGE) where the kernel has it, else
// with three renames.
type swapper struct {
	d, l  string
	swaps atomic.Int64
	stop  chan struct{}
	done  sync.WaitGroup
}

func startSwapper(t *testing.T, d, l string) *swapper {
	t.Helper()
	sw := &swapper{d: d, l: l, stop: make(chan struct{})}
	exchange := true
	if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, l, unix.RENAME_EXCHANGE); err != nil {
		require.True(t, errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL), "renameat2: %v", err)
		exchange = false
	} else {
		sw.swaps.Add(1)
	}
	sw.done.Add(1)
	go func() {
		defer sw.done.Done()
		tmp := d + ".swap"
		for {
			select {
			case <-sw.stop:
				return
			default:
			}
			switch {
			case exchange:
				if unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, l, unix.RENAME_EXCHANGE) == nil {
					sw.swaps.Add(1)
				}
			case os.Rename(d, tmp) == nil && os.Rename(l, d) == nil && os.Rename(tmp, l) == nil:
				sw.swaps.Add(1)
			}
			// A short pause lets many calls get through: the race is in
			// the calls that straddle a swap.
			time.Sleep(50 * time.Microsecond)
		}
	}()
	t.Cleanup(sw.halt)
	return sw
}

func (sw *swapper) halt() {
	select {
	case <-sw.stop:
	default:
		close(sw.stop)
	}
	sw.done.Wait()
}

// raceTree makes ROOT/work with work/d a directory and work/l a symlink to
// ROOT/outside, which holds secret.txt.
func raceTree(t *testing.T) (work, outside string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	work, outside = filepath.Join(root, "work"), filepath.Join(root, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(work, "d"), 0o755))
	writeFile(t, filepath.Join(outside, "secret.txt"), "TOP-SECRET\n")
	require.NoError(t, os.Symlink(outside, filepath.Join(work, "l")))
	return work, outside
}

// Writes into a directory that is being swapped with a symlink to outside
// never land outside: each lands inside or fails. (Before the tools went
// through os.Root, about one write in five landed outside.)
func TestWriteRaceWithSymlinkSwap(t *testing.T) {
	work, outside := raceTree(t)
	perms := DefaultPermissions()
	require.NoError(t, perms.Allow("Write"))
	s := New(Options{WorkDir: work, Permissions: perms})
	sw := startSwapper(t, filepath.Join(work, "d"), filepath.Join(work, "l"))

	const writes = 1000
	ok := 0
	// At least 1000 writes, and on until the swapper (starved on a loaded
	// machine) has swapped the directory often enough to have raced them.
	start := time.Now()
	for i := 0; i < writes || sw.swaps.Load() <= 100 && time.Since(start) < time.Minute; i++ {
		p := fmt.Sprintf("d/f%d.txt", i)
		if i%2 == 1 {
			p = fmt.Sprintf("d/n%d/f.txt", i) // parent directories created too
		}
		r := run(t, s, ToolWrite, map[string]any{"file_path": p, "content": "x\n"})
		if !r.IsError {
			ok++
		}
	}
	sw.halt()

	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"secret.txt"}, names, "nothing written outside (%d writes succeeded, %d swaps)", ok, sw.swaps.Load())
	assert.Positive(t, ok, "some writes succeeded: the race was exercised")
	assert.Greater(t, sw.swaps.Load(), int64(100), "the directory was swapped throughout")
	t.Logf("%d of %d writes succeeded during %d swaps", ok, writes, sw.swaps.Load())
}

// Reads through a directory being swapped with a symlink to outside never
// return the outside file.
func TestReadRaceWithSymlinkSwap(t *testing.T) {
	work, _ := raceTree(t)
	s := New(Options{WorkDir: work}) // Read is allowed inside only
	sw := startSwapper(t, filepath.Join(work, "d"), filepath.Join(work, "l"))
	// At least 1000 reads, and on until the swapper (starved on a loaded
	// machine) has swapped the directory often enough to have raced them.
	start := time.Now()
	for i := 0; i < 1000 || sw.swaps.Load() <= 100 && time.Since(start) < time.Minute; i++ {
		r := run(t, s, ToolRead, map[string]any{"file_path": "d/secret.txt"})
		require.NotContains(t, r.Content, "TOP-SECRET", "read %d leaked the outside file", i)
		r = run(t, s, ToolGrep, map[string]any{"pattern": "TOP", "path": "d"})
		require.NotContains(t, r.Content, "TOP-SECRET", "grep %d leaked the outside file", i)
	}
	sw.halt()
	assert.Greater(t, sw.swaps.Load(), int64(100))
}

// The path is resolved as the kernel does: a symlink is followed before
// the ".." after it, instead of the path being cleaned first.
func TestDotDotAfterSymlink(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	work := filepath.Join(root, "work")
	require.NoError(t, os.MkdirAll(filepath.Join(work, "sub", "deep"), 0o755))
	require.NoError(t, os.Symlink("sub/deep", filepath.Join(work, "linkdir"))) // inside
	require.NoError(t, os.Symlink(root, filepath.Join(work, "up")))            // the parent: outside
	perms := DefaultPermissions()
	require.NoError(t, perms.Allow("Write"))
	s := New(Options{WorkDir: work, Permissions: perms})

	r := run(t, s, ToolWrite, map[string]any{"file_path": "linkdir/../x.txt", "content": "x\n"})
	require.False(t, r.IsError, r.Content)
	assert.FileExists(t, filepath.Join(work, "sub", "x.txt"), "linkdir/.. is sub")
	assert.NoFileExists(t, filepath.Join(work, "x.txt"))
	assert.Equal(t, "sub/x.txt", r.Meta.FilePath, "named by where it leads")

	// up/../work/x is ROOT/../work/x: outside, so refused in print mode,
	// and not written to work/work/x either.
	r = run(t, s, ToolWrite, map[string]any{"file_path": "up/../work/x.txt", "content": "x\n"})
	assert.True(t, r.Denied, r.Content)
	assert.Contains(t, r.Content, filepath.Join(filepath.Dir(root), "work", "x.txt"))
	assert.NoFileExists(t, filepath.Join(work, "work", "x.txt"))
	assert.NoFileExists(t, filepath.Join(filepath.Dir(root), "work", "x.txt"))

	r = run(t, s, ToolRead, map[string]any{"file_path": "linkdir/../x.txt"})
	require.False(t, r.IsError, r.Content)
	assert.True(t, strings.HasSuffix(r.Content, "x"), r.Content)
}
