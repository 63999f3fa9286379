package commands

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gencode/gencode/internal/termtext"
)

// Invocation is a parsed command line: "/name arg 'quoted arg' --flag --key value".
type Invocation struct {
	Name  string
	Args  []string
	Flags map[string]string // boolean flags map to "true"; a value flag given twice: the last
	// All holds every value of each value flag, in order (--keep a --keep b).
	All map[string][]string
	Raw string // the text after the name, unparsed (for free text like a focus)
}

// Flag reports whether a flag was given.
func (in Invocation) Flag(name string) bool { _, ok := in.Flags[name]; return ok }

// ErrNotCommand is returned by Parse for a line that does not start with "/".
var ErrNotCommand = errors.New("not a command")

// Parse splits a command line. valueFlags names the flags that take a
// value (the next word, or --flag=value); others are boolean.
func Parse(line string, valueFlags map[string]bool) (Invocation, error) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "/") {
		return Invocation{}, ErrNotCommand
	}
	name, rest, _ := strings.Cut(line[1:], " ")
	in := Invocation{Name: strings.ToLower(name), Flags: map[string]string{}, All: map[string][]string{}, Raw: strings.TrimSpace(rest)}
	words, err := splitWords(rest)
	if err != nil {
		return Invocation{}, err
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w.quoted || !strings.HasPrefix(w.text, "--") || w.text == "--" {
			in.Args = append(in.Args, w.text)
			continue
		}
		key, val, hasVal := strings.Cut(w.text[2:], "=")
		switch {
		case hasVal:
			in.Flags[key] = val
			in.All[key] = append(in.All[key], val)
		case valueFlags[key]:
			if i+1 >= len(words) {
				return Invocation{}, fmt.Errorf("flag --%s needs a value", key)
			}
			i++
			in.Flags[key] = words[i].text
			in.All[key] = append(in.All[key], words[i].text)
		default:
			in.Flags[key] = "true"
		}
	}
	return in, nil
}

type word struct {
	text   string
	quoted bool
}

// splitWords splits on spaces, honouring '…' and "…" quotes and \ escapes.
func splitWords(s string) ([]word, error) {
	var out []word
	var cur strings.Builder
	inWord, quoted := false, false
	var quote rune
	flush := func() {
		if inWord {
			out = append(out, word{cur.String(), quoted})
		}
		cur.Reset()
		inWord, quoted = false, false
	}
	runes := []rune(s)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else if r == '\\' && quote == '"' && i+1 < len(runes) {
				i++
				cur.WriteRune(runes[i])
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord, quoted = r, true, true
		case r == '\\' && i+1 < len(runes):
			i++
			cur.WriteRune(runes[i])
			inWord = true
		case r == ' ' || r == '\t' || r == '\n':
			flush()
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote", quote)
	}
	flush()
	return out, nil
}

// closest returns the candidate nearest to s by edit distance, if it is
// near enough to be a plausible typo.
func closest(s string, candidates []string) (string, bool) {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := termtext.EditDistance(s, c)
		if strings.HasPrefix(c, s) && len(s) > 0 {
			d = 0
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := max(2, len(s)/3)
	return best, best != "" && bestD <= limit
}

// closeMatches returns up to n candidates close to s, closest first: those
// that contain it or that it contains (case aside), then those a few
// edits away.
func closeMatches(s string, candidates []string, n int) []string {
	type scored struct {
		c string
		d int
	}
	ls := strings.ToLower(s)
	var out []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := termtext.EditDistance(ls, lc)
		switch {
		case ls != "" && (strings.Contains(lc, ls) || strings.Contains(ls, lc)):
			d = min(d, 1)
		case d > max(2, len(ls)/3):
			continue
		}
		out = append(out, scored{c, d})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].d != out[j].d {
			return out[i].d < out[j].d
		}
		return out[i].c < out[j].c
	})
	names := make([]string, 0, min(n, len(out)))
	for _, o := range out[:min(n, len(out))] {
		names = append(names, o.c)
	}
	return names
}
