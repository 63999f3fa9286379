// Package tokens counts tokens the way OpenAI's tiktoken does, offline.
//
// A Counter is built for a model name (New or Cache.Counter) and uses the
// encoding EncodingFor picks: cl100k_base for gpt-4, gpt-3.5 and the older
// embedding models, o200k_base for everything else. The vocabularies are
// embedded in the binary as ready-built tables (vocab.go; built from
// tiktoken-go-loader's files and checked against them), so counting never
// touches the network and a process reads them in place. One is loaded on
// the first Count, never in New: the load compiles the pre-tokenizer and
// takes well under a millisecond, where tiktoken-go took about 300 ms and
// 24 MB for o200k_base.
//
// Counts are exact: the same pre-tokenizer and the same merges as tiktoken
// (TestCountMatchesTiktoken checks the shared reference texts, and
// FuzzCountMatchesTiktokenGo any text against tiktoken-go). Counting is
// O(n log n) in the length of the text, also for text without spaces
// (tiktoken's merge loop is quadratic in the length of one pre-token), and
// long text is counted in segments: see encoder.go for the one case where
// that makes a count approximate (a run of 64 KiB of one character class),
// and CountContext for stopping a count.
//
// Text that looks like a special token, such as "<|endoftext|>", is counted
// as plain text: a user pasting it into a prompt must neither crash the
// program nor be counted as a single control token.
package tokens

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// Names of the encodings returned by EncodingFor.
const (
	CL100KBase = "cl100k_base"
	O200KBase  = "o200k_base"
)

// EncodingFor returns the name of the tiktoken encoding used by model.
//
// A provider prefix ("openai/gpt-4o") and a fine-tune prefix
// ("ft:gpt-4-0613:org::id") are ignored, and case does not matter.
// cl100k_base is used for gpt-4 and its dated or sized variants (gpt-4-0613,
// gpt-4-turbo, gpt-4-32k), for gpt-3.5 (also Azure's "gpt-35-" spelling) and
// for text-embedding-ada-* and text-embedding-3-*. Every other model,
// including gpt-4o, gpt-4.1, gpt-4.5, gpt-5, the o-series and models this
// package does not know (llama3, qwen, ...), gets o200k_base: the current
// OpenAI encoding is the best guess for an unknown tokenizer.
// The retired p50k/r50k models (davinci, ...) are not supported and also get
// o200k_base.
func EncodingFor(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.TrimPrefix(m, "ft:")
	switch {
	case m == "gpt-4", strings.HasPrefix(m, "gpt-4-"):
		// gpt-4o, gpt-4.1 and gpt-4.5 do not match: they are o200k_base.
		return CL100KBase
	case strings.HasPrefix(m, "gpt-3.5"), strings.HasPrefix(m, "gpt-35-"):
		return CL100KBase
	case strings.HasPrefix(m, "text-embedding-ada"), strings.HasPrefix(m, "text-embedding-3"):
		return CL100KBase
	default:
		return O200KBase
	}
}

// encoding is one lazily loaded vocabulary. Its zero value is ready: the
// first get loads it, later calls return the same result.
type encoding struct {
	// load replaces newEncoder in tests; nil means newEncoder.
	load func(name string) (*encoder, error)

	once   sync.Once
	enc    *encoder
	err    error
	loaded atomic.Bool // set once the load was attempted; read by tests
}

func (e *encoding) get(name string) (*encoder, error) {
	e.once.Do(func() {
		load := e.load
		if load == nil {
			load = newEncoder
		}
		enc, err := load(name)
		if err != nil {
			e.err = fmt.Errorf("load encoding %s: %w", name, err)
		} else {
			e.enc = enc
		}
		e.loaded.Store(true)
	})
	return e.enc, e.err
}

// Cache shares loaded vocabularies between Counters: every Counter from the
// same Cache with the same encoding uses one encoder (the table is read in
// place; the pre-tokenizer is compiled once per encoder). A Cache is a value,
// not a package global, so its owner (normally cmd) decides its lifetime and
// tests stay independent.
//
// The zero value is ready to use. A Cache must not be copied after first use.
// It is safe for concurrent use.
type Cache struct {
	cl100k encoding
	o200k  encoding
}

// Counter returns a Counter for model that shares this Cache's vocabularies.
// It loads nothing.
func (c *Cache) Counter(model string) *Counter {
	name := EncodingFor(model)
	enc := &c.o200k
	if name == CL100KBase {
		enc = &c.cl100k
	}
	return &Counter{name: name, enc: enc}
}

// Counter counts tokens for one model's encoding. It is safe for concurrent
// use; the vocabulary is loaded on first use.
type Counter struct {
	name string
	enc  *encoding
}

// New returns a Counter for model with a vocabulary of its own. It loads
// nothing; the first Count does. Use a Cache to share vocabularies between
// several Counters.
func New(model string) *Counter {
	return new(Cache).Counter(model)
}

// Encoding returns the name of the Counter's encoding, as EncodingFor does.
func (c *Counter) Encoding() string { return c.name }

// Count returns the number of tokens in text, counting special-token
// look-alikes such as "<|endoftext|>" as plain text. It never panics.
//
// If the vocabulary could not be loaded (see Err), Count returns an
// estimate instead, so that callers budgeting a context window keep working:
// one token per 3 bytes, rounded up. The usual "4 characters per token" rule
// undercounts most texts of the shared reference set (189 of 299); 3 bytes
// undercounts 20 of them and overcounts the whole set
// by about 19%, and overcounting is the safer error for a budget (compaction
// starts early rather than the API refusing the request).
func (c *Counter) Count(text string) int {
	n, _ := c.CountContext(context.Background(), text)
	return n
}

// CountContext is Count that stops early when ctx is done: then it returns
// the tokens counted so far plus the estimate (as above) for the rest, never
// less than the estimate would say for the uncounted part, together with an
// error wrapping ctx.Err(). Counting a megabyte takes a second or two, so a
// caller that may be canceled while counting user input or tool output
// should use this.
func (c *Counter) CountContext(ctx context.Context, text string) (int, error) {
	if text == "" {
		return 0, nil
	}
	enc, err := c.enc.get(c.name)
	if err != nil {
		return estimate(text), nil
	}
	return enc.count(ctx, text)
}

// Err loads the vocabulary if needed and returns the load error, if any
// ("load encoding o200k_base: ..."), in which case Count returns estimates.
// Call it at start-up to load eagerly and to learn whether counts are exact.
func (c *Counter) Err() error {
	_, err := c.enc.get(c.name)
	return err
}

func estimate(text string) int {
	return (len(text) + 2) / 3
}
