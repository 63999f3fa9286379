package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gencode/gencode/internal/checkpoint"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/rewind"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
)

// checkpoints is the checkpoint store of the working directory, pruned at
// most once a day, or nil when [rewind] is off. It follows the tree, so
// that a tool call's snapshot costs what the call changed.
func (a *app) checkpoints(ctx context.Context) *checkpoint.Store {
	return a.checkpointsOf(ctx, a.cwd, true)
}

// checkpointsOf is the checkpoint store of dir; follow is false for a
// store used for one rewind (its snapshots look at the whole tree).
func (a *app) checkpointsOf(ctx context.Context, dir string, follow bool) *checkpoint.Store {
	if !a.cfg.Rewind.Enabled || a.cfg.DataDir == "" {
		return nil
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	cs := checkpoint.New(a.cfg.DataDir, filepath.Clean(dir), checkpoint.Options{MaxFileBytes: a.cfg.Rewind.MaxFileBytes, Exclude: a.privateDirs(), NoFollow: !follow})
	if err := cs.PruneDaily(ctx, a.cfg.Rewind.MaxAge.Duration, a.cfg.Rewind.MaxStoreBytes); err != nil {
		a.log.Warn("prune checkpoints", "err", err)
	}
	return cs
}

type rewindOptions struct {
	id, summary, undo   string
	list, asJSON, force bool
	to                  int
	code, conversation  bool
	keep, overwrite     []string
}

// choices are the per-file answers to a rewind's conflicts the flags give.
func (o rewindOptions) choices() rewind.Choices {
	return rewind.Choices{Force: o.force, Keep: o.keep, Overwrite: o.overwrite}
}

func newRewindCmd(ctx context.Context, env Env, g *globalFlags) *cobra.Command {
	var o rewindOptions
	cmd := &cobra.Command{
		Use:   "rewind",
		Short: "Take a session back to before a turn: its files, its conversation, or both",
		Long: `Take a session back to before one of its turns.

--list shows the user turns (newest first, with the files each changed),
the summaries and the rewinds made. --to N puts every file back as it was
before turn N (shell commands' changes included) and takes the turns from N
on out of the conversation's view (the log keeps them); --code or
--conversation does only one. A file changed outside gencode since is a
conflict: listed with its diff, and only overwritten with --force (all of
them) or --overwrite PATH (that one); --keep PATH leaves a file as it is.
--summary ID takes a compaction back; --undo takes the last rewind back.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("to") && o.to < 1 {
				return &usageError{fmt.Errorf("rewind: --to wants a turn number; turns count from 1 (see --list)")}
			}
			n := 0
			for _, set := range []bool{o.list, o.to != 0, o.summary != "", o.undo != ""} {
				if set {
					n++
				}
			}
			if n != 1 {
				return &usageError{errors.New("rewind: give one of --list, --to TURN, --summary ID, --undo")}
			}
			if (o.code || o.conversation) && o.to == 0 {
				return &usageError{errors.New("rewind: --code and --conversation go with --to")}
			}
			if o.list {
				return withReadApp(ctx, env, cmd, g, func(a *app) error { return a.rewindList(ctx, o) })
			}
			return withApp(ctx, env, cmd, g, func(a *app) error { return a.rewindRun(ctx, o) })
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.id, "session", "", "session `ID` (default: the latest of this directory)")
	f.BoolVar(&o.list, "list", false, "list the turns, summaries and rewinds")
	f.BoolVar(&o.asJSON, "json", false, "with --list: print JSON")
	f.IntVar(&o.to, "to", 0, "rewind to before turn `N`")
	f.BoolVar(&o.code, "code", false, "with --to: restore the files only")
	f.BoolVar(&o.conversation, "conversation", false, "with --to: rewind the conversation only")
	f.BoolVar(&o.force, "force", false, "overwrite files changed outside gencode since")
	f.StringArrayVar(&o.keep, "keep", nil, "leave `PATH` as it is (a conflict kept; repeatable)")
	f.StringArrayVar(&o.overwrite, "overwrite", nil, "overwrite `PATH`, changed outside gencode since (repeatable)")
	f.StringVar(&o.summary, "summary", "", "take the compaction `ID` back (its originals return to the view)")
	f.StringVar(&o.undo, "undo", "", "take a rewind back (the latest, or `ID`)")
	f.Lookup("undo").NoOptDefVal = "latest"
	// A number typed alone is most likely a turn (noArgs).
	cmd.Annotations = map[string]string{numberArg: "to"}
	return cmd
}

// rewinderOf is /rewind's rewinder of a session.
func (a *app) rewinderOf(ctx context.Context, id string) (rewind.Rewinder, error) {
	return a.rewinder(ctx, id)
}

func (a *app) rewinder(ctx context.Context, id string) (rewind.Rewinder, error) {
	sess, err := a.sessionFor(ctx, id)
	if err != nil {
		return rewind.Rewinder{}, err
	}
	return rewind.Rewinder{Store: a.store, Files: a.checkpointsOf(ctx, sess.Cwd, false), SessionID: sess.ID}, nil
}

// rewindTurnJSON is one turn of `rewind --list --json`.
type rewindTurnJSON struct {
	Turn     int       `json:"turn"`
	Seq      int64     `json:"seq"`
	Text     string    `json:"text"`
	Time     time.Time `json:"time"`
	Created  int       `json:"created"`
	Modified int       `json:"modified"`
	Deleted  int       `json:"deleted"`
	Rewound  bool      `json:"rewound,omitempty"`
	// Unkept are calls of the turn that changed files without a
	// checkpoint: a code rewind to it or before refuses.
	Unkept []string `json:"unkept,omitempty"`
}

// rewindViewJSON is what the view holds now: what a request is built from.
type rewindViewJSON struct {
	Summaries int `json:"summaries"`
	Messages  int `json:"messages"`
	Tokens    int `json:"tokens"`
}

type rewindSummaryJSON struct {
	ID      string `json:"id"`
	FromSeq int64  `json:"from_seq"`
	ToSeq   int64  `json:"to_seq"`
	Tokens  int    `json:"tokens_after"`
	Active  bool   `json:"active"`
}

func (a *app) rewindList(ctx context.Context, o rewindOptions) error {
	rw, err := a.rewinder(ctx, o.id)
	if err != nil {
		return err
	}
	l, err := rw.List(ctx)
	if err != nil {
		return err
	}
	if o.asJSON {
		out := struct {
			Session   string              `json:"session"`
			Turns     []rewindTurnJSON    `json:"turns"`
			Summaries []rewindSummaryJSON `json:"summaries"`
			Rewinds   []session.Rewind    `json:"rewinds"`
			View      rewindViewJSON      `json:"view"`
		}{Session: rw.SessionID, Turns: []rewindTurnJSON{}, Summaries: []rewindSummaryJSON{}, Rewinds: l.Rewinds}
		for _, t := range l.Turns {
			out.Turns = append(out.Turns, rewindTurnJSON{t.N, t.Seq, t.Text, t.Time, t.Created, t.Modified, t.Deleted, t.Rewound, t.Unkept})
		}
		for _, s := range l.Summaries {
			out.Summaries = append(out.Summaries, rewindSummaryJSON{s.ID, s.FromSeq, s.ToSeq, s.TokensAfter, s.SupersededBy == ""})
		}
		v, err := a.store.LoadView(ctx, rw.SessionID)
		if err != nil {
			return err
		}
		out.View = rewindViewJSON{len(v.Summaries), len(v.Messages), viewTokens(v)}
		if out.Rewinds == nil {
			out.Rewinds = []session.Rewind{}
		}
		enc := json.NewEncoder(a.env.jsonOut())
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	rep := commands.RewindReport(l)
	// The card's footer names /rewind's forms; here the flags are the way.
	rep.Footer = "gencode rewind --to N [--code|--conversation] · --summary ID · --undo[=ID]"
	a.printReport(rep)
	return nil
}

func (a *app) rewindRun(ctx context.Context, o rewindOptions) error {
	rw, err := a.rewinder(ctx, o.id)
	if err != nil {
		return err
	}
	// One writer per session: a TUI showing it rewinds with /rewind.
	lease, err := a.store.Lease(ctx, rw.SessionID, session.LeaseWait)
	if err != nil {
		return err
	}
	defer lease.Release()
	out := a.env.textOut()
	var res rewind.Result
	switch {
	case o.to > 0:
		mode := rewind.Both
		if o.code || o.conversation {
			mode = rewind.Mode{Code: o.code, Conversation: o.conversation}
		}
		res, err = rw.ToTurn(ctx, o.to, mode, o.choices())
		if err == nil {
			fmt.Fprintf(out, "Rewound %s to before turn %d.\n", mode.Words(), o.to)
		}
	case o.summary != "":
		res, err = rw.UndoSummary(ctx, o.summary)
		if err == nil {
			v, verr := a.store.LoadView(ctx, rw.SessionID)
			if verr != nil {
				return verr
			}
			fmt.Fprintf(out, "Summary %s taken back: the view holds %d summaries and %d messages (%d tokens) now.\n",
				res.Rewind.SummaryID, len(v.Summaries), len(v.Messages), viewTokens(v))
		}
	default:
		id := o.undo
		if id == "latest" {
			id = ""
		}
		res, err = rw.Undo(ctx, id, o.choices())
		if err == nil {
			fmt.Fprintf(out, "Rewind %s undone.\n", res.Rewind.Undoes)
		}
	}
	printRewindResult(out, a.stderr, res, err)
	if errors.Is(err, rewind.ErrConflict) {
		return &toldError{fmt.Errorf("rewind: %w", err)} // the conflicts are listed above
	}
	if err != nil {
		return err
	}
	if res.Rewind.FromSeq > 0 && res.Rewind.Text != "" {
		fmt.Fprintf(out, "The turn's request was:\n%s\n", termtext.Sanitize(res.Rewind.Text))
	}
	if o.to > 0 {
		// The way back names the session when the user named one: the
		// directory's latest may be another.
		undo := "gencode rewind --undo"
		if o.id != "" {
			undo = "gencode rewind --session " + rw.SessionID + " --undo"
		}
		fmt.Fprintln(out, undo+" takes it back.")
	}
	return nil
}

func viewTokens(v session.View) int {
	n := 0
	for _, s := range v.Summaries {
		n += s.TokenCount
	}
	for _, m := range v.Messages {
		n += m.Tokens
	}
	return n
}

func printRewindResult(out, errOut io.Writer, res rewind.Result, err error) {
	if len(res.Unkept) > 0 {
		fmt.Fprintf(errOut, "gencode: these calls changed files without a checkpoint; nothing was changed (--conversation rewinds the conversation alone):\n")
		for _, u := range res.Unkept {
			fmt.Fprintf(errOut, "  %s\n", termtext.Sanitize(u))
		}
		return
	}
	if errors.Is(err, rewind.ErrConflict) {
		// The files the user has not decided about yet (--keep and
		// --overwrite decide some): nothing was changed.
		var open []rewind.Conflict
		for _, c := range res.Conflicts {
			if !c.Decided {
				open = append(open, c)
			}
		}
		what, all := "1 file changed outside gencode since it last wrote it; nothing was changed (--force overwrites it", ""
		if n := len(open); n != 1 {
			what, all = fmt.Sprintf("%d files changed outside gencode since it last wrote them; nothing was changed (--force overwrites them all", n), "; --keep PATH or --overwrite PATH for each"
		} else {
			all = "; --keep PATH keeps it"
		}
		fmt.Fprintf(errOut, "gencode: %s%s):\n", what, all)
		for _, c := range open {
			if c.Deletes {
				fmt.Fprintf(errOut, "  %s (not in the checkpoint: overwriting it deletes it)\n", c.Path)
			} else {
				fmt.Fprintf(errOut, "  %s\n", c.Path)
			}
			if c.Diff != "" {
				fmt.Fprint(errOut, indent(termtext.Sanitize(c.Diff), "    "))
			}
		}
		return
	}
	for _, l := range res.Rewind.Changes {
		fmt.Fprintf(out, "  %s\n", l)
	}
	if res.Note != "" {
		fmt.Fprintf(out, "%s\n", res.Note)
	}
	if len(res.Kept) > 0 {
		fmt.Fprintf(out, "Kept as you left them: %s\n", strings.Join(res.Kept, ", "))
	}
	if len(res.Unrestorable) > 0 {
		fmt.Fprintf(out, "Not restorable (larger than [rewind] max_file_bytes), left as they are: %s\n", strings.Join(res.Unrestorable, ", "))
	}
}

func indent(s, pre string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(pre + l)
		}
	}
	return b.String()
}
