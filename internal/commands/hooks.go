package commands

import (
	"context"
	"errors"
	"fmt"
)

// HookState is one hook as /hooks lists it.
type HookState struct {
	// Line describes it: event, matcher, command, the file it is from.
	Line string
	// Project: from the repository, so it runs only once approved.
	Project, Approved bool
}

// Hooks is what /hooks lists and approves.
type Hooks interface {
	// HookStates are the hooks of this directory; problems are the
	// settings files that could not be read.
	HookStates() (states []HookState, problems []string)
	// ApproveProjectHooks approves the project's hooks not yet approved,
	// and says how many.
	ApproveProjectHooks() (int, error)
}

// runHooks lists the hooks of the directory, or approves the project's.
func runHooks(_ context.Context, r *Registry, _ State, in Invocation) (Result, error) {
	h := r.deps.Hooks
	if h == nil {
		return Result{Text: "No hooks in this run."}, nil
	}
	switch {
	case len(in.Args) == 1 && in.Args[0] == "approve":
		n, err := h.ApproveProjectHooks()
		if err != nil {
			return Result{}, fmt.Errorf("/hooks: %w", err)
		}
		if n == 0 {
			return Result{Text: "No project hook is waiting for approval."}, nil
		}
		return Result{Text: fmt.Sprintf("Approved %d project hook(s): they run from now on (a changed hook needs approving again).", n)}, nil
	case len(in.Args) > 0:
		return Result{}, errors.New("/hooks: usage: /hooks [approve]")
	}
	states, probs := h.HookStates()
	if len(states) == 0 && len(probs) == 0 {
		return Result{Text: "No hooks: add [[hooks.EVENT]] to config.toml, or hooks to .claude/settings.json."}, nil
	}
	sec := Section{}
	waiting := 0
	for _, s := range states {
		state := "runs"
		if s.Project {
			state = "approved"
			if !s.Approved {
				state = "not approved"
				waiting++
			}
		}
		sec.Lines = append(sec.Lines, fmt.Sprintf("%-13s %s", state, s.Line))
	}
	secs := []Section{sec}
	if len(probs) > 0 {
		secs = append(secs, Section{Title: "Problems", Lines: probs})
	}
	rep := &Report{Title: "Hooks", Sections: secs, Footer: "hooks run with the Bash tool's environment and sandbox"}
	if waiting > 0 {
		rep.Footer = fmt.Sprintf("%d project hook(s) are code from the repository: /hooks approve (gencode hooks --approve) lets them run", waiting)
	}
	return Result{Report: rep}, nil
}
