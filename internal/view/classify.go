package view

import (
	"strings"

	"github.com/gencode/gencode/internal/session"
)

// Classify is the view policy's rule the store keeps the answers of, so
// that the meter (Measure) can add a view up from running sums instead of
// building it (session.Classifier; the store is opened WithClassifier).
// It is normalize and alternate read backwards, through the same
// predicates: m is carried as stored (session.AsIs) when neither mends it
// in any view that holds it and the messages since the last user message
// or answer carried as stored before it:
//   - a result answers the next unanswered call of the assistant message
//     before it, in order, and was not deleted (session.NoOutput when it
//     has no output: "(no output)" is sent in its place);
//   - calls have ids, distinct, and arguments that are a JSON object;
//   - an answer is not left out (leftOut);
//   - a user message does not follow a user message or a result (alternate
//     joins them, or gives the turn the answer it lacks).
func Classify(p session.Pairing, seq int64, m session.Message) (session.Pairing, session.Carried) {
	var c session.Carried
	switch {
	case m.Role == session.RoleTool:
		if p.Pending > 0 && m.ToolCallID == p.Calls[len(p.Calls)-p.Pending].ID && !m.Meta.Deleted {
			c = session.AsIs
			if m.Content == "" {
				c = session.NoOutput
			}
		}
		if p.Pending > 0 {
			p.Pending--
		}
		if p.Pending == 0 {
			p = session.Pairing{}
		}
		p.Prev = session.RoleTool
		return p, c
	case m.Role == session.RoleAssistant && len(m.ToolCalls) > 0:
		c = carried(p.Pending == 0 && callsAsIs(m.ToolCalls))
		return session.Pairing{CallSeq: seq, Calls: m.ToolCalls, Pending: len(m.ToolCalls), Prev: m.Role}, c
	case m.Role == session.RoleAssistant:
		c = carried(p.Pending == 0 && !leftOut(m))
	default:
		c = carried(p.Pending == 0 && !(m.Role == session.RoleUser && (p.Prev == session.RoleUser || p.Prev == session.RoleTool)))
	}
	return session.Pairing{Prev: m.Role}, c
}

func carried(asIs bool) session.Carried {
	if asIs {
		return session.AsIs
	}
	return session.Mended
}

// leftOut says whether normalize leaves out an answer without calls: one
// with no text. A variable so that a test can change the rule in this one
// place and see both the request and the meter follow.
var leftOut = func(m session.Message) bool { return strings.TrimSpace(m.Content) == "" }

// callsAsIs reports whether normalize sends calls as stored: ids set and
// distinct, arguments a JSON object.
func callsAsIs(calls []session.ToolCall) bool {
	seen := map[string]bool{}
	for _, c := range calls {
		if c.ID == "" || seen[c.ID] || strings.TrimSpace(c.Arguments) == "" || !isJSONObject(c.Arguments) {
			return false
		}
		seen[c.ID] = true
	}
	return true
}
