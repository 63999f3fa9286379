package openaitest

import (
	"encoding/json"
	"reflect"
	"sync"

	"github.com/sashabaranov/go-openai"
)

// Purpose says who sent a request: the agent's turn or the summarizer.
// Accounting compares each request with the previous agent request, the
// prefix a provider's cache holds for the conversation.
type Purpose string

// The purposes a request can have.
const (
	PurposeAgent   Purpose = "agent"
	PurposeSummary Purpose = "summary"
)

// Reasons a request was refused, as Account.Rejected says them.
const (
	RejectWindow = "context_length_exceeded"
	RejectRules  = "message_rules"
	RejectOther  = "invalid_request"
)

// Account is what one chat request costs at a provider with a prefix cache
// (OpenAI, DeepSeek, Anthropic's automatic caching, vLLM/llama.cpp prefix
// reuse): the prompt is re-read from the cache as far as it is identical,
// from the start, to the previous request of the same conversation.
//
// The prefix is compared the way providers render a request: the tool
// schemas first, then message by message. A message counts as cached only
// when it and every message before it are identical to the previous
// agent request's (same model, same tools); the first difference ends the
// shared prefix. Providers cache in blocks (OpenAI: 128 tokens, from 1,024),
// so this is the most a cache could reuse, and the right figure to compare
// two clients' requests by.
type Account struct {
	// Seq is the request's arrival order among chat requests, from 1.
	Seq     int
	Model   string
	Purpose Purpose
	// Prompt is the request's prompt tokens: tool schemas, messages and the
	// reply priming, counted by the server's tokenizer.
	Prompt int
	// Cached is how many of Prompt are shared, from the start, with the
	// previous agent request: what a prefix cache can serve.
	Cached int
	// Messages is the request's message count; SharedMessages how many of
	// them, from the first, were identical to the previous agent request's.
	Messages, SharedMessages int
	// Rejected says why the server refused the request (RejectWindow,
	// RejectRules, RejectOther); "" when it was served. A refused request
	// is not billed and is not the prefix of the next one.
	Rejected string
	// Dropped is how many messages an emulated server cut from the front
	// of the request to fit its window (Ollama); 0 when it kept them all.
	Dropped int
}

// Uncached is what the provider bills at the full input price.
func (a Account) Uncached() int { return a.Prompt - a.Cached }

// Bill adds up accounts.
type Bill struct {
	Requests        int // served requests
	SummaryRequests int // of which the summarizer's
	Rejected        int // refused requests (not billed)
	OverWindow      int // refused as larger than the context window
	RuleViolations  int // refused for breaking the message rules
	Prompt          int // prompt tokens of the served requests
	Cached          int // of Prompt, served from the cache
	SummaryPrompt   int // prompt tokens of the summarizer's requests
	Cut             int // served after the server dropped messages to fit its window
	// SummaryOverWindow is how many of the refusals as too large were the
	// summarizer's requests.
	SummaryOverWindow int
}

// Uncached is the prompt tokens billed at the full price.
func (b Bill) Uncached() int { return b.Prompt - b.Cached }

// Billed is the prompt cost in full-price tokens when cached tokens cost
// cachedPrice of the full price (e.g. 0.1 for OpenAI's and DeepSeek's
// newer models, 0.5 for gpt-4o).
func (b Bill) Billed(cachedPrice float64) float64 {
	return float64(b.Uncached()) + cachedPrice*float64(b.Cached)
}

// SummaryShare is the summarizer's share of all prompt tokens.
func (b Bill) SummaryShare() float64 {
	if b.Prompt == 0 {
		return 0
	}
	return float64(b.SummaryPrompt) / float64(b.Prompt)
}

// Total adds up accounts.
func Total(accounts []Account) Bill {
	var b Bill
	for _, a := range accounts {
		switch a.Rejected {
		case "":
		case RejectWindow:
			b.Rejected++
			b.OverWindow++
			if a.Purpose == PurposeSummary {
				b.SummaryOverWindow++
			}
			continue
		case RejectRules:
			b.Rejected++
			b.RuleViolations++
			continue
		default:
			b.Rejected++
			continue
		}
		b.Requests++
		if a.Dropped > 0 {
			b.Cut++
		}
		b.Prompt += a.Prompt
		b.Cached += a.Cached
		if a.Purpose == PurposeSummary {
			b.SummaryRequests++
			b.SummaryPrompt += a.Prompt
		}
	}
	return b
}

// WithTokenizer makes the server count prompt tokens with count (a text's
// tokens) the way OpenAI's cookbook counts a chat request: per message 3
// tokens of framing plus its role, content and name (+1), per tool call 3
// plus its name and arguments, the tool schemas as their JSON, and 3 for
// the reply priming. The counts feed Accounts, the usage the server
// reports, and WithContextWindow unless it was given its own counter.
// Without it a text costs len/4 tokens.
func WithTokenizer(count func(text string) int) Option {
	return func(s *Server) { s.tokenize = count }
}

// DefaultPurpose is how requests are told apart for accounting: a
// request with tool_choice "none" or without tools is the summarizer's,
// any other the agent's.
func DefaultPurpose(r Request) Purpose {
	if r.ToolChoice == "none" || len(r.Tools) == 0 {
		return PurposeSummary
	}
	return PurposeAgent
}

// Accounts returns the accounting of every chat request so far, in arrival
// order, refused ones included.
func (s *Server) Accounts() []Account {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Account(nil), s.accounts...)
}

// measured is a request with the token count of each part, as the cache
// compares them.
type measured struct {
	model     string
	tools     []openai.Tool
	toolsJSON string // tools as the server marshalled them, "" if not
	toolTok   int
	msgs      []openai.ChatCompletionMessage
	msgTok    []int
	priming   int
}

// replyPriming is what every chat request adds for the answer's start.
const replyPriming = 3

// PromptTokens is a request's prompt tokens as a server made
// WithTokenizer(tokenize) counts them: what a test expects a provider to
// bill, or to hold against its window.
func PromptTokens(r Request, tokenize func(text string) int) int {
	return measure(r, textCounter(tokenize)).prompt()
}

// MemoTokenizer is count remembering the count of each text it was given;
// it is safe for concurrent use. A session's requests repeat the messages
// of the one before (the prompt grows by a turn), so a server or a test
// that counts every request counts each message once with it, not once per
// request: under -race the tokenizer was most of an end-to-end test's own
// CPU. count must give a text the same count every time.
func MemoTokenizer(count func(text string) int) func(text string) int {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(text string) int {
		mu.Lock()
		n, ok := seen[text]
		mu.Unlock()
		if ok {
			return n
		}
		n = count(text)
		mu.Lock()
		seen[text] = n
		mu.Unlock()
		return n
	}
}

// textCounter counts a text with tokenize; without one a text costs len/4.
func textCounter(tokenize func(string) int) func(string) int {
	return func(text string) int {
		if text == "" {
			return 0
		}
		if tokenize != nil {
			return tokenize(text)
		}
		return (len(text) + 3) / 4
	}
}

func measure(req Request, count func(string) int) measured {
	m := measured{model: req.Model, tools: req.Tools, toolsJSON: req.toolsJSON, msgs: req.Messages, priming: replyPriming,
		toolTok: toolTokens(req.Tools, req.toolsJSON, count)}
	m.msgTok = make([]int, len(req.Messages))
	for i, msg := range req.Messages {
		m.msgTok[i] = messageTokens(msg, count)
	}
	return m
}

// toolTokens counts tools as their JSON (toolsJSON when the server
// marshalled it already).
func toolTokens(tools []openai.Tool, toolsJSON string, count func(string) int) int {
	switch {
	case toolsJSON != "":
		return count(toolsJSON)
	case len(tools) > 0:
		if b, err := json.Marshal(tools); err == nil {
			return count(string(b))
		}
	}
	return 0
}

func messageTokens(msg openai.ChatCompletionMessage, count func(string) int) int {
	n := 3 + count(msg.Role) + count(msg.Content)
	for _, p := range msg.MultiContent {
		n += count(p.Text)
	}
	if msg.Name != "" {
		n += count(msg.Name) + 1
	}
	for _, tc := range msg.ToolCalls {
		n += 3 + count(tc.Function.Name) + count(tc.Function.Arguments)
	}
	return n
}

func (m measured) prompt() int {
	n := m.toolTok + m.priming
	for _, t := range m.msgTok {
		n += t
	}
	return n
}

// shared is what m reuses of prev's prompt: the tools when identical, then
// identical messages from the first.
func (m measured) shared(prev *measured) (tokens, msgs int) {
	if prev == nil || prev.model != m.model || !sameTools(*prev, m) {
		return 0, 0
	}
	tokens = m.toolTok
	for i := 0; i < len(m.msgs) && i < len(prev.msgs); i++ {
		if !reflect.DeepEqual(m.msgs[i], prev.msgs[i]) {
			break
		}
		tokens += m.msgTok[i]
		msgs++
	}
	return tokens, msgs
}

// sameTools: a and b carry the same tools. Decoded JSON marshals again to
// the same text exactly when it is the same, so the texts are compared when
// both are known (cheaper than DeepEqual on every request).
func sameTools(a, b measured) bool {
	if a.toolsJSON != "" && b.toolsJSON != "" {
		return a.toolsJSON == b.toolsJSON
	}
	return reflect.DeepEqual(a.tools, b.tools)
}

// account records what req costs and returns it; a served agent request
// becomes the prefix the next requests are compared with.
func (s *Server) account(req Request, m measured, rejected string) Account {
	a := Account{Model: req.Model, Purpose: DefaultPurpose(req), Prompt: m.prompt(), Messages: len(req.Messages), Rejected: rejected,
		Dropped: req.Dropped}
	if req.Dropped > 0 {
		a.Prompt = req.prompt // billed: what the server kept
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a.Seq = len(s.accounts) + 1
	a.Cached, a.SharedMessages = m.shared(s.lastAgent)
	s.accounts = append(s.accounts, a)
	if rejected == "" && a.Purpose == PurposeAgent {
		mm := m
		s.lastAgent = &mm
	}
	return a
}
