package commands

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
	"github.com/gencode/gencode/internal/transcript"
	"github.com/gencode/gencode/internal/view"
)

// maxListed is how many items a report section lists before "+N more".
const maxListed = 8

// SummaryReport is the boxed report of one compaction (/summarize), with
// long lists cut to a few items and "+N more".
func SummaryReport(rep summarize.Report) *Report { return SummaryReportMax(rep, maxListed) }

// SummaryReportMax is SummaryReport listing at most max items a section
// (0: all of them, for `gencode summarize`).
func SummaryReportMax(rep summarize.Report, limit int) *Report {
	s := rep.Summary
	if s == nil {
		return &Report{Title: "Session Summary", Sections: []Section{{Lines: []string{"Nothing was summarized."}}}}
	}
	r := &Report{Title: "Session Summary"}
	head := Section{Lines: []string{
		fmt.Sprintf("Messages: %d → %d (%s reduction)", s.MessagesBefore, s.MessagesAfter, percent(s.MessagesBefore, s.MessagesAfter)),
		fmt.Sprintf("Tokens: %s → %s (%s saved)", termtext.Thousands(s.TokensBefore), termtext.Thousands(s.TokensAfter), termtext.Thousands(max(0, s.TokensBefore-s.TokensAfter))),
		fmt.Sprintf("Covers messages %d-%d", s.FromSeq, s.ToSeq),
	}}
	if s.Focus != "" {
		head.Lines = append(head.Lines, "Focus: "+termtext.OneLine(s.Focus, 200))
	}
	r.Sections = append(r.Sections, head)
	r.Sections = appendList(r.Sections, "Key topics", s.Topics, limit)
	r.Sections = appendList(r.Sections, fmt.Sprintf("Files modified (%d)", len(s.FilesModified)), s.FilesModified, limit)
	r.Sections = appendList(r.Sections, fmt.Sprintf("Files created (%d)", len(s.FilesCreated)), s.FilesCreated, limit)
	r.Sections = appendList(r.Sections, fmt.Sprintf("Files deleted (%d)", len(s.FilesDeleted)), s.FilesDeleted, limit)
	r.Sections = appendList(r.Sections, commandsTitle(*s), s.Commands, limit)
	r.Sections = appendList(r.Sections, fmt.Sprintf("Commands not run: denied, canceled or without a result (%d)", len(s.CommandsNotRun)), s.CommandsNotRun, limit)
	r.Sections = appendList(r.Sections, fmt.Sprintf("Key decisions (%d)", len(s.KeyDecisions)), s.KeyDecisions, limit)
	who := "written by " + s.Model
	if s.Fallback || rep.Fallback {
		who = "deterministic summary (no LLM narrative)"
		if s.FallbackReason != "" {
			who += ": " + s.FallbackReason
		}
	}
	d := s.Duration
	if d == 0 {
		d = rep.Duration
	}
	r.Footer = fmt.Sprintf("took %s · %s", d.Round(100*time.Millisecond), who)
	return r
}

// SessionFacts is the report sections on a whole session's log: every file
// modified (created ones included), created and deleted, and how many shell
// commands ran, read off the log (no LLM).
func SessionFacts(f session.Summary, messages int) []Section {
	secs := []Section{{Title: fmt.Sprintf("Whole session (%d messages)", messages), Lines: []string{
		fmt.Sprintf("%s modified, %s run (%d distinct), %s read",
			termtext.Count(len(f.FilesModified), "file", "files"), termtext.Count(f.CommandRuns, "shell command", "shell commands"),
			len(f.Commands), termtext.Count(len(f.FilesRead), "file", "files")),
	}}}
	secs = appendList(secs, fmt.Sprintf("Files modified in the session (%d)", len(f.FilesModified)), f.FilesModified, 0)
	secs = appendList(secs, fmt.Sprintf("Files created in the session (%d)", len(f.FilesCreated)), f.FilesCreated, 0)
	return appendList(secs, fmt.Sprintf("Files deleted in the session (%d)", len(f.FilesDeleted)), f.FilesDeleted, 0)
}

// AutoNotice is the compact note shown in the chat when a background
// summary was applied.
func AutoNotice(rep summarize.Report) string {
	s := rep.Summary
	if s == nil {
		return ""
	}
	var b strings.Builder
	kind := "Summarized"
	if rep.Fallback || s.Fallback {
		kind = "Compacted (deterministic fallback)"
	}
	fmt.Fprintf(&b, "%s messages %d-%d to keep the context small: %s → %s tokens. The originals stay in the log (/history --full).",
		kind, s.FromSeq, s.ToSeq, termtext.Thousands(s.TokensBefore), termtext.Thousands(s.TokensAfter))
	bullets := append([]string{}, s.Topics...)
	if n := len(s.FilesModified); n > 0 {
		bullets = append(bullets, fmt.Sprintf("modified %s: %s", termtext.Count(n, "file", "files"), listShort(s.FilesModified, 3)))
	}
	if n := len(s.KeyDecisions); n > 0 {
		bullets = append(bullets, "decided: "+s.KeyDecisions[0])
	}
	for i, l := range bullets {
		if i == 4 {
			break
		}
		b.WriteString("\n• " + termtext.OneLine(l, 100))
	}
	return b.String()
}

// commandsTitle counts commands: runs, and distinct ones when they differ.
func commandsTitle(s session.Summary) string {
	if s.CommandRuns > len(s.Commands) {
		return fmt.Sprintf("Commands run (%d, %d distinct)", s.CommandRuns, len(s.Commands))
	}
	return fmt.Sprintf("Commands run (%d)", len(s.Commands))
}

func appendList(secs []Section, title string, items []string, limit int) []Section {
	if len(items) == 0 {
		return secs
	}
	sec := Section{Title: title}
	for i, it := range items {
		if limit > 0 && i == limit {
			sec.More = len(items) - limit
			break
		}
		sec.Lines = append(sec.Lines, "• "+termtext.OneLine(it, 200))
	}
	return append(secs, sec)
}

func listShort(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" +%d more", len(items)-n)
}

func percent(before, after int) string {
	if before <= 0 {
		return "0%"
	}
	return strconv.Itoa((before-after)*100/before) + "%"
}

// HistoryOptions select what /history shows.
type HistoryOptions struct {
	Full bool
	// Stream: --full's messages are read as the report is written
	// (Section.Stream), not kept; for a report written once to a writer.
	Stream bool
	Expand int    // 1-based summary number whose originals to show; 0: none
	Search string // filter: messages matching this text
	Recent int    // brief mode: how many recent messages (default 10)
}

// History builds the /history report of a session.
func History(ctx context.Context, st Store, search SearchFunc, id string, o HistoryOptions) (*Report, error) {
	sess, err := st.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	sums, err := st.Summaries(ctx, sess.ID, false)
	if err != nil {
		return nil, err
	}
	if o.Search != "" {
		return historySearch(ctx, search, sess, o.Search)
	}
	if o.Expand > 0 {
		return historyExpand(ctx, st, sess, sums, o.Expand)
	}
	rep := &Report{Title: fmt.Sprintf("Session history · %s · %d messages total", sess.ID, sess.MessageCount)}
	// An imported session says where it came from (its first message
	// records it).
	if first, err := st.Messages(ctx, sess.ID, 1, 1); err == nil && len(first) > 0 && first[0].Meta.Imported != nil {
		im := first[0].Meta.Imported
		root := im.Root
		if root == "" {
			root = "unknown"
		}
		sec := Section{Title: "Imported from: " + im.Format + " · root " + root}
		if im.Model != "" {
			sec.Lines = append(sec.Lines, "Model: "+im.Model)
		}
		rep.Sections = append(rep.Sections, sec)
	}
	var through int64
	for i, s := range sums {
		through = max(through, s.ToSeq)
		sec := Section{Title: fmt.Sprintf("[Summary %d] Messages %d-%d · %s", i+1, s.FromSeq, s.ToSeq, s.GeneratedAt.Format("2006-01-02 15:04"))}
		gist := termtext.OneLine(transcript.Gist(s), 300)
		if !o.Full {
			sec.Lines = append(sec.Lines, gist)
		} else {
			// The summary's whole text as the model reads it (narrative:
			// current state, decisions ...; then the facts: constraints,
			// files, commands), after its gist when the text lacks it.
			text := strings.TrimRight(termtext.Display(view.RenderSummary(s)), "\n")
			if !strings.Contains(text, gist) {
				sec.Lines = append(sec.Lines, gist)
			}
			sec.Lines = append(sec.Lines, strings.Split(text, "\n")...)
			if s.Focus != "" {
				// A refocus: its tokens are the request's with the summary
				// it replaced, then with it (the same when only the text
				// changed).
				sec.Lines = append(sec.Lines, "Focus: "+termtext.OneLine(s.Focus, 200))
			}
			how := "by " + s.Model
			if s.Fallback {
				how = "deterministic"
			}
			sec.Lines = append(sec.Lines, fmt.Sprintf("%d → %d tokens, %s; /history --expand %d shows the originals", s.TokensBefore, s.TokensAfter, how, i+1))
		}
		rep.Sections = append(rep.Sections, sec)
	}
	n := o.Recent
	if n <= 0 {
		n = 10
	}
	// Without --full only the last n are read: the cost does not grow with
	// the session. The log's seqs are dense, so the rest is counted from
	// the session's last seq. With --full the messages are read a page at
	// a time and only their lines are kept.
	rewound := rewoundOf(ctx, st, sess.ID)
	brief := func(m session.Message) string {
		line := Brief(m, 160)
		if rewound(m.Seq) {
			line += "  [rewound]"
		}
		return line
	}
	if o.Full && o.Stream {
		// The log's seqs are dense: the section's range is known without
		// reading it.
		sec := Section{Title: "[Recent] no messages after the summaries"}
		if sess.LastSeq > through {
			sec.Title = fmt.Sprintf("[Recent] Messages %d-%d", through+1, sess.LastSeq)
		}
		sec.Stream = func(yield func(string, error) bool) {
			for m, err := range st.Each(ctx, sess.ID, through+1, 0) {
				if err != nil {
					yield("", err)
					return
				}
				if !yield(brief(m), nil) {
					return
				}
			}
		}
		rep.Sections = append(rep.Sections, sec)
		rep.Footer = historyFooter(sums, through)
		return rep, nil
	}
	recent := st.Each(ctx, sess.ID, through+1, 0)
	if !o.Full {
		tail, err := st.TailAfter(ctx, sess.ID, through, n)
		if err != nil {
			return nil, err
		}
		recent = func(yield func(session.Message, error) bool) {
			for _, m := range tail {
				if !yield(m, nil) {
					return
				}
			}
		}
	}
	var first, last int64
	var lines []string
	for m, err := range recent {
		if err != nil {
			return nil, err
		}
		if first == 0 {
			first = m.Seq
		}
		last = m.Seq
		lines = append(lines, brief(m))
	}
	sec := Section{}
	if first > 0 {
		sec.Title = fmt.Sprintf("[Recent] Messages %d-%d", first, last)
	} else {
		sec.Title = "[Recent] no messages after the summaries"
	}
	if skipped := first - through - 1; !o.Full && first > 0 && skipped > 0 {
		sec.Lines = append(sec.Lines, fmt.Sprintf("… %d earlier unsummarized messages (--full shows all)", skipped))
	}
	sec.Lines = append(sec.Lines, lines...)
	rep.Sections = append(rep.Sections, sec)
	rep.Footer = historyFooter(sums, through)
	return rep, nil
}

// historyFooter says what the summaries cover.
func historyFooter(sums []session.Summary, through int64) string {
	if len(sums) == 0 {
		return "nothing summarized yet"
	}
	noun := "summaries cover"
	if len(sums) == 1 {
		noun = "summary covers"
	}
	return fmt.Sprintf("%d %s messages 1-%d; every original is kept", len(sums), noun, through)
}

func historyExpand(ctx context.Context, st Store, sess session.Session, sums []session.Summary, n int) (*Report, error) {
	if n > len(sums) {
		return nil, fmt.Errorf("no summary %d: this session has %d", n, len(sums))
	}
	s := sums[n-1]
	rep := &Report{Title: fmt.Sprintf("Summary %d · the original messages %d-%d", n, s.FromSeq, s.ToSeq)}
	// Read a page at a time (a long log's first summary covers all of it):
	// only what is shown is kept.
	for m, err := range st.Each(ctx, sess.ID, s.FromSeq, s.ToSeq) {
		if err != nil {
			return nil, err
		}
		sec := Section{Title: heading(m)}
		text := m.Text()
		if m.Meta.Deleted {
			text = "(deleted by delete_originals; see the audit trail)"
		}
		if strings.TrimSpace(text) == "" {
			rep.Sections = append(rep.Sections, sec) // tool calls only: all in the heading
			continue
		}
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		for i, l := range lines {
			if i == 20 {
				sec.More = len(lines) - 20
				break
			}
			sec.Lines = append(sec.Lines, strings.Clone(l)) // not the whole text behind it
		}
		rep.Sections = append(rep.Sections, sec)
	}
	return rep, nil
}

func historySearch(ctx context.Context, search SearchFunc, sess session.Session, q string) (*Report, error) {
	if search == nil {
		return nil, errors.New("history search is not available")
	}
	hits, total, err := search(ctx, sess.ID, q, 20)
	if err != nil {
		return nil, err
	}
	// The best matches, listed in the order they were written.
	slices.SortStableFunc(hits, func(a, b SearchHit) int { return cmp.Compare(a.Seq, b.Seq) })
	rep := &Report{Title: fmt.Sprintf("History search %q · %d matches", q, total)}
	sec := Section{}
	for _, h := range hits {
		who := h.Role
		if h.Tool != "" {
			who += " " + h.Tool
		}
		sec.Lines = append(sec.Lines, fmt.Sprintf("#%d %s: %s", h.Seq, who, termtext.OneLine(h.Snippet, 200)))
	}
	if len(hits) == 0 {
		sec.Lines = []string{"no message matches"}
	}
	sec.More = max(0, total-len(hits))
	rep.Sections = []Section{sec}
	return rep, nil
}

// heading is a message's heading where its text follows: its number, its
// role and its tool calls or tool, not its text.
func heading(m session.Message) string {
	h := fmt.Sprintf("#%d %s", m.Seq, m.Role)
	switch {
	case m.Role == session.RoleTool:
		h += " ← " + m.Name
		if m.Meta.ExitCode != nil {
			h += fmt.Sprintf(" exit %d", *m.Meta.ExitCode)
		} else if m.Meta.Failed {
			h += " failed"
		}
	case len(m.ToolCalls) > 0:
		for _, c := range m.ToolCalls {
			h += " → " + c.Name + " " + keyArg(c)
		}
	}
	if m.Meta.Interrupted {
		h += " [interrupted]"
	}
	return termtext.OneLine(h, 160)
}

// Brief is a message in one line: "#12 user: text", tool calls and results
// by name and key argument.
func Brief(m session.Message, width int) string {
	var body string
	switch {
	case m.Role == session.RoleTool:
		status, text := "", m.Text()
		if m.Meta.ExitCode != nil {
			// The code is said first; the trailer the model reads is not
			// said again.
			status = fmt.Sprintf(" exit %d", *m.Meta.ExitCode)
			text = tools.TrimExitTrailer(text, *m.Meta.ExitCode)
		} else if m.Meta.Failed {
			status = " failed"
		}
		body = "← " + m.Name + status + ": " + text
	case len(m.ToolCalls) > 0:
		var calls []string
		for _, c := range m.ToolCalls {
			calls = append(calls, "→ "+c.Name+" "+keyArg(c))
		}
		body = strings.TrimSpace(m.Content + " " + strings.Join(calls, " "))
	default:
		body = m.Content
	}
	if m.Meta.Interrupted {
		body += " [interrupted]"
	}
	return fmt.Sprintf("#%d %s: %s", m.Seq, m.Role, termtext.OneLine(body, width))
}

// keyArg is what a tool call is about, in one short line.
func keyArg(c session.ToolCall) string {
	return termtext.OneLine(tools.Describe(tools.Call{Name: c.Name, Arguments: c.Arguments}).Summary, 60)
}

// Plain renders a report as plain text (for pipes and NO_COLOR).
// PadRows lays rows out in columns, each as wide as its widest cell and
// two spaces apart: a table as plain text (no width to fit).
func PadRows(rows [][]string) []string {
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	out := make([]string, 0, len(rows))
	for _, row := range rows {
		var b strings.Builder
		for i, c := range row {
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

func (r *Report) Plain() string {
	var b strings.Builder
	_ = r.WritePlain(&b)
	return b.String()
}

// WritePlain writes Plain's text to w a line at a time: a long report
// (history --full of a long log) is never held twice.
func (r *Report) WritePlain(w io.Writer) error {
	b := bufio.NewWriterSize(w, 64<<10)
	if r.Title != "" {
		b.WriteString(r.Title + "\n")
	}
	for _, s := range r.Sections {
		b.WriteString("\n")
		if s.Title != "" {
			b.WriteString(s.Title + "\n")
		}
		indent := ""
		if s.Title != "" {
			indent = "  "
		}
		for _, l := range s.Lines {
			b.WriteString(indent)
			b.WriteString(l)
			b.WriteByte('\n')
		}
		if s.Stream != nil {
			for l, err := range s.Stream {
				if err != nil {
					return err
				}
				b.WriteString(indent)
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
		for _, l := range PadRows(s.Rows) {
			b.WriteString(indent + l + "\n")
		}
		if s.More > 0 {
			fmt.Fprintf(b, "  +%d more\n", s.More)
		}
	}
	if r.Footer != "" {
		b.WriteString("\n" + r.Footer + "\n")
	}
	return b.Flush()
}
