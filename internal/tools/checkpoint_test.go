package tools

import (
	"context"
	"fmt"
	"testing"
)

// countingCheckpointer hands out numbered IDs.
type countingCheckpointer struct{ n int }

func (c *countingCheckpointer) Checkpoint(context.Context) (string, error) {
	c.n++
	return fmt.Sprintf("cp%d", c.n), nil
}

func TestCheckpointsAroundChangeCapableCalls(t *testing.T) {
	dir := t.TempDir()
	cp := &countingCheckpointer{}
	s := New(Options{WorkDir: dir, Yolo: true, Checkpoints: cp})
	tests := []struct {
		name, tool, args string
		want             *Checkpoint
	}{
		{"write", ToolWrite, `{"file_path":"a.txt","content":"x\n"}`, &Checkpoint{Before: "cp1", After: "cp2"}},
		{"edit", ToolEdit, `{"file_path":"a.txt","old_string":"x","new_string":"y"}`, &Checkpoint{Before: "cp3", After: "cp4"}},
		{"bash", ToolBash, `{"command":"rm a.txt"}`, &Checkpoint{Before: "cp5", After: "cp6"}},
		{"a read-only command keeps one", ToolBash, `{"command":"ls"}`, &Checkpoint{Before: "cp7", After: "cp7"}},
		{"read keeps none", ToolLS, `{}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.tool == ToolEdit { // Edit wants a Read first
				s.Run(context.Background(), Call{ID: "r", Name: ToolRead, Arguments: `{"file_path":"a.txt"}`})
			}
			r := s.Run(context.Background(), Call{ID: "1", Name: tt.tool, Arguments: tt.args})
			got := r.Meta.Checkpoint
			if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Fatalf("%s: Checkpoint = %+v, want %+v (%s)", tt.tool, got, tt.want, r.Content)
			}
		})
	}
}
