package commands

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gencode/gencode/internal/termtext"
)

// modelsSection says what each [models."NAME"] table does: which model is
// in use and which summarizes, the window it sets, and whether its
// reasoning_effort is sent. ok is false when the config has no table.
func modelsSection(r *Registry, st State) (sec Section, ok bool) {
	cfg := r.deps.Config
	names := cfg.ModelNames()
	if len(names) == 0 {
		return Section{}, false
	}
	sec.Title = `Per-model settings ([models."NAME"])`
	current := st.Model
	if current == "" {
		current = cfg.Model
	}
	summarizer := cfg.Summarize.Model
	if summarizer == "" {
		summarizer = current
	}
	for _, name := range names {
		var roles []string
		if name == current {
			roles = append(roles, "in use")
		}
		if name == summarizer {
			roles = append(roles, "summarizer")
		}
		ms := cfg.ModelSettings(name)
		if len(roles) == 0 {
			roles = append(roles, "applies after /model "+name)
		}
		var parts []string
		if t := cfg.Models[name]; t.ContextWindow > 0 {
			parts = append(parts, fmt.Sprintf("context window %s tokens (the server's, when smaller, wins)", termtext.Thousands(t.ContextWindow)))
		}
		if ms.MaxTokens > 0 {
			parts = append(parts, "answers up to "+termtext.Thousands(ms.MaxTokens)+" tokens")
		}
		if e := ms.ReasoningEffort; e != "" {
			switch {
			case ms.Extra["reasoning_effort"] != nil:
				parts = append(parts, fmt.Sprintf("reasoning_effort %q is replaced by extra.reasoning_effort", e))
			case r.deps.TakesReasoningEffort == nil:
				parts = append(parts, fmt.Sprintf("reasoning_effort %q", e))
			case r.deps.TakesReasoningEffort(name):
				parts = append(parts, fmt.Sprintf("reasoning_effort %q is sent", e))
			default:
				parts = append(parts, fmt.Sprintf("reasoning_effort %q is not sent: %s is not known to take it (extra.reasoning_effort sends it as written)", e, name))
			}
		}
		if keys := slices.Sorted(maps.Keys(ms.Extra)); len(keys) > 0 {
			parts = append(parts, "extra fields sent as written: "+strings.Join(keys, ", "))
		}
		line := fmt.Sprintf("%s (%s)", termtext.OneLine(name, 0), strings.Join(roles, ", "))
		if len(parts) > 0 {
			line += ": " + strings.Join(parts, "; ")
		}
		sec.Lines = append(sec.Lines, line)
	}
	// A table whose name differs from the model's only in case does not
	// apply: model names are the endpoint's, exactly.
	if _, ok := cfg.Models[current]; !ok {
		for _, name := range names {
			if strings.EqualFold(name, current) {
				sec.Lines = append(sec.Lines, fmt.Sprintf("no table for %s, the model in use: [models.%q] differs in case and does not apply", current, name))
			}
		}
	}
	return sec, true
}
