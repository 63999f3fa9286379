package llm

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/sashabaranov/go-openai"
)

// accumulator reassembles a streamed answer from its chunks.
type accumulator struct {
	content   strings.Builder
	reasoning strings.Builder
	calls     map[int]*callBuilder // by index
	last      int                  // index of the latest call fragment
	finish    string
	usage     *openai.Usage
	model     string
}

type callBuilder struct {
	id, typ, name string
	args          strings.Builder
	announced     bool
}

func (a *accumulator) add(ch openai.ChatCompletionStreamResponse, onDelta func(Delta)) {
	if a.model == "" {
		a.model = ch.Model
	}
	if ch.Usage != nil { // on the finish chunk or in a last chunk with no choices
		u := *ch.Usage
		a.usage = &u
	}
	for _, c := range ch.Choices {
		if c.Index != 0 { // we never ask for n > 1
			continue
		}
		d := c.Delta
		if d.ReasoningContent != "" {
			a.reasoning.WriteString(d.ReasoningContent)
			onDelta(Delta{Reasoning: d.ReasoningContent})
		}
		if text := d.Content + d.Refusal; text != "" {
			a.content.WriteString(text)
			onDelta(Delta{Content: text})
		}
		for _, tc := range d.ToolCalls {
			a.addCall(tc, onDelta)
		}
		if c.FinishReason != "" {
			a.finish = string(c.FinishReason)
		}
	}
}

// addCall merges a tool-call fragment. The id, type and name come in the first
// fragment of a call (or all at once); arguments are concatenated.
func (a *accumulator) addCall(tc openai.ToolCall, onDelta func(Delta)) {
	if a.calls == nil {
		a.calls = make(map[int]*callBuilder)
	}
	idx := a.last
	switch {
	case tc.Index != nil:
		idx = *tc.Index
	case tc.ID != "": // no index: a new id is a new call
		idx = a.next()
		for i, b := range a.calls {
			if b.id == tc.ID {
				idx = i
			}
		}
	}
	b := a.calls[idx]
	if b != nil && tc.ID != "" && b.id != "" && b.id != tc.ID {
		// Another call reusing the index (seen with some compatible servers):
		// keep both, the new one after the others.
		idx, b = a.next(), nil
	}
	if b == nil {
		b = &callBuilder{}
		a.calls[idx] = b
	}
	a.last = idx
	if b.id == "" {
		b.id = tc.ID
	}
	if b.typ == "" {
		b.typ = string(tc.Type)
	}
	if b.name == "" {
		b.name = tc.Function.Name
	}
	b.args.WriteString(tc.Function.Arguments)
	if !b.announced && b.name != "" {
		b.announced = true
		onDelta(Delta{ToolCall: b.name})
	}
}

// next is the index after the highest one seen.
func (a *accumulator) next() int {
	n := 0
	for i := range a.calls {
		n = max(n, i+1)
	}
	return n
}

// size is how much has been received, in characters of text and arguments.
func (a *accumulator) size() int {
	n := a.content.Len() + a.reasoning.Len()
	for _, b := range a.calls {
		n += b.args.Len()
	}
	return n
}

// partial is what a broken stream leaves: the text, no tool calls.
func (a *accumulator) partial() Response {
	r := a.response()
	r.ToolCalls = nil
	return r
}

func (a *accumulator) response() Response {
	r := Response{
		Content:      a.content.String(),
		Reasoning:    a.reasoning.String(),
		FinishReason: a.finish,
		Usage:        a.usage,
		Model:        a.model,
	}
	keys := make([]int, 0, len(a.calls))
	for i := range a.calls {
		keys = append(keys, i)
	}
	slices.Sort(keys)
	for _, i := range keys {
		b := a.calls[i]
		tc := finishCall(b.id, b.typ, b.name, b.args.String())
		b.id = tc.ID // stable if response is called again
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	return r
}

// finishCall makes a call fit to go back into the history: it has an id,
// a type, and JSON arguments.
func finishCall(id, typ, name, args string) openai.ToolCall {
	if id == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		id = "call_" + hex.EncodeToString(b[:])
	}
	if typ == "" {
		typ = string(openai.ToolTypeFunction)
	}
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	return openai.ToolCall{ID: id, Type: openai.ToolType(typ), Function: openai.FunctionCall{Name: name, Arguments: args}}
}
