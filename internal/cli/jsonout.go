package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/facts"
	"github.com/gencode/gencode/internal/rewind"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/transcript"
)

// Output and input formats of print mode (--output-format, --input-format).
const (
	formatText       = "text"
	formatJSON       = "json"
	formatStreamJSON = "stream-json"
)

// maxResultChars caps a tool result's content in the JSON events: the
// model got it whole (up to the tool's own cap); a program following the
// run gets the head.
const maxResultChars = 4000

// The events of --output-format stream-json, one JSON object a line; json
// prints only the result. Their fields are documented in
// docs/stream-json-schema.json (shown in the README) and checked against it
// by TestStreamJSONMatchesTheSchema: change both together.

type initEvent struct {
	Type      string   `json:"type"` // "init"
	SessionID string   `json:"session_id"`
	Model     string   `json:"model"`
	Cwd       string   `json:"cwd"`
	Window    int      `json:"window"`
	Tools     []string `json:"tools"`
}

type userEvent struct {
	Type      string `json:"type"` // "user"
	SessionID string `json:"session_id"`
	Text      string `json:"text"`
}

type textEvent struct {
	Type      string `json:"type"` // "text"
	SessionID string `json:"session_id"`
	Text      string `json:"text"`
}

type toolCallEvent struct {
	Type      string `json:"type"` // "tool_call"
	SessionID string `json:"session_id"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type toolResultEvent struct {
	Type      string `json:"type"` // "tool_result"
	SessionID string `json:"session_id"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	IsError   bool   `json:"is_error"`
	Denied    bool   `json:"denied"`
	Content   string `json:"content"`
	Truncated bool   `json:"truncated"`
}

type messageEvent struct {
	Type      string `json:"type"` // "retry", "notice", "error"
	SessionID string `json:"session_id"`
	Message   string `json:"message"`
}

type compactionStartEvent struct {
	Type         string `json:"type"` // "compaction_start"
	SessionID    string `json:"session_id"`
	Background   bool   `json:"background"`
	Tier         string `json:"tier"`
	Reason       string `json:"reason"`
	TokensBefore int    `json:"tokens_before"`
}

type compactionEndEvent struct {
	Type           string           `json:"type"` // "compaction_end"
	SessionID      string           `json:"session_id"`
	Background     bool             `json:"background"`
	Tier           string           `json:"tier"`
	OK             bool             `json:"ok"`
	Error          string           `json:"error"`
	FromSeq        int64            `json:"from_seq"`
	ToSeq          int64            `json:"to_seq"`
	MessagesBefore int              `json:"messages_before"`
	MessagesAfter  int              `json:"messages_after"`
	TokensBefore   int              `json:"tokens_before"`
	TokensAfter    int              `json:"tokens_after"`
	DurationMS     int64            `json:"duration_ms"`
	Facts          transcript.Facts `json:"facts"`
}

type usageJSON struct {
	InputTokens  int `json:"input_tokens"`
	CachedTokens int `json:"cached_tokens"`
	OutputTokens int `json:"output_tokens"`
	Requests     int `json:"requests"`
}

type callJSON struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	IsError bool   `json:"is_error"`
	Denied  bool   `json:"denied"`
}

type resultEvent struct {
	Type        string               `json:"type"`    // "result"
	Subtype     string               `json:"subtype"` // "success", "denied", "error"
	SessionID   string               `json:"session_id"`
	Model       string               `json:"model"`
	IsError     bool                 `json:"is_error"`
	ExitCode    int                  `json:"exit_code"`
	Text        string               `json:"text"`
	Error       string               `json:"error"`
	Turns       int                  `json:"turns"`
	DurationMS  int64                `json:"duration_ms"`
	Usage       usageJSON            `json:"usage"`
	CostUSD     float64              `json:"cost_usd"`
	CostText    string               `json:"cost_text"`
	Unpriced    []string             `json:"unpriced"`
	ToolCalls   []callJSON           `json:"tool_calls"`
	Compactions []compactionEndEvent `json:"compactions"`
	Hooks       []string             `json:"hook_problems"`
}

// jsonRun writes one print-mode run as JSON: every event a line
// (stream-json), or the result alone (json). The turn's goroutine and the
// summarizer's Notify write to it: mu serializes them.
type jsonRun struct {
	mu     sync.Mutex
	w      io.Writer
	stream bool
	start  time.Time
	// lastTokens is the size of the last request sent: a compaction's
	// tokens before, as it starts.
	lastTokens  int
	res         resultEvent
	hookProblem map[string]bool
	// done: the result is written, and nothing may follow it (a
	// background summary canceled at exit reports after it).
	done bool
}

func newJSONRun(w io.Writer, stream bool, sessionID, model string) *jsonRun {
	return &jsonRun{w: w, stream: stream, start: time.Now(), hookProblem: map[string]bool{},
		res: resultEvent{Type: "result", SessionID: sessionID, Model: model,
			ToolCalls: []callJSON{}, Compactions: []compactionEndEvent{}, Unpriced: []string{}, Hooks: []string{}}}
}

// line writes v as one line when streaming.
func (j *jsonRun) line(v any) {
	if !j.stream || j.done {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		return // the events are plain structs: cannot happen
	}
	_, _ = j.w.Write(append(b, '\n'))
}

func (j *jsonRun) emit(v any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.line(v)
}

// turnStarted says a user message starts a turn.
func (j *jsonRun) turnStarted(text string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.res.Turns++
	j.line(userEvent{Type: "user", SessionID: j.res.SessionID, Text: text})
}

// event turns one agent event into its line, and keeps what the result
// reports.
func (j *jsonRun) event(ev agent.Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	id := j.res.SessionID
	switch ev.Kind {
	case agent.EventTextDelta:
		j.line(textEvent{Type: "text", SessionID: id, Text: ev.Text})
	case agent.EventToolRun:
		if c := ev.Call; c != nil {
			// A CallMcpTool call is reported as the MCP tool it names.
			uc, _ := tools.Unwrap(tools.Call{Name: c.Name, Arguments: c.Arguments})
			j.line(toolCallEvent{Type: "tool_call", SessionID: id, ID: c.ID, Name: uc.Name, Arguments: uc.Arguments})
		}
	case agent.EventMessage:
		m := ev.Message
		if m == nil || m.Role != session.RoleTool {
			return
		}
		name := m.Name
		if name == tools.ToolCallMcp && m.Meta.Tool != "" {
			name = m.Meta.Tool
		}
		content, cut := capChars(m.Content, maxResultChars)
		j.res.ToolCalls = append(j.res.ToolCalls, callJSON{ID: m.ToolCallID, Name: name, IsError: m.Meta.Failed || m.Meta.Denied, Denied: m.Meta.Denied})
		j.line(toolResultEvent{Type: "tool_result", SessionID: id, ID: m.ToolCallID, Name: name,
			IsError: m.Meta.Failed || m.Meta.Denied, Denied: m.Meta.Denied, Content: content, Truncated: cut})
	case agent.EventContext:
		if ev.Context != nil {
			j.lastTokens = ev.Context.Tokens
		}
	case agent.EventRetry:
		j.line(messageEvent{Type: "retry", SessionID: id, Message: ev.Text})
	case agent.EventNotice:
		j.line(messageEvent{Type: "notice", SessionID: id, Message: ev.Text})
	case agent.EventDone:
		j.res.Text = ev.Text
	}
}

// failed reports an error as a line of its own.
func (j *jsonRun) failed(msg string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.res.Error = msg
	j.line(messageEvent{Type: "error", SessionID: j.res.SessionID, Message: msg})
}

// hookProblemOnce records a hook's failure, once per hook.
func (j *jsonRun) hookProblemOnce(msg string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.hookProblem[msg] {
		return
	}
	j.hookProblem[msg] = true
	j.res.Hooks = append(j.res.Hooks, msg)
	j.line(messageEvent{Type: "notice", SessionID: j.res.SessionID, Message: msg})
}

// compaction reports a compaction starting or ending; facts are the
// session's facts after it (summarize --json's session_facts).
func (j *jsonRun) compaction(r summarize.Report, facts transcript.Facts) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if r.Phase == summarize.Started {
		j.line(compactionStartEvent{Type: "compaction_start", SessionID: j.res.SessionID, Background: r.Background,
			Tier: "summary", Reason: r.Reason, TokensBefore: j.lastTokens})
		return
	}
	e := compactionEndEvent{Type: "compaction_end", SessionID: j.res.SessionID, Background: r.Background, Tier: compactionTier(r),
		OK: r.Phase == summarize.Finished && r.Summary != nil, DurationMS: r.Duration.Milliseconds(), Facts: facts}
	if r.Err != nil && !e.OK {
		e.Error = r.Err.Error()
	}
	if s := r.Summary; s != nil {
		e.FromSeq, e.ToSeq = s.FromSeq, s.ToSeq
		e.MessagesBefore, e.MessagesAfter = s.MessagesBefore, s.MessagesAfter
		e.TokensBefore, e.TokensAfter = s.TokensBefore, s.TokensAfter
	}
	j.res.Compactions = append(j.res.Compactions, e)
	j.line(e)
}

// compactionTier names how a compaction summarized: an LLM summary, the
// deterministic one (the summarizer failed), or a merge of summaries.
func compactionTier(r summarize.Report) string {
	switch {
	case r.Merged != nil:
		return "merge"
	case r.Fallback:
		return "deterministic"
	}
	return "summary"
}

// finish writes the result: usage and cost are the session's, as /cost
// adds them up; err is the run's error (nil: success).
func (j *jsonRun) finish(spend commands.Spend, err error, code int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	r := &j.res
	r.DurationMS = time.Since(j.start).Milliseconds()
	t := spend.Total()
	r.Usage = usageJSON{InputTokens: t.Input, CachedTokens: t.Cached, OutputTokens: t.Output, Requests: spend.Requests()}
	r.CostUSD, r.CostText = spend.Cost, spend.CostText()
	if spend.Unpriced != nil {
		r.Unpriced = spend.Unpriced
	}
	r.ExitCode = code
	j.done = true
	var de *deniedError
	switch {
	case err == nil:
		r.Subtype = "success"
	case errors.As(err, &de):
		r.Subtype = "denied"
		r.Error = de.Error()
	default:
		r.Subtype, r.IsError = "error", true
		if r.Error == "" {
			r.Error = userMessage(err)
		}
	}
	b, merr := json.Marshal(r)
	if merr != nil {
		return
	}
	_, _ = j.w.Write(append(b, '\n'))
}

// capChars cuts s to at most n bytes on a rune boundary.
func capChars(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}

// streamInput reads the user messages of --input-format stream-json: one
// JSON object a line, in Claude Code's shape
// {"type":"user","message":{"role":"user","content":"..."}} (content may
// also be a list of {"type":"text","text":"..."} parts). Blank lines are
// skipped; a line that is not such a message is an error.
func streamInput(line []byte) (string, error) {
	var in struct {
		Type    string `json:"type"`
		Message struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal(line, &in); err != nil {
		return "", fmt.Errorf("read a stream-json input line: %w", err)
	}
	if in.Type != "user" {
		return "", fmt.Errorf("read a stream-json input line: type %q, want \"user\"", in.Type)
	}
	var text string
	if err := json.Unmarshal(in.Message.Content, &text); err == nil {
		return text, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(in.Message.Content, &parts); err != nil {
		return "", errors.New("read a stream-json input line: message.content is neither a string nor a list of text parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// sessionFacts are a session's deterministic facts, as summarize --json
// prints them (session_facts).
func (a *app) sessionFacts(ctx context.Context, sessionID string) (transcript.Facts, error) {
	sess, err := a.store.Session(ctx, sessionID)
	if err != nil {
		return transcript.Facts{}, err
	}
	all, err := facts.OfSeq(rewind.FactsLog(ctx, a.store, sessionID))
	if err != nil {
		return transcript.Facts{}, err
	}
	return transcript.FactsOf(transcript.RelativeFacts(all, sess.Cwd)), nil
}

// spend is what the session used so far, as /cost adds it up.
func (a *app) spend(ctx context.Context, sessionID string) commands.Spend {
	all, err := a.store.UsageBySession(ctx, sessionID)
	if err != nil {
		return commands.Spend{}
	}
	return commands.SpendOf(all[sessionID], a.prices())
}
