package rewind

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gencode/gencode/internal/checkpoint"
)

// BenchmarkConflictCheck is what a rewind costs before it changes anything,
// at a few hundred calls: a session of calls that each rewrote one file of
// the project (a different directory each time), then one file edited by
// hand; a rewind to before the first turn is refused for that file
// (nothing changes, so each iteration sees the same state). op=refused is
// the whole refused rewind as /rewind and `gencode rewind` run it (a
// snapshot of now, the diff to the target, the conflict check with its
// diff); op=known is the replay of the calls and rewinds alone (gencode's
// state of each path). record=paths is a session whose calls recorded the
// paths they changed; record=none the same session as an older build
// logged it (each call's checkpoints compared at the rewind).
func BenchmarkConflictCheck(b *testing.B) {
	const calls = 300
	for _, n := range []int{1000, 100000} {
		f := newFixture(b)
		for i := range n {
			d := filepath.Join(f.proj, fmt.Sprintf("d%04d", i/100))
			if i%100 == 0 {
				if err := os.MkdirAll(d, 0o755); err != nil {
					b.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", i)), []byte(fmt.Sprintf("package p // %d\n", i)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		// No time bound: on a loaded machine the first snapshot of
		// 100k files may take over the default.
		f.files = checkpoint.New(b.TempDir(), f.proj, checkpoint.Options{MaxTime: time.Hour})
		for c := range calls {
			i := c * 100 % n
			f.turn(fmt.Sprintf("turn %d", c), fmt.Sprintf("d%04d/f%d.go", i/100, i), fmt.Sprintf("package p // %d, call %d\n", i, c))
		}
		if err := os.WriteFile(filepath.Join(f.proj, "d0000", "f0.go"), []byte("package p // by hand\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		// record=paths: each call recorded the paths it changed, as the
		// tools do; record=none: the same session as an older build
		// logged it, whose calls the rewind compares itself (DiffPairs).
		for _, rec := range []struct {
			name string
			sess string
		}{{"paths", f.sess.ID}, {"none", unrecordedTwin(b, f).ID}} {
			rw := Rewinder{Store: f.st, Files: f.files, SessionID: rec.sess}
			turns, err := f.st.Turns(f.ctx, rec.sess)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("files=%d/calls=%d/record=%s/op=refused", n, calls, rec.name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					res, err := rw.ToTurn(f.ctx, 1, Mode{Code: true}, Choices{})
					if err == nil || len(res.Conflicts) != 1 {
						b.Fatalf("ToTurn = %v, %d conflicts; want the hand edit refused", err, len(res.Conflicts))
					}
				}
			})
			b.Run(fmt.Sprintf("files=%d/calls=%d/record=%s/op=known", n, calls, rec.name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := rw.known(f.ctx, turns); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		f.files.Close()
	}
}
