package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/gencode/gencode/internal/crash"
	"github.com/gencode/gencode/internal/llm"
)

// panicAt runs the test hook of the goroutine named where (Env.PanicAt).
func (a *app) panicAt(where string) {
	if a.env.PanicAt != nil {
		a.env.PanicAt(where)
	}
}

// locate adds where the log is to the error of a recovered panic (its
// stack is there): the user can find it, or attach it to a bug report.
func (a *app) locate(err error) error {
	var ce *crash.Error
	if !errors.As(err, &ce) {
		return err
	}
	if a.logFile == nil {
		return fmt.Errorf("%w (gencode has no log file this run: the stack is lost)", err)
	}
	return fmt.Errorf("%w; its stack is in %s", err, a.logFile.Path())
}

// streamer is the agent's model client.
type streamer interface {
	Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error)
}

// hooked is the agent's client, through the turn's test hook when one is
// set: the hook then runs in the turn's goroutine, where a model request
// is made.
func (a *app) hooked(c *llm.Client) streamer {
	if a.env.PanicAt == nil {
		return c
	}
	return hookedStreamer{c, a.panicAt}
}

type hookedStreamer struct {
	c    *llm.Client
	hook func(string)
}

func (h hookedStreamer) Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	h.hook("turn")
	return h.c.Stream(ctx, req, onDelta)
}
