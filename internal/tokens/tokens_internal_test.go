package tokens

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewDoesNotLoad(t *testing.T) {
	t.Parallel()
	c := New("gpt-4o")
	require.False(t, c.enc.loaded.Load(), "New loaded the vocabulary")

	var cache Cache
	c2 := cache.Counter("gpt-4")
	require.False(t, c2.enc.loaded.Load(), "Cache.Counter loaded the vocabulary")

	if got := c.Count(""); got != 0 {
		t.Errorf(`Count("") = %d, want 0`, got)
	}
	require.False(t, c.enc.loaded.Load(), `Count("") loaded the vocabulary`)

	if got := c.Count("hello world"); got != 2 {
		t.Errorf(`Count("hello world") = %d, want 2`, got)
	}
	require.True(t, c.enc.loaded.Load(), "Count did not load the vocabulary")
	require.False(t, c2.enc.loaded.Load(), "loading o200k_base loaded cl100k_base too")
}

func TestCacheSharesEncodings(t *testing.T) {
	t.Parallel()
	var cache Cache
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"same model", "gpt-4o", "gpt-4o", true},
		{"same encoding", "gpt-4o", "llama3", true},
		{"cl100k models", "gpt-4", "gpt-3.5-turbo", true},
		{"other encoding", "gpt-4o", "gpt-4", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ca, cb := cache.Counter(tt.a), cache.Counter(tt.b)
			if got := ca.enc == cb.enc; got != tt.same {
				t.Errorf("Counter(%q) and Counter(%q) share encoding = %v, want %v", tt.a, tt.b, got, tt.same)
			}
		})
	}
	if a, b := New("gpt-4o"), New("gpt-4o"); a.enc == b.enc {
		t.Error("two New Counters share an encoding, want one each")
	}
}

func TestLoadFailureFallsBackToEstimate(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	var loads atomic.Int32
	c := &Counter{name: O200KBase, enc: &encoding{load: func(string) (*encoder, error) {
		loads.Add(1)
		return nil, errBoom
	}}}

	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"abc", 1},
		{"abcd", 2},
		{"日本", 2}, // 6 bytes
		{"<|endoftext|>", 5},
	}
	for _, tt := range tests {
		if got := c.Count(tt.text); got != tt.want {
			t.Errorf("Count(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
	if got, want := c.CountMessage(Message{Role: "user", Content: "abcdef"}), 3+2+2; got != want {
		t.Errorf("CountMessage = %d, want %d", got, want)
	}

	err := c.Err()
	require.ErrorIs(t, err, errBoom)
	require.EqualError(t, err, "load encoding o200k_base: boom")
	require.Equal(t, int32(1), loads.Load(), "loads after a failure")
}
