// Command genrules turns gitleaks' published rule set (gitleaks.toml,
// vendored beside it with its licence) into Go source for the redact
// package's redaction: `go generate ./internal/redact` runs it.
//
// Every rule is kept as gitleaks wrote it (regex, keywords, entropy,
// secret group, allowlists), except rules that cannot apply to text
// without a file name or that a local rule replaces; the generated file
// lists those with the reason. Go's regexp is RE2, as gitleaks' own default
// build is, so a rule using lookaround would not compile: such a rule is
// skipped and listed too. SOURCE names the gitleaks release and the
// sha256 of the vendored file, checked so that an edited copy is noticed.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

func main() {
	dir := flag.String("dir", "internal/genrules", "folder holding gitleaks.toml, LICENSE.gitleaks and SOURCE")
	out := flag.String("out", "gitleaks_rules.go", "Go file to write")
	flag.Parse()
	src, err := generateFromDir(*dir)
	if err == nil {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genrules:", err)
		os.Exit(1)
	}
}

// generateFromDir reads the vendored files in dir and returns the Go source.
func generateFromDir(dir string) ([]byte, error) {
	read := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		return b, nil
	}
	cfg, err := read("gitleaks.toml")
	if err != nil {
		return nil, err
	}
	lic, err := read("LICENSE.gitleaks")
	if err != nil {
		return nil, err
	}
	srcInfo, err := read("SOURCE")
	if err != nil {
		return nil, err
	}
	version, sum, err := parseSource(srcInfo)
	if err != nil {
		return nil, err
	}
	if got := sha256.Sum256(cfg); hex.EncodeToString(got[:]) != sum {
		return nil, fmt.Errorf("gitleaks.toml has sha256 %x, SOURCE says %s: update SOURCE when you vendor a new copy", got, sum)
	}
	return generate(cfg, lic, version)
}

// parseSource reads SOURCE: "version vX.Y.Z" and "sha256 HEX" lines.
func parseSource(b []byte) (version, sum string, err error) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		switch f[0] {
		case "version":
			version = f[1]
		case "sha256":
			sum = f[1]
		}
	}
	if version == "" || sum == "" {
		return "", "", errors.New("SOURCE needs a version line and a sha256 line")
	}
	return version, sum, nil
}

type config struct {
	Allowlist allowlist `toml:"allowlist"`
	Rules     []rule    `toml:"rules"`
}

type rule struct {
	ID          string      `toml:"id"`
	Regex       string      `toml:"regex"`
	Path        string      `toml:"path"`
	SecretGroup int         `toml:"secretGroup"`
	Entropy     float64     `toml:"entropy"`
	Keywords    []string    `toml:"keywords"`
	Allowlists  []allowlist `toml:"allowlists"`
}

type allowlist struct {
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
}

// replaced are gitleaks rules that a local rule of the redact package
// does instead, and why.
var replaced = map[string]string{
	"private-key": "replaced by the local PEM rule, which also redacts a key whose END line is missing (a cut tool output)",
}

// lookaround are the RE2-incompatible constructs gitleaks' regexes would
// have to avoid; a rule using one is skipped.
var lookaround = []string{"(?=", "(?!", "(?<=", "(?<!"}

// assignPrefix and assignSep frame gitleaks' keyword-assignment rules:
// (?i)[\w.-]{0,50}?(?:KEYWORDS)(?:[ \t\w.-]{0,20})[\s'"]{0,3}SEPARATOR…
// A keyword of such a rule found in the text starts a match only when a
// separator follows it closely, which the redactor checks before running
// the regexp.
const (
	assignPrefix = `(?i)[\w.-]{0,50}?(?:`
	assignSep    = `)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`
)

// assignGroup returns the group of names of a keyword-assignment rule
// and those of its keywords that the group matches ("" and nil for other
// rules).
func assignGroup(r rule) (string, []string) {
	rest, ok := strings.CutPrefix(r.Regex, assignPrefix)
	if !ok {
		return "", nil
	}
	group, _, ok := strings.Cut(rest, assignSep)
	if !ok {
		return "", nil
	}
	re, err := regexp.Compile(`(?i)^(?:` + group + `)$`)
	if err != nil {
		return "", nil
	}
	var out []string
	for _, k := range r.Keywords {
		if k = strings.ToLower(k); re.MatchString(k) || strings.Contains(strings.ToLower(group), k) {
			out = append(out, k)
		}
	}
	return group, out
}

// startKeywords returns the keywords that begin a match of r right after
// its leading \b: r is \b(…) or \b(?:…) whose top-level branches each
// start with a literal, and the keyword is that literal's start.
func startKeywords(r rule) []string {
	rest, ok := strings.CutPrefix(r.Regex, `\b`)
	if !ok {
		return nil
	}
	for _, p := range []string{"((?:", "(?:", "("} {
		if t, ok := strings.CutPrefix(rest, p); ok {
			rest = t
			break
		}
	}
	var lits []string
	depth, start := 0, 0
	for i := 0; i <= len(rest); i++ {
		if i < len(rest) {
			switch rest[i] {
			case '\\':
				i++
				continue
			case '(', '[':
				depth++
				continue
			case ')', ']':
				depth--
				if depth >= 0 {
					continue
				}
			case '|':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		lits = append(lits, literalPrefix(rest[start:min(i, len(rest))]))
		if i < len(rest) && rest[i] == ')' {
			break
		}
		start = i + 1
	}
	var out []string
	for _, k := range r.Keywords {
		k = strings.ToLower(k)
		if k == "" || !isWordByte(k[0]) {
			continue // \b before a non-word character means something else
		}
		for _, l := range lits {
			if l != "" && (strings.HasPrefix(strings.ToLower(l), k) || strings.HasPrefix(k, strings.ToLower(l)) && len(l) >= 2) {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// literalPrefix is the literal text a regexp branch starts with: letters,
// digits, _ - and escaped punctuation, up to the first operator. A
// character followed by a quantifier is not part of it.
func literalPrefix(branch string) string {
	var b strings.Builder
	for i := 0; i < len(branch); i++ {
		c := branch[i]
		n := 1
		switch {
		case c == '\\' && i+1 < len(branch) && strings.IndexByte(".-_/:~", branch[i+1]) >= 0:
			c, n = branch[i+1], 2
		case c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		default:
			return b.String()
		}
		if j := i + n; j < len(branch) && strings.IndexByte("?*+{", branch[j]) >= 0 {
			return b.String()
		}
		b.WriteByte(c)
		i += n - 1
	}
	return b.String()
}

// multiLine reports a regex that may match across lines.
var multiLine = regexp.MustCompile(`\[\\r\\n\]|\[\\s\\S|\(\?s|[^\\]\\n|[^\\]\\r`)

func generate(cfgText, licence []byte, version string) ([]byte, error) {
	var cfg config
	if err := toml.Unmarshal(cfgText, &cfg); err != nil {
		return nil, fmt.Errorf("parse gitleaks.toml: %w", err)
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by \"go run ./internal/genrules\"; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "// The rules below are gitleaks' default rules (config/gitleaks.toml of\n")
	fmt.Fprintf(&b, "// github.com/gitleaks/gitleaks %s), under this licence:\n//\n", version)
	for _, line := range strings.Split(strings.TrimSpace(string(licence)), "\n") {
		b.WriteString(strings.TrimRight("// "+line, " ") + "\n")
	}
	b.WriteString("\npackage redact\n\n")
	fmt.Fprintf(&b, "// gitleaksVersion is the gitleaks release the rules come from.\nconst gitleaksVersion = %q\n\n", version)

	var skipped []string
	var kept []string
	for _, r := range cfg.Rules {
		why := skipReason(r)
		if why != "" {
			skipped = append(skipped, fmt.Sprintf("%s: %s", r.ID, why))
			continue
		}
		src, err := ruleSource(r)
		if err != nil {
			return nil, err
		}
		kept = append(kept, src)
	}
	sort.Strings(skipped)
	b.WriteString("// gitleaksSkipped lists the rules of gitleaks.toml not generated, and why.\n")
	b.WriteString("func gitleaksSkipped() []string {\n\treturn []string{\n")
	for _, s := range skipped {
		fmt.Fprintf(&b, "\t\t%s,\n", strconv.Quote(s))
	}
	b.WriteString("\t}\n}\n\n")
	global, ok, err := allowSource("global", cfg.Allowlist)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("the global allowlist has no check that applies to text")
	}
	fmt.Fprintf(&b, "// gitleaksGlobalAllow is gitleaks' global allowlist, less its paths.\nfunc gitleaksGlobalAllow() gitleaksAllow {\n\treturn %s\n}\n\n", global)
	fmt.Fprintf(&b, "// gitleaksRules returns the %d rules, in gitleaks' order.\nfunc gitleaksRules() []gitleaksRule {\n\treturn []gitleaksRule{\n", len(kept))
	for _, k := range kept {
		b.WriteString(k)
	}
	b.WriteString("\t}\n}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format generated source: %w", err)
	}
	return out, nil
}

func skipReason(r rule) string {
	if why, ok := replaced[r.ID]; ok {
		return why
	}
	if r.Regex == "" {
		return "matches file names only (path " + r.Path + "), and redaction sees no file names"
	}
	for _, l := range lookaround {
		if strings.Contains(r.Regex, l) {
			return "uses lookaround (" + l + "), which RE2 lacks"
		}
	}
	if _, err := regexp.Compile(r.Regex); err != nil {
		return "does not compile in Go: " + err.Error()
	}
	return ""
}

func ruleSource(r rule) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "\t\t{\n\t\t\tid:    %q,\n\t\t\tregex: %s,\n", r.ID, goString(r.Regex))
	if r.Path != "" {
		fmt.Fprintf(&b, "\t\t\t// gitleaks applies it to files matching %s only; here it applies to all text.\n", r.Path)
	}
	if r.SecretGroup != 0 {
		fmt.Fprintf(&b, "\t\t\tsecretGroup: %d,\n", r.SecretGroup)
	}
	if r.Entropy != 0 {
		fmt.Fprintf(&b, "\t\t\tentropy: %s,\n", strconv.FormatFloat(r.Entropy, 'g', -1, 64))
	}
	if multiLine.MatchString(r.Regex) {
		b.WriteString("\t\t\tmultiLine: true,\n")
	}
	if group, ak := assignGroup(r); group != "" {
		fmt.Fprintf(&b, "\t\t\tassignGroup: %s,\n", goString(group))
		if len(ak) > 0 {
			fmt.Fprintf(&b, "\t\t\tassignKeywords: %s,\n", quoteList(ak))
		}
		var vk []string
		for _, k := range r.Keywords {
			if k = strings.ToLower(k); !slices.Contains(ak, k) {
				vk = append(vk, k)
			}
		}
		// Only when every match is NAME [sep] VALUE: no other branch.
		if len(vk) > 0 && !topLevelAlternation(r.Regex) {
			fmt.Fprintf(&b, "\t\t\tvalueKeywords: %s,\n", quoteList(vk))
		}
	} else if sk := startKeywords(r); len(sk) > 0 && !multiLine.MatchString(r.Regex) {
		fmt.Fprintf(&b, "\t\t\tstartKeywords: %s,\n", quoteList(sk))
	}
	if len(r.Keywords) > 0 {
		kw := make([]string, len(r.Keywords))
		for i, k := range r.Keywords {
			kw[i] = strconv.Quote(strings.ToLower(k))
		}
		fmt.Fprintf(&b, "\t\t\tkeywords: []string{%s},\n", strings.Join(kw, ", "))
	}
	var allows []string
	for i, a := range r.Allowlists {
		src, ok, err := allowSource(fmt.Sprintf("%s allowlist %d", r.ID, i+1), a)
		if err != nil {
			return "", err
		}
		if ok {
			allows = append(allows, src)
		}
	}
	if len(allows) > 0 {
		fmt.Fprintf(&b, "\t\t\tallow: []gitleaksAllow{\n")
		for _, a := range allows {
			fmt.Fprintf(&b, "\t\t\t\t%s,\n", a)
		}
		b.WriteString("\t\t\t},\n")
	}
	b.WriteString("\t\t},\n")
	return b.String(), nil
}

// allowSource renders an allowlist, without what needs a file name or a
// commit. It returns false when nothing is left that applies to text: an
// AND allowlist with paths or commits can never hold here.
func allowSource(name string, a allowlist) (string, bool, error) {
	if strings.EqualFold(a.Condition, "AND") && (len(a.Paths) > 0 || len(a.Commits) > 0) {
		return "", false, nil
	}
	if len(a.Regexes) == 0 && len(a.StopWords) == 0 {
		return "", false, nil
	}
	var b strings.Builder
	b.WriteString("gitleaksAllow{")
	switch a.RegexTarget {
	case "", "secret":
	case "match", "line":
		fmt.Fprintf(&b, "target: %q, ", a.RegexTarget)
	default:
		return "", false, fmt.Errorf("%s: unknown regexTarget %q", name, a.RegexTarget)
	}
	if len(a.Regexes) > 0 {
		rs := make([]string, len(a.Regexes))
		for i, re := range a.Regexes {
			if _, err := regexp.Compile(re); err != nil {
				return "", false, fmt.Errorf("%s: regex %q: %w", name, re, err)
			}
			rs[i] = goString(re)
		}
		fmt.Fprintf(&b, "regexes: []string{%s}, ", strings.Join(rs, ", "))
	}
	if len(a.StopWords) > 0 {
		ws := make([]string, len(a.StopWords))
		for i, w := range a.StopWords {
			ws[i] = strconv.Quote(strings.ToLower(w))
		}
		fmt.Fprintf(&b, "stopwords: []string{%s}", strings.Join(ws, ", "))
	}
	return strings.TrimSuffix(b.String(), ", ") + "}", true, nil
}

// topLevelAlternation reports a | outside any group or class.
func topLevelAlternation(re string) bool {
	depth, class := 0, false
	for i := 0; i < len(re); i++ {
		switch c := re[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']'
		case c == '[':
			class = true
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			return true
		}
	}
	return false
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// goString is s as a Go literal: raw when it can be.
func goString(s string) string {
	if strings.ContainsAny(s, "`\r") {
		return strconv.Quote(s)
	}
	return "`" + s + "`"
}
