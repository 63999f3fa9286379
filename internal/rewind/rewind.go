// Package rewind takes a session back to before one of its user turns:
// the files (from the checkpoints kept around every change-capable tool
// call), the conversation (the view; the log keeps every message), or
// both; it also takes a compaction back, and undoes a rewind. It joins the
// session store's log and rewinds with the project's checkpoint store; the
// front ends (the rewind subcommand, /rewind) only present its results.
package rewind

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"path/filepath"
	"slices"

	"github.com/gencode/gencode/internal/checkpoint"
	"github.com/gencode/gencode/internal/session"
)

// Sentinel errors; check them with errors.Is.
var (
	// ErrConflict: files changed outside gencode since it last left them
	// would be overwritten, and no choice was made for them; nothing was
	// changed (see Result.Conflicts).
	ErrConflict = errors.New("files changed outside gencode since; not overwritten without --force (or --keep/--overwrite for each)")
	// ErrNotKept: calls since the turn changed files without a
	// checkpoint; the files cannot be put back (Result.Unkept says which).
	ErrNotKept = errors.New("files changed since that turn without a checkpoint: they cannot be restored")
	// ErrNoTurn: the session has no such turn.
	ErrNoTurn = errors.New("no such turn")
)

// Rewinder rewinds one session of one project.
type Rewinder struct {
	Store     *session.Store
	Files     *checkpoint.Store // nil: no checkpoints (conversation only)
	SessionID string
}

// Mode says what a rewind restores.
type Mode struct{ Code, Conversation bool }

// Both is the default mode.
var Both = Mode{Code: true, Conversation: true}

// String names the mode as the CLI spells it.
func (m Mode) String() string {
	switch {
	case m.Code && m.Conversation:
		return "both"
	case m.Code:
		return "code"
	default:
		return "conversation"
	}
}

// Words is what m rewinds, for a sentence: "code and conversation",
// "code", "conversation".
func (m Mode) Words() string {
	if m.Code && m.Conversation {
		return "code and conversation"
	}
	return m.String()
}

// Turn is one user turn as a listing shows it.
type Turn struct {
	session.Turn
	// Created, Modified, Deleted count the files the turn changed, by any
	// tool (net over the turn).
	Created, Modified, Deleted int
}

// Listing is what a session offers to rewind.
type Listing struct {
	Turns     []Turn            // newest first
	Summaries []session.Summary // active and rewound ones, newest first
	Rewinds   []session.Rewind  // newest first
}

// List lists the session's turns, summaries and rewinds.
func (r Rewinder) List(ctx context.Context) (Listing, error) {
	turns, err := r.Store.Turns(ctx, r.SessionID)
	if err != nil {
		return Listing{}, err
	}
	var l Listing
	for _, t := range slices.Backward(turns) {
		lt := Turn{Turn: t}
		if r.Files != nil && len(t.Checkpoints) > 0 {
			first, last := t.Checkpoints[0].Before, t.Checkpoints[len(t.Checkpoints)-1].After
			if first != "" && last != "" {
				a, errA := r.Files.Load(ctx, first)
				b, errB := r.Files.Load(ctx, last)
				if errA == nil && errB == nil {
					cs, _ := r.Files.Diff(ctx, a, b)
					for _, c := range cs {
						switch c.Op {
						case "create":
							lt.Created++
						case "delete":
							lt.Deleted++
						default:
							lt.Modified++
						}
					}
				}
			}
		}
		l.Turns = append(l.Turns, lt)
	}
	sums, err := r.Store.Summaries(ctx, r.SessionID, true)
	if err != nil {
		return Listing{}, err
	}
	for _, s := range slices.Backward(sums) {
		if s.SupersededBy == "" || len(s.SupersededBy) > 7 && s.SupersededBy[:7] == "rewind:" {
			l.Summaries = append(l.Summaries, s)
		}
	}
	rws, err := r.Store.Rewinds(ctx, r.SessionID)
	if err != nil {
		return Listing{}, err
	}
	l.Rewinds = slices.Collect(func(yield func(session.Rewind) bool) {
		for _, x := range slices.Backward(rws) {
			if !yield(x) {
				return
			}
		}
	})
	return l, nil
}

// Conflict is a file changed outside gencode that a rewind would overwrite.
type Conflict struct {
	Path string
	Diff string // what changed outside gencode (unified diff)
	// Decided: the Choices say what to do with it (keep or overwrite);
	// the rewind stopped for the others.
	Decided bool
	// Deletes: the checkpoint has no such file, so overwriting it with
	// the checkpoint's version deletes it.
	Deletes bool
}

// Choices say what a code rewind does with the files it would change that
// were changed outside gencode since (its conflicts). A conflict with no
// choice stops the rewind before anything changes (ErrConflict).
type Choices struct {
	// Force overwrites every conflicting file not in Keep.
	Force bool
	// Keep are files left as they are (conflicting or not); Overwrite
	// are conflicting files put back as the checkpoint has them.
	Keep, Overwrite []string
}

// relativeTo is c with each path as the checkpoints name it: relative to
// the project root, cleaned, with slashes (./a.txt and /root/a.txt are
// a.txt).
func (c Choices) relativeTo(root string) Choices {
	rel := func(ps []string) []string {
		out := make([]string, 0, len(ps))
		for _, p := range ps {
			if filepath.IsAbs(p) {
				if r, err := filepath.Rel(root, p); err == nil {
					p = r
				}
			}
			out = append(out, filepath.ToSlash(filepath.Clean(p)))
		}
		return out
	}
	c.Keep, c.Overwrite = rel(c.Keep), rel(c.Overwrite)
	return c
}

// Force is the choice to overwrite every conflicting file.
var Force = Choices{Force: true}

func (c Choices) keeps(p string) bool      { return slices.Contains(c.Keep, p) }
func (c Choices) overwrites(p string) bool { return c.Force || slices.Contains(c.Overwrite, p) }

// Result is what a rewind did, or would have done.
type Result struct {
	Rewind    session.Rewind
	Changes   []checkpoint.Change
	Conflicts []Conflict
	// Kept are the files the rewind would have changed and left as they
	// are, as chosen (Choices.Keep).
	Kept []string
	// Unrestorable are files the rewind leaves as they are: too large to
	// keep, or their checkpoint pruned.
	Unrestorable []string
	// Unkept are the calls since the turn that changed files without a
	// checkpoint, and why (the code part refuses: ErrNotKept).
	Unkept []string
	// Note says why the code part did nothing, if it did not.
	Note string
}

// ToTurn takes the session back to before turn n.
func (r Rewinder) ToTurn(ctx context.Context, n int, mode Mode, ch Choices) (Result, error) {
	turns, err := r.Store.Turns(ctx, r.SessionID)
	if err != nil {
		return Result{}, err
	}
	if n < 1 || n > len(turns) {
		return Result{}, fmt.Errorf("rewind to turn %d: the session has %d: %w", n, len(turns), ErrNoTurn)
	}
	t := turns[n-1]
	rec := session.Rewind{SessionID: r.SessionID, Kind: session.RewindTurn, Turn: n, Text: t.Text}
	var res Result
	if mode.Code {
		for _, later := range turns[n-1:] {
			for _, u := range later.Unkept {
				res.Unkept = append(res.Unkept, fmt.Sprintf("turn %d, %s", later.N, u))
			}
		}
		if len(res.Unkept) > 0 {
			return res, fmt.Errorf("rewind to turn %d: %w", n, ErrNotKept)
		}
		target := ""
		for _, later := range turns[n-1:] {
			for _, cp := range later.Checkpoints {
				if cp.Before != "" && target == "" {
					target = cp.Before
				}
			}
		}
		if target == "" {
			res.Note = "no file was changed by gencode since that turn: the files are left as they are"
		} else {
			done, err := r.restore(ctx, target, turns, ch, &res)
			if err != nil {
				return res, err
			}
			rec.Code, rec.CodeBefore, rec.CodeTarget, rec.CodeAfter, rec.Changes = true, done.before, target, done.after, done.lines
		}
	}
	if mode.Conversation {
		rec.FromSeq = t.Seq
	}
	if !rec.Code && rec.FromSeq == 0 {
		res.Rewind = rec
		return res, nil
	}
	if res.Rewind, err = r.Store.RecordRewind(ctx, rec); err != nil {
		return res, err
	}
	return res, nil
}

type restored struct {
	before, after string
	lines         []string
}

// gencodes says, for each path, which checkpoint holds the path as gencode
// left it: base for every path but those in over. A path is gencode's when
// it is as its checkpoint here holds it; any difference was made outside
// gencode (a conflict, if a rewind would overwrite it).
type gencodes struct {
	base string
	over map[string]string // never written once shared (known's copy on write)
}

func (g gencodes) of(path string) string {
	if id, ok := g.over[path]; ok {
		return id
	}
	return g.base
}

// known is gencode's state of the files now, from the session's history in
// order. The files as gencode found them (the first call's checkpoint
// before) are the start. A call makes gencode's only the paths it changed
// (those that differ between its checkpoints before and after), each as
// its after holds it; every other path keeps whose it was, so a change
// made by hand before a call (which that call's checkpoints hold too) stays
// the user's. A code rewind or undo gives each path it wrote the state of
// gencode's that held when its source was taken: for a rewind, when the
// checkpoint before the turn's first call was kept; for an undo, just
// before the rewind it takes back. A restore does not make content
// gencode's: a hand edit it puts back is the user's again. A file a rewind
// left alone (one the user kept, or not among its changes) keeps its state.
//
// Its cost: a read of what each call changed, recorded beside its
// checkpoints when the call ended (Checkpoint.Changed); one DiffPairs for
// the calls that have no record (made by an older build, or whose
// comparison failed: two git processes, each pair costing what the call
// changed); and a map of the paths the calls and rewinds wrote.
func (r Rewinder) known(ctx context.Context, turns []session.Turn) (gencodes, error) {
	rws, err := r.Store.Rewinds(ctx, r.SessionID)
	if err != nil {
		return gencodes{}, err
	}
	type call struct {
		turn int
		seq  int64
		cp   session.Checkpoint
	}
	var calls []call
	var wrote [][]string // the paths each call changed
	var pairs []checkpoint.Pair
	var unrecorded []int // the calls of pairs
	var recorded []string
	for _, t := range turns {
		for _, cp := range t.Checkpoints {
			if cp.ChangedKnown {
				if len(cp.Changed) > 0 {
					recorded = append(recorded, cp.Before, cp.After)
				}
			} else {
				pairs = append(pairs, checkpoint.Pair{From: cp.Before, To: cp.After})
				unrecorded = append(unrecorded, len(calls))
			}
			calls = append(calls, call{turn: t.N, seq: cp.Seq, cp: cp})
			wrote = append(wrote, cp.Changed)
		}
	}
	// What each call changed. One whose checkpoints are gone (pruned)
	// makes nothing gencode's, recorded or not (as DiffPairs has it): the
	// paths keep their state, so a later rewind asks rather than
	// overwrites.
	if len(recorded) > 0 {
		kept, err := r.Files.Kept(ctx, recorded)
		if err != nil {
			return gencodes{}, fmt.Errorf("rewind: the checkpoints kept: %w", err)
		}
		for i, c := range calls {
			if c.cp.ChangedKnown && !(kept[c.cp.Before] && kept[c.cp.After]) {
				wrote[i] = nil
			}
		}
	}
	if len(pairs) > 0 {
		ds, err := r.Files.DiffPairs(ctx, pairs)
		if err != nil {
			return gencodes{}, fmt.Errorf("rewind: what each call changed: %w", err)
		}
		for j, i := range unrecorded {
			wrote[i] = nil
			if ds[j].Err == nil {
				for _, ch := range ds[j].Changes {
					wrote[i] = append(wrote[i], ch.Path)
				}
			}
		}
	}
	targets := map[string]bool{} // the checkpoints code rewinds restored
	for _, x := range rws {
		if x.Code && x.Kind == session.RewindTurn {
			targets[x.CodeTarget] = true
		}
	}
	var g gencodes
	owned := false // g.over is g's alone: written in place, not copied
	set := func(path, id string) {
		if !owned {
			over := make(map[string]string, len(g.over)+1)
			maps.Copy(over, g.over)
			g.over, owned = over, true
		}
		g.over[path] = id
	}
	save := func() gencodes { owned = false; return g }
	atCall := make([]gencodes, len(calls))          // gencode's state just before each call a rewind restored
	atRewind := make(map[string]gencodes, len(rws)) // and just before each rewind
	next := 0
	upTo := func(seq int64) {
		for ; next < len(calls) && calls[next].seq <= seq; next++ {
			c := calls[next]
			if g.base == "" {
				g.base = c.cp.Before
			}
			if targets[c.cp.Before] {
				atCall[next] = save()
			}
			for _, p := range wrote[next] {
				set(p, c.cp.After)
			}
		}
	}
	for _, x := range rws {
		upTo(x.LogSeq) // a rewind follows the messages up to its LogSeq
		atRewind[x.ID] = save()
		if !x.Code {
			continue
		}
		src, found := gencodes{}, false
		switch x.Kind {
		case session.RewindUndo:
			src, found = atRewind[x.Undoes]
		case session.RewindTurn:
			// The target is the first checkpoint before a call in turns
			// from x.Turn on (ToTurn).
			for i, c := range calls[:next] {
				if c.turn >= x.Turn && c.cp.Before == x.CodeTarget {
					src, found = atCall[i], true
					break
				}
			}
		}
		if !found {
			// Where the content came from is not known: the paths keep
			// their state, so a later rewind asks rather than overwrites.
			continue
		}
		for _, line := range x.Changes {
			if len(line) > 2 {
				p := line[2:] // changeLines: "~ path", "+ path", "- path"
				set(p, src.of(p))
			}
		}
	}
	upTo(1 << 62)
	return save(), nil
}

// restore puts the files back as checkpoint target keeps them, after a
// check for files changed outside gencode; the files ch keeps are left
// alone.
func (r Rewinder) restore(ctx context.Context, target string, turns []session.Turn, ch Choices, res *Result) (restored, error) {
	if r.Files == nil {
		return restored{}, errors.New("rewind: no checkpoint store")
	}
	to, err := r.Files.Load(ctx, target)
	if err != nil {
		return restored{}, fmt.Errorf("rewind: the files before that turn: %w", err)
	}
	cur, err := r.Files.Take(ctx)
	if err != nil {
		return restored{}, err
	}
	res.Unrestorable = append(res.Unrestorable, to.Skipped...)
	res.Unrestorable = append(res.Unrestorable, cur.Skipped...)
	cs, err := r.Files.Diff(ctx, cur, to)
	if err != nil {
		return restored{}, err
	}
	ch = ch.relativeTo(r.Files.WorkDir())
	changes := map[string]bool{}
	for _, c := range cs {
		changes[c.Path] = true
	}
	for _, p := range slices.Concat(ch.Keep, ch.Overwrite) {
		if !changes[p] {
			return restored{}, fmt.Errorf("rewind: %s is not among the files this rewind changes", p)
		}
	}
	known, err := r.known(ctx, turns)
	if err != nil {
		return restored{}, err
	}
	// A path this rewind changes that differs from its checkpoint in
	// known was changed outside gencode since. A path whose checkpoint is
	// gone (pruned) has nothing to compare with: it passes.
	at := make(map[string]string, len(cs))
	for _, c := range cs {
		if id := known.of(c.Path); id != "" {
			at[c.Path] = id
		}
	}
	differ, _, err := r.Files.Differ(ctx, cur, at)
	if err != nil {
		return restored{}, err
	}
	outside := make(map[string]bool, len(differ))
	for _, p := range differ {
		outside[p] = true
	}
	loaded := map[string]checkpoint.Snapshot{}
	for _, c := range cs { // in the order of the rewind's changes
		p := c.Path
		if !outside[p] {
			continue
		}
		id := at[p]
		snap, ok := loaded[id]
		if !ok {
			if snap, err = r.Files.Load(ctx, id); err != nil {
				return restored{}, err
			}
			loaded[id] = snap
		}
		res.Conflicts = append(res.Conflicts, Conflict{Path: p, Diff: r.Files.FileDiff(ctx, snap, cur, p),
			Decided: ch.keeps(p) || ch.overwrites(p), Deletes: c.Op == "delete"})
	}
	for _, c := range res.Conflicts {
		if !c.Decided {
			res.Changes = cs
			return restored{}, ErrConflict
		}
	}
	var only map[string]bool // nil: every path
	if len(ch.Keep) > 0 {
		only = map[string]bool{}
		for _, c := range cs {
			if ch.keeps(c.Path) {
				res.Kept = append(res.Kept, c.Path)
			} else {
				only[c.Path] = true
			}
		}
	}
	done, err := r.Files.Restore(ctx, cur, to, only)
	res.Changes = done
	if err != nil {
		return restored{}, err
	}
	after, err := r.Files.Take(ctx)
	if err != nil {
		return restored{}, err
	}
	return restored{before: cur.ID, after: after.ID, lines: changeLines(done)}, nil
}

func changeLines(cs []checkpoint.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		mark := "~ "
		switch c.Op {
		case "create":
			mark = "+ "
		case "delete":
			mark = "- "
		}
		out[i] = mark + c.Path
	}
	return out
}

// UndoSummary takes a compaction back: the summary leaves the view and the
// messages it replaced are back in it.
func (r Rewinder) UndoSummary(ctx context.Context, summaryID string) (Result, error) {
	sums, err := r.Store.Summaries(ctx, r.SessionID, false)
	if err != nil {
		return Result{}, err
	}
	id := ""
	for _, s := range sums {
		if s.ID == summaryID || len(summaryID) >= 4 && len(s.ID) >= len(summaryID) && s.ID[:len(summaryID)] == summaryID {
			if id != "" {
				return Result{}, fmt.Errorf("summary %s: %w", summaryID, session.ErrAmbiguous)
			}
			id = s.ID
		}
	}
	if id == "" {
		return Result{}, fmt.Errorf("summary %s: not an active summary of the session: %w", summaryID, session.ErrNotFound)
	}
	rec, err := r.Store.RecordRewind(ctx, session.Rewind{SessionID: r.SessionID, Kind: session.RewindSummary, SummaryID: id})
	return Result{Rewind: rec}, err
}

// Undo takes back rewind id (the latest active one when id is ""): the
// files it restored go back to the state just before it (conflicts as ch
// says), the messages it hid and the summaries it took out come back. The
// undo is recorded.
func (r Rewinder) Undo(ctx context.Context, id string, ch Choices) (Result, error) {
	rws, err := r.Store.Rewinds(ctx, r.SessionID)
	if err != nil {
		return Result{}, err
	}
	var x *session.Rewind
	for i := len(rws) - 1; i >= 0; i-- {
		c := rws[i]
		if c.Kind == session.RewindUndo {
			continue
		}
		if id == "" && c.Active() || id != "" && (c.ID == id || len(id) >= 4 && len(c.ID) > len(id) && c.ID[:len(id)] == id) {
			x = &rws[i]
			break
		}
	}
	if x == nil {
		return Result{}, fmt.Errorf("undo rewind %s: %w", orLatest(id), session.ErrNotFound)
	}
	if !x.Active() {
		return Result{}, fmt.Errorf("undo rewind %s: %w", x.ID, session.ErrUndone)
	}
	rec := session.Rewind{SessionID: r.SessionID, Kind: session.RewindUndo, Undoes: x.ID}
	var res Result
	if x.Code {
		turns, err := r.Store.Turns(ctx, r.SessionID)
		if err != nil {
			return Result{}, err
		}
		done, err := r.restore(ctx, x.CodeBefore, turns, ch, &res)
		if err != nil {
			return res, err
		}
		rec.Code, rec.CodeBefore, rec.CodeTarget, rec.CodeAfter, rec.Changes = true, done.before, x.CodeBefore, done.after, done.lines
	}
	if _, _, err := r.Store.UndoRewind(ctx, r.SessionID, x.ID); err != nil {
		return res, err
	}
	res.Rewind, err = r.Store.RecordRewind(ctx, rec)
	return res, err
}

func orLatest(id string) string {
	if id == "" {
		return "(latest)"
	}
	return id
}

// FactsLog is the session's log as the facts read it (summarize --json,
// history --json): without the messages a conversation rewind took out of
// the view, and with what a rewind that restored the files alone did to
// them, as an observed tool call ("Rewind") where it happened. A file a
// turn created and a rewind removed is then in no list.
func FactsLog(ctx context.Context, st *session.Store, sessionID string) iter.Seq2[session.Message, error] {
	return func(yield func(session.Message, error) bool) {
		f, err := NewFactsFilter(ctx, st, sessionID)
		if err != nil {
			yield(session.Message{}, err)
			return
		}
		out := func(m session.Message) bool { return yield(m, nil) }
		for m, err := range st.Each(ctx, sessionID, 1, 0) {
			if err != nil {
				yield(m, err)
				return
			}
			if !f.Feed(m, out) {
				return
			}
		}
		f.End(out)
	}
}

// FactsFilter is FactsLog's rule for a log read elsewhere (history --json
// reads it once, for its messages and its facts): Feed each message of the
// log in order, then End; out receives the log as the facts read it.
type FactsFilter struct {
	rws     []session.Rewind
	pending []session.Rewind // code rewinds not given out yet
}

// NewFactsFilter reads the session's rewinds.
func NewFactsFilter(ctx context.Context, st *session.Store, sessionID string) (*FactsFilter, error) {
	rws, err := st.Rewinds(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	f := &FactsFilter{rws: rws}
	byID := map[string]session.Rewind{}
	for _, r := range rws {
		byID[r.ID] = r
	}
	for _, r := range rws {
		codeOnly := r.Kind == session.RewindTurn && r.FromSeq == 0
		if r.Kind == session.RewindUndo {
			u := byID[r.Undoes]
			codeOnly = u.Kind == session.RewindTurn && u.FromSeq == 0
		}
		if r.Code && codeOnly && len(r.Changes) > 0 {
			f.pending = append(f.pending, r)
		}
	}
	return f, nil
}

func (f *FactsFilter) hides(seq int64) bool {
	for _, r := range f.rws {
		if r.Hides(seq) {
			return true
		}
	}
	return false
}

func (f *FactsFilter) flush(upTo int64, out func(session.Message) bool) bool {
	for len(f.pending) > 0 && f.pending[0].LogSeq < upTo {
		if f.hides(f.pending[0].LogSeq) {
			// Made within turns a conversation rewind took out since:
			// they and it are gone together.
			f.pending = f.pending[1:]
			continue
		}
		for _, m := range rewindMessages(f.pending[0]) {
			if !out(m) {
				return false
			}
		}
		f.pending = f.pending[1:]
	}
	return true
}

// Feed gives out what the facts read at m: the code rewinds made before
// it, then m unless a conversation rewind took it out. It returns false
// when out did.
func (f *FactsFilter) Feed(m session.Message, out func(session.Message) bool) bool {
	if !f.flush(m.Seq, out) {
		return false
	}
	if f.hides(m.Seq) {
		return true
	}
	return out(m)
}

// End gives out the code rewinds made after the last message.
func (f *FactsFilter) End(out func(session.Message) bool) { f.flush(1<<62, out) }

// rewindMessages are a code rewind as an observed tool call.
func rewindMessages(r session.Rewind) []session.Message {
	ch := &session.FileChanges{Observed: true}
	for _, l := range r.Changes {
		if len(l) < 3 {
			continue
		}
		switch p := l[2:]; l[0] {
		case '+':
			ch.Created = append(ch.Created, p)
		case '-':
			ch.Deleted = append(ch.Deleted, p)
		default:
			ch.Modified = append(ch.Modified, p)
		}
	}
	id := "rewind-" + r.ID
	return []session.Message{
		{Seq: r.LogSeq, Role: session.RoleAssistant, ToolCalls: []session.ToolCall{{ID: id, Name: "Rewind", Arguments: "{}"}}, Time: r.At},
		{Seq: r.LogSeq, Role: session.RoleTool, ToolCallID: id, Name: "Rewind", Content: "files restored", Time: r.At,
			Meta: session.Meta{Tool: "Rewind", Changes: ch}},
	}
}
