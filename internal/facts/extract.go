package facts

import (
	"encoding/json"
	"fmt"
	"iter"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/shellfx"
	"github.com/gencode/gencode/internal/tools"
)

// Limits of the deterministic extraction. They bound single entries, the
// user-request lines and the commands, never how many files are kept:
// every file stays in the record (a project has so many), while requests
// and commands grow with the session.
const (
	// maxUserRequests is how many user-request lines a summary keeps, the
	// most recent: they are shown only without a narrative, and each
	// request is whole in the log. Without it the list grew with the
	// session and was decoded on every turn.
	maxUserRequests = 200
	// maxCommands is how many distinct commands a summary keeps: those
	// first run most recently. A 600-turn session kept 600, decoded on
	// every turn, though the block shows only the latest that fit its
	// share; CommandRuns still counts every run, and each is whole in the
	// log.
	maxCommands = 200
	// maxKeptPending is how many kept sentences the extraction holds
	// before it bounds them (CapKept keeps at most MaxKeptChars/10).
	maxKeptPending     = 4096
	maxRequestChars    = 6000 // the last user request, verbatim up to this
	maxLineChars       = 200  // one user request line, one constraint
	maxCommandChars    = 2000 // one command
	maxSystemChars     = 4000 // one preserved system message
	maxNotableUses     = 3
	maxKeywordDecision = 5
)

// Extract fills a summary's deterministic fields from a range of the log:
// files modified and read, commands, tool usage, the user's requests and
// constraints, and (as a fallback for the narrative) decisions found by
// keywords. It understands gencode's tools and the usual names other agents
// give theirs (imported sessions): str_replace_editor, apply_patch,
// MultiEdit, create_file, run_terminal_cmd, shell ...
func Extract(msgs []session.Message, preserveSystem bool) session.Summary {
	e := newExtractor(preserveSystem)
	for _, m := range msgs {
		e.add(m)
	}
	return e.finish()
}

// extractor folds messages into a summary's deterministic fields as they
// come, in log order. It holds only an assistant message with tool calls
// until the results that follow it are in, so a range of any length is
// read in bounded memory.
type extractor struct {
	sum            session.Summary
	preserveSystem bool
	ft             *fileTracker
	cmds           *orderedSet
	notRun         *orderedSet // commands of calls that never ran
	constraints    *orderedSet
	// constraintsLeftOut counts the kept sentences CapKept left out as
	// the range was read.
	constraintsLeftOut int
	usage              map[string]*toolStats
	order              []string
	// answered holds every call id seen; a result whose call never comes
	// is read on its own at the end (orphans, in order).
	answered map[string]bool
	orphans  []session.Message
	// pending is an assistant message with tool calls; held are the tool
	// messages after it, results by call id.
	pending *session.Message
	held    []session.Message
	results map[string]session.Message
	// early are results that came before their call (a broken log).
	early     map[string]session.Message
	decisions []string
	decided   map[string]bool
	// root is an imported session's root (its first message says it): the
	// files are listed relative to it, each under one spelling.
	root string
}

func newExtractor(preserveSystem bool) *extractor {
	return &extractor{preserveSystem: preserveSystem, ft: newFileTracker(), cmds: newOrderedSet(), notRun: newOrderedSet(), constraints: newOrderedSet(),
		usage: map[string]*toolStats{}, answered: map[string]bool{}, results: map[string]session.Message{},
		early: map[string]session.Message{}, decided: map[string]bool{}}
}

func (e *extractor) use(name string) *toolStats {
	u := e.usage[name]
	if u == nil {
		u = &toolStats{}
		e.usage[name] = u
		e.order = append(e.order, name)
	}
	return u
}

// add folds in the next message of the log.
func (e *extractor) add(m session.Message) {
	if m.Role == session.RoleTool && e.pending != nil {
		if m.ToolCallID != "" {
			e.results[m.ToolCallID] = m
		}
		e.held = append(e.held, m)
		return
	}
	e.flush()
	if im := m.Meta.Imported; im != nil {
		e.root, e.ft.root = im.Root, im.Root
	}
	switch m.Role {
	case session.RoleUser:
		text := strings.TrimSpace(m.Text())
		if text == "" {
			return
		}
		if m.Meta.Shell {
			// The output of a "!command" the user ran: read, not asked.
			e.ft.result(m)
			return
		}
		if q := m.Meta.Quoted; q != "" {
			// An imported system or developer message, or a result that
			// answered no call, kept as quoted context: not a request.
			if q != string(session.RoleTool) && e.preserveSystem {
				e.sum.SystemNotes = append(e.sum.SystemNotes, Clip(text, maxSystemChars))
			}
			e.ft.result(m)
			return
		}
		e.sum.LastUserRequest = Clip(text, maxRequestChars)
		e.sum.UserRequests = append(e.sum.UserRequests, firstLine(text, maxLineChars))
		if len(e.sum.UserRequests) >= 2*maxUserRequests {
			e.sum.UserRequests = recent(e.sum.UserRequests, maxUserRequests)
		}
		e.constraints.add(constraints(text)...)
		if len(e.constraints.items) >= maxKeptPending {
			// Bounded as it grows: what CapKept leaves out of a part of
			// the range, it would leave out of the whole (the rest is
			// newer), and the set still knows every sentence it saw.
			var left int
			e.constraints.items, left = CapKept(e.constraints.items)
			e.constraintsLeftOut += left
		}
		e.ft.result(m) // SWE-agent's task names the shell's directory
	case session.RoleSystem:
		if e.preserveSystem && strings.TrimSpace(m.Content) != "" {
			e.sum.SystemNotes = append(e.sum.SystemNotes, Clip(strings.TrimSpace(m.Content), maxSystemChars))
		}
	case session.RoleAssistant:
		e.decide(m)
		if len(m.ToolCalls) > 0 {
			e.pending = &m
		}
	case session.RoleTool:
		e.ft.result(m)
		e.orphan(m)
	}
}

// orphan keeps a result that answers no call seen so far.
func (e *extractor) orphan(m session.Message) {
	e.orphans = append(e.orphans, m)
	if m.ToolCallID != "" {
		e.early[m.ToolCallID] = m
	}
}

// flush folds in the pending assistant message's calls with their
// results, then the results themselves.
func (e *extractor) flush() {
	m := e.pending
	if m == nil {
		return
	}
	e.pending = nil
	calls := map[string]bool{}
	for _, c := range m.ToolCalls {
		calls[c.ID] = true
		res, ok := e.results[c.ID]
		if !ok {
			res, ok = e.early[c.ID]
		}
		e.answered[c.ID] = true
		d := tools.Describe(tools.Call{Name: c.Name, Arguments: c.Arguments})
		kind, paths, cmd := d.Kind, d.Paths, d.Command
		if ok && res.Meta.FilePath != "" && (len(paths) == 0 || kind == tools.CallModify || kind == tools.CallRead) {
			// gencode's own tools record the path relative to the
			// working directory: the form the shell's changes use.
			paths = []string{res.Meta.FilePath}
		}
		if ok && res.Meta.Command != "" && cmd == "" && kind == tools.CallCommand {
			cmd = res.Meta.Command
		}
		failed := ok && (res.Meta.Failed || res.Meta.Denied || res.Meta.ExitCode != nil && *res.Meta.ExitCode != 0)
		denied := ok && (res.Meta.Denied || res.Meta.NotRun)
		if ok && res.Meta.Root != "" && e.root == "" {
			e.root, e.ft.root = res.Meta.Root, res.Meta.Root
		}
		if ok && res.Meta.Dir != "" {
			// An imported call: the directory it ran in resolves its
			// relative paths, so each file has one spelling.
			e.ft.dir = res.Meta.Dir
			paths = slices.Clone(paths)
			for i, p := range paths {
				paths[i] = e.ft.resolve(p)
			}
		}
		if !(ok && res.Meta.NotRun) {
			e.ft.call(d, paths, cmd, res, ok)
		} else if kind == tools.CallCommand && cmd != "" {
			e.notRun.add(Clip(cmd, maxCommandChars))
		}
		if kind == tools.CallCommand && cmd != "" && !denied && !(ok && res.Meta.Dir != "" && shellfx.AgentCommand(cmd)) {
			e.cmds.add(Clip(cmd, maxCommandChars))
			e.sum.CommandRuns++
		}
		e.use(d.Name).add(describeUse(paths, cmd, res, ok), failed) // a CallMcpTool call counts as the tool it called
	}
	for _, h := range e.held {
		e.ft.result(h)
		if !calls[h.ToolCallID] {
			e.orphan(h)
		}
	}
	e.held = e.held[:0]
	clear(e.results)
}

// finish returns the summary's fields.
func (e *extractor) finish() session.Summary {
	e.flush()
	// Results whose call is outside the range or was never logged (an
	// imported session) still say what their tool did.
	for _, m := range e.orphans {
		if e.answered[m.ToolCallID] {
			continue
		}
		name := m.Name
		if name == "" || name == tools.ToolCallMcp && m.Meta.Tool != "" {
			name = m.Meta.Tool
		}
		if name == "" {
			continue
		}
		args, _ := json.Marshal(map[string]string{"file_path": m.Meta.FilePath, "command": m.Meta.Command})
		d := tools.Describe(tools.Call{Name: name, Arguments: string(args)})
		kind, paths, cmd := d.Kind, d.Paths, d.Command
		if m.Meta.NotRun {
			if kind == tools.CallCommand && cmd != "" {
				e.notRun.add(Clip(cmd, maxCommandChars))
			}
			continue
		}
		e.ft.call(d, paths, cmd, m, true)
		if kind == tools.CallCommand && cmd != "" && !m.Meta.Denied {
			e.cmds.add(Clip(cmd, maxCommandChars))
			e.sum.CommandRuns++
		}
		e.use(name).add(describeUse(paths, cmd, m, true), m.Meta.Failed)
	}
	sum := e.sum
	sum.UserRequests = recent(sum.UserRequests, maxUserRequests)
	var left int
	sum.UserConstraints, left = CapKept(e.constraints.items)
	sum.UserConstraintsLeftOut = e.constraintsLeftOut + left
	ft := e.ft
	sum.FilesModified = ft.ledger.Modified()
	sum.FilesCreated = ft.ledger.Created()
	sum.FilesDeleted = ft.ledger.Deleted()
	sum.FilesReverted = ft.ledger.Reverted()
	sum.FilesRead = ft.ledger.Read()
	if e.root != "" {
		sum.FilesModified, sum.FilesCreated = underRoot(sum.FilesModified, e.root), underRoot(sum.FilesCreated, e.root)
		sum.FilesDeleted, sum.FilesReverted = underRoot(sum.FilesDeleted, e.root), underRoot(sum.FilesReverted, e.root)
		sum.FilesRead = underRoot(sum.FilesRead, e.root)
	}
	sum.Commands = recent(e.cmds.items, maxCommands)
	sum.CommandsNotRun = recent(e.notRun.items, maxCommands)
	for _, name := range e.order {
		u := e.usage[name]
		sum.ToolsUsed = append(sum.ToolsUsed, session.ToolUsage{Tool: name, Count: u.count, NotableUses: u.notable()})
	}
	sum.KeyDecisions = e.decisions
	if len(sum.KeyDecisions) > maxKeywordDecision {
		sum.KeyDecisions = sum.KeyDecisions[len(sum.KeyDecisions)-maxKeywordDecision:]
	}
	return sum
}

// decide keeps the sentences of an assistant message that read like a
// decision (the narrative's fallback), each once.
func (e *extractor) decide(m session.Message) {
	// A sentence matches only where the message holds one of the words:
	// most messages hold none and skip the split and the pattern, whose
	// (?i) runs a backtracker at every byte (~40% of the CPU of reading a
	// long log for its facts).
	if !hasAny(foldLower(m.Content), decisionWords) {
		return
	}
	for _, s := range sentences(m.Content) {
		if decisionRe().MatchString(s) {
			if d := Clip(s, maxLineChars); d != "" && !e.decided[d] {
				e.decided[d] = true
				e.decisions = append(e.decisions, d)
			}
		}
	}
}

// fileTracker follows what the calls of a range did to files, in order,
// and folds it into the net effect: gencode's observed shell changes as
// they are; other shell commands parsed (shellfx), scripts the session
// wrote scanned when they run; edit tools of every agent; diffs shown in
// any result.
type fileTracker struct {
	ledger *shellfx.Ledger
	// contents holds what the log shows of files (written, created, shown):
	// a script run later is scanned for the files it writes.
	contents map[string]string
	// dir is the agent's shell directory when its results say it
	// ("(Current directory: /repo)", SWE-agent); "" when unknown.
	dir string
	// open is the file the agent's editor has open (SWE-agent's open,
	// create, edit), for the edits that name no file.
	open string
	// root is an imported session's root: a diff's paths (git diff, a
	// submission) are relative to it, not to the shell's directory.
	root string
}

func newFileTracker() *fileTracker {
	return &fileTracker{ledger: shellfx.NewLedger(), contents: map[string]string{}}
}

var (
	// currentDirRe and openFileRe read SWE-agent's prompt lines.
	currentDirRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\(Current directory: ([^)\n]+)\)`) })
	openFileRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[File: ([^\]\n]+?) \(\d+ lines total\)\]`) })
	// rejectedRe finds the results of edits that were refused and changed
	// nothing (SWE-agent's lint gate, OpenHands' and Claude Code's
	// no-match errors, a patch that did not apply).
	rejectedRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(your proposed edit has introduced new syntax error|no replacement was performed|did not appear verbatim|string to replace not found|<tool_use_error>|multiple occurrences of old_str|failed to find (?:expected lines|context)|^error: patch failed|^invalid patch|file has not been read yet|edit was not applied|^error: (?:invalid|file|the path))`)
	})
	// lineNumberRe is the line-number gutter of a file shown by a read tool.
	lineNumberRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^ *\d+(?:→|:|\t)`) })
)

// rejected says whether an edit's result says nothing was changed.
func rejected(res session.Message) bool {
	head := res.Text()
	if len(head) > 600 {
		head = head[:600]
	}
	return rejectedRe().MatchString(strings.TrimSpace(head))
}

// result reads the hints a tool result gives about the shell (directory,
// open file).
func (t *fileTracker) result(m session.Message) {
	text := m.Text()
	if d := currentDirRe().FindAllStringSubmatch(text, -1); len(d) > 0 {
		t.dir = strings.TrimSpace(d[len(d)-1][1])
	}
	if f := openFileRe().FindStringSubmatch(text); f != nil {
		t.open = t.resolve(strings.TrimSpace(f[1]))
	}
}

// resolve joins a relative path to the shell directory the results name.
func (t *fileTracker) resolve(p string) string {
	if p == "" || path.IsAbs(p) || strings.HasPrefix(p, "~") || t.dir == "" {
		return p
	}
	return path.Join(t.dir, p)
}

// call folds one tool call and its result in.
// paths and cmd are d's, or what the result recorded.
func (t *fileTracker) call(d tools.Description, paths []string, cmd string, res session.Message, haveResult bool) {
	if haveResult && (res.Meta.Denied || res.Meta.Interrupted && res.Meta.Failed) {
		return // not run
	}
	if ch := res.Meta.Changes; haveResult && ch != nil && ch.Observed && d.Kind != tools.CallCommand {
		// An MCP server's tool: what it did to files was observed around
		// the call, as for Bash, not guessed from its name.
		t.ledger.Observe(ch.Created, ch.Modified, ch.Deleted)
		for _, p := range ch.Reverted {
			t.ledger.Apply(shellfx.Op{Kind: shellfx.Revert, Path: p})
		}
		return
	}
	switch d.Kind {
	case tools.CallRead:
		for _, p := range paths {
			t.ledger.Apply(shellfx.Op{Kind: shellfx.Read, Path: p})
			if haveResult && !res.Meta.Failed {
				t.remember(p, res.Text(), false)
			}
			t.open = p
		}
	case tools.CallModify:
		if haveResult && (res.Meta.Failed || rejected(res)) {
			return
		}
		t.edit(d, paths, res, haveResult)
	case tools.CallCommand:
		if cmd != "" {
			t.shell(cmd, res, haveResult)
		}
	}
	if haveResult {
		t.diffs(res.Text())
	}
}

// edit folds in an edit tool's call: Write/Edit/MultiEdit/NotebookEdit,
// str_replace_editor, apply_patch, SWE-agent's create and edit.
func (t *fileTracker) edit(d tools.Description, paths []string, res session.Message, haveResult bool) {
	args := d.Args
	n := strings.ToLower(d.Name)
	if strings.Contains(n, "patch") {
		for _, k := range []string{"patch", "input", "diff"} {
			if p := tools.StringArg(args, k); p != "" {
				if files := shellfx.DiffFiles(p); len(files) > 0 {
					for _, f := range files {
						t.ledger.Apply(shellfx.Op{Kind: f.Kind, Path: t.resolve(f.Path), To: t.resolve(f.To)})
					}
					return
				}
			}
		}
	}
	if len(paths) == 0 && haveResult { // SWE-agent's edit: the file its result shows
		if f := openFileRe().FindStringSubmatch(res.Text()); f != nil {
			paths = []string{t.resolve(strings.TrimSpace(f[1]))}
		} else if t.open != "" {
			paths = []string{t.open}
		}
	}
	sub := strings.ToLower(tools.StringArg(args, "command"))
	for _, p := range paths {
		kind := shellfx.Modify
		switch {
		case sub == "create" || n == "create" || n == "create_file":
			kind = shellfx.Create
		case n == "write" || strings.Contains(n, "write"):
			kind = shellfx.Write
			if haveResult {
				// gencode: "Created x" / "Overwrote x"; Claude Code: "File
				// created successfully" / "has been updated".
				switch head := strings.ToLower(firstLine(res.Text(), 200)); {
				case strings.Contains(head, "created"):
					kind = shellfx.Create
				case strings.Contains(head, "overwrote") || strings.Contains(head, "updated"):
					kind = shellfx.Modify
				}
			}
		}
		t.ledger.Apply(shellfx.Op{Kind: kind, Path: p})
		t.open = p
		// Keep what the file holds now, for a script run later.
		content := ""
		for _, k := range []string{"content", "file_text", "contents", "text"} {
			if c, ok := args[k].(string); ok {
				content = c
				break
			}
		}
		old, oldOK := args["old_string"].(string)
		repl, replOK := args["new_string"].(string)
		if !oldOK {
			old, oldOK = args["old_str"].(string)
			repl, replOK = args["new_str"].(string)
		}
		switch {
		case kind != shellfx.Modify && content != "" || kind == shellfx.Write:
			t.contents[p] = content
		case oldOK && replOK:
			cur, known := t.contents[p]
			if known && old != "" && strings.Contains(cur, old) {
				t.contents[p] = strings.Replace(cur, old, repl, 1)
			} else if old == "" && (!known || cur == "") {
				t.contents[p] = repl
			}
		}
	}
}

// remember keeps a file's content as a result showed it, unless the log
// already holds it.
func (t *fileTracker) remember(p, shown string, override bool) {
	if _, known := t.contents[p]; known && !override {
		return
	}
	t.contents[p] = lineNumberRe().ReplaceAllString(shown, "")
}

// shell folds in a shell command: observed changes when gencode saw them,
// else what the command line says.
func (t *fileTracker) shell(cmd string, res session.Message, haveResult bool) {
	ch := res.Meta.Changes
	observed := haveResult && ch != nil && ch.Observed
	if observed {
		t.ledger.Observe(ch.Created, ch.Modified, ch.Deleted)
		for _, p := range ch.Reverted {
			t.ledger.Apply(shellfx.Op{Kind: shellfx.Revert, Path: p})
		}
	}
	e, err := shellfx.Parse(cmd, t.dir)
	if err != nil {
		return
	}
	var reads []string
	for _, op := range e.Ops {
		if op.CurrentFile {
			op.Path = t.open
			if haveResult {
				if f := openFileRe().FindStringSubmatch(res.Text()); f != nil {
					op.Path = t.resolve(strings.TrimSpace(f[1]))
				}
			}
			if haveResult && rejected(res) {
				continue
			}
		}
		if op.Path == "" && op.Kind != shellfx.Run {
			continue
		}
		switch op.Kind {
		case shellfx.Read:
			reads = append(reads, op.Path)
			t.ledger.Apply(op)
			continue
		case shellfx.Run:
			if !observed {
				t.run(op)
			}
			continue
		}
		if op.Kind == shellfx.Create || op.Kind == shellfx.Write {
			t.contents[op.Path] = op.Content
			t.open = op.Path
		}
		if !observed {
			t.ledger.Apply(op)
		}
	}
	// cat FILE shows the file: a script run later can be scanned.
	if len(reads) == 1 && haveResult && !res.Meta.Failed {
		t.remember(reads[0], res.Text(), false)
	}
}

// run scans a script the session wrote or showed for the files it writes.
func (t *fileTracker) run(op shellfx.Op) {
	src, lang := op.Content, op.Lang
	if src == "" {
		c, ok := t.contents[op.Path]
		if !ok {
			return
		}
		src = c
	}
	for _, w := range shellfx.ScanScript(lang, src) {
		w.Path = joinDir(op.Dir, w.Path)
		if w.To != "" {
			w.To = joinDir(op.Dir, w.To)
		}
		t.ledger.Apply(w)
	}
}

// underRoot spells every path of list relative to root (those under it),
// each once.
func underRoot(list []string, root string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range list {
		if r, ok := strings.CutPrefix(p, strings.TrimSuffix(root, "/")+"/"); ok && path.IsAbs(p) {
			p = r
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func joinDir(dir, p string) string {
	if dir == "" || path.IsAbs(p) || strings.HasPrefix(p, "~") {
		return path.Clean(p)
	}
	return path.Join(dir, p)
}

// diffs folds in the files a diff in a result names (git diff, git show,
// a submitted patch): each is changed, unless the ledger already says so.
func (t *fileTracker) diffs(text string) {
	if !strings.Contains(text, "+++ ") && !strings.Contains(text, "*** ") {
		return
	}
	known := map[string]bool{}
	for _, p := range t.ledger.Modified() {
		known[p] = true
	}
	for _, p := range t.ledger.Deleted() {
		known[p] = true
	}
	resolve := t.resolve
	if t.root != "" {
		resolve = func(p string) string { return joinDir(t.root, p) }
	}
	for _, f := range shellfx.DiffFiles(text) {
		p := resolve(f.Path)
		if known[p] || f.Kind == shellfx.Rename && known[resolve(f.To)] {
			continue
		}
		t.ledger.Apply(shellfx.Op{Kind: f.Kind, Path: p, To: resolve(f.To)})
	}
}

// Of returns the deterministic facts of a range of the log, as a
// summary of it would hold them (files modified and read, commands and how
// often they ran, tool usage, the user's requests), without an LLM.
func Of(msgs []session.Message) session.Summary { return Extract(msgs, true) }

// Extractor is Extract a message at a time, for a range read as it comes
// (a log of any length in bounded memory): Add each message in log order,
// then Finish.
type Extractor struct{ e *extractor }

// NewExtractor starts an Extractor; preserveSystem is Extract's.
func NewExtractor(preserveSystem bool) Extractor { return Extractor{newExtractor(preserveSystem)} }

// Add folds in the next message of the range.
func (x Extractor) Add(m session.Message) { x.e.add(m) }

// Finish returns the facts of the messages added.
func (x Extractor) Finish() session.Summary { return x.e.finish() }

// OfSeq is Of of the messages msgs yields, read as they come: a log of
// any length is read in bounded memory. It stops at the first error.
func OfSeq(msgs iter.Seq2[session.Message, error]) (session.Summary, error) {
	e := newExtractor(true)
	for m, err := range msgs {
		if err != nil {
			return session.Summary{}, err
		}
		e.add(m)
	}
	return e.finish(), nil
}

// toolStats counts one tool's calls and remembers a few notable ones:
// failures first, then the first distinct targets.
type toolStats struct {
	count          int
	failed, plain  []string
	seenF, seenPln map[string]bool
}

func (u *toolStats) add(desc string, failed bool) {
	u.count++
	if desc == "" {
		return
	}
	if failed {
		if u.seenF == nil {
			u.seenF = map[string]bool{}
		}
		if !u.seenF[desc] && len(u.failed) < maxNotableUses {
			u.seenF[desc] = true
			u.failed = append(u.failed, desc)
		}
		return
	}
	if u.seenPln == nil {
		u.seenPln = map[string]bool{}
	}
	if !u.seenPln[desc] && len(u.plain) < maxNotableUses {
		u.seenPln[desc] = true
		u.plain = append(u.plain, desc)
	}
}

func (u *toolStats) notable() []string {
	out := append([]string(nil), u.failed...)
	for _, p := range u.plain {
		if len(out) >= maxNotableUses {
			break
		}
		out = append(out, p)
	}
	return out
}

func describeUse(paths []string, cmd string, res session.Message, haveResult bool) string {
	var what string
	switch {
	case cmd != "":
		what = Clip(OneLine(cmd), 120)
	case len(paths) > 0:
		what = strings.Join(paths, ", ")
	case res.Meta.Pattern != "":
		what = Clip(OneLine(res.Meta.Pattern), 80)
	}
	if !haveResult {
		return what
	}
	switch {
	case res.Meta.Denied:
		what += " (denied)"
	case res.Meta.Interrupted:
		what += " (interrupted)"
	case res.Meta.ExitCode != nil && *res.Meta.ExitCode != 0:
		what += fmt.Sprintf(" (exit %d)", *res.Meta.ExitCode)
	case res.Meta.Failed:
		what += " (failed: " + Clip(OneLine(res.Content), 80) + ")"
	}
	return strings.TrimSpace(what)
}

// The sentences of a user message kept verbatim in a summary
// (UserConstraints): an LLM summary tends to drop them, and the
// deterministic fallback has nothing else to keep them with. By rank, the
// order in which a summary short of room drops them (last first):
var (
	// memoRe: what the user asked to remember or noted ("remember ...",
	// "note that ...", "IMPORTANT: ...", "FACT07: ...").
	memoRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(remember|note that|keep in mind|don't forget|do not forget|for the record|important)\b`)
	})
	labelRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9_-]*[A-Z0-9]:\s+\S`) })
	// constraintRe: rules for the work (always, never, must ...).
	constraintRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(always|never|don't|do not|must not|must|make sure|only use|avoid)\b`)
	})
	// preferenceRe: softer rules.
	preferenceRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(without|prefer|keep .* (?:verbatim|as is))\b`)
	})
	// statedRe and valueRe: a fact the user stated, a short sentence
	// giving something a value ("the staging port is 7407", "the config
	// lives in /etc/app").
	statedRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(\b(is|are|equals|should be|will be|runs on|lives (?:in|at))\b|=)`)
	})
	valueRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("[0-9/`]") })
)

// Ranks of kept sentences: the lower, the longer a summary keeps it.
const (
	RankMemo = iota
	RankConstraint
	RankOther
	// maxStatedChars bounds a sentence read as a stated fact: longer ones
	// are prose.
	maxStatedChars = 240
)

// The words each pattern needs, lowercased: a sentence without any of
// them cannot match it, and is not run through it (the patterns are most
// of KeepRank's cost, which a view pays per kept sentence per request).
var (
	memoWords       = []string{"remember", "note that", "keep in mind", "forget", "for the record", "important"}
	constraintWords = []string{"always", "never", "don't", "do not", "must", "make sure", "only use", "avoid"}
	preferenceWords = []string{"without", "prefer", "keep"}
	statedWords     = []string{"is", "are", "equals", "should be", "will be", "runs on", "lives ", "="}
)

// KeepRank is how important a kept sentence is; ok is false for one not
// worth keeping.
func KeepRank(s string) (rank int, ok bool) {
	l := foldLower(s)
	switch {
	case hasAny(l, memoWords) && memoRe().MatchString(s) || labelRe().MatchString(s):
		return RankMemo, true
	case hasAny(l, constraintWords) && constraintRe().MatchString(s):
		return RankConstraint, true
	case hasAny(l, preferenceWords) && preferenceRe().MatchString(s):
		return RankOther, true
	case len(s) <= maxStatedChars && strings.ContainsAny(s, "0123456789/`") && hasAny(l, statedWords) && statedRe().MatchString(s):
		return RankOther, true // strings.ContainsAny is valueRe
	}
	return 0, false
}

// foldLower is s lowercased so that it holds, lowercased, every ASCII word
// a (?i) pattern matches in s: strings.ToLower, and the long s (ſ), which
// (?i) matches as s but ToLower keeps (the Kelvin sign, which it matches
// as k, ToLower makes k).
func foldLower(s string) string {
	l := strings.ToLower(s)
	if strings.Contains(l, "ſ") {
		l = strings.ReplaceAll(l, "ſ", "s")
	}
	return l
}

func hasAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// constraints returns the sentences of a user message a summary keeps
// verbatim: its constraints and the facts the user stated or asked to
// remember.
func constraints(text string) []string {
	var out []string
	for _, s := range sentences(text) {
		if _, ok := KeepRank(s); len(s) >= 8 && ok {
			out = append(out, Clip(s, maxLineChars))
		}
	}
	return out
}

// decisionRe is the seed proposal's keyword scan for decisions; it is the
// fallback when there is no LLM narrative.
var decisionRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(decided to|chose to|will use|going with|went with|switched to|instead of|opted for|settled on)\b`)
})

// decisionWords are decisionRe's words: a message holding none of them,
// lowercased by foldLower, has no decision.
var decisionWords = []string{"decided to", "chose to", "will use", "going with", "went with", "switched to", "instead of", "opted for", "settled on"}

// sentences splits prose into sentences and lines (code blocks left out).
func sentences(text string) []string {
	var out []string
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			inCode = !inCode
			continue
		}
		if inCode || t == "" {
			continue
		}
		t = strings.TrimLeft(t, "-*•> ")
		start := 0
		for i := 0; i+1 < len(t); i++ {
			if (t[i] == '.' || t[i] == '!' || t[i] == '?') && t[i+1] == ' ' {
				out = append(out, strings.TrimSpace(t[start:i+1]))
				start = i + 2
			}
		}
		if rest := strings.TrimSpace(t[min(start, len(t)):]); rest != "" {
			out = append(out, rest)
		}
	}
	return out
}

// orderedSet keeps first-seen order without duplicates.
type orderedSet struct {
	items []string
	seen  map[string]bool
}

func newOrderedSet() *orderedSet { return &orderedSet{seen: map[string]bool{}} }

func (s *orderedSet) add(items ...string) {
	for _, it := range items {
		it = strings.TrimSpace(it)
		if it == "" || s.seen[it] {
			continue
		}
		s.seen[it] = true
		s.items = append(s.items, it)
	}
}

// recent returns the last n items, in a slice of their own when it cuts.
func recent(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return slices.Clone(items[len(items)-n:])
}

// Union merges the deterministic fields of summaries, oldest first: lists
// are unioned in order, tool counts added, the last user request is the
// newest one. Each entry is looked at once: linear in the entries.
func Union(sums []session.Summary) session.Summary {
	var out session.Summary
	counts := map[string]*session.ToolUsage{}
	var order []string
	files := shellfx.NewLedger()
	read, cmds, notRun, constraints := newOrderedSet(), newOrderedSet(), newOrderedSet(), newOrderedSet()
	requests, notes, decisions, topics := newOrderedSet(), newOrderedSet(), newOrderedSet(), newOrderedSet()
	for _, s := range sums {
		// Replay each summary's net effect, oldest first: a file created in
		// one and deleted in a later one is gone from both lists.
		for _, p := range s.FilesReverted {
			files.Apply(shellfx.Op{Kind: shellfx.Revert, Path: p})
		}
		created := map[string]bool{}
		for _, p := range s.FilesCreated {
			created[p] = true
		}
		for _, p := range s.FilesModified {
			kind := shellfx.Modify
			if created[p] {
				kind = shellfx.Create
			}
			files.Apply(shellfx.Op{Kind: kind, Path: p})
		}
		for _, p := range s.FilesDeleted {
			files.Apply(shellfx.Op{Kind: shellfx.Delete, Path: p})
		}
		read.add(s.FilesRead...)
		cmds.add(s.Commands...)
		notRun.add(s.CommandsNotRun...)
		out.CommandRuns += s.CommandRuns
		constraints.add(s.UserConstraints...)
		out.UserConstraintsLeftOut += s.UserConstraintsLeftOut
		requests.add(s.UserRequests...)
		notes.add(s.SystemNotes...)
		decisions.add(s.KeyDecisions...)
		topics.add(s.Topics...)
		out.NextSteps = s.NextSteps
		if s.LastUserRequest != "" {
			out.LastUserRequest = s.LastUserRequest
		}
		for _, u := range s.ToolsUsed {
			c := counts[u.Tool]
			if c == nil {
				c = &session.ToolUsage{Tool: u.Tool}
				counts[u.Tool] = c
				order = append(order, u.Tool)
			}
			c.Count += u.Count
			for _, n := range u.NotableUses {
				if n != "" && len(c.NotableUses) < maxNotableUses && !slices.Contains(c.NotableUses, n) {
					c.NotableUses = append(c.NotableUses, n)
				}
			}
		}
	}
	for _, t := range order {
		out.ToolsUsed = append(out.ToolsUsed, *counts[t])
	}
	var left int
	out.FilesRead, out.Commands = read.items, recent(cmds.items, maxCommands)
	out.CommandsNotRun = recent(notRun.items, maxCommands)
	out.UserConstraints, left = CapKept(constraints.items)
	out.UserConstraintsLeftOut += left
	out.UserRequests, out.SystemNotes = recent(requests.items, maxUserRequests), notes.items
	out.KeyDecisions, out.Topics = decisions.items, topics.items
	out.FilesModified = files.Modified()
	out.FilesCreated = files.Created()
	out.FilesDeleted = files.Deleted()
	out.FilesReverted = files.Reverted()
	return out
}

func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… [%d more characters in the session log]", len(s)-cut)
}

func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	return Clip(s, n)
}

func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
