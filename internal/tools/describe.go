package tools

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// CallKind is what a call does to the files, as a reader of a log cares.
type CallKind int

// Call kinds.
const (
	CallOther   CallKind = iota // searches, listings, tools not recognised
	CallModify                  // writes or edits files
	CallRead                    // reads files
	CallCommand                 // runs a shell command
)

// Description is what a call's arguments mean: the one reading of them
// that the chat, the history, the import and the summarizer share.
type Description struct {
	Name string
	Kind CallKind
	// Args are the arguments; when they are not JSON, the path and
	// command keys recovered from the text.
	Args map[string]any
	// Paths are the files the call reads or modifies (an apply_patch:
	// every file in its patch); for other kinds, the path it names.
	Paths []string
	// Command is the shell command of a CallCommand.
	Command string
	// Pattern is a Glob's or Grep's pattern (any call's "pattern").
	Pattern string
	// Summary is the key argument for a one-line header: the path, the
	// command, "pattern in path"; the arguments themselves when they are
	// not JSON. It is neither sanitized nor cut: each front end does that.
	Summary string
}

// File is the file the call is about when it reads or modifies one: what
// gencode's Read, Write and Edit record as their result's path.
func (c Description) File() string {
	if (c.Kind == CallRead || c.Kind == CallModify) && len(c.Paths) > 0 {
		return c.Paths[0]
	}
	return ""
}

// summaryArgs are the arguments that say best what one of gencode's calls
// does, joined with " in ".
var summaryArgs = map[string][]string{
	ToolRead: {"file_path"}, ToolWrite: {"file_path"}, ToolEdit: {"file_path"},
	ToolBash: {"command"}, ToolGlob: {"pattern", "path"}, ToolGrep: {"pattern", "path"}, ToolLS: {"path"},
}

// Tool names as other agents spell them (imported sessions), lower-cased,
// and the argument names they use.
var (
	commandTools = map[string]bool{
		"bash": true, "shell": true, "sh": true, "run_command": true, "execute_command": true, "exec": true,
		"terminal": true, "run_terminal_cmd": true, "execute_bash": true, "run_shell_command": true,
		"local_shell": true, "shell_exec": true, "run": true, "command": true, "powershell": true,
	}
	editorTools = map[string]bool{ // one tool, the "command" argument says what it does
		"str_replace_editor": true, "str_replace_based_edit_tool": true, "text_editor": true, "editor": true,
	}
	modifyWords = []string{"write", "edit", "create", "replace", "patch", "insert", "append", "delete", "remove",
		"move", "rename", "save", "modify", "update", "overwrite"}
	readWords = []string{"read", "view", "open", "cat", "show", "get_file", "fetch_file", "load"}
	pathKeys  = []string{"file_path", "path", "filepath", "filename", "file", "notebook_path", "target_file",
		"target", "file_name", "dest", "destination", "new_path"}
	commandKeys = []string{"command", "cmd", "script", "shell_command", "commandline"}
	// summaryKeys are tried, in order, for a tool gencode does not have.
	summaryKeys = []string{"command", "file_path", "pattern", "path", "query", "url"}
)

// patchFileRe finds the files an apply_patch or unified diff touches.
var patchFileRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(?:\*\*\* (?:Update|Add|Delete) File: (.+)|\+\+\+ (?:b/)?(\S+))`)
})

// pathArgRe recovers "file_path": "..." from arguments that are not valid
// JSON (a cut stream, an imported session).
var pathArgRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"(file_path|path|command|notebook_path)"\s*:\s*"((?:[^"\\]|\\.)*)"`)
})

// Describe reads a call: of gencode's own tools, or of the usual names
// other agents give theirs (shell tools, str_replace_editor, apply_patch,
// ...), as imported sessions hold them. A ToolCallMcp call reads as the
// call it stands for (Name is the tool it names). It never fails: what it
// cannot read is left empty.
func Describe(call Call) Description {
	call, _ = Unwrap(call) // a proxied call reads as the call it stands for
	name, arguments := call.Name, call.Arguments
	c := Description{Name: name}
	valid := json.Unmarshal([]byte(arguments), &c.Args) == nil && c.Args != nil
	if !valid {
		c.Args = recoverArgs(arguments)
	}
	c.Kind, c.Paths, c.Command = classify(name, c.Args)
	c.Pattern = StringArg(c.Args, "pattern")
	switch {
	case !valid:
		c.Summary = arguments
	case summaryArgs[name] != nil:
		var parts []string
		for _, k := range summaryArgs[name] {
			if v, ok := c.Args[k].(string); ok && v != "" {
				parts = append(parts, v)
			}
		}
		c.Summary = strings.Join(parts, " in ")
	default:
		for _, k := range summaryKeys {
			if v, ok := c.Args[k].(string); ok && v != "" {
				c.Summary = v
				break
			}
		}
	}
	if c.Summary == "" && valid { // the first text argument, in name order
		keys := make([]string, 0, len(c.Args))
		for k := range c.Args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v, ok := c.Args[k].(string); ok && v != "" {
				c.Summary = v
				break
			}
		}
	}
	return c
}

// classify says what a call does from its tool's name and arguments.
func classify(name string, args map[string]any) (CallKind, []string, string) {
	n := strings.ToLower(name)
	var paths []string
	for _, k := range pathKeys {
		if p := StringArg(args, k); p != "" {
			paths = append(paths, p)
			break
		}
	}
	if edits, ok := args["edits"].([]any); ok && len(paths) == 0 { // MultiEdit-like tools with per-edit paths
		for _, e := range edits {
			if em, ok := e.(map[string]any); ok {
				for _, k := range pathKeys {
					if p := StringArg(em, k); p != "" {
						paths = append(paths, p)
						break
					}
				}
			}
		}
	}
	cmd := ""
	for _, k := range commandKeys {
		if c := StringArg(args, k); c != "" {
			cmd = c
			break
		}
	}
	switch {
	case editorTools[n]:
		if strings.EqualFold(cmd, "view") {
			return CallRead, paths, ""
		}
		return CallModify, paths, ""
	case commandTools[n] || (cmd != "" && len(paths) == 0 && containsWord(n, "bash", "shell", "command", "exec", "terminal")):
		return CallCommand, nil, cmd
	case strings.Contains(n, "patch") && len(paths) == 0:
		for _, k := range []string{"patch", "input", "diff"} {
			if p := StringArg(args, k); p != "" {
				for _, m := range patchFileRe().FindAllStringSubmatch(p, -1) {
					if f := strings.TrimSpace(m[1] + m[2]); f != "" && f != "/dev/null" {
						paths = append(paths, f)
					}
				}
			}
		}
		return CallModify, paths, ""
	case len(paths) > 0 && containsWord(n, modifyWords...):
		return CallModify, paths, ""
	case len(paths) > 0 && containsWord(n, readWords...):
		return CallRead, paths, ""
	}
	return CallOther, paths, ""
}

func containsWord(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// recoverArgs finds the path and command arguments in text that is not a
// JSON object.
func recoverArgs(arguments string) map[string]any {
	args := map[string]any{}
	for _, m := range pathArgRe().FindAllStringSubmatch(arguments, -1) {
		var v string
		if err := json.Unmarshal([]byte(`"`+m[2]+`"`), &v); err == nil {
			args[m[1]] = v
		}
	}
	return args
}

// StringArg is args[key] when it is a string, spaces trimmed.
func StringArg(args map[string]any, key string) string {
	v, ok := args[key].(string)
	if !ok {
		return argv(args[key])
	}
	return strings.TrimSpace(v)
}

// SortArgKeys orders argument names as a reader wants them: the path
// first, then the command, then the rest by name.
func SortArgKeys(keys []string) {
	rank := func(k string) int {
		if i := slices.Index(pathKeys, k); i >= 0 {
			return i
		}
		if i := slices.Index(commandKeys, k); i >= 0 {
			return len(pathKeys) + i
		}
		return len(pathKeys) + len(commandKeys)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if ri, rj := rank(keys[i]), rank(keys[j]); ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
}

// argv reads a command given as its words (Codex's shell: ["bash", "-lc",
// "SCRIPT"]): the script of a shell's -c, else the words joined.
func argv(v any) string {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return ""
	}
	words := make([]string, 0, len(list))
	for _, w := range list {
		s, ok := w.(string)
		if !ok {
			return ""
		}
		words = append(words, s)
	}
	if len(words) == 3 && (words[1] == "-lc" || words[1] == "-c") && slices.Contains([]string{"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh"}, words[0]) {
		return strings.TrimSpace(words[2])
	}
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"$`;&|<>()*?") {
			words[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}
