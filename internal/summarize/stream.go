package summarize

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/gencode/gencode/internal/facts"
	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/view"
)

// A log whose unsummarized part is far larger than the window (an imported
// session, one run with summaries off, one never resumed since) is never
// loaded whole: its first compaction is planned from the messages' heads
// (seq, role, stored count), its facts are read a page at a time, and its
// narrative is written chunk by chunk, each chunk's messages read when that
// chunk is summarized. What stays after it fits the window, so the view
// loaded afterwards is bounded too.

const (
	// longWindows: an unsummarized part whose stored counts pass this many
	// windows is compacted this way, before the view is loaded.
	longWindows = 2
	// longMessages: below this many unsummarized messages (a figure of the
	// session row) nothing is read to find out.
	longMessages = 500
	// feedPage is how many messages the log feed reads at a time.
	feedPage = 256
)

// feed gives a range's transcript entries in order: all at once for a
// range in memory, a page of the log at a time for one read from the
// store, so that narrate holds one chunk and a page at most.
type feed struct {
	buf []entry
	// next reads the next page (none at the end); nil: buf is all.
	next func() ([]entry, error)
	// left estimates, from stored counts, the tokens not read yet.
	left int
	// A feed of the log (logFeed) may extract the range's facts as it
	// reads it: ext, when not nil; render false reads without rendering
	// (drain); err is the read error that ended it.
	ext    *facts.Extractor
	render bool
	err    error
}

func sliceFeed(entries []entry) *feed { return &feed{buf: entries} }

// fill reads pages until buf holds more than budget tokens or the range
// has no more.
func (f *feed) fill(budget int) error {
	have := 0
	for _, e := range f.buf {
		have += e.tokens
	}
	for f.next != nil && have <= budget {
		page, err := f.read()
		if err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			have += e.tokens
			f.left -= e.tokens
		}
		f.buf = append(f.buf, page...)
	}
	f.left = max(0, f.left)
	return nil
}

// read reads the next page; at the end (or an error) the feed is done.
func (f *feed) read() ([]entry, error) {
	page, err := f.next()
	if err != nil {
		f.err = err
	}
	if err != nil || len(page) == 0 {
		f.next, f.left = nil, 0
	}
	return page, err
}

// consume drops the first n entries, summarized (their texts are let go).
func (f *feed) consume(n int) {
	f.buf = append([]entry(nil), f.buf[n:]...)
}

// facts reads what narrate did not (the summarizer failed, or was not
// asked) and returns the range's facts.
func (f *feed) facts() session.Summary {
	f.render = false
	for f.next != nil {
		if _, err := f.read(); err != nil {
			break
		}
	}
	return f.ext.Finish()
}

// logFeed is a feed of messages from..to of the session's log but those
// skip says (nil: none), redacted when redact_secrets is on; withFacts: it
// extracts their facts as it reads them. stop ends the read.
func (s *Summarizer) logFeed(ctx context.Context, id string, from, to int64, left int, withFacts bool,
	skip func(seq int64) bool) (src *feed, stop func()) {
	next, stop := iter.Pull2(s.store.Each(ctx, id, from, to))
	src = &feed{left: left, render: true}
	if withFacts {
		ext := facts.NewExtractor(s.cfg.PreserveSystem)
		src.ext = &ext
	}
	src.next = func() ([]entry, error) {
		page := make([]session.Message, 0, feedPage)
		for len(page) < feedPage {
			m, err, ok := next()
			if !ok {
				break
			}
			if err != nil {
				return nil, err
			}
			if skip != nil && skip(m.Seq) {
				continue
			}
			page = append(page, m)
		}
		if len(page) == 0 {
			return nil, nil
		}
		if s.cfg.RedactSecrets {
			// Before anything is extracted or cut, as plan does.
			page = redactMessages(page)
		}
		for _, m := range page {
			if src.ext != nil {
				src.ext.Add(m)
			}
		}
		if !src.render {
			return []entry{{}}, nil // read, not shown
		}
		return transcriptEntries(page), nil
	}
	return src, stop
}

// withLongFacts is sum, written for a long range (c.src) before its facts
// were all read, with them: the narrative's fields are kept.
func (c *compaction) withLongFacts(sum session.Summary) session.Summary {
	f := c.src.facts()
	f.SessionID, f.FromSeq, f.ToSeq, f.Focus = sum.SessionID, sum.FromSeq, sum.ToSeq, sum.Focus
	f.Content, f.Goal, f.CurrentState, f.Topics, f.NextSteps = sum.Content, sum.Goal, sum.CurrentState, sum.Topics, sum.NextSteps
	f.Model, f.Chunks = sum.Model, sum.Chunks
	if sum.KeyDecisions != nil { // the narrative's
		f.KeyDecisions = sum.KeyDecisions
	}
	return f
}

// longRange reads the heads of the unsummarized part of a session's log
// (after through) when it is long (see longWindows); nil when it is not.
func (s *Summarizer) longRange(ctx context.Context, sess session.Session, through int64) ([]session.Head, error) {
	if sess.LastSeq-through < longMessages {
		return nil, nil
	}
	heads, err := s.store.Heads(ctx, sess.ID, through+1, 0)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", sess.ID, err)
	}
	// What a conversation rewind took out of the view is not in it, nor
	// in a summary of it (LoadView's rule).
	hidden, err := s.store.Rewound(ctx, sess.ID)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", sess.ID, err)
	}
	heads = slices.DeleteFunc(heads, func(h session.Head) bool { return hidden(h.Seq) })
	if len(heads) < longMessages {
		return nil, nil
	}
	total := 0
	for _, h := range heads {
		total += s.headCost(h)
	}
	if total <= longWindows*s.window() {
		return nil, nil
	}
	return heads, nil
}

// headCost is what a message takes in the view, from its head: a tool
// output is cut to CapTokens (plan's cost).
func (s *Summarizer) headCost(h session.Head) int {
	if c := s.view.CapTokens(); h.Role == session.RoleTool && c > 0 && h.Tokens > c {
		return c
	}
	return h.Tokens
}

// planLong plans the compaction of a long unsummarized log (heads, from
// longRange) without loading it: the range is every message but the last
// ones that fit what plan leaves the kept messages, and it never starts
// the kept part with a tool result. The range is read once, a page at a
// time, by the narrative (c.src), which extracts its facts as it goes.
func (s *Summarizer) planLong(ctx context.Context, st *sessState, m mode, focus string, sess session.Session,
	heads []session.Head) (*compaction, error) {
	id := sess.ID
	sums, err := s.store.Summaries(ctx, id, false)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	fixed := s.fixedCost()
	c := &compaction{mode: m, id: id, focus: focus, b: s.budgets(fixed), kept: sums, total: len(heads)}
	tailBudget := max(1, c.b.goal-fixed-min(c.b.block, view.BlockTokens(sums)+c.b.perSummary))
	cut := len(heads) - 1
	for cut > 0 && heads[cut].Role == session.RoleTool {
		cut--
	}
	suffix := 0
	for i := len(heads) - 1; i >= 2; i-- {
		if suffix += s.headCost(heads[i]); suffix > tailBudget {
			break
		}
		if heads[i].Role != session.RoleTool {
			cut = i
		}
	}
	if cut < 2 {
		return nil, ErrNothingToSummarize
	}
	c.cut = cut
	total := 0
	for i, h := range heads {
		total += s.headCost(h)
		if i < cut {
			c.rangeTokens += h.Tokens
		}
	}
	from, to := heads[0].Seq, heads[cut-1].Seq
	hidden, err := s.store.Rewound(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	tail, err := s.store.Messages(ctx, id, heads[cut].Seq, 0)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	tail = slices.DeleteFunc(tail, func(m session.Message) bool { return hidden(m.Seq) })
	c.tail = tail
	c.view = session.View{Session: sess, Summaries: sums, Messages: tail}
	c.before = s.view.Tokens(session.View{Session: sess, Summaries: sums}) + total
	c.eff = st.effective(c.before)

	// The facts are extracted as the narrative reads the range (one
	// pass; write completes them: withLongFacts).
	c.facts = session.Summary{SessionID: id, FromSeq: from, ToSeq: to, Focus: focus}
	c.words = s.words(c.rangeTokens, c.b, s.summaryWindow())
	c.src, c.stop = s.logFeed(ctx, id, from, to, c.rangeTokens, true, hidden)
	return c, nil
}

// CatchUp compacts a session whose unsummarized log is far larger than the
// window (see longWindows) before a turn loads its view, and waits as a
// turn waits at the hard threshold; otherwise it reads a row or two and
// returns. The agent calls it before it loads the view.
func (s *Summarizer) CatchUp(ctx context.Context, sessionID string) error {
	if !s.cfg.Enabled || s.isClosed() {
		return nil
	}
	// Two rows (the session, the summaries' end): a turn pays no more
	// unless the log is long.
	sess, err := s.store.Session(ctx, sessionID)
	if err != nil {
		return err
	}
	through, err := s.store.SummarizedThrough(ctx, sess.ID)
	if err != nil {
		return err
	}
	heads, err := s.longRange(ctx, sess, through)
	if err != nil || heads == nil {
		return err
	}
	st := s.state(sess.ID)
	if err := waitJob(ctx, st, s.cfg.WaitLimit); err != nil {
		return err
	}
	reason := "the unsummarized log is far larger than the context window"
	s.notify(Report{SessionID: sess.ID, Phase: Started, Reason: reason})
	rep, err := s.compact(ctx, st, sess.ID, modeHard, "", reason)
	s.logReport(rep)
	s.notify(rep)
	if err != nil {
		return err
	}
	st.changed()
	s.upgradeLater(st, sess.ID, rep)
	return nil
}
