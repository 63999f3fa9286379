package session

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLoadsDoNotShareWhatTheyDecoded: a caller changing the messages or
// summaries it loaded (Turns numbers checkpoints, the view renames call
// ids) does not change what the next load returns: each load gets its own
// tool calls, meta and summaries, though the store decodes each text once.
func TestLoadsDoNotShareWhatTheyDecoded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	sess, err := s.CreateSession(ctx, "/w", "m")
	require.NoError(t, err)
	exit := 1
	stored := []Message{
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "Bash", Arguments: `{"command":"make"}`}}},
		{Role: RoleTool, ToolCallID: "c1", Name: "Bash", Content: "failed", Meta: Meta{Tool: "Bash", ExitCode: &exit,
			Pastes: []Paste{{Start: 1, End: 2, N: 3}}, Changes: &FileChanges{Observed: true, Created: []string{"a.go"}},
			Imported: &Imported{Format: "codex"}, Checkpoint: &Checkpoint{Before: "b", Changed: []string{"a.go"}}}},
	}
	_, err = s.Append(ctx, sess.ID, Message{Role: RoleUser, Content: "build it"})
	require.NoError(t, err)
	sum, err := s.ApplySummary(ctx, Summary{SessionID: sess.ID, FromSeq: 1, ToSeq: 1, Commands: []string{"make"},
		ToolsUsed: []ToolUsage{{Tool: "Bash", Count: 1, NotableUses: []string{"make"}}}}, nil, false)
	require.NoError(t, err)
	_, err = s.Append(ctx, sess.ID, stored...)
	require.NoError(t, err)
	var sums []Summary
	load := func() []Message {
		v, err := s.LoadView(ctx, sess.ID)
		require.NoError(t, err)
		require.Len(t, v.Messages, 2)
		require.Len(t, v.Summaries, 1)
		sums = v.Summaries
		return v.Messages
	}
	load() // decoded, kept
	first := load()
	sums[0].Commands[0] = "rm -rf /"
	sums[0].ToolsUsed[0].NotableUses[0] = "rm -rf /"
	first[0].ToolCalls[0].ID = "changed"
	m := &first[1].Meta
	*m.ExitCode = 7
	m.Pastes[0].N = 9
	m.Changes.Created[0] = "b.go"
	m.Imported.Format = "claude"
	m.Checkpoint.Seq = 2
	m.Checkpoint.Changed[0] = "b.go"
	got := load()
	require.Equal(t, stored[0].ToolCalls, got[0].ToolCalls)
	require.Equal(t, stored[1].Meta, got[1].Meta)
	require.Equal(t, 1, *got[1].Meta.ExitCode)
	require.Equal(t, sum.Commands, sums[0].Commands)
	require.Equal(t, sum.ToolsUsed, sums[0].ToolsUsed)
}

// TestMetaCloneSharesNothing: Meta.clone copies every pointer and slice
// of a Meta with all its fields set, those of fields added later too.
func TestMetaCloneSharesNothing(t *testing.T) {
	t.Parallel()
	var m Meta
	fillAll(reflect.ValueOf(&m).Elem())
	c := m.clone()
	require.Equal(t, m, c)
	shared(t, "Meta", reflect.ValueOf(m), reflect.ValueOf(c))
}

// TestSummaryCloneSharesNothing: Summary.clone copies every slice of a
// Summary with all its fields set, those of fields added later too.
func TestSummaryCloneSharesNothing(t *testing.T) {
	t.Parallel()
	var s Summary
	fillAll(reflect.ValueOf(&s).Elem())
	c := s.clone()
	require.Equal(t, s, c)
	shared(t, "Summary", reflect.ValueOf(s), reflect.ValueOf(c))
}

// fillAll sets every field of v, pointers and slices with one element.
func fillAll(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(1)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillAll(v.Index(0))
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i))
			}
		}
	default:
		panic("fillAll: a field of kind " + v.Kind().String() + ": teach fillAll and Meta.clone about it")
	}
}

// shared fails when a and b share memory through a pointer or a slice.
func shared(t *testing.T, path string, a, b reflect.Value) {
	if a.Type() == reflect.TypeFor[time.Time]() {
		return // its location is shared, and never changed
	}
	switch a.Kind() {
	case reflect.Pointer:
		require.NotEqual(t, a.Pointer(), b.Pointer(), "%s is shared", path)
		shared(t, path, a.Elem(), b.Elem())
	case reflect.Slice:
		require.NotEqual(t, a.Pointer(), b.Pointer(), "%s is shared", path)
		for i := range a.Len() {
			shared(t, path, a.Index(i), b.Index(i))
		}
	case reflect.Map, reflect.Interface, reflect.Chan, reflect.Func:
		t.Fatalf("%s: a %s, which Meta.clone does not copy", path, a.Kind())
	case reflect.Struct:
		for i := range a.NumField() {
			shared(t, path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
		}
	}
}
