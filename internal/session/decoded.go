package session

import (
	"encoding/json"
	"slices"
	"sync"
)

// decoded keeps what the store decoded of messages' tool_calls and meta
// texts and of summaries' records, by the text: every request loads its view again (RequestView,
// Tally, the status bar's meter, compaction's plan), and decoding the
// same JSON of the same messages each time was most of what reading a
// message cost (~65% of scanMessage under the race detector). Keyed by
// the text itself, it is right whoever wrote the row and whatever changed
// it since (a deleted original's meta is another text); callers get their
// own copies (cloneCalls, Meta.clone), since some change what they load
// (Turns sets Checkpoint.Seq).
type decoded struct {
	mu    sync.Mutex
	calls map[string][]ToolCall
	metas map[string]Meta
	sums  map[string]Summary
	size  int // bytes of the texts kept
}

const (
	// decodedMax bounds the texts kept (and about as much again decoded);
	// past it the memory starts over.
	decodedMax = 8 << 20
	// decodedTextMax: a longer text (a Write of a large file) is decoded
	// each time, not kept.
	decodedTextMax = 64 << 10
)

// keep makes room for a text of n bytes, or says it is not kept.
func (d *decoded) keep(n int) bool {
	if n > decodedTextMax {
		return false
	}
	if d.size+n > decodedMax {
		d.calls, d.metas, d.sums, d.size = nil, nil, nil, 0
	}
	d.size += n
	return true
}

// toolCalls decodes a tool_calls text.
func (d *decoded) toolCalls(text string) ([]ToolCall, error) {
	return decodeOnce(d, &d.calls, text, slices.Clone[[]ToolCall])
}

// meta decodes a meta text.
func (d *decoded) meta(text string) (Meta, error) {
	return decodeOnce(d, &d.metas, text, Meta.clone)
}

// summary decodes a summary's record.
func (d *decoded) summary(text []byte) (Summary, error) {
	return decodeOnce(d, &d.sums, string(text), Summary.clone)
}

// decodeOnce decodes text into a T, or copies (clone) what one of d's
// maps (kept) holds for it from an earlier call, and keeps a copy of a
// new one when keep allows.
func decodeOnce[T any](d *decoded, kept *map[string]T, text string, clone func(T) T) (T, error) {
	d.mu.Lock()
	v, ok := (*kept)[text]
	d.mu.Unlock()
	if ok {
		return clone(v), nil
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		var zero T
		return zero, err
	}
	d.mu.Lock()
	if d.keep(len(text)) {
		if *kept == nil {
			*kept = map[string]T{}
		}
		(*kept)[text] = clone(v)
	}
	d.mu.Unlock()
	return v, nil
}

// clone is s with nothing shared: its slices copied
// (TestSummaryCloneSharesNothing names them; a field added to Summary
// with a pointer, slice or map must be copied here).
func (s Summary) clone() Summary {
	for _, l := range []*[]string{&s.KeyDecisions, &s.Topics, &s.NextSteps, &s.FilesModified, &s.FilesCreated,
		&s.FilesDeleted, &s.FilesReverted, &s.FilesRead, &s.Commands, &s.UserConstraints, &s.CommandsNotRun,
		&s.Merged, &s.UserRequests, &s.SystemNotes} {
		*l = slices.Clone(*l)
	}
	s.ToolsUsed = slices.Clone(s.ToolsUsed)
	for i := range s.ToolsUsed {
		s.ToolsUsed[i].NotableUses = slices.Clone(s.ToolsUsed[i].NotableUses)
	}
	return s
}

// clone is m with nothing shared: its pointers and slices copied
// (TestMetaCloneSharesNothing names them; a field added to Meta with a
// pointer, slice or map must be copied here).
func (m Meta) clone() Meta {
	if m.ExitCode != nil {
		c := *m.ExitCode
		m.ExitCode = &c
	}
	m.Pastes = slices.Clone(m.Pastes)
	if m.Changes != nil {
		c := *m.Changes
		c.Created, c.Modified, c.Deleted, c.Reverted = slices.Clone(c.Created), slices.Clone(c.Modified),
			slices.Clone(c.Deleted), slices.Clone(c.Reverted)
		m.Changes = &c
	}
	if m.Imported != nil {
		c := *m.Imported
		m.Imported = &c
	}
	if m.Checkpoint != nil {
		c := *m.Checkpoint
		c.Changed = slices.Clone(c.Changed)
		m.Checkpoint = &c
	}
	return m
}
