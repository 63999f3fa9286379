package lexers

import (
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// lazyLexer is a lexer built on its first use (not in this module's
// upstream, see ../PATCHED.md): upstream builds a few lexers in package
// variables (an XML configuration parsed, a remapping table of a few
// thousand words), which every process linking this package paid at
// start although only the TUI ever highlights code.
type lazyLexer struct {
	once  sync.Once
	build func() chroma.Lexer
	l     chroma.Lexer
}

func lazy(build func() chroma.Lexer) chroma.Lexer { return &lazyLexer{build: build} }

func (z *lazyLexer) get() chroma.Lexer {
	z.once.Do(func() { z.l, z.build = z.build(), nil })
	return z.l
}

func (z *lazyLexer) Config() *chroma.Config { return z.get().Config() }

func (z *lazyLexer) Tokenise(options *chroma.TokeniseOptions, text string) (chroma.Iterator, error) {
	return z.get().Tokenise(options, text)
}

func (z *lazyLexer) SetRegistry(registry *chroma.LexerRegistry) chroma.Lexer {
	z.get().SetRegistry(registry)
	return z
}

func (z *lazyLexer) SetAnalyser(analyser func(text string) float32) chroma.Lexer {
	z.get().SetAnalyser(analyser)
	return z
}

func (z *lazyLexer) AnalyseText(text string) float32 { return z.get().AnalyseText(text) }
