// Package crash turns a panic in a goroutine gencode starts itself (a
// turn, a background summary, the search indexer, a window probe) into an
// error: the stack goes to the log with the session id, and the error goes
// to the front end, which tells the user where the log is. Without it such
// a panic ends the process from a goroutine Bubble Tea does not watch,
// with the terminal left in raw mode and nothing in the log.
package crash

import (
	"fmt"
	"log/slog"
	"runtime/debug"
)

// Error is a recovered panic.
type Error struct {
	Where string // the goroutine's job: "turn", "background summary", ...
	Value any    // what was passed to panic
	Stack []byte // the panicking goroutine's stack
}

func (e *Error) Error() string {
	return fmt.Sprintf("internal error in the %s (a bug in gencode): %v", e.Where, e.Value)
}

// Recover recovers a panic of the goroutine that defers it, logs the
// panic and its stack with the session id (when l is not nil), and gives
// report (when not nil) the *Error. Defer it directly, first in the
// goroutine, so that it runs last:
//
//	go func() {
//		defer crash.Recover(log, "turn", sessionID, func(e *crash.Error) { send(e) })
//		...
//	}()
func Recover(l *slog.Logger, where, sessionID string, report func(*Error)) {
	p := recover()
	if p == nil {
		return
	}
	e := &Error{Where: where, Value: p, Stack: debug.Stack()}
	if l != nil {
		l.Error("panic recovered", "where", where, "session", sessionID, "panic", fmt.Sprint(p), "stack", string(e.Stack))
	}
	if report != nil {
		report(e)
	}
}
