// Package recall gives the model two read-only tools over its session's
// log, so that it can find and reread what summaries dropped:
// SearchHistory ranks the messages that match some words, summarized or
// not, and ReadHistory returns the original text of a range of messages.
//
// With adds them to another tool runner (the agent's tools.Set). The tools
// act on the session of the turn that calls them: the agent passes it to
// RunInSession.
package recall

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
)

// Tool names, as the model sees them.
const (
	ToolSearchHistory = "SearchHistory"
	ToolReadHistory   = "ReadHistory"
)

// DefaultMaxReadTokens caps ReadHistory's answer by default.
const DefaultMaxReadTokens = 4000

// maxSearchLimit bounds SearchHistory's limit argument.
const maxSearchLimit = 50

// history is the session log as the tools use it (*session.Store).
type history interface {
	SearchWith(ctx context.Context, q session.SearchQuery) ([]session.Hit, int, error)
	Messages(ctx context.Context, sessionID string, from, to int64) ([]session.Message, error)
	Session(ctx context.Context, id string) (session.Session, error)
}

// runner is a tool runner the history tools are added to (*tools.Set).
type runner interface {
	Definitions() []tools.Definition
	Run(ctx context.Context, c tools.Call) tools.Result
}

// Options configure the history tools.
type Options struct {
	// MaxReadTokens caps ReadHistory's answer (default DefaultMaxReadTokens).
	MaxReadTokens int
	// CountTokens measures text against MaxReadTokens; nil: bytes/4.
	CountTokens func(string) int
	// SessionID is the session that Run acts on, for callers that do not
	// pass one to RunInSession; "" makes Run refuse the history tools.
	SessionID string
}

// Tools is a tool runner: the base runner's tools plus SearchHistory and
// ReadHistory. It is safe for concurrent use if the base runner is.
type Tools struct {
	base  runner
	log   history
	opts  Options
	defs  []tools.Definition
	local map[string]bool
}

// With returns base's tools plus the history tools over log. base may be
// nil (the history tools only).
func With(base runner, log history, opts Options) *Tools {
	if opts.MaxReadTokens <= 0 {
		opts.MaxReadTokens = DefaultMaxReadTokens
	}
	if opts.CountTokens == nil {
		opts.CountTokens = func(s string) int { return (len(s) + 3) / 4 }
	}
	t := &Tools{base: base, log: log, opts: opts,
		local: map[string]bool{ToolSearchHistory: true, ToolReadHistory: true}}
	if base != nil {
		for _, d := range base.Definitions() {
			if !t.local[d.Name] {
				t.defs = append(t.defs, d)
			}
		}
	}
	t.defs = append(t.defs, definitions(opts.MaxReadTokens)...)
	return t
}

// Definitions lists the base tools, then SearchHistory and ReadHistory.
func (t *Tools) Definitions() []tools.Definition {
	return append([]tools.Definition(nil), t.defs...)
}

// Run runs a call; the history tools act on Options.SessionID.
func (t *Tools) Run(ctx context.Context, c tools.Call) tools.Result {
	return t.RunInSession(ctx, t.opts.SessionID, c)
}

// RunInSession runs a call of a turn of sessionID: the history tools
// search and read that session's log; other calls go to the base runner.
func (t *Tools) RunInSession(ctx context.Context, sessionID string, c tools.Call) tools.Result {
	if !t.local[c.Name] {
		if t.base == nil {
			return failf(c.Name, "unknown tool %q; available tools: %s, %s", c.Name, ToolSearchHistory, ToolReadHistory)
		}
		return t.base.Run(ctx, c)
	}
	if sessionID == "" {
		return failf(c.Name, "%s is not available here: no session", c.Name)
	}
	if err := ctx.Err(); err != nil {
		return failf(c.Name, "%s not run: %v", c.Name, err)
	}
	args := strings.TrimSpace(c.Arguments)
	if args == "" {
		args = "{}"
	}
	var r tools.Result
	switch c.Name {
	case ToolSearchHistory:
		r = t.search(ctx, sessionID, json.RawMessage(args))
	default:
		r = t.read(ctx, sessionID, json.RawMessage(args))
	}
	r.Content = termtext.Sanitize(r.Content)
	r.Meta.Tool, r.Meta.Success = c.Name, !r.IsError
	return r
}

// definitions are the history tools' schemas. Short on purpose: every
// request carries them, and the fixed prompt budget is 3,000 tokens.
func definitions(maxRead int) []tools.Definition {
	return []tools.Definition{
		{
			Name: ToolSearchHistory,
			Description: "Search this session's whole message log, including messages summarized out of your context, " +
				"for words or a \"quoted phrase\" (plain text, no query syntax). Returns the best matches " +
				"(seq, role, time, snippet with matches in «»), best first, and how many matched in all.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"query":{"type":"string","description":"Words to find"},` +
				`"limit":{"type":"integer","description":"Most matches to return (default 10, max 50)"}},` +
				`"required":["query"]}`),
		},
		{
			Name: ToolReadHistory,
			Description: "Read the original messages from_seq..to_seq of this session's log, in full (whole tool " +
				"outputs too), e.g. ones behind a summary or found by SearchHistory. Answers are cut at about " +
				strconv.Itoa(maxRead) + " tokens; the cut is said, with where to continue.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"from_seq":{"type":"integer","description":"First message (seq)"},` +
				`"to_seq":{"type":"integer","description":"Last message (default from_seq)"}},` +
				`"required":["from_seq"]}`),
		},
	}
}

func failf(tool, format string, args ...any) tools.Result {
	return tools.Result{Content: "error: " + fmt.Sprintf(format, args...), IsError: true, Meta: tools.Meta{Tool: tool}}
}

// search runs SearchHistory.
func (t *Tools) search(ctx context.Context, sessionID string, raw json.RawMessage) tools.Result {
	var args struct {
		Query *string      `json:"query"`
		Limit tools.IntArg `json:"limit"`
	}
	const usage = `; expected {"query": string, "limit"?: integer}`
	if err := json.Unmarshal(raw, &args); err != nil {
		return failf(ToolSearchHistory, "invalid arguments for %s: %v%s", ToolSearchHistory, err, usage)
	}
	if args.Query == nil || strings.TrimSpace(*args.Query) == "" {
		return failf(ToolSearchHistory, "invalid arguments for %s: missing query%s", ToolSearchHistory, usage)
	}
	query := strings.TrimSpace(*args.Query)
	limit := 10
	if n, ok := args.Limit.Value(); ok {
		limit = min(max(n, 1), maxSearchLimit)
	}
	// The history tools' own calls and results repeat the log: leave them
	// out, or each search would find the ones before it.
	hits, total, err := t.log.SearchWith(ctx, session.SearchQuery{SessionID: sessionID, Text: query, Limit: limit,
		SkipTools: []string{ToolSearchHistory, ToolReadHistory}})
	if err != nil {
		return failf(ToolSearchHistory, "search failed: %v", err)
	}
	r := tools.Result{Meta: tools.Meta{Pattern: query}}
	var b strings.Builder
	switch {
	case total == 0:
		fmt.Fprintf(&b, "No message of this session matches %q.", query)
		r.Content = b.String()
		return r
	case len(hits) > 0 && hits[0].Partial:
		fmt.Fprintf(&b, "No message has all the words of %q; %d have some of them", query, total)
	default:
		fmt.Fprintf(&b, "%s %q", termtext.Count(total, "message matches", "messages match"), query)
	}
	if more := total - len(hits); more > 0 {
		fmt.Fprintf(&b, "; the best %d follow (%d more: add words, or raise limit)", len(hits), more)
		if total > session.RankWindow {
			fmt.Fprintf(&b, "; ranked among the %d most recent", session.RankWindow)
		}
	}
	b.WriteString(":\n")
	for _, h := range hits {
		fmt.Fprintf(&b, "seq %d · %s · %s · %s\n", h.Seq, who(h.Role, h.ToolName), h.Time.Format(timeLayout), h.Snippet)
	}
	b.WriteString("ReadHistory{from_seq, to_seq} gives a message's full text.")
	r.Content = b.String()
	return r
}

const timeLayout = "2006-01-02 15:04"

// who names a message's author: the role, and the tool of a tool result.
func who(role session.Role, tool string) string {
	switch {
	case role == session.RoleTool && tool != "":
		return "tool " + tool
	case role == session.RoleAssistant && tool != "":
		return "assistant (calls " + tool + ")"
	}
	return string(role)
}

// readPage is how many messages ReadHistory loads at a time.
const readPage = 50

// read runs ReadHistory.
func (t *Tools) read(ctx context.Context, sessionID string, raw json.RawMessage) tools.Result {
	var args struct {
		From tools.IntArg `json:"from_seq"`
		To   tools.IntArg `json:"to_seq"`
	}
	const usage = `; expected {"from_seq": integer, "to_seq"?: integer}`
	if err := json.Unmarshal(raw, &args); err != nil {
		return failf(ToolReadHistory, "invalid arguments for %s: %v%s", ToolReadHistory, err, usage)
	}
	f, ok := args.From.Value()
	if !ok {
		return failf(ToolReadHistory, "invalid arguments for %s: missing from_seq%s", ToolReadHistory, usage)
	}
	from, to := int64(f), int64(f)
	if n, ok := args.To.Value(); ok {
		to = int64(n)
	}
	sess, err := t.log.Session(ctx, sessionID)
	if err != nil {
		return failf(ToolReadHistory, "read history: %v", err)
	}
	switch {
	case from < 1:
		return failf(ToolReadHistory, "from_seq must be 1 or more, not %d", from)
	case to < from:
		return failf(ToolReadHistory, "to_seq (%d) is before from_seq (%d)", to, from)
	case from > sess.LastSeq:
		return failf(ToolReadHistory, "there is no message %d: this session has messages 1-%d", from, sess.LastSeq)
	}
	to = min(to, sess.LastSeq)

	budget := t.opts.MaxReadTokens
	var b strings.Builder
	fmt.Fprintf(&b, "Messages %d-%d of %d (original text):\n", from, to, sess.LastSeq)
	next := from // the first message not shown
	for next <= to {
		page, err := t.log.Messages(ctx, sessionID, next, min(to, next+readPage-1))
		if err != nil {
			return failf(ToolReadHistory, "read history: %v", err)
		}
		if len(page) == 0 {
			break
		}
		for _, m := range page {
			block := render(m)
			cost := t.opts.CountTokens(block)
			if cost <= budget {
				b.WriteString(block)
				budget -= cost
				next = m.Seq + 1
				continue
			}
			if next == from {
				// The first message alone is over the cap: show its head
				// and tail (where errors and results usually are).
				head, tail := cutMiddle(block, budget, cost)
				b.WriteString(head)
				fmt.Fprintf(&b, "\n[... the middle of message %d is cut: about %d of its %d tokens are shown ...]\n",
					m.Seq, t.opts.CountTokens(head)+t.opts.CountTokens(tail), cost)
				b.WriteString(tail)
				next = m.Seq + 1
			}
			return t.cut(&b, next, to)
		}
	}
	return tools.Result{Content: strings.TrimRight(b.String(), "\n")}
}

// cut ends ReadHistory's answer at the token cap.
func (t *Tools) cut(b *strings.Builder, next, to int64) tools.Result {
	if next <= to {
		fmt.Fprintf(b, "[cut at the %d-token limit: messages %d-%d not shown; call ReadHistory with from_seq %d to go on]",
			t.opts.MaxReadTokens, next, to, next)
	}
	return tools.Result{Content: strings.TrimRight(b.String(), "\n")}
}

// render is one message as ReadHistory shows it: a header line, the whole
// text, and the calls of an assistant message.
func render(m session.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "--- seq %d · %s · %s", m.Seq, who(m.Role, m.Name), m.Time.Format(timeLayout))
	switch {
	case m.Meta.Deleted:
		b.WriteString(" · deleted")
	case m.Meta.Interrupted:
		b.WriteString(" · interrupted")
	case m.Meta.ExitCode != nil:
		fmt.Fprintf(&b, " · exit %d", *m.Meta.ExitCode)
	case m.Meta.Failed:
		b.WriteString(" · failed")
	}
	b.WriteString("\n")
	if text := m.Text(); text != "" {
		b.WriteString(text)
		b.WriteString("\n")
	}
	for _, c := range m.ToolCalls {
		fmt.Fprintf(&b, "[calls %s %s]\n", c.Name, c.Arguments)
	}
	return b.String()
}

// cutMiddle returns a head and a tail of s of about budget tokens in all,
// s costing cost tokens; they end and start on rune boundaries, and on
// line boundaries when one is near.
func cutMiddle(s string, budget, cost int) (head, tail string) {
	if budget <= 0 || cost <= 0 {
		return "", ""
	}
	n := int(int64(len(s)) * int64(budget) / int64(cost) / 2)
	h := min(n, len(s))
	for h > 0 && h < len(s) && !utf8.RuneStart(s[h]) {
		h--
	}
	t := max(len(s)-n, h)
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	// Whole lines when a line break is near.
	if i := strings.LastIndexByte(s[:h], '\n'); i >= 0 && i+1 >= h*3/4 {
		h = i + 1
	}
	if i := strings.IndexByte(s[t:], '\n'); i >= 0 && i < (len(s)-t)/4 {
		t += i + 1
	}
	return s[:h], s[t:]
}
