package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
		wantOK bool
	}{
		{name: "none"},
		{name: "seconds", header: map[string]string{"Retry-After": "7"}, want: 7 * time.Second, wantOK: true},
		{name: "fractional seconds", header: map[string]string{"Retry-After": "0.5"}, want: 500 * time.Millisecond, wantOK: true},
		{name: "zero", header: map[string]string{"Retry-After": "0"}, want: 0, wantOK: true},
		{name: "http date", header: map[string]string{"Retry-After": "Sun, 01 Jun 2025 12:00:30 GMT"}, want: 30 * time.Second, wantOK: true},
		{name: "http date in the past", header: map[string]string{"Retry-After": "Sun, 01 Jun 2025 11:00:00 GMT"}, want: 0, wantOK: true},
		{name: "milliseconds win", header: map[string]string{"Retry-After": "2", "retry-after-ms": "1500"}, want: 1500 * time.Millisecond, wantOK: true},
		{name: "huge", header: map[string]string{"Retry-After": "1e300"}, want: 24 * time.Hour, wantOK: true},
		{name: "negative", header: map[string]string{"Retry-After": "-3"}},
		{name: "garbage", header: map[string]string{"Retry-After": "soon"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got, ok := retryAfter(h, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("retryAfter(%v) = %v, %t, want %v, %t", tt.header, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		attempt int
		max     time.Duration
		lo, hi  time.Duration
	}{
		{attempt: 1, max: 20 * time.Second, lo: 250 * time.Millisecond, hi: 500 * time.Millisecond},
		{attempt: 2, max: 20 * time.Second, lo: 500 * time.Millisecond, hi: time.Second},
		{attempt: 4, max: 20 * time.Second, lo: 2 * time.Second, hi: 4 * time.Second},
		{attempt: 4, max: 3 * time.Second, lo: 1500 * time.Millisecond, hi: 3 * time.Second},
		{attempt: 60, max: 20 * time.Second, lo: 10 * time.Second, hi: 20 * time.Second},
	}
	for _, tt := range tests {
		for range 100 {
			if got := backoff(tt.attempt, tt.max); got < tt.lo || got > tt.hi {
				t.Fatalf("backoff(%d, %v) = %v, want within [%v, %v]", tt.attempt, tt.max, got, tt.lo, tt.hi)
			}
		}
	}
}
