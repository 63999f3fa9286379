package transcript

import (
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/gencode/gencode/internal/session"
)

// Wire is a logged message in go-openai's message type, as JSONL exports
// carry it: the whole text (Full when the model was sent a capped one).
func Wire(m session.Message) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: string(m.Role), Content: m.Text(), ToolCalls: wireCalls(m.ToolCalls),
		ToolCallID: m.ToolCallID, Name: m.Name}
}

func wireCalls(calls []session.ToolCall) []openai.ToolCall {
	var out []openai.ToolCall
	for _, c := range calls {
		out = append(out, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
	}
	return out
}

// WriteJSONL writes messages as OpenAI-format JSONL, one a line, as they
// come: Read reads it back.
func WriteJSONL(w io.Writer, msgs iter.Seq2[session.Message, error]) error {
	enc := json.NewEncoder(w)
	for m, err := range msgs {
		if err != nil {
			return err
		}
		if err := enc.Encode(Wire(m)); err != nil {
			return fmt.Errorf("export message %d: %w", m.Seq, err)
		}
	}
	return nil
}

// WriteMarkdown writes a session as markdown: a title, the summaries'
// gists, then every message as it comes.
func WriteMarkdown(w io.Writer, sess session.Session, sums []session.Summary, msgs iter.Seq2[session.Message, error]) error {
	title := sess.Title
	if title == "" {
		title = "Session " + sess.ID
	}
	if _, err := fmt.Fprintf(w, "# %s\n\nSession `%s` · %s · model %s · %d messages\n", title, sess.ID, sess.Cwd, sess.Model, sess.MessageCount); err != nil {
		return fmt.Errorf("export session %s: %w", sess.ID, err)
	}
	for i, s := range sums {
		fmt.Fprintf(w, "\n> **Summary %d** (messages %d-%d): %s\n", i+1, s.FromSeq, s.ToSeq, Gist(s))
	}
	for m, err := range msgs {
		if err != nil {
			return err
		}
		var werr error
		switch m.Role {
		case session.RoleTool:
			_, werr = fmt.Fprintf(w, "\n**%s result** (#%d)\n\n```\n%s\n```\n", m.Name, m.Seq, strings.ReplaceAll(m.Text(), "```", "ʼʼʼ"))
		default:
			_, werr = fmt.Fprintf(w, "\n## %s (#%d)\n\n%s\n", m.Role, m.Seq, m.Content)
			for _, c := range m.ToolCalls {
				fmt.Fprintf(w, "\n→ `%s` %s\n", c.Name, c.Arguments)
			}
		}
		if werr != nil {
			return fmt.Errorf("export message %d: %w", m.Seq, werr)
		}
	}
	return nil
}

// Gist is a summary's one-line gist: its goal, or the narrative's first
// line of text.
func Gist(s session.Summary) string {
	if s.Goal != "" {
		return s.Goal
	}
	for _, l := range strings.Split(s.Content, "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#-*• "))
		if l != "" && !strings.EqualFold(l, "goal") {
			return l
		}
	}
	if n := len(s.FilesModified); n > 0 {
		list := strings.Join(s.FilesModified[:min(n, 3)], ", ")
		if n > 3 {
			list += fmt.Sprintf(" +%d more", n-3)
		}
		return "modified " + list
	}
	return fmt.Sprintf("%d messages", s.Messages())
}
