package shellfx

import (
	"regexp"
	"strings"
	"sync"
)

// SWE-agent's editor commands are not shell: they edit the file the agent
// has open. edit N:M and insert N take a body up to end_of_edit (0.x);
// edit 'SEARCH' 'REPLACE' and insert 'TEXT' take quoted text (1.0).
var agentEditRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(edit|insert|append)(\s+\d+(:\d+)?\s*(\n|$)|\s*\n|\s+['"])`)
})

// parseAgentCommand reads the editor commands of SWE-agent's interface whose
// bodies are not shell (edit, insert, append). ok is false for anything
// else, which the shell parser reads (create, open and str_replace_editor
// are ordinary words to it).
func parseAgentCommand(command, dir string) ([]Op, bool) {
	c := strings.TrimLeft(command, " \t")
	if !agentEditRe().MatchString(c) {
		return nil, false
	}
	first, _, _ := strings.Cut(c, "\n")
	if len(strings.Fields(first)) == 1 && !strings.Contains(c, "end_of_") {
		return nil, false // a plain program called edit
	}
	return []Op{{Kind: Modify, CurrentFile: true}}, true
}

// agentTool handles SWE-agent's and OpenHands' helper commands run as
// shell words: create, open, search_file, str_replace_editor.
func (w *walker) agentTool(name string, rest []arg) bool {
	ops := operands(rest, nil)
	switch name {
	case "create":
		if len(ops) > 0 {
			w.add(Op{Kind: Create, Path: w.resolve(ops[0])})
		}
	case "open":
		if len(ops) > 0 {
			w.add(Op{Kind: Read, Path: w.resolve(ops[0])})
		}
	case "search_file":
		if len(ops) > 1 {
			w.add(Op{Kind: Read, Path: w.resolve(ops[1])})
		}
	case "str_replace_editor":
		if len(rest) < 2 || !rest[0].lit || !rest[1].lit {
			return true
		}
		p := w.resolve(rest[1].s)
		switch rest[0].s {
		case "view":
			w.add(Op{Kind: Read, Path: p})
		case "create":
			content := ""
			for i, a := range rest {
				if a.lit && a.s == "--file_text" && i+1 < len(rest) {
					content = rest[i+1].s
				}
			}
			w.add(Op{Kind: Write, Path: p, Content: content})
		case "str_replace", "insert", "undo_edit":
			w.add(Op{Kind: Modify, Path: p})
		}
	default:
		return false
	}
	return true
}

// agentWords are the commands of SWE-agent's interface (its tool bundles):
// the agent's editor and search, not programs its shell runs.
var agentWords = map[string]bool{
	"create": true, "edit": true, "insert": true, "append": true, "open": true, "goto": true, "scroll_up": true,
	"scroll_down": true, "search_dir": true, "search_file": true, "find_file": true, "submit": true,
	"str_replace_editor": true, "filemap": true, "view_image": true,
}

// AgentCommand says whether command is one of SWE-agent's interface
// commands (create, edit, open, find_file, submit ...) rather than a
// program the shell runs: its effects are read, but it is no shell command
// run.
func AgentCommand(command string) bool {
	first := strings.Fields(strings.TrimSpace(command))
	return len(first) > 0 && agentWords[first[0]]
}
