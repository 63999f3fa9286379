package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/checkpoint"
)

// countingCheckpointer hands out numbered IDs.
type countingCheckpointer struct{ n int }

func (c *countingCheckpointer) Checkpoint(context.Context) (string, error) {
	c.n++
	return fmt.Sprintf("cp%d", c.n), nil
}

// Changed names the pair it compared.
func (c *countingCheckpointer) Changed(_ context.Context, from, to string) ([]string, error) {
	return []string{from + ".." + to}, nil
}

func TestCheckpointsAroundChangeCapableCalls(t *testing.T) {
	dir := t.TempDir()
	cp := &countingCheckpointer{}
	s := New(Options{WorkDir: dir, Yolo: true, Checkpoints: cp})
	tests := []struct {
		name, tool, args string
		want             *Checkpoint
	}{
		{"write", ToolWrite, `{"file_path":"a.txt","content":"x\n"}`, &Checkpoint{Before: "cp1", After: "cp2", Changed: []string{"cp1..cp2"}, ChangedKnown: true}},
		{"edit", ToolEdit, `{"file_path":"a.txt","old_string":"x","new_string":"y"}`, &Checkpoint{Before: "cp3", After: "cp4", Changed: []string{"cp3..cp4"}, ChangedKnown: true}},
		{"bash", ToolBash, `{"command":"rm a.txt"}`, &Checkpoint{Before: "cp5", After: "cp6", Changed: []string{"cp5..cp6"}, ChangedKnown: true}},
		{"a read-only command keeps one", ToolBash, `{"command":"ls"}`, &Checkpoint{Before: "cp7", After: "cp7", Changed: []string{}, ChangedKnown: true}},
		{"read keeps none", ToolLS, `{}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.tool == ToolEdit { // Edit wants a Read first
				s.Run(context.Background(), Call{ID: "r", Name: ToolRead, Arguments: `{"file_path":"a.txt"}`})
			}
			r := s.Run(context.Background(), Call{ID: "1", Name: tt.tool, Arguments: tt.args})
			got := r.Meta.Checkpoint
			if (got == nil) != (tt.want == nil) || got != nil && !reflect.DeepEqual(*got, *tt.want) {
				t.Fatalf("%s: Checkpoint = %+v, want %+v (%s)", tt.tool, got, tt.want, r.Content)
			}
		})
	}
}

// TestRecordedChangesAreWhatTheCheckpointsDiffer: the paths a call records
// as changed, when its checkpoint after is taken, are exactly those a
// rewind would find by comparing its checkpoints before and after
// (checkpoint.DiffPairs), for a session of calls that create, edit,
// delete and rename files, change a .gitignore, make and remove a nested
// directory, turn a file into a directory, make a nested repository and
// change files in it, and change nothing; with a hand edit between calls,
// which is in neither.
func TestRecordedChangesAreWhatTheCheckpointsDiffer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cps := checkpoint.New(t.TempDir(), dir, checkpoint.Options{})
	t.Cleanup(cps.Close)
	s := New(Options{WorkDir: dir, Yolo: true, Checkpoints: cps, Env: []string{"PATH=" + os.Getenv("PATH")}})
	bash := func(cmd string) string { return `{"command":` + strconv.Quote(cmd) + `}` }
	steps := []struct {
		tool, args string
		hand       string // a shell command run by hand before the call
	}{
		{ToolWrite, `{"file_path":"a.txt","content":"a\n"}`, "echo old > old.txt"},
		{ToolBash, bash("mkdir -p n/m && echo x > n/m/x.txt && echo y > n/y.txt && echo b > b.txt"), ""},
		{ToolRead, `{"file_path":"a.txt"}`, ""},
		{ToolEdit, `{"file_path":"a.txt","old_string":"a","new_string":"a2"}`, "echo by hand >> old.txt"},
		{ToolBash, bash("mv b.txt c.txt && mv n/m n/k"), ""},
		{ToolBash, bash("rm old.txt && chmod +x c.txt"), ""},
		{ToolBash, bash("printf '*.log\\n' > .gitignore && echo l > x.log && echo z > z.txt"), ""},
		{ToolBash, bash("rm .gitignore"), ""},
		{ToolBash, bash("rm -r n && echo file > d && rm d && mkdir d && echo in > d/in.txt"), ""},
		{ToolBash, bash("echo same > a.txt; echo a2 > a.txt"), ""},
		{ToolBash, bash("ls"), ""},
		{ToolWrite, `{"file_path":"a.txt","content":"a2\n"}`, ""},
		{ToolBash, bash("rm -r d && echo now a file > d"), ""},
		{ToolBash, bash("mkdir sub && cd sub && git init -q && echo s > s.txt && git add s.txt && git -c user.name=t -c user.email=t@t commit -qm s"), ""},
		{ToolBash, bash("echo t > sub/t.txt && echo s2 > sub/s.txt && echo e > e.txt"), ""},
	}
	ctx := context.Background()
	for i, st := range steps {
		if st.hand != "" {
			require.NoError(t, exec.Command("sh", "-c", "cd "+dir+" && "+st.hand).Run())
		}
		r := s.Run(ctx, Call{ID: strconv.Itoa(i), Name: st.tool, Arguments: st.args})
		require.False(t, r.IsError, "%d %s: %s", i, st.tool, r.Content)
		cp := r.Meta.Checkpoint
		if st.tool == ToolRead {
			require.Nil(t, cp)
			continue
		}
		require.NotNil(t, cp, "%d %s", i, st.tool)
		require.Empty(t, cp.Err)
		require.True(t, cp.ChangedKnown, "%d %s: the changed paths recorded", i, st.tool)
		d, err := cps.DiffPairs(ctx, []checkpoint.Pair{{From: cp.Before, To: cp.After}})
		require.NoError(t, err)
		require.NoError(t, d[0].Err)
		want := []string{}
		for _, c := range d[0].Changes {
			want = append(want, c.Path)
		}
		require.ElementsMatch(t, want, cp.Changed, "%d %s %s", i, st.tool, st.args)
	}
	st := cps.Stats()
	require.Positive(t, st.Changed, "followed snapshots among them")
	require.Greater(t, st.Full, 1, "whole-tree ones too (the .gitignore)")

	// A call that changes more than maxRecordedPaths keeps no record (the
	// log's meta stays small; a rewind compares its checkpoints itself).
	// The bound is lowered here: creating 2,001 files is 1.5 CPU-s of this
	// machine's filesystem, and the rule is the same at any bound.
	s.maxRecorded = 20
	r := s.Run(ctx, Call{ID: "many", Name: ToolBash, Arguments: bash(fmt.Sprintf("mkdir many && cd many && touch $(seq 0 %d)", s.maxRecorded))})
	require.False(t, r.IsError, r.Content)
	require.NotNil(t, r.Meta.Checkpoint)
	require.NotEmpty(t, r.Meta.Checkpoint.After)
	require.False(t, r.Meta.Checkpoint.ChangedKnown, "no record past the bound")
	require.Empty(t, r.Meta.Checkpoint.Changed)
}
