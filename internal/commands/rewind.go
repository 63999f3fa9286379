package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gencode/gencode/internal/rewind"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
)

// rewindCommand is /rewind: without arguments a list to pick from of the
// session's turns, summaries and rewinds ("/rewind list": the same as a
// card); "/rewind N [code|conversation|both]
// [--force]" takes the session back to before turn N; "/rewind summary
// ID" takes a compaction back; "/rewind undo [ID]" takes a rewind back.
// A conversation rewind asks the front end to reload the view
// (ActionRewound) and put the turn's text back in the editor.
func rewindCommand() *Command {
	return &Command{Name: "rewind", Usage: "[N [code|conversation|both] | summary ID | undo]",
		Summary:    "take the session back to before turn N: files, conversation or both",
		ValueFlags: map[string]bool{"keep": true, "overwrite": true}, run: runRewind}
}

func runRewind(ctx context.Context, r *Registry, st State, in Invocation) (Result, error) {
	if st.SessionID == "" {
		return Result{Text: "Nothing to rewind: no session yet."}, nil
	}
	if r.deps.Rewinder == nil {
		return Result{Text: "Rewinding is not available here."}, nil
	}
	rw, err := r.deps.Rewinder(ctx, st.SessionID)
	if err != nil {
		return Result{}, err
	}
	choices := rewind.Choices{Force: in.Flag("force"), Keep: in.All["keep"], Overwrite: in.All["overwrite"]}
	if len(in.Args) == 0 || strings.EqualFold(in.Args[0], "list") {
		l, err := rw.List(ctx)
		if err != nil {
			return Result{}, err
		}
		if len(in.Args) == 0 {
			if p := RewindPick(l); len(p.Items) > 0 {
				return Result{Pick: p}, nil
			}
		}
		return Result{Report: RewindReport(l)}, nil
	}
	var reload Result
	switch strings.ToLower(in.Args[0]) {
	case "summary":
		if len(in.Args) != 2 {
			return Result{}, errors.New("usage: /rewind summary ID (/rewind lists the summaries)")
		}
		res, err := rw.UndoSummary(ctx, in.Args[1])
		if err != nil {
			return Result{}, err
		}
		reload.Text = fmt.Sprintf("Summary %s taken back: its original messages are in the view again. `/rewind undo` puts it back.", res.Rewind.SummaryID)
		reload.Action = ActionRewound
		reload.Text += viewCost(ctx, r, st.SessionID)
		return reload, nil
	case "undo":
		id := ""
		if len(in.Args) > 1 {
			id = in.Args[1]
		}
		res, err := rw.Undo(ctx, id, choices)
		if err != nil {
			return conflictResult(res, err, strings.TrimSpace("/rewind undo "+quoteArgIf(id)))
		}
		reload.Text = fmt.Sprintf("Rewind %s undone.%s", res.Rewind.Undoes, changesText(res))
		reload.Action = ActionRewound
		reload.Text += viewCost(ctx, r, st.SessionID)
		return reload, nil
	}
	n, err := strconv.Atoi(in.Args[0])
	if err != nil || n < 1 {
		return Result{}, fmt.Errorf("/rewind %s: want a turn number, summary ID or undo (/rewind lists them)", termtext.Label(in.Args[0]))
	}
	mode := rewind.Both
	if len(in.Args) > 1 {
		switch strings.ToLower(in.Args[1]) {
		case "code":
			mode = rewind.Mode{Code: true}
		case "conversation":
			mode = rewind.Mode{Conversation: true}
		case "both":
		default:
			return Result{}, fmt.Errorf("/rewind %d %s: want code, conversation or both", n, termtext.Label(in.Args[1]))
		}
	}
	res, err := rw.ToTurn(ctx, n, mode, choices)
	if err != nil {
		return conflictResult(res, err, fmt.Sprintf("/rewind %d %s", n, mode))
	}
	text := fmt.Sprintf("Rewound %s to before turn %d.%s", mode.Words(), n, changesText(res))
	if !mode.Conversation {
		return Result{Text: text}, nil
	}
	reload.Text = text + "\n\nThe turn's request is back in the editor; `/rewind undo` takes the rewind back."
	reload.Action, reload.Draft = ActionRewound, res.Rewind.Text
	reload.Text += viewCost(ctx, r, st.SessionID)
	return reload, nil
}

// viewCost says what the session's view holds after a rewind changed it
// ("" when it cannot be read).
func viewCost(ctx context.Context, r *Registry, id string) string {
	if r.deps.Store == nil {
		return ""
	}
	v, err := r.deps.Store.LoadView(ctx, id)
	if err != nil {
		return ""
	}
	n := 0
	for _, s := range v.Summaries {
		n += s.TokenCount
	}
	for _, m := range v.Messages {
		n += m.Tokens
	}
	return fmt.Sprintf("\n\nThe view holds %d summaries and %d messages (%d tokens) now.", len(v.Summaries), len(v.Messages), n)
}

// changesText lists what a rewind did to the files.
func changesText(res rewind.Result) string {
	var b strings.Builder
	if len(res.Rewind.Changes) > 0 {
		b.WriteString("\n")
	}
	for _, l := range res.Rewind.Changes {
		verb := map[byte]string{'+': "brought back", '-': "removed", '~': "restored"}[l[0]]
		b.WriteString("\n- " + verb + " " + termtext.Sanitize(l[2:]))
	}
	if res.Note != "" {
		b.WriteString("\n" + res.Note)
	}
	if len(res.Kept) > 0 {
		b.WriteString("\nKept as you left them: " + termtext.Sanitize(strings.Join(res.Kept, ", ")))
	}
	if len(res.Unrestorable) > 0 {
		b.WriteString("\nNot restorable (too large), left as they are: " + termtext.Sanitize(strings.Join(res.Unrestorable, ", ")))
	}
	return b.String()
}

// quoteArgIf is quoteArg, or "" for "".
func quoteArgIf(s string) string {
	if s == "" {
		return ""
	}
	return quoteArg(s)
}

// conflictResult shows the files a rewind would not overwrite, and asks
// for a choice for each (line is the command that stopped).
func conflictResult(res rewind.Result, err error, line string) (Result, error) {
	if errors.Is(err, rewind.ErrNotKept) {
		rep := &Report{Title: "Rewind: files changed without a checkpoint", Footer: "nothing was changed; /rewind N conversation rewinds the conversation alone"}
		sec := Section{}
		for _, u := range res.Unkept {
			sec.Lines = append(sec.Lines, termtext.Sanitize(u))
		}
		rep.Sections = append(rep.Sections, sec)
		return Result{Report: rep}, nil
	}
	if !errors.Is(err, rewind.ErrConflict) {
		return Result{}, err
	}
	rep := &Report{Title: "Rewind: files changed outside gencode", Footer: "nothing was changed; add --force to overwrite them, or --keep PATH / --overwrite PATH for each"}
	ask := &ConflictAsk{Title: "Rewind: " + termtext.Count(len(res.Conflicts), "file", "files") + " changed outside gencode", line: line}
	for _, c := range res.Conflicts {
		diff := strings.TrimRight(termtext.Sanitize(c.Diff), "\n")
		rep.Sections = append(rep.Sections, Section{Title: termtext.Sanitize(c.Path), Lines: strings.Split(diff, "\n")})
		ask.Files = append(ask.Files, ConflictFile{Path: c.Path, Diff: diff, Deletes: c.Deletes})
	}
	return Result{Report: rep, Conflicts: ask}, nil
}

// RewindPick is /rewind's list: the turns newest first, then the active
// summaries (taken back: the compaction undone), then the rewinds that
// can be undone. Choosing a turn offers the three ways to rewind it.
func RewindPick(l rewind.Listing) *Pick {
	p := &Pick{Title: "Rewind to before a turn"}
	for _, t := range l.Turns {
		if t.Rewound {
			continue
		}
		detail := fmt.Sprintf("turn %d · %s · +%d ~%d -%d", t.N, t.Time.Local().Format("01-02 15:04"), t.Created, t.Modified, t.Deleted)
		if len(t.Unkept) > 0 {
			detail += " · files not kept"
		}
		title := termtext.OneLine(termtext.Sanitize(t.Text), 80)
		p.Items = append(p.Items, Choice{Title: title, Detail: detail, Result: Result{Pick: modePick(t.N, title)}})
	}
	for _, s := range l.Summaries {
		if s.SupersededBy != "" {
			continue
		}
		p.Items = append(p.Items, Choice{Title: "Undo summary " + s.ID,
			Detail: fmt.Sprintf("messages %d-%d · %d tokens", s.FromSeq, s.ToSeq, s.TokensAfter),
			Result: Result{Action: ActionRun, Line: "/rewind summary " + s.ID}})
	}
	for _, x := range l.Rewinds {
		if !x.Active() || x.Kind == session.RewindUndo {
			continue
		}
		p.Items = append(p.Items, Choice{Title: "Undo rewind " + x.ID,
			Detail: x.At.Local().Format("01-02 15:04") + " · " + DescribeRewind(x),
			Result: Result{Action: ActionRun, Line: "/rewind undo " + x.ID}})
	}
	return p
}

// modePick offers the three ways to rewind turn n.
func modePick(n int, title string) *Pick {
	run := func(mode string) Result {
		return Result{Action: ActionRun, Line: fmt.Sprintf("/rewind %d %s", n, mode)}
	}
	return &Pick{Title: fmt.Sprintf("Rewind to before turn %d: %s", n, title), Items: []Choice{
		{Title: "Restore code and conversation", Detail: "the files and the view as they were before the turn", Result: run("both")},
		{Title: "Restore code only", Detail: "the files as they were; the conversation stays", Result: run("code")},
		{Title: "Restore conversation only", Detail: "the view as it was; the files stay", Result: run("conversation")},
	}}
}

// RewindReport is the card of what a session offers to rewind.
func RewindReport(l rewind.Listing) *Report {
	rep := &Report{Title: "Rewind", Footer: "/rewind N [code|conversation|both] · /rewind summary ID · /rewind undo"}
	turns := Section{Title: "Turns (newest first)"}
	for _, t := range l.Turns {
		mark := ""
		if t.Rewound {
			mark = "  [rewound]"
		}
		if len(t.Unkept) > 0 {
			mark += "  [files not kept]"
		}
		turns.Lines = append(turns.Lines, fmt.Sprintf("%3d  %s  +%d ~%d -%d  %s%s", t.N, t.Time.Local().Format("01-02 15:04"),
			t.Created, t.Modified, t.Deleted, termtext.FirstLine(termtext.Sanitize(t.Text), 60), mark))
	}
	if len(turns.Lines) == 0 {
		turns.Lines = []string{"(none)"}
	}
	rep.Sections = append(rep.Sections, turns)
	if len(l.Summaries) > 0 {
		sec := Section{Title: "Summaries"}
		for _, s := range l.Summaries {
			state := "active"
			if s.SupersededBy != "" {
				state = "taken back"
			}
			sec.Lines = append(sec.Lines, fmt.Sprintf("%s  messages %d-%d  %d tokens  %s", s.ID, s.FromSeq, s.ToSeq, s.TokensAfter, state))
		}
		rep.Sections = append(rep.Sections, sec)
	}
	if len(l.Rewinds) > 0 {
		sec := Section{Title: "Rewinds"}
		for _, x := range l.Rewinds {
			sec.Lines = append(sec.Lines, x.ID+"  "+x.At.Local().Format("01-02 15:04")+"  "+DescribeRewind(x))
		}
		rep.Sections = append(rep.Sections, sec)
	}
	return rep
}

// DescribeRewind says in a line what a rewind did.
func DescribeRewind(r session.Rewind) string {
	var what string
	switch r.Kind {
	case session.RewindSummary:
		what = "summary " + r.SummaryID + " taken back"
	case session.RewindUndo:
		what = "undo of " + r.Undoes
	default:
		what = fmt.Sprintf("to before turn %d (%s)", r.Turn, rewind.Mode{Code: r.Code, Conversation: r.FromSeq > 0})
	}
	if r.Code {
		what += fmt.Sprintf(", %d file", len(r.Changes))
		if len(r.Changes) != 1 {
			what += "s"
		}
	}
	if !r.Active() && r.Kind != session.RewindUndo {
		what += "  [undone]"
	}
	return what
}
