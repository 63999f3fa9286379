package agent

import (
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/tools"
)

// EventKind says what an Event reports.
type EventKind int

// The kinds of events a turn emits, in the order they usually come.
const (
	EventTextDelta      EventKind = iota // Text: a piece of the streamed answer
	EventReasoningDelta                  // Text: a piece of the model's reasoning
	EventToolCallStart                   // Text: the tool name, as soon as the model starts the call
	EventMessage                         // Message: a message was appended to the log
	EventToolRun                         // Call: a tool call is about to run
	EventContext                         // Context: the size of the request about to be sent
	EventUsage                           // Usage: what the provider counted for one request
	EventRetry                           // Text: the request is being retried (the provider refused it for now, or compacted after overflow)
	EventDone                            // Text: the final answer; the turn is over
	EventError                           // Err: the turn ended with an error
	EventToolProgress                    // Progress: what a running tool has printed so far (for the screen only)
	EventNotice                          // Text: something the user should know of the model's window (the server's, a cut prompt, how to raise it)
)

var eventNames = [...]string{"text", "reasoning", "tool-start", "message", "tool-run", "context", "usage", "retry", "done", "error", "tool-progress", "notice"}

func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "unknown"
}

// Usage is a provider's token count for one request: the ground truth when
// present.
type Usage struct {
	PromptTokens int
	// CachedTokens are the prompt tokens the provider served from its
	// prompt cache (prompt_tokens_details.cached_tokens; 0 when not said).
	CachedTokens     int
	CompletionTokens int
	TotalTokens      int
	// ContextTokens is the estimate gencode made for the same request.
	ContextTokens int
	Window        int
}

// Size is how much of the context window a request takes, as the view
// policy counts it: what /context and the status bar show.
type Size struct {
	Tokens int
	Window int
	// Learned says Window is the server's: the one it reports, or named
	// when it refused a request, or showed by cutting one.
	Learned          bool
	ConfiguredWindow int
	// Source says where a learned Window came from ("Ollama, loaded",
	// "server" for a refusal, "server, cut").
	Source string
}

// Event is what a turn tells its front end. The agent never knows which
// front end listens.
type Event struct {
	Kind     EventKind
	Text     string
	Message  *session.Message
	Call     *session.ToolCall
	Usage    *Usage
	Context  *Size
	Err      error
	Progress *ToolProgress
	// Standing marks a notice that every run of the session would repeat
	// (the server's window, how to raise it), not news of this turn: a
	// front end that runs once a turn (print mode) shows it on a
	// session's first turn only.
	Standing bool
}

// ToolProgress is what a running tool call has done so far (Bash: the
// tail of its output, sanitized). It is for the screen: the model and the
// log get the tool's result. Updates come at most every
// tools.ProgressInterval; one the front end has no room for is dropped
// and a newer one follows.
type ToolProgress struct {
	CallID string
	Tail   string
	Bytes  int64
}

// ProgressEvents is the tools.Call.Progress that reports a running call
// as EventToolProgress events on events, for the call callID: the model's
// calls in a turn, and the user's "!command" in the TUI, reach the front
// end this one way. It never blocks: a report the channel has no room for
// is dropped (false) and a newer one follows.
func ProgressEvents(events chan<- Event, callID string) func(tools.Progress) bool {
	return func(p tools.Progress) bool {
		select {
		case events <- Event{Kind: EventToolProgress, Progress: &ToolProgress{CallID: callID, Tail: p.Tail, Bytes: p.Bytes}}:
			return true
		default:
			return false
		}
	}
}
