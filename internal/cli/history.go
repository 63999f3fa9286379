package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gencode/gencode/internal/agent"
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/facts"
	"github.com/gencode/gencode/internal/rewind"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/transcript"
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
	if a.env.IsTerminal == nil || !a.env.IsTerminal() {
		_ = r.WritePlain(a.env.textOut()) // sanitized unless --raw-output
		return
	}
	// On a terminal the report is drawn from sanitized text, in colour
	// that the sanitizer would take out.
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
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withReadApp(ctx, env, cmd, g, func(a *app) error {
				sess, err := a.sessionFor(ctx, o.id)
				if err != nil {
					return err
				}
				if o.asJSON {
					return a.historyJSON(ctx, sess)
				}
				if o.search != "" && a.store.ReadOnly() {
					// The index cannot catch up: say what is not searched.
					if n, err := a.store.IndexBacklog(ctx); err == nil && n > 0 {
						fmt.Fprintf(a.stderr, "gencode: note: the data directory is read-only; %d recent messages are not in the search index and were not searched\n", n)
					}
				}
				// Written to a pipe or a file, --full's messages are read as
				// they are written (printReport's plain case).
				plain := a.env.IsTerminal == nil || !a.env.IsTerminal()
				rep, err := commands.History(ctx, a.store, a.searchFunc(), sess.ID, commands.HistoryOptions{
					Full: o.full, Stream: plain, Expand: o.expand, Search: o.search, Recent: o.recent})
				if err != nil {
					return err
				}
				if plain {
					return rep.WritePlain(a.env.textOut()) // sanitized unless --raw-output
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

// historyJSON prints the whole log and its summaries as one JSON object,
// a message at a time, and the session's facts last: they are extracted
// from the messages as they are written, so the log is read once and
// memory stays bounded however long the session is.
func (a *app) historyJSON(ctx context.Context, sess session.Session) error {
	sums, err := a.store.Summaries(ctx, sess.ID, true)
	if err != nil {
		return err
	}
	filter, err := rewind.NewFactsFilter(ctx, a.store, sess.ID)
	if err != nil {
		return err
	}
	ext := facts.NewExtractor(true) // facts.OfSeq's
	read := func(m session.Message) bool { ext.Add(m); return true }
	msgs := func(yield func(session.Message, error) bool) {
		for m, err := range a.store.Each(ctx, sess.ID, 1, 0) {
			if err == nil {
				filter.Feed(m, read)
			}
			if !yield(m, err) {
				return
			}
		}
	}
	h := transcript.History{Session: sess, Summaries: sums, Read: func() (transcript.Facts, error) {
		filter.End(read)
		return transcript.FactsOf(transcript.RelativeFacts(ext.Finish(), sess.Cwd)), nil
	}}
	return transcript.WriteHistoryJSON(a.env.jsonOut(), h, msgs)
}

func newExportCmd(ctx context.Context, env Env, g *globalFlags) *cobra.Command {
	var id, format string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export a session as markdown or OpenAI-format JSONL",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "md" && format != "jsonl" {
				return &usageError{fmt.Errorf("--format must be md or jsonl, not %q", format)}
			}
			a, err := newApp(ctx, env, cmd, g, session.ForReading())
			if err != nil {
				return err
			}
			defer a.Close()
			sess, err := a.sessionFor(ctx, id)
			if err != nil {
				return err
			}
			// A JSONL export is escaped, a markdown one sanitized;
			// --raw-output (not on a terminal) keeps the log's exact bytes.
			out := env.textOut()
			if format == "jsonl" {
				out = env.jsonOut()
			}
			w := bufio.NewWriterSize(out, 64<<10)
			msgs := a.store.Each(ctx, sess.ID, 1, 0)
			if format == "jsonl" {
				err = transcript.WriteJSONL(w, msgs)
			} else {
				sums, serr := a.store.Summaries(ctx, sess.ID, false)
				if serr != nil {
					return serr
				}
				err = transcript.WriteMarkdown(w, sess, sums, msgs)
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

func newImportCmd(ctx context.Context, env Env, g *globalFlags) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Import a session of gencode or another agent as a new session; prints its id",
		Long: "Import a session file as a new session and print its id. The format is recognised by content:\n" +
			"OpenAI-format messages (JSONL), a Claude Code session (JSONL), a Codex CLI rollout (JSONL),\n" +
			"a SWE-agent (.traj) or mini-swe-agent (.traj.json) trajectory, an OpenHands event stream;\n" +
			"--format NAME forces one. A file that breaks the chat message rules is repaired, and each\n" +
			"change is listed on stderr.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The file is read before the data directory is opened: input
			// that is refused creates nothing. A JSONL file is read a line
			// at a time, here and again when it is stored.
			file, err := transcript.OpenFile(args[0], args[0], format)
			if err != nil {
				return err
			}
			a, err := newApp(ctx, env, cmd, g)
			if err != nil {
				return err
			}
			defer a.Close()
			counter := a.tokens.Counter(a.cfg.Model)
			sess, err := file.Import(ctx, a.store, transcript.ImportOptions{Cwd: a.cwd, Model: a.cfg.Model,
				Count: func(m session.Message) int { return agent.MessageTokens(counter, m) }, Title: agent.Title})
			if err != nil {
				return err
			}
			changes, src := file.Changes, file.Source
			reportRepairs(env.Stderr, args[0], changes)
			if src.Format != transcript.FormatOpenAI || src.Root != "" {
				fmt.Fprintf(env.Stderr, "gencode: import: %s read in the %s format (root %s)\n", args[0], src.Format, orNone(src.Root))
			}
			if n := len(src.NotRun); n > 0 {
				fmt.Fprintf(env.Stderr, "gencode: import: %d call(s) never ran (denied, canceled or without a result): no command run, no change:\n", n)
				for i, c := range src.NotRun {
					if i == maxRepairsListed {
						fmt.Fprintf(env.Stderr, "  ... and %d more\n", n-i)
						break
					}
					fmt.Fprintf(env.Stderr, "  %s\n", termtext.OneLine(c, 120))
				}
			}
			fmt.Fprintln(env.Stdout, sess.ID)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "the file's format, when not recognised: `NAME` is one of "+strings.Join(transcript.Formats, ", "))
	return cmd
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// maxRepairsListed is how many repairs import lists before "and N more".
const maxRepairsListed = 20

// reportRepairs says on stderr what import changed (stdout stays the id).
func reportRepairs(w io.Writer, name string, changes []transcript.Change) {
	if len(changes) == 0 {
		return
	}
	fmt.Fprintf(w, "gencode: import: %d change(s) to %s so that its requests obey the message rules (the file is not modified):\n", len(changes), name)
	for i, c := range changes {
		if i == maxRepairsListed {
			fmt.Fprintf(w, "  ... and %d more\n", len(changes)-i)
			break
		}
		fmt.Fprintf(w, "  %s\n", termtext.OneLine(c.String(), 0))
	}
}
