package commands

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gencode/gencode/internal/termtext"
	"github.com/gencode/gencode/internal/tools"
)

// ProjectPermissions are the permission rules saved for the project with
// "always for this project" (the permission dialog's AllowProject).
type ProjectPermissions interface {
	Rules() ([]tools.Rule, error)
	Revoke(n int) (tools.Rule, error)
	// Problem is what keeps the rules from working: a file that cannot
	// be read, or the last rule that could not be saved (nil: none).
	Problem() error
	Path() string
}

// permissionsSection lists the saved rules, numbered as /permissions
// revoke takes them, and what keeps them from working.
func permissionsSection(p ProjectPermissions) Section {
	sec := Section{Title: "Permissions for this project"}
	rules, err := p.Rules()
	for i, r := range rules {
		sec.Lines = append(sec.Lines, fmt.Sprintf("%2d  %-6s %s", i+1, r.Tool, ruleText(r)))
	}
	if err == nil {
		err = p.Problem()
	}
	switch {
	case err != nil:
		sec.Lines = append(sec.Lines, "problem: "+termtext.OneLine(err.Error(), 0))
	case len(rules) == 0:
		sec.Lines = append(sec.Lines, `none saved ("always for this project" in the permission dialog saves one)`)
	}
	return sec
}

// ruleText is what a rule allows, as /permissions lists it after the
// tool's name: "every Edit inside the project", or a Bash rule's command.
func ruleText(r tools.Rule) string {
	what := r.String()
	if r.Tool != tools.ToolBash {
		what = "every " + r.Tool + " inside the project"
	}
	return termtext.OneLine(what, 0)
}

// sandboxSection says which sandbox holds the shell commands.
func sandboxSection(lines []string) Section {
	sec := Section{Title: "Sandbox (Bash and !commands)"}
	for _, l := range lines {
		sec.Lines = append(sec.Lines, termtext.OneLine(l, 0))
	}
	return sec
}

// runPermissions lists the project's saved rules, or revokes one:
// /permissions revoke N.
func runPermissions(_ context.Context, r *Registry, _ State, in Invocation) (Result, error) {
	p := r.deps.Permissions
	if p == nil {
		text := "No permission rules can be saved in this run."
		if len(r.deps.Sandbox) > 0 {
			text += "\n" + strings.Join(sandboxSection(r.deps.Sandbox).Lines, "\n")
		}
		return Result{Text: text}, nil
	}
	switch {
	case len(in.Args) == 0:
		secs := []Section{permissionsSection(p)}
		if len(r.deps.Sandbox) > 0 {
			secs = append(secs, sandboxSection(r.deps.Sandbox))
		}
		rep := &Report{Title: "Permissions", Sections: secs,
			Footer: "file: " + p.Path() + " · /permissions revoke N removes rule N"}
		return Result{Report: rep}, nil
	case in.Args[0] == "revoke" && len(in.Args) == 2:
		n, err := strconv.Atoi(in.Args[1])
		if err != nil {
			return Result{}, fmt.Errorf("/permissions revoke %q: give the rule's number, as /permissions lists them", in.Args[1])
		}
		gone, err := p.Revoke(n)
		if err != nil {
			return Result{}, fmt.Errorf("/permissions: %w", err)
		}
		return Result{Text: fmt.Sprintf("Revoked rule %d (%s %s): such calls ask again.", n, gone.Tool, ruleText(gone))}, nil
	}
	return Result{}, errors.New("/permissions: usage: /permissions [revoke N]")
}
