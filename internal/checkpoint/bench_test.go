package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// project makes n small files in dirs of 100.
func project(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("d%04d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", i)), []byte(fmt.Sprintf("package p // %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkBashCallCheckpoint is what checkpoints add to one Bash call
// that changes a file: a snapshot before and one after, the project
// already snapshotted once (the first call of a session pays for hashing
// every file; see BenchmarkFirstCheckpoint). mode=followed is the Store as
// gencode uses it (only the paths the tree's events name are brought up to
// date); mode=whole-tree is every snapshot looking at the whole tree (what
// a Store did before it followed the tree, and does where it cannot).
func BenchmarkBashCallCheckpoint(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		ctx := context.Background()
		dir, data := project(b, n), b.TempDir()
		for _, mode := range []string{"whole-tree", "followed"} {
			b.Run(fmt.Sprintf("files=%d/mode=%s", n, mode), func(b *testing.B) {
				// No time bound: on a loaded machine the first
				// snapshot of 100k files may take over the default.
				s := New(data, dir, Options{NoFollow: mode == "whole-tree", MaxTime: time.Hour})
				defer s.Close()
				if _, err := s.Take(ctx); err != nil {
					b.Fatal(err)
				}
				f := filepath.Join(dir, "d0000", "f0.go")
				start := s.Stats()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := s.Take(ctx); err != nil {
						b.Fatal(err)
					}
					if err := os.WriteFile(f, []byte(fmt.Sprintf("package p // changed %d by %s\n", i, mode)), 0o644); err != nil {
						b.Fatal(err)
					}
					if _, err := s.Take(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				st := s.Stats()
				b.ReportMetric(float64(st.Full-start.Full)/float64(2*b.N), "whole-tree-snapshots/snapshot")
			})
		}
	}
}

// BenchmarkFirstCheckpoint is the first snapshot of a project: every file
// hashed into the shadow directory; mode=followed also starts following
// the tree (one walk, a watch per directory), which later snapshots
// repay.
func BenchmarkFirstCheckpoint(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		ctx := context.Background()
		dir := project(b, n)
		for _, mode := range []string{"whole-tree", "followed"} {
			b.Run(fmt.Sprintf("files=%d/mode=%s", n, mode), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					s := New(b.TempDir(), dir, Options{NoFollow: mode == "whole-tree", MaxTime: time.Hour})
					if _, err := s.Take(ctx); err != nil {
						b.Fatal(err)
					}
					s.Close()
				}
			})
		}
	}
}

// BenchmarkStoreGrowth200Turns: 200 turns that each rewrite the same 5
// files (a line appended to each, so every version is new), with a
// checkpoint before and after; the store's growth in bytes per turn and
// in all.
func BenchmarkStoreGrowth200Turns(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		dir := project(b, 1000)
		s := New(b.TempDir(), dir, Options{})
		if _, err := s.Take(ctx); err != nil {
			b.Fatal(err)
		}
		base := s.Size()
		content := make([]string, 5)
		for turn := range 200 {
			if _, err := s.Take(ctx); err != nil {
				b.Fatal(err)
			}
			for f := range 5 {
				content[f] += fmt.Sprintf("line %d of a file that grows a little every turn, like code under edit\n", turn)
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("hot%d.go", f)), []byte(content[f]), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := s.Take(ctx); err != nil {
				b.Fatal(err)
			}
		}
		grown := s.Size() - base
		b.ReportMetric(float64(grown), "store-bytes/200turns")
		b.ReportMetric(float64(grown)/200, "store-bytes/turn")
		if err := s.Prune(ctx, 0, base+grown/4); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(s.Size()), "store-bytes-after-prune")
	}
}
