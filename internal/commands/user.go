package commands

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/gencode/gencode/internal/termtext"
)

// UserCommand is one of the user's own commands: a markdown file whose
// name (folders giving namespaces: frontend/component.md is
// /frontend:component) is the command, and whose text is the prompt, with
// $ARGUMENTS and $1..$9 substituted, "@path" attaching a file and
// "!`cmd`" replaced by the command's output (run as the Bash tool, with
// its permission).
type UserCommand struct {
	Name         string
	Description  string
	ArgumentHint string
	// Model is the model the command asks for (print mode runs it with
	// that model; the TUI says so and keeps its own).
	Model string
	// AllowedTools are listed for the user; they grant nothing: a
	// command file (a repository's too) never lifts a permission.
	AllowedTools []string
	Body         string
	// Source is the file, as the user knows it (~ for the home).
	Source string
	// Hidden says what hides this command: a built-in of the same name,
	// or another user command found first ("": none).
	Hidden string
}

// CommandDir is a directory of user commands.
type CommandDir struct {
	Path  string // absolute
	Label string // as shown: ".gencode/commands", "~/.config/gencode/commands"
}

// LoadUserCommands reads the markdown commands of dirs, the first dir's
// winning a name over the later ones (the others are kept, Hidden). A
// missing dir has none; a file that cannot be read is a problem.
func LoadUserCommands(dirs []CommandDir) ([]UserCommand, []string) {
	var out []UserCommand
	var probs []string
	seen := map[string]string{}
	for _, d := range dirs {
		var found []UserCommand
		err := filepath.WalkDir(d.Path, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				probs = append(probs, fmt.Sprintf("commands: %v", err))
				return nil
			}
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				return nil
			}
			rel, _ := filepath.Rel(d.Path, path)
			name := strings.ReplaceAll(strings.TrimSuffix(filepath.ToSlash(rel), ".md"), "/", ":")
			data, err := os.ReadFile(path)
			if err != nil {
				probs = append(probs, fmt.Sprintf("commands: read %s: %v", filepath.Join(d.Label, rel), err))
				return nil
			}
			c, err := parseUserCommand(name, string(data))
			if err != nil {
				probs = append(probs, fmt.Sprintf("commands: %s: %v", filepath.Join(d.Label, rel), err))
			}
			c.Source = filepath.ToSlash(filepath.Join(d.Label, rel))
			found = append(found, c)
			return nil
		})
		if err != nil {
			probs = append(probs, fmt.Sprintf("commands: %v", err))
		}
		sort.Slice(found, func(i, j int) bool { return found[i].Name < found[j].Name })
		for _, c := range found {
			if first, ok := seen[c.Name]; ok {
				c.Hidden = first
			} else {
				seen[c.Name] = c.Source
			}
			out = append(out, c)
		}
	}
	return out, probs
}

// parseUserCommand reads a command file: optional YAML front matter
// between "---" lines, then the prompt. A front matter that cannot be
// parsed is an error, and the whole file is the prompt.
func parseUserCommand(name, text string) (UserCommand, error) {
	c := UserCommand{Name: name, Body: text}
	rest, ok := strings.CutPrefix(strings.TrimPrefix(text, "\ufeff"), "---\n")
	if !ok {
		return c, nil
	}
	front, body, ok := strings.Cut(rest, "\n---")
	if !ok {
		return c, nil
	}
	body = strings.TrimPrefix(strings.TrimPrefix(body, "\r"), "\n")
	var fm struct {
		Description  string `yaml:"description"`
		ArgumentHint string `yaml:"argument-hint"`
		Model        string `yaml:"model"`
		AllowedTools any    `yaml:"allowed-tools"`
	}
	if err := yaml.Unmarshal([]byte(front), &fm); err != nil {
		return c, fmt.Errorf("front matter: %w", err)
	}
	c.Body, c.Description, c.ArgumentHint, c.Model = body, fm.Description, fm.ArgumentHint, fm.Model
	switch v := fm.AllowedTools.(type) {
	case string:
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				c.AllowedTools = append(c.AllowedTools, t)
			}
		}
	case []any:
		for _, t := range v {
			c.AllowedTools = append(c.AllowedTools, fmt.Sprint(t))
		}
	}
	return c, nil
}

// argRef is $ARGUMENTS or $1..$9.
var argRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$(ARGUMENTS|[1-9])`) })

// Substitute puts the arguments into the command's text: $ARGUMENTS is
// all of them as typed, $1..$9 each word (quotes group words), missing
// ones empty. A text with no $ARGUMENTS gets the arguments appended, so
// that none is lost.
func (c UserCommand) Substitute(args string) string {
	args = strings.TrimSpace(args)
	words, err := splitWords(args)
	if err != nil {
		words = nil
		for _, f := range strings.Fields(args) {
			words = append(words, word{text: f})
		}
	}
	body := argRef().ReplaceAllStringFunc(c.Body, func(m string) string {
		if m == "$ARGUMENTS" {
			return args
		}
		n, _ := strconv.Atoi(m[1:])
		if n <= len(words) {
			return words[n-1].text
		}
		return ""
	})
	if args != "" && !strings.Contains(c.Body, "$ARGUMENTS") && !argRef().MatchString(c.Body) {
		body = strings.TrimRight(body, "\n") + "\n\n" + args
	}
	return body
}

// shellRef is a "!`cmd`" in a command's text.
var shellRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("!`([^`\n]+)`") })

// mentionRef is an "@path" word.
var mentionRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)@([^\s@]+)`) })

// Expander runs what a command's text asks for on the user's behalf.
type Expander struct {
	// Shell runs a command as the Bash tool does, with its permission
	// (the dialog; print mode's --allow), and returns what it printed.
	// An error (denied, failed to start) stops the command.
	Shell func(ctx context.Context, command string) (string, error)
	// Attach reads a file as Read shows it; ok is false when it names no
	// file (the "@word" stays text).
	Attach func(ctx context.Context, path string) (text string, ok bool, err error)
}

// Expand is the prompt the command sends for args: substituted, each
// "!`cmd`" replaced by its output, each "@path" that names a file
// attached after the text.
func (c UserCommand) Expand(ctx context.Context, args string, x Expander) (string, error) {
	text := c.Substitute(args)
	var shellErr error
	text = shellRef().ReplaceAllStringFunc(text, func(m string) string {
		if shellErr != nil {
			return m
		}
		cmd := shellRef().FindStringSubmatch(m)[1]
		if x.Shell == nil {
			shellErr = fmt.Errorf("/%s: cannot run !`%s` here", c.Name, cmd)
			return m
		}
		out, err := x.Shell(ctx, cmd)
		if err != nil {
			shellErr = fmt.Errorf("/%s: !`%s`: %w", c.Name, cmd, err)
			return m
		}
		return strings.TrimRight(out, "\n")
	})
	if shellErr != nil {
		return "", shellErr
	}
	if x.Attach == nil {
		return text, nil
	}
	var b strings.Builder
	done := map[string]bool{}
	for _, m := range mentionRef().FindAllStringSubmatch(text, -1) {
		p := strings.TrimRight(m[1], ".,;:!?)")
		if done[p] {
			continue
		}
		done[p] = true
		body, ok, err := x.Attach(ctx, p)
		if err != nil {
			return "", fmt.Errorf("/%s: @%s: %w", c.Name, p, err)
		}
		if ok {
			fmt.Fprintf(&b, "\n\n<file path=%q>\n%s\n</file>", p, body)
		}
	}
	return text + b.String(), nil
}

// UserCommand returns the user command a line names, when it is one that
// runs (not hidden by a built-in or another user command); the second
// result is what the line passes it.
func (r *Registry) UserCommand(line string) (UserCommand, string, bool) {
	name, args, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "/"), " ")
	for _, c := range r.user {
		if c.Name == name && c.Hidden == "" {
			return c, args, true
		}
	}
	return UserCommand{}, "", false
}

// ShadowedBy says, for a line naming a built-in command, which user
// command of that name it hides ("" when none).
func (r *Registry) ShadowedBy(line string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "/"), " ")
	if r.lookup(strings.ToLower(name)) == nil {
		return ""
	}
	for _, c := range r.user {
		if c.Name == name {
			return c.Source
		}
	}
	return ""
}

// markHidden marks the user commands a built-in hides.
func (r *Registry) markHidden() {
	for i, c := range r.user {
		if c.Hidden == "" && r.lookup(strings.ToLower(c.Name)) != nil {
			r.user[i].Hidden = "the built-in /" + strings.ToLower(c.Name)
		}
	}
}

// runUser runs a user command: its expanded text goes to the model.
func (r *Registry) runUser(ctx context.Context, c UserCommand, args string) (Result, error) {
	prompt, err := c.Expand(ctx, args, r.deps.Expander)
	if err != nil {
		return Result{}, err
	}
	if strings.TrimSpace(prompt) == "" {
		return Result{}, fmt.Errorf("/%s: %s is empty", c.Name, c.Source)
	}
	note := "/" + c.Name + " (" + c.Source + ")"
	if c.Model != "" {
		note += fmt.Sprintf("; it asks for model %s: switch with /model %s first if you want it", c.Model, c.Model)
	}
	return Result{Action: ActionPrompt, Prompt: prompt, Text: note}, nil
}

// userHelp is /help's section of the user's commands: each with its
// source, and those hidden saying by what.
func (r *Registry) userHelp() []Section {
	if len(r.user) == 0 {
		return nil
	}
	sec := Section{Title: "Your commands"}
	for _, c := range r.user {
		use := "/" + c.Name
		if c.ArgumentHint != "" {
			use += " " + c.ArgumentHint
		}
		what := c.Description
		if what == "" {
			what = firstLine(c.Body)
		}
		line := fmt.Sprintf("%-44s %s (%s)", use, what, c.Source)
		if c.Hidden != "" {
			line = fmt.Sprintf("%-44s not run: %s wins (rename %s)", use, c.Hidden, c.Source)
		}
		sec.Lines = append(sec.Lines, line)
	}
	return []Section{sec}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return termtext.OneLine(s, 60)
}
