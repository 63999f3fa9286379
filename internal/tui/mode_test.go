package tui

import (
	"testing"
	"unsafe"
)

// TestModelIsOneWord: Bubble Tea passes the root model by value through
// every Update and View; its state is behind one pointer, so that copy is
// a word (it was a 67 KB struct, 19% of the CPU of streaming).
func TestModelIsOneWord(t *testing.T) {
	t.Parallel()
	if got, want := unsafe.Sizeof(Model{}), unsafe.Sizeof(uintptr(0)); got != want {
		t.Errorf("unsafe.Sizeof(Model{}) = %d, want %d", got, want)
	}
}

func TestModeStateString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode modeState
		want string
	}{
		{modeEditing, "editing"},
		{modeDialog, "dialog"},
		{modePicker, "picker"},
		{modeQuitting, "quitting"},
		{modeState(9), "modeState(9)"},
	}
	for _, tt := range tests {
		if got := tt.mode.String(); got != tt.want {
			t.Errorf("modeState(%d).String() = %q, want %q", int(tt.mode), got, tt.want)
		}
	}
}
