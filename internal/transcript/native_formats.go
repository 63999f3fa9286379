package transcript

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"
)

// claude reads a Claude Code session file (~/.claude/projects/*/ID.jsonl):
// one record a line; "user" and "assistant" records carry an Anthropic
// message whose content is text or blocks (text, thinking, tool_use,
// tool_result). An assistant message is written one block a record: the
// records of one message id are joined.
func (n *nativeParse) claude(data []byte, name string) error {
	type block struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
		IsError   bool            `json:"is_error"`
	}
	type record struct {
		Type        string `json:"type"`
		IsSidechain bool   `json:"isSidechain"`
		IsMeta      bool   `json:"isMeta"`
		Cwd         string `json:"cwd"`
		Timestamp   string `json:"timestamp"`
		Summary     string `json:"summary"`
		Message     *struct {
			ID      string          `json:"id"`
			Role    string          `json:"role"`
			Model   string          `json:"model"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	open := -1 // the index of the assistant message being joined
	openID := ""
	// A subagent's records (isSidechain) written between a Task call and
	// its result are held after that result when it comes, so the call
	// keeps its result (else it would read as a call that never ran).
	waiting := map[string]bool{} // the main chain's calls without a result yet
	held := -1                   // where the held sidechain items start
	return eachLine(data, name, func(line int, b []byte) error {
		var r record
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("not a Claude Code record: %w", err)
		}
		mark := len(n.items)
		defer func() {
			switch {
			case r.IsSidechain:
				if held < 0 && len(waiting) > 0 && len(n.items) > mark {
					held = mark
				}
			case held < 0 || len(n.items) == mark:
			case n.items[mark].msg.Role != openai.ChatMessageRoleTool:
				held = -1 // the main chain went on without the results
			default:
				// The main chain's results go before the held items.
				res := slices.Clone(n.items[mark:])
				copy(n.items[held+len(res):], n.items[held:mark])
				copy(n.items[held:], res)
				held += len(res)
				open = -1
			}
			if len(waiting) == 0 {
				held = -1
			}
		}()
		if n.src.Cwd == "" && r.Cwd != "" {
			n.src.Cwd = r.Cwd
		}
		if r.Type == "summary" && r.Summary != "" {
			open = -1
			n.add(line, r.Timestamp, openai.ChatCompletionMessage{Role: "summary", Content: r.Summary})
			return nil
		}
		if r.Message == nil || (r.Type != "user" && r.Type != "assistant") {
			return nil // file-history-snapshot, system notes, progress
		}
		var blocks []block
		var text string
		if json.Unmarshal(r.Message.Content, &text) != nil {
			if err := json.Unmarshal(r.Message.Content, &blocks); err != nil {
				return fmt.Errorf("message content is neither text nor blocks: %w", err)
			}
		}
		if r.Type == "assistant" {
			if m := r.Message.Model; n.src.Model == "" && m != "" && m != "<synthetic>" {
				n.src.Model = m
			}
			if open < 0 || r.Message.ID == "" || r.Message.ID != openID {
				if !r.IsSidechain {
					clear(waiting) // a new turn: calls still without a result never get one
				}
				n.add(line, r.Timestamp, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant})
				open, openID = len(n.items)-1, r.Message.ID
			}
			msg := &n.items[open].msg
			for _, bl := range blocks {
				switch bl.Type {
				case "text":
					msg.Content += bl.Text
				case "tool_use":
					if !r.IsSidechain {
						waiting[bl.ID] = true
					}
					args := string(bl.Input)
					if args == "" || args == "null" {
						args = "{}"
					}
					msg.ToolCalls = append(msg.ToolCalls, toolCall(bl.ID, bl.Name, args))
				}
			}
			msg.Content += text
			return nil
		}
		open = -1
		if !r.IsSidechain && !slices.ContainsFunc(blocks, func(bl block) bool { return bl.Type == "tool_result" }) {
			clear(waiting) // the user spoke: calls still without a result never get one
		}
		role := openai.ChatMessageRoleUser
		if r.IsSidechain || r.IsMeta {
			role = "sidechain" // a subagent's prompt, or Claude Code's own note: context
		}
		if text != "" {
			n.add(line, r.Timestamp, openai.ChatCompletionMessage{Role: role, Content: text})
		}
		for _, bl := range blocks {
			switch bl.Type {
			case "text":
				n.add(line, r.Timestamp, openai.ChatCompletionMessage{Role: role, Content: bl.Text})
			case "tool_result":
				if !r.IsSidechain {
					delete(waiting, bl.ToolUseID)
				}
				out := textOf(bl.Content)
				it := n.add(line, r.Timestamp, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: bl.ToolUseID, Content: out})
				it.notRun = bl.IsError && notRunRe().MatchString(head(out, 400))
			}
		}
		return nil
	})
}

// codex reads a Codex CLI rollout (~/.codex/sessions/.../rollout-*.jsonl):
// {timestamp, type, payload} lines; session_meta and turn_context give the
// cwd and model, response_item holds the messages, function calls
// (shell, apply_patch, ...), custom tool calls and their outputs. Older
// rollouts hold the items bare, after a first {id, timestamp,
// instructions} line.
func (n *nativeParse) codex(data []byte, name string) error {
	type item struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Input     string          `json:"input"`
		CallID    string          `json:"call_id"`
		Output    json.RawMessage `json:"output"`
		Action    *struct {
			Command []string `json:"command"`
			Workdir string   `json:"working_directory"`
		} `json:"action"`
		// session_meta, turn_context
		Cwd   string `json:"cwd"`
		Model string `json:"model"`
		// event_msg user_message
		Message string `json:"message"`
	}
	type wrapper struct {
		Timestamp string          `json:"timestamp"`
		Type      string          `json:"type"`
		Payload   json.RawMessage `json:"payload"`
	}
	dirs := map[string]string{} // call id -> workdir
	// The user's request is a response_item message and, in the same
	// turn, an event_msg user_message; some rollouts (Codex Desktop)
	// hold only the event. Each request is taken once: from whichever
	// comes first, the other skipped when it says the same (lastUser,
	// and the kind it came from).
	var lastUser, lastFrom string
	user := func(line int, ts, from, text string) {
		if from != lastFrom && lastUser != "" && strings.TrimSpace(text) == lastUser {
			lastUser = "" // the pair is complete
			return
		}
		lastUser, lastFrom = strings.TrimSpace(text), from
		n.add(line, ts, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text})
	}
	return eachLine(data, name, func(line int, b []byte) error {
		var w wrapper
		if err := json.Unmarshal(b, &w); err != nil {
			return fmt.Errorf("not a Codex rollout line: %w", err)
		}
		raw := w.Payload
		if raw == nil {
			raw = b // an older rollout: the item itself
		}
		var it item
		if err := json.Unmarshal(raw, &it); err != nil {
			return fmt.Errorf("not a Codex item: %w", err)
		}
		switch w.Type {
		case "session_meta", "turn_context":
			if it.Cwd != "" && (n.src.Cwd == "" || w.Type == "session_meta") {
				n.src.Cwd = it.Cwd
			}
			if it.Model != "" && n.src.Model == "" {
				n.src.Model = it.Model
			}
			return nil
		case "event_msg":
			if it.Type == "user_message" && strings.TrimSpace(it.Message) != "" {
				user(line, w.Timestamp, "event", it.Message)
			}
			return nil // else the same turns again, as the UI showed them
		case "compacted":
			return nil
		}
		ts := w.Timestamp
		switch it.Type {
		case "message":
			text := textOf(it.Content)
			role := it.Role
			if role == openai.ChatMessageRoleUser && (strings.HasPrefix(strings.TrimSpace(text), "<environment_context>") ||
				strings.HasPrefix(strings.TrimSpace(text), "<user_instructions>") || strings.HasPrefix(strings.TrimSpace(text), "# AGENTS.md")) {
				if m := cwdTagRe().FindStringSubmatch(text); m != nil && n.src.Cwd == "" {
					n.src.Cwd = strings.TrimSpace(m[1])
				}
				role = "context"
			}
			if role == openai.ChatMessageRoleUser {
				user(line, ts, "item", text)
				return nil
			}
			n.add(line, ts, openai.ChatCompletionMessage{Role: role, Content: text})
		case "function_call", "custom_tool_call", "local_shell_call":
			args := it.Arguments
			switch {
			case it.Type == "custom_tool_call":
				args = jsonArgs(map[string]string{"input": it.Input})
			case it.Type == "local_shell_call" && it.Action != nil:
				args = jsonArgs(map[string]any{"command": it.Action.Command, "workdir": it.Action.Workdir})
				it.Name = "local_shell"
			}
			var a struct {
				Workdir string `json:"workdir"`
			}
			_ = json.Unmarshal([]byte(args), &a)
			if a.Workdir != "" {
				dirs[it.CallID] = a.Workdir
			}
			n.assistantCall(line, ts, toolCall(it.CallID, it.Name, args))
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			out := textOf(it.Output)
			var wrapped struct {
				Output   string `json:"output"`
				Metadata struct {
					ExitCode *int `json:"exit_code"`
				} `json:"metadata"`
			}
			if json.Unmarshal([]byte(out), &wrapped) == nil && wrapped.Output != "" {
				out = wrapped.Output
			}
			r := n.add(line, ts, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: it.CallID, Content: out})
			r.dir = dirs[it.CallID]
			if r.dir == "" {
				r.dir = n.src.Cwd
			}
		}
		return nil
	})
}

var cwdTagRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<cwd>([^<]+)</cwd>`) })

// assistantCall adds a call to the assistant message just before, or a
// new assistant message: Codex writes a reply's calls as items of their own.
func (n *nativeParse) assistantCall(line int, ts string, c openai.ToolCall) {
	if k := len(n.items) - 1; k >= 0 && n.items[k].msg.Role == openai.ChatMessageRoleAssistant {
		n.items[k].msg.ToolCalls = append(n.items[k].msg.ToolCalls, c)
		return
	}
	n.add(line, ts, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{c}})
}

// sweAgent reads a SWE-agent trajectory (*.traj): its "trajectory" steps,
// each an action (a shell command or one of SWE-agent's commands: open,
// edit, create, find_file, submit ...) with its observation, thought and
// state ({"working_dir": ...}); the task is the first user message of
// "history".
func (n *nativeParse) sweAgent(data []byte, name string) error {
	var t struct {
		Trajectory []struct {
			Action      string          `json:"action"`
			Observation string          `json:"observation"`
			Thought     string          `json:"thought"`
			Response    string          `json:"response"`
			State       json.RawMessage `json:"state"`
		} `json:"trajectory"`
		History []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"history"`
		Info struct {
			ModelName string `json:"model_name"`
		} `json:"info"`
		ReplayConfig json.RawMessage `json:"replay_config"`
	}
	if err := json.Unmarshal(data, &t); err != nil {
		return fmt.Errorf("%s: not a SWE-agent trajectory: %w", name, err)
	}
	n.src.Model = t.Info.ModelName
	if n.src.Model == "" {
		n.src.Model = modelInConfig(t.ReplayConfig)
	}
	for _, h := range t.History {
		if h.Role == openai.ChatMessageRoleSystem {
			n.add(0, "", openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: textOf(h.Content)})
			continue
		}
		if h.Role == openai.ChatMessageRoleUser {
			n.add(0, "", openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: textOf(h.Content)})
			break
		}
	}
	for k, s := range t.Trajectory {
		state := stateDir(s.State)
		if k == 0 && state != "" {
			n.src.Cwd = state
		}
		thought := s.Thought
		if thought == "" {
			thought = s.Response
		}
		if strings.TrimSpace(s.Action) == "" {
			if strings.TrimSpace(thought) != "" {
				n.add(k+1, "", openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: thought})
			}
			continue
		}
		id := fmt.Sprintf("swe_step_%d", k+1)
		n.add(k+1, "", openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: thought,
			ToolCalls: []openai.ToolCall{toolCall(id, "bash", jsonArgs(map[string]string{"command": strings.TrimSpace(s.Action)}))}})
		r := n.add(k+1, "", openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: s.Observation})
		r.after = state // the state after the step: where the shell is now
	}
	return nil
}

// stateDir reads "working_dir" from a step's state (an object, or a JSON
// string holding one).
func stateDir(raw json.RawMessage) string {
	var st struct {
		WorkingDir string `json:"working_dir"`
	}
	if json.Unmarshal(raw, &st) == nil && st.WorkingDir != "" {
		return st.WorkingDir
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && json.Unmarshal([]byte(s), &st) == nil {
		return st.WorkingDir
	}
	return ""
}

var modelNameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(?:model_name|name)"\s*:\s*"([^"]+)"`) })

func modelInConfig(raw json.RawMessage) string {
	s := textOf(raw)
	if i := strings.Index(s, `"model"`); i >= 0 {
		if m := modelNameRe().FindStringSubmatch(s[i:]); m != nil {
			return m[1]
		}
	}
	return ""
}

// mini reads a mini-swe-agent trajectory (*.traj.json): "messages" in
// OpenAI's shape. In version 1 each assistant message holds one ```bash
// block (the action) and the user message after it the observation
// (<returncode>, <output>); in version 2 the assistant calls the bash tool
// (tool_calls) and a tool message answers. info.config names the model
// and the cwd.
func (n *nativeParse) mini(data []byte, name string) error {
	var t struct {
		Info struct {
			Config struct {
				Model struct {
					ModelName string `json:"model_name"`
				} `json:"model"`
				Environment struct {
					Cwd string `json:"cwd"`
				} `json:"environment"`
			} `json:"config"`
		} `json:"info"`
		Messages []struct {
			Role       string            `json:"role"`
			Content    json.RawMessage   `json:"content"`
			ToolCalls  []openai.ToolCall `json:"tool_calls"`
			ToolCallID string            `json:"tool_call_id"`
			Extra      struct {
				Timestamp float64 `json:"timestamp"`
			} `json:"extra"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(data, &t); err != nil {
		return fmt.Errorf("%s: not a mini-swe-agent trajectory: %w", name, err)
	}
	n.src.Model = t.Info.Config.Model.ModelName
	n.src.Cwd = t.Info.Config.Environment.Cwd
	pending, submit := "", false
	var unanswered []string // mini-swe-agent 2: the last tool calls without a result
	for k, m := range t.Messages {
		text := textOf(m.Content)
		ts := ""
		if m.Extra.Timestamp > 0 {
			ts = time.Unix(0, int64(m.Extra.Timestamp*1e9)).UTC().Format(time.RFC3339Nano)
		}
		if len(m.ToolCalls) > 0 || m.Role == openai.ChatMessageRoleTool {
			// mini-swe-agent 2: the bash tool called the OpenAI way.
			pending = ""
			if len(m.ToolCalls) > 0 {
				unanswered = unanswered[:0]
				for _, c := range m.ToolCalls {
					unanswered = append(unanswered, c.ID)
				}
			} else if i := slices.Index(unanswered, m.ToolCallID); i >= 0 {
				unanswered = slices.Delete(unanswered, i, i+1)
			}
			n.add(k+1, ts, openai.ChatCompletionMessage{Role: m.Role, Content: text, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID})
			continue
		}
		if m.Role == "exit" {
			// mini-swe-agent 2's last message: why it stopped, and for a
			// submission what the submit command printed: that call's result.
			if len(unanswered) > 0 {
				n.add(k+1, ts, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: unanswered[0], Content: text})
				unanswered = unanswered[1:]
			} else {
				n.add(k+1, ts, openai.ChatCompletionMessage{Role: quotedContext, Content: text})
			}
			continue
		}
		switch m.Role {
		case openai.ChatMessageRoleAssistant:
			pending = ""
			blocks := bashBlockRe().FindAllStringSubmatch(text, -1)
			if len(blocks) != 1 { // mini-swe-agent runs nothing then: a format error
				n.add(k+1, "", openai.ChatCompletionMessage{Role: m.Role, Content: text})
				continue
			}
			pending = fmt.Sprintf("mini_step_%d", k+1)
			submit = strings.Contains(blocks[0][1], "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT") || strings.Contains(blocks[0][1], "MINI_SWE_AGENT_FINAL_OUTPUT")
			n.add(k+1, "", openai.ChatCompletionMessage{Role: m.Role, Content: text,
				ToolCalls: []openai.ToolCall{toolCall(pending, "bash", jsonArgs(map[string]string{"command": strings.TrimSpace(blocks[0][1])}))}})
		case openai.ChatMessageRoleUser:
			// The result of the step's one action: its observation, its
			// timeout, or, for the submission, what it printed (the diff,
			// which mini-swe-agent records as the last message).
			if pending != "" && (submit || strings.Contains(text, "<returncode>") || strings.Contains(text, "<output>") || strings.Contains(text, "timed out")) {
				n.add(k+1, "", openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: pending, Content: text})
				pending = ""
				continue
			}
			pending = ""
			n.add(k+1, "", openai.ChatCompletionMessage{Role: m.Role, Content: text})
		default:
			n.add(k+1, "", openai.ChatCompletionMessage{Role: m.Role, Content: text})
		}
	}
	return nil
}

var bashBlockRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?s)```(?:bash|sh)\\s*\\n(.*?)\\n```") })

// openHands reads an OpenHands event stream (a JSON list of events, or one
// a line): actions (message, run, write, edit, read, finish ...) with
// their args, observations (run, write, edit, read, error,
// user_rejected) with "cause", the id of their action, and
// extras.metadata.working_dir, where the shell is after a command.
func (n *nativeParse) openHands(data []byte, name string) error {
	type event struct {
		ID          json.Number     `json:"id"`
		Timestamp   string          `json:"timestamp"`
		Source      string          `json:"source"`
		Message     string          `json:"message"`
		Action      string          `json:"action"`
		Args        json.RawMessage `json:"args"`
		Observation string          `json:"observation"`
		Content     string          `json:"content"`
		Cause       json.Number     `json:"cause"`
		Extras      struct {
			Metadata struct {
				WorkingDir string `json:"working_dir"`
			} `json:"metadata"`
		} `json:"extras"`
		ToolCallMetadata *struct {
			FunctionName  string `json:"function_name"`
			ToolCallID    string `json:"tool_call_id"`
			ModelResponse struct {
				Model   string `json:"model"`
				Choices []struct {
					Message struct {
						ToolCalls []openai.ToolCall `json:"tool_calls"`
					} `json:"message"`
				} `json:"choices"`
			} `json:"model_response"`
		} `json:"tool_call_metadata"`
	}
	var events []event
	t := strings.TrimSpace(string(data))
	if strings.HasPrefix(t, "[") {
		if err := json.Unmarshal([]byte(t), &events); err != nil {
			return fmt.Errorf("%s: not an OpenHands event list: %w", name, err)
		}
	} else if err := eachLine(data, name, func(_ int, b []byte) error {
		var e event
		if err := json.Unmarshal(b, &e); err != nil {
			return fmt.Errorf("not an OpenHands event: %w", err)
		}
		events = append(events, e)
		return nil
	}); err != nil {
		return err
	}
	calls := map[string]bool{} // the ids of the actions read as calls
	for k, e := range events {
		line := k + 1
		var args map[string]any
		_ = json.Unmarshal(e.Args, &args)
		switch {
		case e.Action != "":
			switch e.Action {
			case "message", "finish", "think", "reject":
				text := e.Message
				if s, ok := args["content"].(string); ok && s != "" && e.Action == "message" {
					text = s
				}
				if s, ok := args["final_thought"].(string); ok && s != "" {
					text = s
				}
				role := openai.ChatMessageRoleAssistant
				if e.Source == "user" {
					role = openai.ChatMessageRoleUser
				}
				n.add(line, e.Timestamp, openai.ChatCompletionMessage{Role: role, Content: text})
			case "system":
				if s, ok := args["content"].(string); ok {
					n.add(line, e.Timestamp, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: s})
				}
			case "run", "run_ipython", "write", "edit", "read", "browse", "browse_interactive", "delegate", "call_tool_mcp", "mcp":
				name := e.Action
				if n, ok := args["name"].(string); ok && n != "" && (e.Action == "call_tool_mcp" || e.Action == "mcp") {
					name = n // the MCP tool's own name
				}
				if e.ToolCallMetadata != nil && e.ToolCallMetadata.FunctionName != "" {
					name = e.ToolCallMetadata.FunctionName
				} else if e.Action == "run" {
					name = "execute_bash"
				}
				thought, _ := args["thought"].(string)
				delete(args, "thought")
				id := "oh_" + e.ID.String()
				calls[id] = true
				callArgs := jsonArgs(args)
				if m := e.ToolCallMetadata; m != nil {
					if n.src.Model == "" {
						n.src.Model = m.ModelResponse.Model
					}
					// The call as the model made it: an editor action's args
					// do not say what it did (its "command": view, create,
					// str_replace), the model's arguments do.
					for _, c := range m.ModelResponse.Choices {
						for _, tc := range c.Message.ToolCalls {
							if tc.ID == m.ToolCallID && tc.Function.Name == name && json.Valid([]byte(tc.Function.Arguments)) {
								callArgs = tc.Function.Arguments
							}
						}
					}
				}
				n.add(line, e.Timestamp, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: thought,
					ToolCalls: []openai.ToolCall{toolCall(id, name, callArgs)}})
				if cs, _ := args["confirmation_state"].(string); cs == "rejected" {
					r := n.add(line, e.Timestamp, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id,
						Content: "[not run: the user rejected this action]"})
					r.notRun = true
				}
			}
		case e.Observation != "" && calls["oh_"+e.Cause.String()]:
			// An observation of a call; the others (null, agent state
			// changes, the recall of a message) are no call's result.
			id := "oh_" + e.Cause.String()
			r := n.add(line, e.Timestamp, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: e.Content})
			r.notRun = e.Observation == "user_rejected"
			r.after = e.Extras.Metadata.WorkingDir
		}
	}
	return nil
}
