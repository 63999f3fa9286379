package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
)

func subcommands(ctx context.Context, env Env, g *globalFlags) []*cobra.Command {
	return []*cobra.Command{
		newSessionsCmd(ctx, env, g), newHistoryCmd(ctx, env, g), newSummarizeCmd(ctx, env, g),
		newExportCmd(ctx, env, g), newImportCmd(ctx, env, g), hooksCmd(ctx, env, g), newMCPCmd(ctx, env, g),
		newRewindCmd(ctx, env, g),
	}
}

func newSessionsCmd(ctx context.Context, env Env, g *globalFlags) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List sessions (id, updated, messages, tokens, cost, directory, title)",
		Args:  noArgs,
		// A number typed alone is most likely how many (noArgs).
		Annotations: map[string]string{numberArg: "limit"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withReadApp(ctx, env, cmd, g, func(a *app) error {
				list, err := a.store.Sessions(ctx, limit)
				if err != nil {
					return err
				}
				ids := make([]string, len(list))
				for i, s := range list {
					ids[i] = s.ID
				}
				usage, err := a.store.UsageBySession(ctx, ids...)
				if err != nil {
					return err
				}
				prices := a.prices()
				w := tabwriter.NewWriter(env.textOut(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tUPDATED\tMESSAGES\tTOKENS\tCOST\tDIRECTORY\tTITLE")
				unpriced := false
				for _, s := range list {
					tokens, cost := "-", "-"
					if u := usage[s.ID]; len(u) > 0 {
						sp := commands.SpendOf(u, prices)
						tokens = strconv.Itoa(sp.Total().Input + sp.Total().Output)
						if c := sp.CostText(); c != "" {
							cost = c
						}
						unpriced = unpriced || strings.HasSuffix(cost, commands.UnpricedMark)
					}
					fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", s.ID, s.Updated.Format("2006-01-02 15:04"), s.MessageCount, tokens, cost, s.Cwd, termtext.OneLine(s.Title, 0))
				}
				if err := w.Flush(); err != nil {
					return err
				}
				if unpriced {
					fmt.Fprintln(env.textOut(), commands.UnpricedNote)
				}
				return nil
			})
		},
	}
	cmd.Flags().IntVarP(&limit, "limit", "n", 50, "show at most `N` sessions (0: all)")
	return cmd
}

// withReadApp runs f with the wiring of one subcommand run that only
// reads, and closes it: it works on a data directory that cannot be
// written.
func withReadApp(ctx context.Context, env Env, cmd *cobra.Command, g *globalFlags, f func(a *app) error) error {
	return withAppOpts(ctx, env, cmd, g, f, session.ForReading())
}

// withApp runs f with the wiring of one subcommand run that writes to
// the store (gencode rewind).
func withApp(ctx context.Context, env Env, cmd *cobra.Command, g *globalFlags, f func(a *app) error) error {
	return withAppOpts(ctx, env, cmd, g, f)
}

// withAppOpts runs f with the wiring of one subcommand run and closes it.
func withAppOpts(ctx context.Context, env Env, cmd *cobra.Command, g *globalFlags, f func(a *app) error, opts ...session.Option) error {
	a, err := newApp(ctx, env, cmd, g, opts...)
	if err != nil {
		return err
	}
	defer a.Close()
	return f(a)
}
