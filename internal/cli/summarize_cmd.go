package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
)

func newSummarizeCmd(ctx context.Context, env Env, g *globalFlags) *cobra.Command {
	var sessionID, focus string
	cmd := &cobra.Command{
		Use:   "summarize",
		Short: "Compact a session now and print the report",
		Long: "Summarize the oldest unsummarized messages of a session now, even below the\n" +
			"thresholds, keeping the recent ones verbatim. The originals stay in the log.\n" +
			"Without --session it acts on the latest session of the current directory.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := newApp(ctx, env, cmd, g)
			if err != nil {
				return err
			}
			defer a.Close()
			var sess session.Session
			if sessionID != "" {
				sess, err = a.store.Session(ctx, sessionID)
			} else {
				sess, err = a.store.LatestSession(ctx, a.cwd)
			}
			if err != nil {
				return err
			}
			client, err := a.client(ctx)
			if err != nil {
				return err
			}
			ag, _, err := a.newAgent(client, nil, nil, false)
			if err != nil {
				return err
			}
			s := a.buildSummarizer(ag, nil)
			defer s.Close()
			rep, err := s.SummarizeNow(ctx, sess.ID, focus)
			if errors.Is(err, summarize.ErrNothingToSummarize) {
				fmt.Fprintf(env.Stdout, "Nothing to summarize in session %s: the recent messages are kept verbatim and there is no older unsummarized range.\n", sess.ID)
				return nil
			}
			if err != nil {
				return fmt.Errorf("summarize session %s: %w", sess.ID, err)
			}
			return a.printSummary(ctx, sess, rep)
		},
	}
	cmd.Flags().StringVar(&sessionID, "session", "", "session `ID` (a unique prefix is enough)")
	cmd.Flags().StringVar(&focus, "focus", "", "what the summary should dwell on, e.g. \"the auth refactor\"")
	return cmd
}

// printSummary prints what /summarize shows (boxed on a terminal), every
// file and command of the summary, the facts of the whole session, then the
// narrative the model will read.
func (a *app) printSummary(ctx context.Context, sess session.Session, r summarize.Report) error {
	s := r.Summary
	if s == nil {
		return nil
	}
	rep := commands.SummaryReportMax(r, 0)
	rep.Title = fmt.Sprintf("Session Summary · %s · messages %d-%d", sess.ID, s.FromSeq, s.ToSeq)
	if m := r.Merged; m != nil {
		rep.Footer += fmt.Sprintf(" · the summary block passed its budget: %d summaries merged into one (messages %d-%d)",
			len(m.Merged), m.FromSeq, m.ToSeq)
	}
	msgs, err := a.store.Messages(ctx, sess.ID, 1, 0)
	if err != nil {
		return err
	}
	rep.Sections = append(rep.Sections, commands.SessionFacts(summarize.Facts(msgs), len(msgs))...)
	a.printReport(rep)
	if t := strings.TrimSpace(s.Content); t != "" {
		fmt.Fprintf(a.env.Stdout, "\n%s\n", t)
	}
	return nil
}
