package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ModelConfig is one [models."NAME"] table: settings for the requests sent
// to that model, whichever role it has (the agent's, after /model, or the
// summarizer's). Zero values are unset.
type ModelConfig struct {
	// ContextWindow replaces the top-level context_window for this model.
	ContextWindow int `toml:"context_window"`
	// MaxTokens bounds each answer (sent as max_tokens, or
	// max_completion_tokens to the models that require it); for the
	// summarizer it caps the bound each summary request asks for.
	MaxTokens int `toml:"max_tokens"`
	// ReasoningEffort is sent as reasoning_effort to the models known to
	// take it, and left out for the others.
	ReasoningEffort string `toml:"reasoning_effort"`
	// Extra holds request fields sent as written, merged last into every
	// chat-completions body for this model (a server's or router's own
	// options: top_k, options = {num_ctx = ...}, provider = {...}).
	Extra map[string]any `toml:"extra"`
}

// ReasoningEfforts are the reasoning_effort values gencode accepts.
func ReasoningEfforts() []string {
	return []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}
}

// reservedExtra are the request fields gencode writes itself: an extra
// field of these names would break the conversation, so it is refused.
func reservedExtra() []string {
	return []string{"messages", "model", "stream", "stream_options", "tool_choice", "tools"}
}

// ModelSettings are the effective settings of the requests to one model,
// each with where it came from (Sources, as Settings shows them:
// "path:line", "env NAME", "default"; a key not set has no source).
type ModelSettings struct {
	Model string
	// ContextWindow is the configured window: the model's table, else the
	// top-level context_window; 0: not configured (the caller uses the
	// known-model table or what the server says). Where both are known,
	// the smaller of this and the server's window applies.
	ContextWindow   int
	MaxTokens       int
	ReasoningEffort string
	// Extra is the table's extra request fields (nil: none). Do not
	// modify it: it is shared with the Config.
	Extra map[string]any
	// Sources maps "context_window", "max_tokens", "reasoning_effort" and
	// "extra.KEY" to where each set value came from.
	Sources map[string]string
}

// ModelSettings returns the settings for requests to model: its
// [models."NAME"] table (the name as the endpoint knows it, exactly), with
// the top-level context_window where the table has none.
func (c Config) ModelSettings(model string) ModelSettings {
	ms := c.tableSettings(model)
	if ms.ContextWindow == 0 && c.ContextWindow > 0 {
		ms.ContextWindow = c.ContextWindow
		ms.Sources["context_window"] = c.source("context_window")
	}
	return ms
}

// SummarizerSettings returns the settings for the summarizer's requests.
// When the summarizer uses the main model they are that model's
// (ModelSettings); another model gets its own table only: the top-level
// context_window is the main model's.
func (c Config) SummarizerSettings() ModelSettings {
	if m := c.SummaryModel(); m != c.Model {
		return c.tableSettings(m)
	}
	return c.ModelSettings(c.Model)
}

// tableSettings are model's own table's settings, nothing inherited.
func (c Config) tableSettings(model string) ModelSettings {
	t := c.Models[model]
	ms := ModelSettings{Model: model, ContextWindow: t.ContextWindow, MaxTokens: t.MaxTokens,
		ReasoningEffort: t.ReasoningEffort, Extra: t.Extra, Sources: map[string]string{}}
	prefix := modelKey(model, "")
	for _, k := range []string{"context_window", "max_tokens", "reasoning_effort"} {
		if src := c.Sources[prefix+k]; src != "" {
			ms.Sources[k] = c.source(prefix + k)
		}
	}
	for k := range t.Extra {
		ms.Sources["extra."+k] = c.source(prefix + "extra." + k)
	}
	return ms
}

// modelKey is the dotted key of a field of model's table, as Sources and
// Lines hold it (the name unquoted, as for [pricing]).
func modelKey(model, field string) string { return "models." + model + "." + field }

// source says where key's value came from, as /config shows it: a file's
// path:line, "env NAME", "flag --name" or "default". A table (an inline
// one too) is placed at its line.
func (c Config) source(key string) string {
	src := c.Sources[key]
	switch {
	case src == "" && c.File != "" && c.Lines[key] > 0:
		return c.File + ":" + strconv.Itoa(c.Lines[key])
	case src == "":
		return "default"
	case src == c.File && c.Lines[key] > 0:
		return src + ":" + strconv.Itoa(c.Lines[key])
	}
	return src
}

// validateModels checks the [models] tables; bad reports an error at key.
func (c *Config) validateModels(bad func(key, msg string) error) error {
	for _, name := range sortedKeys(c.Models) {
		m := c.Models[name]
		key := func(field string) string { return modelKey(name, field) }
		switch {
		case strings.TrimSpace(name) == "":
			return bad("models.", "a model table needs the model's name: [models.\"NAME\"]")
		case m.ContextWindow < 0:
			return bad(key("context_window"), "must be a positive number of tokens (or left out: the top-level context_window)")
		case m.ContextWindow > 0 && m.ContextWindow < 1024:
			return bad(key("context_window"), "must be at least 1024 tokens")
		case m.MaxTokens < 0:
			return bad(key("max_tokens"), "must be a positive number of tokens (or left out: the provider's default)")
		case m.ContextWindow > 0 && m.MaxTokens >= m.ContextWindow:
			return bad(key("max_tokens"), fmt.Sprintf("must be below context_window (%d): the answer shares the window with the prompt", m.ContextWindow))
		case m.ContextWindow == 0 && c.ContextWindow > 0 && m.MaxTokens >= c.ContextWindow:
			return bad(key("max_tokens"), fmt.Sprintf("must be below the top-level context_window (%d), which this model takes: the answer shares the window with the prompt", c.ContextWindow))
		case m.ReasoningEffort != "" && !slices.Contains(ReasoningEfforts(), m.ReasoningEffort):
			return bad(key("reasoning_effort"), fmt.Sprintf("must be one of %s, not %q (another value can be sent as written with extra.reasoning_effort)",
				strings.Join(ReasoningEfforts(), ", "), m.ReasoningEffort))
		}
		for _, k := range sortedKeys(m.Extra) {
			if slices.Contains(reservedExtra(), k) {
				return bad(key("extra."+k), "is a request field gencode sets itself and cannot be replaced")
			}
			if _, err := json.Marshal(m.Extra[k]); err != nil {
				return bad(key("extra."+k), fmt.Sprintf("cannot be sent as JSON: %v", err))
			}
		}
	}
	return nil
}

// modelSettings lists the [models] tables' keys for Settings: the fields
// a table sets, and each extra field as its JSON.
func (c Config) modelSettings(vals map[string]string) {
	for name, m := range c.Models {
		if m.ContextWindow != 0 {
			vals[modelKey(name, "context_window")] = strconv.Itoa(m.ContextWindow)
		}
		if m.MaxTokens != 0 {
			vals[modelKey(name, "max_tokens")] = strconv.Itoa(m.MaxTokens)
		}
		if m.ReasoningEffort != "" {
			vals[modelKey(name, "reasoning_effort")] = m.ReasoningEffort
		}
		for k, v := range m.Extra {
			vals[modelKey(name, "extra."+k)] = ExtraJSON(v)
		}
	}
}

// ExtraJSON is an extra request field's value as it is sent.
func ExtraJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // refused by Validate
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// ModelNames are the models that have a [models."NAME"] table, sorted.
func (c Config) ModelNames() []string { return sortedKeys(c.Models) }
