package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

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
			writeSummaryReport(env.Stdout, rep)
			return nil
		},
	}
	cmd.Flags().StringVar(&sessionID, "session", "", "session `ID` (a unique prefix is enough)")
	cmd.Flags().StringVar(&focus, "focus", "", "what the summary should dwell on, e.g. \"the auth refactor\"")
	return cmd
}

// writeSummaryReport prints what /summarize shows: messages and tokens
// before and after, topics, files, commands, decisions, time and model.
func writeSummaryReport(w io.Writer, r summarize.Report) {
	s := r.Summary
	if s == nil {
		return
	}
	fmt.Fprintf(w, "Summarized messages %d-%d of session %s\n", s.FromSeq, s.ToSeq, s.SessionID)
	if s.MessagesBefore > 0 {
		fmt.Fprintf(w, "Messages: %d -> %d (%d%% reduction)\n", s.MessagesBefore, s.MessagesAfter,
			100*(s.MessagesBefore-s.MessagesAfter)/s.MessagesBefore)
	}
	fmt.Fprintf(w, "Tokens: %d -> %d (%d saved)\n", s.TokensBefore, s.TokensAfter, s.TokensBefore-s.TokensAfter)
	list := func(title string, items []string, max int) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(w, "%s (%d):\n", title, len(items))
		shown := items
		if len(shown) > max {
			shown = shown[len(shown)-max:]
			fmt.Fprintf(w, "  ... %d earlier\n", len(items)-max)
		}
		for _, it := range shown {
			fmt.Fprintf(w, "  - %s\n", oneLine(it))
		}
	}
	list("Key topics", s.Topics, 10)
	list("Files modified", s.FilesModified, 20)
	list("Commands run", s.Commands, 20)
	list("Key decisions", s.KeyDecisions, 10)
	model := s.Model
	if s.Fallback {
		model = "none (deterministic summary: " + s.FallbackReason + ")"
	}
	fmt.Fprintf(w, "Took %s; model %s\n", s.Duration.Round(1e6), model)
	if m := r.Merged; m != nil {
		fmt.Fprintf(w, "The summary block passed its budget: %d summaries merged into one covering messages %d-%d.\n",
			len(m.Merged), m.FromSeq, m.ToSeq)
	}
	if t := strings.TrimSpace(s.Content); t != "" {
		fmt.Fprintf(w, "\n%s\n", t)
	}
}
