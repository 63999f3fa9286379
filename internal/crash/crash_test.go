package crash_test

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/crash"
)

func TestRecoverLogsTheStackAndReportsAnError(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, nil))
	var got error
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer crash.Recover(l, "turn", "sess-1", func(e *crash.Error) { got = e })
		explode()
	}()
	<-done
	var ce *crash.Error
	require.True(t, errors.As(got, &ce), "no *crash.Error reported: %v", got)
	require.Equal(t, "turn", ce.Where)
	require.Contains(t, got.Error(), "boom")
	log := buf.String()
	require.Contains(t, log, "session=sess-1")
	require.Contains(t, log, "where=turn")
	require.Contains(t, log, "crash_test.explode", "the log holds the panicking goroutine's stack")
}

func TestRecoverWithoutPanicDoesNothing(t *testing.T) {
	var buf bytes.Buffer
	called := false
	func() {
		defer crash.Recover(slog.New(slog.NewTextHandler(&buf, nil)), "turn", "s", func(*crash.Error) { called = true })
	}()
	require.False(t, called)
	require.Empty(t, buf.String())
}

func explode() { panic("boom") }
