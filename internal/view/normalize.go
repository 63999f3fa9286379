package view

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gencode/gencode/internal/session"
)

// normalize returns the view's messages as a request may carry them, and
// how many things it mended. The log keeps what was received; a request
// needs what providers accept, whatever a model produced or two processes
// wrote:
//   - every assistant message with tool calls is followed by exactly one
//     result per call, in the calls' order: results are found by call id
//     wherever they were written (two processes may have interleaved their
//     messages); a call without one gets a result saying so; a tool message
//     that answers no call of the view is left out;
//   - tool-call ids are unique: an empty or repeated id is replaced, in the
//     call and in its result alike;
//   - arguments that are not a JSON object are sent as {}, and the call's
//     result tells the model why;
//   - an assistant message with neither text nor tool calls is left out.
//
// Mended messages are counted once each (cached by session and seq).
func (p *Policy) normalize(sessionID string, msgs []session.Message) ([]session.Message, int) {
	// results holds the indexes of each call id's tool messages, in order.
	results := map[string][]int{}
	// calls holds the indexes of the assistant messages calling each id.
	calls := map[string][]int{}
	for i, m := range msgs {
		switch m.Role {
		case session.RoleTool:
			results[m.ToolCallID] = append(results[m.ToolCallID], i)
		case session.RoleAssistant:
			for _, c := range m.ToolCalls {
				if l := calls[c.ID]; len(l) == 0 || l[len(l)-1] != i {
					calls[c.ID] = append(calls[c.ID], i)
				}
			}
		}
	}
	used := make([]bool, len(msgs))
	// result returns the first unused result of id after the call at i and
	// before the next assistant message calling the same id.
	result := func(id string, i int) int {
		end := len(msgs)
		for _, a := range calls[id] {
			if a > i {
				end = a
				break
			}
		}
		for _, j := range results[id] {
			if j > i && j < end && !used[j] {
				used[j] = true
				return j
			}
		}
		return -1
	}
	ids := map[string]bool{}
	fixes := 0
	out := make([]session.Message, 0, len(msgs))
	for i, m := range msgs {
		switch {
		case m.Role == session.RoleTool:
			if !used[i] {
				fixes++ // answers no call of the view: left out
			}
			continue
		case m.Role != session.RoleAssistant:
			out = append(out, m)
			continue
		case len(m.ToolCalls) == 0:
			if leftOut(m) {
				fixes++
				continue
			}
			out = append(out, m)
			continue
		}
		call := m
		call.ToolCalls = make([]session.ToolCall, len(m.ToolCalls))
		answers := make([]session.Message, len(m.ToolCalls))
		mended := false
		for k, c := range m.ToolCalls {
			j := result(c.ID, i)
			id := c.ID
			if id == "" || ids[id] {
				id = uniqueID(ids, m.Seq, k)
				mended = true
				fixes++
			}
			ids[id] = true
			badArgs := false
			switch {
			case strings.TrimSpace(c.Arguments) == "":
				c.Arguments, mended = "{}", true // no arguments: the tools read it as {}
			case !isJSONObject(c.Arguments):
				c.Arguments, mended, badArgs = "{}", true, true
				fixes++
			}
			c.ID = id
			call.ToolCalls[k] = c
			var res session.Message
			switch {
			case j < 0:
				fixes++
				res = session.Message{Seq: m.Seq, Role: session.RoleTool, ToolCallID: id, Name: c.Name,
					Content: "[no result: this call has no result in the session log; it did not finish, or another process wrote this session meanwhile]",
					Meta:    session.Meta{Tool: c.Name, Failed: true}}
				res.Tokens = p.textTokens(sessionID, res, 's', k)
			case badArgs:
				res = msgs[j]
				res.Content = "[the arguments of this call were not valid JSON, so they are shown as {}; send the call again with a JSON object] " + res.Content
				res.Full = ""
				res.Tokens = p.textTokens(sessionID, res, 'r', 0)
			default:
				res = msgs[j]
			}
			res.ToolCallID = id
			if res.Content == "" {
				res = p.noOutput(sessionID, res)
			}
			answers[k] = res
		}
		if mended {
			call.Tokens = p.textTokens(sessionID, call, 'a', 0)
		}
		out = append(out, call)
		out = append(out, answers...)
	}
	return out, fixes
}

// noOutput is a result with no output as requests carry it.
func (p *Policy) noOutput(sessionID string, res session.Message) session.Message {
	res.Content = "(no output)"
	res.Tokens = p.textTokens(sessionID, res, 'r', 0)
	return res
}

// uniqueID makes an id for the k-th call of message seq that no earlier
// call of the view has.
func uniqueID(taken map[string]bool, seq int64, k int) string {
	id := fmt.Sprintf("call_gencode_%d_%d", seq, k)
	for n := 2; taken[id]; n++ {
		id = fmt.Sprintf("call_gencode_%d_%d_%d", seq, k, n)
	}
	return id
}

// isJSONObject reports whether s is a JSON object, what providers and
// local chat templates require of a call's arguments. It validates
// without decoding (every view build checks every call of the view, and
// decoding into a map was half its cost): a valid text is an object when
// it starts, after JSON's white space, with '{'.
func isJSONObject(s string) bool {
	t := strings.TrimLeft(s, " \t\n\r")
	return strings.HasPrefix(t, "{") && json.Valid([]byte(t))
}
