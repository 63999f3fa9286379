package transcript

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/gencode/gencode/internal/session"
)

// Message is a logged message in `history --json`: the OpenAI fields and
// what the log keeps beside them.
type Message struct {
	Seq         int64             `json:"seq"`
	Role        string            `json:"role"`
	Content     string            `json:"content"`
	FullContent string            `json:"full_content,omitempty"`
	ToolCalls   []openai.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID  string            `json:"tool_call_id,omitempty"`
	Name        string            `json:"name,omitempty"`
	Tokens      int               `json:"tokens"`
	Time        time.Time         `json:"time"`
	Meta        *session.Meta     `json:"meta,omitempty"`
}

// LogMessage is m as `history --json` shows it.
func LogMessage(m session.Message) Message {
	jm := Message{Seq: m.Seq, Role: string(m.Role), Content: m.Content, FullContent: m.Full, ToolCalls: wireCalls(m.ToolCalls),
		ToolCallID: m.ToolCallID, Name: m.Name, Tokens: m.Tokens, Time: m.Time}
	if !m.Meta.IsZero() {
		meta := m.Meta
		jm.Meta = &meta
	}
	return jm
}

// Facts is a session's facts as `history --json` and `summarize --json`
// print them (session_facts).
type Facts struct {
	FilesModified []string `json:"files_modified"` // created ones included
	FilesCreated  []string `json:"files_created"`
	FilesDeleted  []string `json:"files_deleted"`
	FilesRead     []string `json:"files_read"`
	CommandRuns   int      `json:"command_runs"`
	Commands      []string `json:"commands"` // distinct
	// CommandsNotRun: imported calls that never ran (no run, no change).
	CommandsNotRun []string `json:"commands_not_run,omitempty"`
}

// FactsOf is the facts of f, as printed.
func FactsOf(f session.Summary) Facts {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return Facts{
		FilesModified: nonNil(f.FilesModified), FilesCreated: nonNil(f.FilesCreated), FilesDeleted: nonNil(f.FilesDeleted),
		FilesRead: nonNil(f.FilesRead), CommandRuns: f.CommandRuns, Commands: nonNil(f.Commands),
		CommandsNotRun: f.CommandsNotRun,
	}
}

// RelativeFacts writes the file lists of f relative to dir when inside it.
func RelativeFacts(f session.Summary, dir string) session.Summary {
	rel := func(list []string) []string {
		var out []string
		seen := map[string]bool{}
		for _, p := range list {
			if dir != "" && filepath.IsAbs(p) {
				if r, err := filepath.Rel(dir, p); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
					p = filepath.ToSlash(r)
				}
			}
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
		return out
	}
	f.FilesModified, f.FilesCreated, f.FilesDeleted, f.FilesRead = rel(f.FilesModified), rel(f.FilesCreated), rel(f.FilesDeleted), rel(f.FilesRead)
	return f
}

// History is what `history --json` prints besides the messages.
type History struct {
	Session   session.Session
	Facts     Facts
	Summaries []session.Summary
	// Read, when set, gives the facts once the messages are written: a
	// caller that extracts them from the messages as they go by reads the
	// log once.
	Read func() (Facts, error)
}

// WriteHistoryJSON writes one JSON object, indented: the session, every
// message of msgs, the summaries and the session's facts. The messages are
// written as they come, so memory stays bounded however long the log is.
func WriteHistoryJSON(w io.Writer, h History, msgs iter.Seq2[session.Message, error]) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	sess := h.Session
	head := map[string]any{"id": sess.ID, "created": sess.Created, "updated": sess.Updated, "cwd": sess.Cwd,
		"model": sess.Model, "title": sess.Title, "message_count": sess.MessageCount}
	sums := h.Summaries
	if sums == nil {
		sums = []session.Summary{}
	}
	field := func(name string, v any, last bool) error {
		b, err := json.MarshalIndent(v, "  ", "  ")
		if err != nil {
			return fmt.Errorf("encode %s of session %s: %w", name, sess.ID, err)
		}
		bw.WriteString(`  "` + name + `": `)
		bw.Write(b)
		if !last {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
		return nil
	}
	bw.WriteString("{\n")
	if err := field("session", head, false); err != nil {
		return err
	}
	bw.WriteString(`  "messages": [`)
	n := 0
	for m, err := range msgs {
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(LogMessage(m), "    ", "  ")
		if err != nil {
			return fmt.Errorf("encode message %d of session %s: %w", m.Seq, sess.ID, err)
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(b)
		n++
	}
	if n > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("],\n")
	if err := field("summaries", sums, false); err != nil {
		return err
	}
	f := h.Facts
	if h.Read != nil {
		var err error
		if f, err = h.Read(); err != nil {
			return err
		}
	}
	if err := field("session_facts", f, true); err != nil {
		return err
	}
	bw.WriteString("}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write history of session %s: %w", sess.ID, err)
	}
	return nil
}
