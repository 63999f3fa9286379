package summarize

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStripControls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		removed        int
	}{
		{name: "plain text is kept", in: "## Goal\n- ship it\tnow", want: "## Goal\n- ship it\tnow"},
		{name: "clear screen and colours", in: "\x1b[2J\x1b[31mred\x1b[0m text", want: "red text", removed: 3},
		{name: "OSC 52 clipboard write ended by BEL", in: "a\x1b]52;c;ZWNobyBoaQ==\x07b", want: "ab", removed: 1},
		{name: "OSC 8 hyperlink ended by ST", in: "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\", want: "link", removed: 2},
		{name: "title set, cut short", in: "x\x1b]0;pwned", want: "x", removed: 1},
		{name: "NUL, bell, backspace, DEL", in: "a\x00b\x07c\x08d\x7fe", want: "abcde", removed: 4},
		{name: "CRLF and a lone CR", in: "a\r\nb\rc", want: "a\nb\nc"},
		{name: "C1 CSI, bidi override, invalid UTF-8", in: "é\u009b2J\u202etxt\xff!", want: "é2Jtxt!", removed: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, n := stripControls(tt.in)
			if got != tt.want || n != tt.removed {
				t.Errorf("stripControls(%q) = %q, %d, want %q, %d", tt.in, got, n, tt.want, tt.removed)
			}
		})
	}
}

// garbage is what a broken summarizer answered in issue 14: no headings,
// NUL bytes and escape codes.
const garbage = "\x00\x00\x1b[2J\x1b[H\x1b]52;c;cm0gLXJmIH4=\x07\x00 \x1b[31m\x00\x00\x00 ok \x1b[0m\x00\x1b[?1049h"

// TestSummarizerRejectsUnusableAnswers: whatever a summarizer answers that
// is not a summary (garbage, a repeat of the prompt, a word, a flood) is
// not stored as the narrative; the deterministic summary is, flagged with
// the reason. A good answer with stray escape codes is kept, cleaned.
func TestSummarizerRejectsUnusableAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		turns       int // seeded (default 16)
		answer      func(Request) string
		wantWhy     string // empty: the answer is used
		wantContent string
	}{
		{name: "garbage: NUL and escape codes, no headings", answer: func(Request) string { return garbage },
			wantWhy: "no summary structure: not two of the headings ## Goal, ## Key decisions, ## Topics, ## Current state, ## Next steps, nor prose; it held 13 control characters or escape sequences"},
		{name: "a repeat of the prompt", answer: func(r Request) string { return "## Goal\n" + r.Prompt }, wantWhy: "it repeats its prompt (the tag <history>)"},
		{name: "a repeat of the instructions", answer: func(r Request) string { return r.System + "\n## Topics\n- x" }, wantWhy: "it repeats its prompt"},
		{name: "one word", answer: func(Request) string { return "## Goal\n## Topics\nDone." }, wantWhy: "too short"},
		{name: "more than was asked", turns: 80, answer: func(r Request) string {
			return "## Goal\n## Topics\n" + strings.Repeat("- a point\n", r.MaxTokens)
		}, wantWhy: "too long"},
		{name: "one word over and over", answer: func(Request) string { return strings.Repeat("summary ", 40) }, wantWhy: "no summary structure"},
		{name: "a good answer with escape codes", answer: func(r Request) string {
			return "\x1b[1m## Goal\x1b[0m\n- ship FACT-BLUEFALCON\x00\n## Next steps\n- \x1b]52;c;eA==\x07test it"
		}, wantContent: "## Goal\n- ship FACT-BLUEFALCON\n## Next steps\n- test it"},
		{name: "prose without headings", answer: func(Request) string {
			return "The user is building a service one feature at a time; each turn adds a file under /w/pkg and runs its tests, which pass."
		}, wantContent: "The user is building a service one feature at a time; each turn adds a file under /w/pkg and runs its tests, which pass."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := openStore(t)
			l := newLog(t, store)
			seedTurns(l, 1, max(tt.turns, 16))
			llm := &fakeLLM{answer: func(r Request) (Completion, error) { return Completion{Text: tt.answer(r)}, nil }}
			s := newSummarizer(store, llm, charCounter{}, testConfig(200000))
			defer s.Close()
			rep, err := s.SummarizeNow(context.Background(), l.id, "")
			require.NoError(t, err)
			sums, err := store.Summaries(context.Background(), l.id, true)
			require.NoError(t, err)
			require.Len(t, sums, 1)
			sum := sums[0]
			row, err := json.Marshal(sum)
			require.NoError(t, err)
			for _, c := range []string{`\u0000`, `\u001b`, `\u0007`} {
				require.NotContains(t, string(row), c, "a control character was stored")
			}
			if tt.wantWhy == "" {
				require.False(t, sum.Fallback, "rejected: %s", sum.FallbackReason)
				require.Equal(t, tt.wantContent, sum.Content)
				return
			}
			require.True(t, sum.Fallback)
			require.True(t, rep.Fallback)
			require.Contains(t, sum.FallbackReason, "unusable summarizer answer: "+tt.wantWhy)
			require.Empty(t, sum.Content, "nothing of the answer is stored")
			require.Empty(t, sum.Goal)
			require.Contains(t, sum.Commands, "go test ./pkg/f1", "the deterministic facts are")
			require.Len(t, llm.requests(), 3, "asked again while attempts last")
		})
	}
}

// TestStoredSummaryHasNoEscapeCodes: escape codes from anywhere (a
// hostile server's error, which becomes the fallback reason; a user's
// pasted terminal output, which becomes a user request) are not stored
// in a summary.
func TestStoredSummaryHasNoEscapeCodes(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	l.turn("why is this \x1b[31mred\x1b[0m?\x1b]0;title\x07", bashCall("make \x1b[2J", "\x1b[1mBUILD OK\x1b[0m", 0))
	seedTurns(l, 1, 16)
	llm := &fakeLLM{answer: func(Request) (Completion, error) {
		return Completion{}, errors.New("provider error 500: \x1b]52;c;cm0gLXJm\x07\x1b[2J boom")
	}}
	s := newSummarizer(store, llm, charCounter{}, testConfig(200000))
	defer s.Close()
	_, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	sums, err := store.Summaries(context.Background(), l.id, true)
	require.NoError(t, err)
	require.Len(t, sums, 1)
	require.Contains(t, sums[0].FallbackReason, "provider error 500:  boom")
	require.Contains(t, sums[0].UserRequests[0], "why is this red?")
	row, err := json.Marshal(sums[0])
	require.NoError(t, err)
	require.NotContains(t, string(row), `\u001b`)
	require.NotContains(t, string(row), `\u0007`)
}
