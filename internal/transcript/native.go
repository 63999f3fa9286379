package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/shellfx"
	"github.com/gencode/gencode/internal/tools"
)

// The formats import reads.
const (
	FormatOpenAI        = "openai"
	FormatClaudeCode    = "claude-code"
	FormatCodex         = "codex"
	FormatSWEAgent      = "swe-agent"
	FormatMiniSWEAgent  = "mini-swe-agent"
	FormatOpenHands     = "openhands"
	formatsAcceptedList = "openai (chat messages, JSONL), claude-code (session JSONL), codex (rollout JSONL), " +
		"swe-agent (.traj), mini-swe-agent (.traj.json), openhands (event list, JSON or JSONL)"
)

// Formats are the names --format takes.
var Formats = []string{FormatOpenAI, FormatClaudeCode, FormatCodex, FormatSWEAgent, FormatMiniSWEAgent, FormatOpenHands}

// persistentShell says, per format, whether the agent's shell keeps its
// directory from one call to the next (a `cd` holds for the calls after).
var persistentShell = map[string]bool{
	FormatClaudeCode: true, FormatSWEAgent: true, FormatOpenHands: true,
	// Codex runs each command in a fresh process in the call's workdir;
	// mini-swe-agent runs each action in a fresh subshell; gencode's own
	// Bash (the openai format) does not keep a cd either.
	FormatCodex: false, FormatMiniSWEAgent: false, FormatOpenAI: false,
}

// Source is what import learned about where a session came from.
type Source struct {
	Format string
	// Cwd is the working directory the file recorded ("" when none).
	Cwd string
	// Root is the directory the session's paths are relative to: Cwd, else
	// the common root of the absolute paths the session used.
	Root  string
	Model string
	// NotRun are the calls that never ran (denied, canceled, not run, no
	// result), as "TOOL SUMMARY": they count as no command and no change.
	NotRun []string
}

// nativeItem is one message of a native format, in OpenAI's shape, with
// what that shape has no field for.
type nativeItem struct {
	line int
	msg  openai.ChatCompletionMessage
	time time.Time
	// On a result: the call never ran (denied, canceled, not run); the
	// directory the call ran in when the format records it; the shell's
	// directory after it when the format reports it.
	notRun     bool
	dir, after string
}

type nativeParse struct {
	items []nativeItem
	src   Source
}

func (n *nativeParse) add(line int, ts string, m openai.ChatCompletionMessage) *nativeItem {
	it := nativeItem{line: line, msg: m}
	if ts != "" {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			it.time = t
		}
	}
	n.items = append(n.items, it)
	return &n.items[len(n.items)-1]
}

// ReadFormat reads a session file of any format import knows: format
// names one (Formats), or "" to recognise it by its content. Unknown
// input is an error saying what was seen and which formats are accepted.
func ReadFormat(r io.Reader, name, format string) ([]session.Message, []Change, Source, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, Source{}, fmt.Errorf("read %s: %w", name, err)
	}
	if format == "" {
		format, err = Detect(data, name)
		if err != nil {
			return nil, nil, Source{}, err
		}
	} else if !slices.Contains(Formats, format) {
		return nil, nil, Source{}, fmt.Errorf("unknown format %q: the formats are %s", format, strings.Join(Formats, ", "))
	}
	if format == FormatOpenAI {
		msgs, changes, err := Read(bytes.NewReader(data), name)
		if err != nil {
			return nil, nil, Source{}, err
		}
		src := Source{Format: FormatOpenAI}
		finishSource(msgs, nil, &src)
		return msgs, changes, src, nil
	}
	n := &nativeParse{src: Source{Format: format}}
	switch format {
	case FormatClaudeCode:
		err = n.claude(data, name)
	case FormatCodex:
		err = n.codex(data, name)
	case FormatSWEAgent:
		err = n.sweAgent(data, name)
	case FormatMiniSWEAgent:
		err = n.mini(data, name)
	case FormatOpenHands:
		err = n.openHands(data, name)
	}
	if err != nil {
		return nil, nil, Source{}, err
	}
	p := &reader{ids: map[string]bool{}}
	for _, it := range n.items {
		p.now = it.time
		if err := p.add(it.line, it.msg); err != nil {
			return nil, nil, Source{}, fmt.Errorf("%s:%d: %w", name, it.line, err)
		}
	}
	p.close()
	if len(p.out) == 0 {
		return nil, nil, Source{}, fmt.Errorf("%s: no messages in this %s session", name, format)
	}
	finishSource(p.out, n.items, &n.src)
	return p.out, p.changes, n.src, nil
}

// finishSource marks the results of calls that never ran, infers the
// session's root, gives every result the directory its call ran in, and
// records the source on the first message.
func finishSource(msgs []session.Message, items []nativeItem, src *Source) {
	byID := map[string]*nativeItem{}
	for i := range items {
		if id := items[i].msg.ToolCallID; id != "" && items[i].msg.Role == openai.ChatMessageRoleTool {
			byID[id] = &items[i]
		}
	}
	results := markNotRun(msgs, byID)
	src.Root = src.Cwd
	if src.Root == "" {
		src.Root = inferRoot(msgs, items)
	}
	finishMessages(msgs, items, byID, results, src, true)
}

// markNotRun marks the results whose call never ran, and returns msgs'
// results by call id.
func markNotRun(msgs []session.Message, byID map[string]*nativeItem) map[string]*session.Message {
	results := map[string]*session.Message{}
	for i := range msgs {
		m := &msgs[i]
		if m.Role != session.RoleTool {
			continue
		}
		results[m.ToolCallID] = m
		if it := byID[m.ToolCallID]; it != nil && it.notRun {
			m.Meta.NotRun = true
		}
		if h := head(m.Content, 400); !m.Meta.NotRun && mayNotRun(h) && notRunRe().MatchString(h) {
			m.Meta.NotRun = true
		}
	}
	return results
}

// finishMessages is finishSource with the root known: the results' calls
// and directories, the calls that never ran, and (first: msgs starts the
// session) the source recorded on the first message. byID and results are
// finishSource's maps of msgs and items.
func finishMessages(msgs []session.Message, items []nativeItem, byID map[string]*nativeItem,
	results map[string]*session.Message, src *Source, first bool) {
	persist := persistentShell[src.Format]
	sh := &shellfx.Shell{Dir: src.Root}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			res := results[c.ID]
			if res == nil {
				continue
			}
			res.Meta.Root = src.Root
			if res.Meta.NotRun {
				d := tools.Describe(tools.Call{Name: c.Name, Arguments: c.Arguments})
				what := d.Command
				if what == "" {
					what = d.Summary
				}
				src.NotRun = append(src.NotRun, strings.TrimSpace(c.Name+" "+what))
			}
			it := byID[c.ID]
			switch {
			case it != nil && it.dir != "":
				res.Meta.Dir = it.dir
			case persist:
				res.Meta.Dir = sh.Dir
			default:
				res.Meta.Dir = src.Root
			}
			if !persist || res.Meta.NotRun {
				continue
			}
			d := tools.Describe(tools.Call{Name: c.Name, Arguments: c.Arguments})
			if d.Kind == tools.CallCommand && d.Command != "" {
				sh.Run(d.Command)
			}
			if it != nil && it.after != "" {
				sh.Dir = it.after
			}
		}
	}
	if first && (len(msgs) > 0 && src.Format != FormatOpenAI || src.Root != "") {
		msgs[0].Meta.Imported = &session.Imported{Format: src.Format, Root: src.Root, Model: src.Model}
	}
}

// notRunRe finds the results that say their call never ran. Claude Code
// cancels the calls running beside one that failed ("Sibling tool call
// errored"): they never ran either.
var notRunRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^\s*(?:\[no result: the imported transcript|permission denied: the user|(?:error: )?permission to use [^\n]{0,300}has been denied|the user doesn't want to proceed with this tool use|the tool use was rejected|\[request interrupted by user for tool use\]|<tool_use_error>sibling tool call errored|exec command rejected|command was not run|user rejected|action has been rejected|.{0,40}\bdenied by the user|.{0,40}\bcancel(?:l)?ed by the user)`)
})

// mayNotRun is a cheap test before notRunRe: the words every not-run
// text holds one of.
func mayNotRun(s string) bool {
	for _, w := range []string{"enied", "eject", "ancel", "not run", "nterrupted", "no result", "proceed", "ibling"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func head(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// systemDirs hold no session's files: paths under them (a scratch file in
// /tmp, a library in /usr or /opt) do not pull the root up.
var systemDirs = []string{"/tmp", "/dev", "/proc", "/usr", "/etc", "/bin", "/sbin", "/lib", "/var", "/opt", "/sys", "/run", "/private"}

// homeDirs are a root's parents, never a root.
var homeDirs = []string{"/", "/home", "/root", "/Users", "/mnt"}

// inferRoot is the deepest directory holding every absolute path the
// session's calls named (files, cd targets, reported directories), outside
// system directories; "" when they share none.
func inferRoot(msgs []session.Message, items []nativeItem) string {
	var f rootFinder
	for _, it := range items {
		f.addPath(it.dir, true)
		f.addPath(it.after, true)
	}
	for _, m := range msgs {
		f.add(m)
	}
	return f.root()
}

// rootFinder is inferRoot a message at a time (a file read as it comes).
type rootFinder struct {
	dirs, files, rels []string
	// parents are the directories above every absolute path named: a path
	// named as a file that another path lies under (an editor's view of a
	// directory) is a directory, not a file in its parent.
	parents  map[string]bool
	evidence bool // a directory the session was in, not only files
}

func (f *rootFinder) addPath(p string, isDir bool) {
	if p != "" && !path.IsAbs(p) && !strings.HasPrefix(p, "~") {
		f.rels = append(f.rels, path.Clean(p))
	}
	if !path.IsAbs(p) {
		return
	}
	f.evidence = f.evidence || isDir
	p = path.Clean(p)
	for _, s := range systemDirs {
		if p == s || strings.HasPrefix(p, s+"/") {
			return
		}
	}
	if f.parents == nil {
		f.parents = map[string]bool{}
	}
	for d := path.Dir(p); !f.parents[d] && d != "/"; d = path.Dir(d) {
		f.parents[d] = true
	}
	if isDir {
		f.dirs = append(f.dirs, p)
	} else {
		f.files = append(f.files, p)
	}
}

// add reads the directories and paths of one message.
func (f *rootFinder) add(m session.Message) {
	for _, d := range currentDirRe().FindAllStringSubmatch(m.Content, -1) {
		f.addPath(strings.TrimSpace(d[1]), true)
	}
	for _, c := range m.ToolCalls {
		d := tools.Describe(tools.Call{Name: c.Name, Arguments: c.Arguments})
		for _, p := range d.Paths {
			f.addPath(p, false)
		}
		if d.Kind == tools.CallCommand && d.Command != "" {
			sh := &shellfx.Shell{}
			sh.Run(d.Command)
			f.addPath(sh.Dir, true)
			if e, err := shellfx.Parse(d.Command, ""); err == nil {
				for _, op := range e.Ops {
					f.addPath(op.Path, op.Kind == shellfx.Mkdir)
				}
			}
		}
	}
}

func (f *rootFinder) root() string {
	dirs := slices.Clone(f.dirs)
	for _, p := range f.files {
		if !f.parents[p] {
			p = path.Dir(p)
		}
		dirs = append(dirs, p)
	}
	rels, evidence := f.rels, f.evidence
	if len(dirs) == 0 {
		return ""
	}
	root := dirs[0]
	for _, d := range dirs[1:] {
		for root != "/" && d != root && !strings.HasPrefix(d, root+"/") {
			root = path.Dir(root)
		}
	}
	if !evidence {
		// Only files: their common directory may be a subdirectory of the
		// one the agent worked in. A relative path that starts with the
		// root's own name (src/a.go, root .../src) says the root is its
		// parent.
		for moved := true; moved && root != "/"; {
			moved = false
			for _, r := range rels {
				if first, _, _ := strings.Cut(r, "/"); first == path.Base(root) && strings.Contains(r, "/") {
					root, moved = path.Dir(root), true
					break
				}
			}
		}
	}
	if slices.Contains(homeDirs, root) || path.Dir(root) == "/home" || path.Dir(root) == "/Users" {
		return "" // a user's whole home: no project root in common
	}
	return root
}

var currentDirRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\(Current directory: ([^)\n]+)\)`) })

// Detect says which format data is in, from its content.
func Detect(data []byte, name string) (string, error) {
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return "", fmt.Errorf("%s: empty file: nothing to import (formats accepted: %s)", name, formatsAcceptedList)
	}
	if t[0] == '[' {
		var events []map[string]json.RawMessage
		if json.Unmarshal(t, &events) == nil {
			for _, e := range events {
				if e["action"] != nil || e["observation"] != nil {
					return FormatOpenHands, nil
				}
			}
		}
		return "", refuse(name, "a JSON list whose items are not OpenHands events (no \"action\" or \"observation\")")
	}
	var whole map[string]json.RawMessage
	if t[0] == '{' {
		if json.Unmarshal(t, &whole) == nil {
			switch {
			case whole["trajectory"] != nil:
				return FormatSWEAgent, nil
			case whole["messages"] != nil && (whole["info"] != nil || whole["trajectory_format"] != nil):
				return FormatMiniSWEAgent, nil
			case whole["role"] != nil:
				return FormatOpenAI, nil
			case whole["action"] != nil || whole["observation"] != nil:
				return FormatOpenHands, nil
			}
			// One object: perhaps a JSON-lines file of one line.
		}
	}
	line, rest, _ := bytes.Cut(t, []byte("\n"))
	var first map[string]json.RawMessage
	if err := json.Unmarshal(line, &first); err != nil {
		if whole != nil {
			return "", refuse(name, "one JSON object with the keys "+keyList(whole))
		}
		return "", refuse(name, fmt.Sprintf("text that is not JSON (%q...)", head(string(line), 40)))
	}
	var typ string
	_ = json.Unmarshal(first["type"], &typ)
	switch {
	case first["role"] != nil:
		return FormatOpenAI, nil
	case typ == "session_meta" || typ == "response_item" || typ == "turn_context" || typ == "event_msg" ||
		first["instructions"] != nil && first["id"] != nil:
		return FormatCodex, nil
	case (typ == "user" || typ == "assistant" || typ == "summary" || typ == "system") &&
		(first["message"] != nil || first["uuid"] != nil || first["leafUuid"] != nil || first["sessionId"] != nil):
		return FormatClaudeCode, nil
	case typ == "file-history-snapshot":
		return FormatClaudeCode, nil
	case first["action"] != nil || first["observation"] != nil:
		return FormatOpenHands, nil
	}
	if len(bytes.TrimSpace(rest)) == 0 {
		return "", refuse(name, "one JSON object with the keys "+keyList(first))
	}
	return "", refuse(name, "JSON lines, the first with the keys "+keyList(first))
}

func refuse(name, seen string) error {
	return fmt.Errorf("%s: not a session format gencode imports: it holds %s; the formats accepted are %s (--format NAME forces one)",
		name, seen, formatsAcceptedList)
}

func keyList(m map[string]json.RawMessage) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 8 {
		keys = append(keys[:8], "...")
	}
	if len(keys) == 0 {
		return "(none)"
	}
	return strings.Join(keys, ", ")
}

// eachLine calls fn with every non-empty line of data and its number.
func eachLine(data []byte, name string, fn func(line int, b []byte) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := fn(line, b); err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%s:%d: a line is longer than %d MB", name, line+1, maxLine>>20)
		}
		return fmt.Errorf("read %s: %w", name, err)
	}
	return nil
}

// textOf is the text of a content that is a string or a list of parts
// with "text".
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Text != "" {
				if b.Len() > 0 {
					b.WriteString("\n")
				}
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return string(raw)
}

func toolCall(id, name, args string) openai.ToolCall {
	return openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}}
}

func jsonArgs(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
