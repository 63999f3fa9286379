package paste_test

import (
	"strings"
	"testing"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/tui/paste"
)

func TestPlaceholder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int
		text string
		want string
	}{
		{1, "a\nb\nc", "[pasted text #1: 3 lines, 5 bytes]"},
		{2, "a\nb\n", "[pasted text #2: 2 lines, 4 bytes]"},
		{3, strings.Repeat("x", 2048), "[pasted text #3: 1 lines, 2.0 KB]"},
	}
	for _, tt := range tests {
		if got := paste.Placeholder(tt.n, tt.text); got != tt.want {
			t.Errorf("Placeholder(%d, %q) = %q, want %q", tt.n, tt.text, got, tt.want)
		}
		if got := paste.Number(tt.want); got != tt.n {
			t.Errorf("Number(%q) = %d, want %d", tt.want, got, tt.n)
		}
	}
}

func TestCollapse(t *testing.T) {
	t.Parallel()
	one, two := "l1\nl2\nl3", "über\n"
	text := "see " + one + " and " + two + "!"
	good := []session.Paste{{Start: 4, End: 4 + len(one), N: 1}, {Start: 13 + len(one) - 4, End: 13 + len(one) - 4 + len(two), N: 2}}
	if text[good[1].Start:good[1].End] != two {
		t.Fatalf("test spans wrong: %q", text[good[1].Start:good[1].End])
	}
	tests := []struct {
		name  string
		spans []session.Paste
		want  string
	}{
		{"none", nil, text},
		{"both", good, "see [pasted text #1: 3 lines, 8 bytes] and [pasted text #2: 1 lines, 6 bytes]!"},
		{"past the end", []session.Paste{{Start: 4, End: len(text) + 1, N: 1}}, text},
		{"overlapping", []session.Paste{good[0], {Start: 5, End: 9, N: 2}}, "see [pasted text #1: 3 lines, 8 bytes] and " + two + "!"},
		{"inside a character", []session.Paste{{Start: good[1].Start + 1, End: good[1].End, N: 2}}, text},
		{"empty", []session.Paste{{Start: 4, End: 4, N: 1}}, text},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := paste.Collapse(text, tt.spans); got != tt.want {
				t.Errorf("Collapse = %q, want %q", got, tt.want)
			}
		})
	}
	texts := paste.Texts(text, good)
	if len(texts) != 2 || texts["[pasted text #1: 3 lines, 8 bytes]"] != one || texts["[pasted text #2: 1 lines, 6 bytes]"] != two {
		t.Errorf("Texts = %q", texts)
	}
}
