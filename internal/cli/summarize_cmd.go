package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/facts"
	"github.com/gencode/gencode/internal/rewind"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/summarize"
	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/transcript"
)

func newSummarizeCmd(ctx context.Context, env Env, g *globalFlags) *cobra.Command {
	var sessionID, focus string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "summarize",
		Short: "Compact a session now and print the report",
		Long: "Summarize the oldest unsummarized messages of a session now, even below the\n" +
			"thresholds, keeping the recent ones verbatim. The originals stay in the log.\n" +
			"A session too short to compact still gets its facts (files, commands).\n" +
			"Without --session it acts on the latest session of the current directory.",
		Args: noArgs,
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
			ag, _, err := a.newAgent(a.cfg.Model, client, nil, nil, false)
			if err != nil {
				return err
			}
			// The summary is planned for the server's window, as a turn is.
			_, notes := ag.AwaitWindow(ctx)
			for _, n := range notes {
				fmt.Fprintln(env.Stderr, "gencode: "+termtext.OneLine(n, 0))
			}
			// The session's facts are read from the messages the
			// compaction reads (a long log's range, once for both); the
			// rest of the log is read after it. A compaction that deletes
			// the originals takes them out of the facts: they are read
			// after it, whole.
			var tap *factsTap
			var store summarize.LogStore = a.store
			if !a.cfg.Summarize.DeleteOriginals {
				if tap, err = newFactsTap(ctx, a.store, sess.ID); err != nil {
					return err
				}
				store = tappedStore{Store: a.store, tap: tap}
			}
			s := a.buildSummarizerOn(store, a.cfg.Model, ag, nil)
			defer s.Close()
			a.hooks = a.newHooks(func(msg string) { fmt.Fprintln(env.Stderr, "gencode: "+a.redact(termtext.OneLine(msg, 0))) })
			a.hooks.TellUnapproved()
			rep, err := a.withManualHooks(s, nil).SummarizeNow(ctx, sess.ID, focus)
			// Too short to compact, or a summary would not shrink it: not a
			// failure, and the session's facts are still worth printing.
			nothing := errors.Is(err, summarize.ErrNothingToSummarize) || errors.Is(err, summarize.ErrNoReduction)
			if err != nil && !nothing {
				return fmt.Errorf("summarize session %s: %w", sess.ID, err)
			}
			var all session.Summary
			if tap != nil {
				all, err = tap.finish()
			} else {
				all, err = facts.OfSeq(rewind.FactsLog(ctx, a.store, sess.ID))
			}
			if err != nil {
				return err
			}
			facts := transcript.RelativeFacts(all, sess.Cwd)
			messages := sess.MessageCount
			if asJSON {
				return printFactsJSON(env.jsonOut(), sess, facts, rep.Summary)
			}
			if nothing || rep.Summary == nil {
				fmt.Fprintf(env.Stdout, "Nothing to summarize in session %s: the recent messages are kept verbatim and there is no older unsummarized range.\n", sess.ID)
				rep := &commands.Report{Title: "Session facts · " + sess.ID, Sections: commands.SessionFacts(facts, messages)}
				a.printReport(rep)
				return nil
			}
			return a.printSummary(sess, rep, facts, messages)
		},
	}
	cmd.Flags().StringVar(&sessionID, "session", "", "session `ID` (a unique prefix is enough)")
	cmd.Flags().StringVar(&focus, "focus", "", "what the summary should dwell on, e.g. \"the auth refactor\"")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the session's facts and the summary applied (or null) as one JSON object")
	return cmd
}

// factsTap extracts the session's facts (FactsLog's, the whole log through
// its rewinds) from the messages another reader reads in order (see), and
// reads the rest itself: what comes before them and, at finish, after.
type factsTap struct {
	ctx  context.Context
	st   *session.Store
	id   string
	f    *rewind.FactsFilter
	ext  facts.Extractor
	next int64 // the seq the facts read next
	err  error
}

func newFactsTap(ctx context.Context, st *session.Store, id string) (*factsTap, error) {
	f, err := rewind.NewFactsFilter(ctx, st, id)
	if err != nil {
		return nil, err
	}
	return &factsTap{ctx: ctx, st: st, id: id, f: f, ext: facts.NewExtractor(true), next: 1}, nil
}

func (t *factsTap) add(m session.Message) bool { t.ext.Add(m); return true }

// see takes m, read by another reader: the messages before it not read yet
// are read first; one read already (a range read twice) is not taken again.
func (t *factsTap) see(m session.Message) {
	if t.err != nil || m.Seq < t.next {
		return
	}
	if m.Seq > t.next && !t.read(m.Seq-1) {
		return
	}
	t.f.Feed(m, t.add)
	t.next = m.Seq + 1
}

// read reads the log from next through to (0: its end) into the facts.
func (t *factsTap) read(to int64) bool {
	for m, err := range t.st.Each(t.ctx, t.id, t.next, to) {
		if err != nil {
			t.err = err
			return false
		}
		t.f.Feed(m, t.add)
		t.next = m.Seq + 1
	}
	if to > 0 {
		t.next = max(t.next, to+1)
	}
	return true
}

// finish reads the rest of the log and returns the session's facts.
func (t *factsTap) finish() (session.Summary, error) {
	if t.err == nil {
		t.read(0)
	}
	if t.err != nil {
		return session.Summary{}, t.err
	}
	t.f.End(t.add)
	return t.ext.Finish(), nil
}

// tappedStore is the store whose reads of the session's log (Each) the
// tap sees.
type tappedStore struct {
	*session.Store
	tap *factsTap
}

func (s tappedStore) Each(ctx context.Context, id string, from, to int64) iter.Seq2[session.Message, error] {
	msgs := s.Store.Each(ctx, id, from, to)
	if id != s.tap.id {
		return msgs
	}
	return func(yield func(session.Message, error) bool) {
		for m, err := range msgs {
			if err == nil {
				s.tap.see(m)
			}
			if !yield(m, err) {
				return
			}
		}
	}
}

func printFactsJSON(w io.Writer, sess session.Session, f session.Summary, applied *session.Summary) error {
	out := struct {
		SessionID string           `json:"session_id"`
		Facts     transcript.Facts `json:"session_facts"`
		Summary   *session.Summary `json:"summary"`
	}{SessionID: sess.ID, Facts: transcript.FactsOf(f), Summary: applied}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// printSummary prints what /summarize shows (boxed on a terminal), every
// file and command of the summary, the facts of the whole session, then the
// narrative the model will read.
func (a *app) printSummary(sess session.Session, r summarize.Report, facts session.Summary, messages int) error {
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
	rep.Sections = append(rep.Sections, commands.SessionFacts(facts, messages)...)
	a.printReport(rep)
	if t := strings.TrimSpace(s.Content); t != "" {
		fmt.Fprintf(a.env.textOut(), "\n%s\n", t)
	}
	return nil
}
