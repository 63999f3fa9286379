package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
)

// sessionFor is --session ID, or the latest session of the directory.
func (a *app) sessionFor(ctx context.Context, id string) (session.Session, error) {
	if id != "" {
		return a.store.Session(ctx, id)
	}
	s, err := a.store.LatestSession(ctx, a.cwd)
	if errors.Is(err, session.ErrNotFound) {
		return session.Session{}, &noSessionError{"no session in " + a.cwd + " (use --session ID; `gencode sessions` lists them)"}
	}
	return s, err
}

// printReport prints a report: boxed on a terminal, plain when piped or
// with NO_COLOR.
func (a *app) printReport(r *commands.Report) {
	fmt.Fprint(a.env.Stdout, a.renderReport(r))
}

func newHistoryCmd(ctx context.Context, env Env, g *globalFlags) *cobra.Command {
	var o struct {
		full, asJSON   bool
		id, search     string
		expand, recent int
	}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Show a session's summaries and messages",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(ctx, env, cmd, g, func(a *app) error {
				sess, err := a.sessionFor(ctx, o.id)
				if err != nil {
					return err
				}
				if o.asJSON {
					return a.historyJSON(ctx, sess)
				}
				rep, err := commands.History(ctx, a.store, a.searchFunc(), sess.ID, commands.HistoryOptions{
					Full: o.full, Expand: o.expand, Search: o.search, Recent: o.recent})
				if err != nil {
					return err
				}
				a.printReport(rep)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.full, "full", false, "every summary in detail and every recent message")
	f.BoolVar(&o.asJSON, "json", false, "print the whole log and its summaries as one JSON object")
	f.StringVar(&o.id, "session", "", "session `ID` (default: the latest of this directory)")
	f.StringVar(&o.search, "search", "", "show the messages matching `TEXT`")
	f.IntVar(&o.expand, "expand", 0, "show the original messages behind summary `N`")
	f.IntVar(&o.recent, "recent", 10, "how many recent messages without --full")
	return cmd
}

// jsonMessage is a logged message in `history --json` and in exports.
type jsonMessage struct {
	Seq         int64          `json:"seq"`
	Role        string         `json:"role"`
	Content     string         `json:"content"`
	FullContent string         `json:"full_content,omitempty"`
	ToolCalls   []jsonToolCall `json:"tool_calls,omitempty"`
	ToolCallID  string         `json:"tool_call_id,omitempty"`
	Name        string         `json:"name,omitempty"`
	Tokens      int            `json:"tokens"`
	Time        time.Time      `json:"time"`
	Meta        *session.Meta  `json:"meta,omitempty"`
}

// jsonToolCall is the OpenAI shape of a tool call.
type jsonToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func toJSONCalls(calls []session.ToolCall) []jsonToolCall {
	var out []jsonToolCall
	for _, c := range calls {
		jc := jsonToolCall{ID: c.ID, Type: "function"}
		jc.Function.Name, jc.Function.Arguments = c.Name, c.Arguments
		out = append(out, jc)
	}
	return out
}

func (a *app) historyJSON(ctx context.Context, sess session.Session) error {
	msgs, err := a.store.Messages(ctx, sess.ID, 1, 0)
	if err != nil {
		return err
	}
	sums, err := a.store.Summaries(ctx, sess.ID, true)
	if err != nil {
		return err
	}
	f := relativeFacts(summarize.Facts(msgs), sess.Cwd)
	out := struct {
		Session   any               `json:"session"`
		Facts     sessionFactsJSON  `json:"session_facts"`
		Messages  []jsonMessage     `json:"messages"`
		Summaries []session.Summary `json:"summaries"`
	}{
		Facts: factsJSON(f),
		Session: map[string]any{"id": sess.ID, "created": sess.Created, "updated": sess.Updated, "cwd": sess.Cwd,
			"model": sess.Model, "title": sess.Title, "message_count": sess.MessageCount},
		Messages:  make([]jsonMessage, 0, len(msgs)),
		Summaries: sums,
	}
	if out.Summaries == nil {
		out.Summaries = []session.Summary{}
	}
	for _, m := range msgs {
		jm := jsonMessage{Seq: m.Seq, Role: string(m.Role), Content: m.Content, FullContent: m.Full, ToolCalls: toJSONCalls(m.ToolCalls),
			ToolCallID: m.ToolCallID, Name: m.Name, Tokens: m.Tokens, Time: m.Time}
		if m.Meta != (session.Meta{}) {
			meta := m.Meta
			jm.Meta = &meta
		}
		out.Messages = append(out.Messages, jm)
	}
	enc := json.NewEncoder(a.env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func newExportCmd(ctx context.Context, env Env, g *globalFlags) *cobra.Command {
	var id, format string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export a session as markdown or OpenAI-format JSONL",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "md" && format != "jsonl" {
				return &usageError{fmt.Errorf("--format must be md or jsonl, not %q", format)}
			}
			a, err := newApp(ctx, env, cmd, g)
			if err != nil {
				return err
			}
			defer a.Close()
			sess, err := a.sessionFor(ctx, id)
			if err != nil {
				return err
			}
			msgs, err := a.store.Messages(ctx, sess.ID, 1, 0)
			if err != nil {
				return err
			}
			w := bufio.NewWriter(env.Stdout)
			if format == "jsonl" {
				err = exportJSONL(w, msgs)
			} else {
				sums, serr := a.store.Summaries(ctx, sess.ID, false)
				if serr != nil {
					return serr
				}
				err = exportMarkdown(w, sess, msgs, sums)
			}
			if err != nil {
				return err
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&id, "session", "", "session `ID` (default: the latest of this directory)")
	cmd.Flags().StringVar(&format, "format", "md", "md or jsonl")
	return cmd
}

// wireMessage is one line of an OpenAI-format JSONL transcript.
type wireMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []jsonToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
}

func exportJSONL(w io.Writer, msgs []session.Message) error {
	enc := json.NewEncoder(w)
	for _, m := range msgs {
		text := m.Text()
		wm := wireMessage{Role: string(m.Role), Content: &text, ToolCalls: toJSONCalls(m.ToolCalls), ToolCallID: m.ToolCallID, Name: m.Name}
		if text == "" && len(m.ToolCalls) > 0 {
			wm.Content = nil
		}
		if err := enc.Encode(wm); err != nil {
			return fmt.Errorf("export message %d: %w", m.Seq, err)
		}
	}
	return nil
}

func exportMarkdown(w io.Writer, sess session.Session, msgs []session.Message, sums []session.Summary) error {
	title := sess.Title
	if title == "" {
		title = "Session " + sess.ID
	}
	fmt.Fprintf(w, "# %s\n\nSession `%s` · %s · model %s · %d messages\n", title, sess.ID, sess.Cwd, sess.Model, len(msgs))
	for i, s := range sums {
		fmt.Fprintf(w, "\n> **Summary %d** (messages %d-%d): %s\n", i+1, s.FromSeq, s.ToSeq, commands.Gist(s))
	}
	for _, m := range msgs {
		switch m.Role {
		case session.RoleTool:
			fmt.Fprintf(w, "\n**%s result** (#%d)\n\n```\n%s\n```\n", m.Name, m.Seq, strings.ReplaceAll(m.Text(), "```", "ʼʼʼ"))
		default:
			fmt.Fprintf(w, "\n## %s (#%d)\n\n%s\n", m.Role, m.Seq, m.Content)
			for _, c := range m.ToolCalls {
				fmt.Fprintf(w, "\n→ `%s` %s\n", c.Name, c.Arguments)
			}
		}
	}
	return nil
}

func newImportCmd(ctx context.Context, env Env, g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE.jsonl",
		Short: "Import OpenAI-format messages (one JSON object a line) as a new session; prints its id",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := newApp(ctx, env, cmd, g)
			if err != nil {
				return err
			}
			defer a.Close()
			f, err := os.Open(args[0])
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			defer f.Close()
			msgs, err := readTranscript(f, args[0])
			if err != nil {
				return err
			}
			sess, err := a.importSession(ctx, msgs)
			if err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, sess.ID)
			return nil
		},
	}
}

// readTranscript parses OpenAI-format JSONL. Content may be a string, null
// or an array of text parts. Tools gencode does not define are kept as
// they are.
func readTranscript(r io.Reader, name string) ([]session.Message, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var out []session.Message
	callMeta := map[string]session.Meta{}
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var raw struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCalls  []jsonToolCall  `json:"tool_calls"`
			ToolCallID string          `json:"tool_call_id"`
			Name       string          `json:"name"`
		}
		if err := json.Unmarshal([]byte(text), &raw); err != nil {
			return nil, fmt.Errorf("%s:%d: not a JSON message: %w", name, line, err)
		}
		role := session.Role(raw.Role)
		switch role {
		case session.RoleSystem, session.RoleUser, session.RoleAssistant, session.RoleTool:
		default:
			return nil, fmt.Errorf("%s:%d: unknown role %q", name, line, raw.Role)
		}
		content, err := contentText(raw.Content)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		m := session.Message{Role: role, Content: strings.ToValidUTF8(content, "\uFFFD"), ToolCallID: raw.ToolCallID, Name: raw.Name}
		for _, c := range raw.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, session.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			callMeta[c.ID] = metaFromCall(c.Function.Name, c.Function.Arguments)
		}
		if role == session.RoleTool {
			if meta, ok := callMeta[raw.ToolCallID]; ok {
				m.Meta = meta
				if m.Name == "" {
					m.Name = meta.Tool
				}
			}
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no messages", name)
	}
	return out, nil
}

func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("content is neither text nor a list of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// metaFromCall records what the summarizer reads off a tool result.
func metaFromCall(tool, args string) session.Meta {
	var a map[string]any
	_ = json.Unmarshal([]byte(args), &a)
	str := func(k string) string { s, _ := a[k].(string); return s }
	return session.Meta{Tool: tool, FilePath: str("file_path"), Command: str("command"), Pattern: str("pattern")}
}

// importSession stores messages as a new session of the working directory,
// each counted once.
func (a *app) importSession(ctx context.Context, msgs []session.Message) (session.Session, error) {
	sess, err := a.store.CreateSession(ctx, a.cwd, a.cfg.Model)
	if err != nil {
		return session.Session{}, err
	}
	counter := a.tokens.Counter(a.cfg.Model)
	for i := range msgs {
		msgs[i].Tokens = agent.MessageTokens(counter, msgs[i])
	}
	for start := 0; start < len(msgs); start += 500 {
		end := min(start+500, len(msgs))
		if _, err := a.store.Append(ctx, sess.ID, msgs[start:end]...); err != nil {
			return session.Session{}, fmt.Errorf("import into session %s: %w", sess.ID, err)
		}
	}
	for _, m := range msgs {
		if m.Role == session.RoleUser && strings.TrimSpace(m.Content) != "" {
			_ = a.store.SetTitle(ctx, sess.ID, agent.Title(m.Content))
			break
		}
	}
	return sess, nil
}
