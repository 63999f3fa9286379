// Package lexers is chroma v2.20.0's lexers package with its registry built
// on first use instead of at package initialisation (see ../PATCHED.md).
package lexers

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed embedded
var embedded embed.FS

var (
	mu       sync.Mutex
	registry *chroma.LexerRegistry
	// goLexers are the lexers this package defines in Go, registered (in
	// package initialisation order) after the embedded XML ones when the
	// registry is built, as upstream's package initialisation did.
	goLexers []chroma.Lexer
)

// globalLexerRegistry is upstream's GlobalLexerRegistry, built on the first
// call instead of at package initialisation: parsing the embedded lexers'
// configurations cost every process that links this package ~5 ms.
func globalLexerRegistry() *chroma.LexerRegistry {
	mu.Lock()
	defer mu.Unlock()
	if registry != nil {
		return registry
	}
	reg := chroma.NewLexerRegistry()
	// index(reg)
	paths, err := fs.Glob(embedded, "embedded/*.xml")
	if err != nil {
		panic(err)
	}
	for _, path := range paths {
		reg.Register(chroma.MustNewXMLLexer(embedded, path))
	}
	for _, l := range goLexers {
		reg.Register(l)
	}
	registry = reg
	// Upstream's init functions, in file order.
	dnsAnalyser()
	mysqlAnalyser()
	zedAnalyser()
	return registry
}

// Names of all lexers, optionally including aliases.
func Names(withAliases bool) []string {
	return globalLexerRegistry().Names(withAliases)
}

// Aliases of all the lexers, and skip those lexers who do not have any aliases,
// or show their name instead
func Aliases(skipWithoutAliases bool) []string {
	return globalLexerRegistry().Aliases(skipWithoutAliases)
}

// Get a Lexer by name, alias or file extension.
//
// Note that this if there isn't an exact match on name or alias, this will
// call Match(), so it is not efficient.
func Get(name string) chroma.Lexer {
	return globalLexerRegistry().Get(name)
}

// MatchMimeType attempts to find a lexer for the given MIME type.
func MatchMimeType(mimeType string) chroma.Lexer {
	return globalLexerRegistry().MatchMimeType(mimeType)
}

// Match returns the first lexer matching filename.
//
// Note that this iterates over all file patterns in all lexers, so it's not
// particularly efficient.
func Match(filename string) chroma.Lexer {
	return globalLexerRegistry().Match(filename)
}

// Register a Lexer with the global registry.
func Register(lexer chroma.Lexer) chroma.Lexer {
	mu.Lock()
	if registry == nil {
		goLexers = append(goLexers, lexer)
		mu.Unlock()
		return lexer
	}
	mu.Unlock()
	return globalLexerRegistry().Register(lexer)
}

// Analyse text content and return the "best" lexer..
func Analyse(text string) chroma.Lexer {
	return globalLexerRegistry().Analyse(text)
}

// PlaintextRules is used for the fallback lexer as well as the explicit
// plaintext lexer.
func PlaintextRules() chroma.Rules {
	return chroma.Rules{
		"root": []chroma.Rule{
			{Pattern: `.+`, Type: chroma.Text, Mutator: nil},
			{Pattern: `\n`, Type: chroma.Text, Mutator: nil},
		},
	}
}

// Fallback lexer if no other is found.
var Fallback chroma.Lexer = chroma.MustNewLexer(&chroma.Config{
	Name:      "fallback",
	Filenames: []string{"*"},
	Priority:  -1,
}, PlaintextRules)
