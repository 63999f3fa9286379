// Package mcp runs the user's Model Context Protocol servers: it turns
// their configuration ([mcp.NAME] tables, a project's .mcp.json) into
// clients of the official SDK, keeps each server running in the
// background (start at launch, restart with backoff, a timeout per call,
// processes that die with gencode), and adapts what they offer: tools
// named mcp__SERVER__TOOL (tools.Extension), the ListMcpResources and
// ReadMcpResource tools, prompts as slash commands, and the status /mcp
// and `gencode mcp list` report.
//
// MCP tool schemas can be large (a popular server's fill 10-20k tokens of
// every request). When they would take more than a share of the window
// (Options.DeferRatio), they are deferred: the model gets one small tool,
// SearchMcpTools, that finds tools by name and description and loads the
// chosen ones. Loaded tools stay for the session and are appended at the
// end of the tool list, never reordered, so the request prefix a provider
// caches stays byte-stable.
package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds a call (and a server's start) when its config
// sets none.
const DefaultTimeout = 60 * time.Second

// DefaultDeferRatio is the share of the window MCP schemas may take before
// they are deferred behind SearchMcpTools.
const DefaultDeferRatio = 0.10

// ProjectFile is the project's server file, in Claude Code's format.
const ProjectFile = ".mcp.json"

// ServerConfig is one server: a command to run (stdio), or a URL
// (streamable HTTP, or the older SSE transport).
type ServerConfig struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Transport is "stdio", "http" (streamable HTTP) or "sse"; "" infers
	// stdio from Command, http from URL.
	Transport string
	Disabled  bool
	Timeout   time.Duration // per call and for the start; 0: DefaultTimeout
	// Tools run without asking (the tool names as the server calls them);
	// the others ask like any tool.
	Tools []string
	// Project: from the project's .mcp.json; starts only once approved.
	Project bool
}

// transport is the resolved transport name.
func (c ServerConfig) transport() string {
	switch {
	case c.Transport != "":
		return c.Transport
	case c.Command != "":
		return "stdio"
	default:
		return "http"
	}
}

func (c ServerConfig) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// Validate reports a config that cannot be started.
func (c ServerConfig) Validate() error {
	switch {
	case c.Name == "":
		return errors.New("mcp server without a name")
	case c.Command == "" && c.URL == "":
		return fmt.Errorf("mcp server %s: set command (stdio) or url (http)", c.Name)
	case c.Command != "" && c.URL != "":
		return fmt.Errorf("mcp server %s: set command or url, not both", c.Name)
	}
	switch c.transport() {
	case "stdio", "http", "sse":
	default:
		return fmt.Errorf("mcp server %s: unknown transport %q (stdio, http, sse)", c.Name, c.Transport)
	}
	return nil
}

// runs is what c runs, as the user reads it before approving it: the
// command and its arguments (quoted where they hold spaces), or the URL,
// and the names of the variables it sets (which can change what runs:
// LD_PRELOAD, NODE_OPTIONS, PATH), never their values or its headers
// (they may hold tokens).
func (c ServerConfig) runs() string {
	if c.URL != "" {
		return c.URL
	}
	words := []string{c.Command}
	for _, a := range c.Args {
		if a == "" || strings.ContainsAny(a, " \t'\"") {
			a = strconv.Quote(a)
		}
		words = append(words, a)
	}
	out := strings.Join(words, " ")
	if len(c.Env) > 0 {
		out += " (env: " + strings.Join(slices.Sorted(maps.Keys(c.Env)), ", ") + ")"
	}
	return out
}

// Fingerprint identifies what an approval of a project server covers: its
// command line, URL and environment. A changed .mcp.json entry asks again.
func (c ServerConfig) Fingerprint() string {
	b, _ := json.Marshal(struct {
		C string            `json:"c,omitempty"`
		A []string          `json:"a,omitempty"`
		E map[string]string `json:"e,omitempty"`
		U string            `json:"u,omitempty"`
		H map[string]string `json:"h,omitempty"`
	}{c.Command, c.Args, c.Env, c.URL, c.Headers})
	return string(b)
}

// projectFile is .mcp.json as Claude Code writes it.
type projectFile struct {
	Servers map[string]struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	} `json:"mcpServers"`
}

// ReadProjectFile reads dir's .mcp.json: its servers, marked Project,
// sorted by name; none when there is no file.
func ReadProjectFile(dir string) ([]ServerConfig, error) {
	data, err := os.ReadFile(filepath.Join(dir, ProjectFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ProjectFile, err)
	}
	var f projectFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("parse %s: %w", ProjectFile, err)
	}
	var out []ServerConfig
	for name, s := range f.Servers {
		t := s.Type
		if t == "streamable-http" || t == "streamableHttp" {
			t = "http"
		}
		out = append(out, ServerConfig{Name: name, Command: s.Command, Args: s.Args, Env: s.Env,
			URL: s.URL, Headers: s.Headers, Transport: t, Project: true})
	}
	slices.SortFunc(out, func(a, b ServerConfig) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// expandVars replaces ${VAR} and ${VAR:-default} (Claude Code's .mcp.json
// syntax; also $VAR) with lookup's values.
func expandVars(s string, lookup func(string) (string, bool)) string {
	return os.Expand(s, func(k string) string {
		name, def, hasDef := strings.Cut(k, ":-")
		if v, ok := lookup(name); ok && (v != "" || !hasDef) {
			return v
		}
		return def
	})
}

var invalidName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_-]+`) })

// maxName is OpenAI's bound on a function name.
const maxName = 64

// sanitize makes s a valid part of a function name.
func sanitize(s string) string {
	s = invalidName().ReplaceAllString(s, "_")
	if s == "" {
		s = "_"
	}
	return s
}

// ToolName is the model's name for a server's tool: mcp__SERVER__TOOL,
// sanitized to ^[a-zA-Z0-9_-]{1,64}$; a name that would be longer keeps
// its head and ends with a short hash of the whole, so two long names
// stay apart.
func ToolName(server, tool string) string {
	n := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(n) <= maxName {
		return n
	}
	return hashed(n, server+"\x00"+tool)
}

// hashed is n cut to leave room for a hash of key at its end.
func hashed(n, key string) string {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * 16777619
	}
	suffix := fmt.Sprintf("_%08x", h)
	return n[:min(len(n), maxName-len(suffix))] + suffix
}

// GroupName is the permission name covering all of a server's tools.
func GroupName(server string) string {
	n := "mcp__" + sanitize(server)
	if len(n) > maxName {
		n = n[:maxName]
	}
	return n
}
