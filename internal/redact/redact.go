package redact

//go:generate go run ./internal/genrules -dir internal/genrules -out gitleaks_rules.go

import (
	"regexp"
	"sort"
	"strings"
	"sync"
)

// How redaction works: every rule names keywords (lower case) that its
// secrets contain or follow. One pass over the text finds where the
// keywords occur; a rule's regexp then runs only near its keywords, so the
// cost grows with the text, not with the text times the rules. Near means,
// for each occurrence (a hit), one of:
//   - the hit's line and the lines a match may reach (modeRegion);
//   - for a name that holds a secret (password, api_key): nothing unless a
//     separator follows the name, else one anchored try from where the
//     name starts (modeAssign);
//   - for a token that starts with its keyword after a word boundary
//     (ghp_, AKIA, eyJ): one anchored try from the hit, if it starts a word
//     (modeStart);
//   - for a keyword inside the value of a NAME=VALUE rule (lob's test_):
//     the hit's surroundings, if the rule's name stands shortly before
//     (modeValue).
// Keywords like key, token and api occur far more often than secrets, so
// most hits end at a cheap check. Each rule yields spans to redact;
// overlapping spans merge into one and take the label of the most specific
// rule. The rules come in four tiers, most specific first: local vendor
// rules (shapes gitleaks has no rule for, or matches more strictly than a
// made-up or cut key needs), gitleaks' vendor rules (generated from its
// published config, see gitleaks_rules.go), the keyword-assignment
// heuristics (password=, *_TOKEN=, URL userinfo, Authorization headers,
// curl -u), and last gitleaks' generic-api-key.

// tier orders the rules for labels: a lower tier names a span.
type tier int

const (
	tierVendor tier = iota
	tierGitleaks
	tierHeuristic
	tierGeneric
)

// hitMode says how a rule searches around one of its keywords.
type hitMode uint8

const (
	modeRegion hitMode = iota
	modeAssign
	modeStart
	modeValue
)

// A rule finds one shape of secret. find turns one match into the span to
// redact and its label (empty: the rule's kind), or says no.
type rule struct {
	kind     string
	tier     tier
	keywords []string
	re       *lazyRegexp
	find     finder
	// before and after are how many lines around a keyword's line a
	// match may reach.
	before, after int
	// modes says how each keyword is searched (modeRegion when absent).
	modes map[string]hitMode
	// startRe is re anchored at its start, for modeAssign and modeStart.
	startRe *lazyRegexp
	// For modeAssign: sep reports whether a separator follows the
	// keyword ending at at (the hit at pos); nameFrom is where the match
	// starts; ahead bounds it after the keyword.
	sep      func(s string, pos, at int) bool
	nameFrom func(s string, pos int) int
	ahead    int
	// For modeValue: names matches the rule's names.
	names *lazyRegexp
	// check, when set, must accept a region before it is searched.
	check func(region string) bool
}

// multiLineReach is how many lines around its keyword a multi-line
// gitleaks rule (curl with continuations, a Kubernetes secret) may reach.
const multiLineReach = 8

// maxReach bounds a region on a long line: no secret shape is longer.
const maxReach = 4096

// valueBack is how far before a value keyword (modeValue) the rule's name
// may stand.
const valueBack = 96

// A finder reads a match of the rule's regexp in s: loc holds the
// submatch indices into s.
type finder func(s string, loc []int) (lo, hi int, kind string, ok bool)

const redactedPrefix = "[REDACTED:"

// lazyRegexp is an expression compiled on its first use. The rules hold
// about 550 expressions and compiling them all took 40 ms, paid by every
// process that redacts anything (every log line is redacted), while a text
// reaches the regexps of only the rules whose keywords it contains.
// TestEveryRuleCompiles compiles them all.
// Building the rules allocates one value per expression (no closure),
// and an anchored or grouped variant is concatenated only when compiled.
type lazyRegexp struct {
	once            sync.Once
	pre, expr, post string
	re              *regexp.Regexp
}

func lazyCompile(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

// lazyWrap is pre+expr+post, compiled on its first use.
func lazyWrap(pre, expr, post string) *lazyRegexp {
	return &lazyRegexp{pre: pre, expr: expr, post: post}
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.pre + l.expr + l.post) })
	return l.re
}

// ruleSet is the compiled rules: built on first use, read-only after
// (but for the pool of buffers).
type ruleSet struct {
	rules    []rule
	keywords *keywordIndex
	// bufs holds *regionBufs for regions: two slices of len(rules) made
	// per text were ~45% of redaction's CPU on a log of short messages
	// (their zeroing, the page faults and the GC they caused).
	bufs sync.Pool
}

// regionBufs is what regions returns, per rule; release gives it back.
type regionBufs struct{ regions, starts [][]span }

var compiledRules = sync.OnceValue(func() *ruleSet {
	rs := buildRules()
	rulesBuilt.Store(true)
	return rs
})

func buildRules() *ruleSet {
	vendor, gitleaks, heuristic := vendorRules(), gitleaksRules(), heuristicRules()
	rs := &ruleSet{rules: make([]rule, 0, len(vendor)+len(gitleaks)+len(heuristic))}
	rs.rules = append(rs.rules, vendor...)
	global := compileAllow(gitleaksGlobalAllow())
	var generic []rule
	for _, g := range gitleaks {
		allows := make([]compiledAllow, len(g.allow))
		for i, a := range g.allow {
			allows[i] = compileAllow(a)
		}
		r := gitleaksAdapt(g, global, allows)
		if r.tier == tierGeneric {
			generic = append(generic, r)
			continue
		}
		rs.rules = append(rs.rules, r)
	}
	rs.rules = append(rs.rules, heuristic...)
	rs.rules = append(rs.rules, generic...)
	rs.keywords = newKeywordIndex(rs.rules)
	return rs
}

// ruleCounts are how many rules Redact applies, by tier (the PEM rule
// counted with the vendor rules).
func ruleCounts() map[tier]int {
	n := map[tier]int{tierVendor: 1}
	for _, r := range compiledRules().rules {
		n[r.tier]++
	}
	return n
}

// span is a part of the text to redact.
type span struct {
	lo, hi int
	rule   int    // index in ruleSet.rules; -1 for a PEM key
	kind   string // its label
}

// Redact replaces every secret it finds in s with [REDACTED:kind] and
// returns the new text and how many it replaced. It errs on the side of
// redacting, but leaves ordinary code alone: identifiers, calls and types
// assigned to variables named password or token, git and sha256 hashes,
// UUIDs and paths. Its cost is linear in the length of s.
func Redact(s string) (string, int) {
	if s == "" {
		return s, 0
	}
	if !rulesBuilt.Load() && !mayHoldSecret(unescapeBreaks(s)) {
		return s, 0 // no rule could match (keywords.go)
	}
	return compiledRules().redact(s)
}

func (rs *ruleSet) redact(s string) (string, int) {
	view := unescapeBreaks(s)
	var spans []span
	if strings.Contains(view, "PRIVATE KEY") {
		for _, loc := range pemRe().FindAllStringIndex(view, -1) {
			spans = append(spans, span{lo: loc[0], hi: loc[1], rule: -1, kind: "private-key"})
		}
	}
	var regions, starts [][]span // none when no keyword occurs
	if bufs := rs.regions(view); bufs != nil {
		defer rs.release(bufs)
		regions, starts = bufs.regions, bufs.starts
	}
	add := func(i int, loc []int, base int) {
		for k := range loc {
			if loc[k] >= 0 {
				loc[k] += base
			}
		}
		r := &rs.rules[i]
		lo, hi, kind, ok := r.find(view, loc)
		if !ok || lo >= hi || strings.Contains(view[lo:hi], "REDACTED:") {
			return
		}
		if kind == "" {
			kind = r.kind
		}
		spans = append(spans, span{lo: lo, hi: hi, rule: i, kind: kind})
	}
	for i := range regions { // none when no keyword occurs
		r := &rs.rules[i]
		for _, reg := range regions[i] {
			for _, loc := range r.re.get().FindAllStringSubmatchIndex(view[reg.lo:reg.hi], -1) {
				add(i, loc, reg.lo)
			}
		}
		for _, st := range starts[i] {
			if loc := r.startRe.get().FindStringSubmatchIndex(view[st.lo:st.hi]); loc != nil {
				add(i, loc, st.lo)
			}
		}
	}
	if strings.Contains(view, redactedPrefix) {
		spans = outsideMarkers(view, spans)
	}
	if len(spans) == 0 {
		return s, 0
	}
	return rs.apply(s, spans)
}

// unescapeBreaks returns s with its escaped line breaks and tabs (\n, \r,
// \t as two characters, as in JSON strings: tool arguments, JSON lines)
// turned into a real line break or tab and a space. The rules then see
// lines and word boundaries where a reader does; the text keeps its
// length, so what they find lies at the same place in s, and no secret
// they find holds an escape.
func unescapeBreaks(s string) string {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s
	}
	var b []byte
	for ; i+1 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		var c byte
		switch s[i+1] {
		case '\\':
			i++ // an escaped backslash: the next character is itself
			continue
		case 'n', 'r':
			c = '\n'
		case 't':
			c = '\t'
		default:
			continue
		}
		if b == nil {
			b = []byte(s)
		}
		b[i], b[i+1] = c, ' '
		i++
	}
	if b == nil {
		return s
	}
	return string(b)
}

// outsideMarkers drops the spans that touch a [REDACTED:kind] already in
// s, so that redacting twice changes nothing.
func outsideMarkers(s string, spans []span) []span {
	var marks []span
	for i := 0; ; {
		j := strings.Index(s[i:], redactedPrefix)
		if j < 0 {
			break
		}
		lo := i + j
		hi := len(s)
		if k := strings.IndexByte(s[lo:], ']'); k >= 0 {
			hi = lo + k + 1
		}
		marks = append(marks, span{lo: lo, hi: hi})
		i = hi
	}
	out := spans[:0]
	for _, sp := range spans {
		// marks are sorted: find the first that ends after sp starts.
		k := sort.Search(len(marks), func(i int) bool { return marks[i].hi > sp.lo })
		if k < len(marks) && marks[k].lo < sp.hi {
			continue
		}
		out = append(out, sp)
	}
	return out
}

// apply replaces the spans, merged where they overlap, by their labels.
func (rs *ruleSet) apply(s string, spans []span) (string, int) {
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].lo != spans[j].lo {
			return spans[i].lo < spans[j].lo
		}
		return spans[i].hi > spans[j].hi
	})
	var b strings.Builder
	b.Grow(len(s))
	last, n := 0, 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		best := cur
		j := i + 1
		for ; j < len(spans) && spans[j].lo < cur.hi; j++ {
			cur.hi = max(cur.hi, spans[j].hi)
			if rs.before(spans[j].rule, best.rule) {
				best = spans[j]
			}
		}
		b.WriteString(s[last:cur.lo])
		b.WriteString(redactedPrefix + best.kind + "]")
		last = cur.hi
		n++
		i = j
	}
	b.WriteString(s[last:])
	return b.String(), n
}

// before reports whether rule a names a span rather than rule b.
func (rs *ruleSet) before(a, b int) bool {
	if a < 0 || b < 0 {
		return a < 0 && b >= 0
	}
	ta, tb := rs.rules[a].tier, rs.rules[b].tier
	if ta != tb {
		return ta < tb
	}
	return a < b
}

// regions returns, per rule, the parts of s its regexp must search
// (merged where they touch) and the parts where its startRe must match
// at the beginning (see hitMode); nil when s holds no keyword.
func (rs *ruleSet) regions(s string) *regionBufs {
	// regions and starts are taken on the first hit: most texts (a log
	// record's attribute) hold no keyword at all.
	var bufs *regionBufs
	var regions, starts [][]span
	grow := func() {
		if bufs == nil {
			bufs, _ = rs.bufs.Get().(*regionBufs)
			if bufs == nil {
				bufs = &regionBufs{regions: make([][]span, len(rs.rules)), starts: make([][]span, len(rs.rules))}
			}
			regions, starts = bufs.regions, bufs.starts
		}
	}
	var nl []int // offsets of the newlines of s
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			break
		}
		nl = append(nl, i+j)
		i += j + 1
	}
	lineStart := func(li int) int {
		if li <= 0 {
			return 0
		}
		return nl[min(li, len(nl))-1] + 1
	}
	lineEnd := func(li int) int { // just past the newline
		if li >= len(nl) {
			return len(s)
		}
		return nl[li] + 1
	}
	addRegion := func(ri, lo, hi int) {
		regs := regions[ri]
		if k := len(regs) - 1; k >= 0 && lo <= regs[k].hi {
			regs[k].hi = max(regs[k].hi, hi)
			return
		}
		regions[ri] = append(regs, span{lo: lo, hi: hi})
	}
	addStart := func(ri, lo, hi int) {
		if k := len(starts[ri]) - 1; k < 0 || starts[ri][k].lo != lo {
			starts[ri] = append(starts[ri], span{lo: lo, hi: hi})
		}
	}
	line := 0
	rs.keywords.scan(s, func(pos, kw int) {
		grow()
		for line < len(nl) && nl[line] < pos {
			line++
		}
		at := pos + len(rs.keywords.words[kw])
		for _, ref := range rs.keywords.rules[kw] {
			r := &rs.rules[ref.rule]
			first, last := lineStart(line), lineEnd(line+r.after)
			switch ref.mode {
			case modeAssign:
				if r.sep(s, pos, at) {
					addStart(ref.rule, max(first, r.nameFrom(s, pos)), min(last, at+r.ahead))
				}
			case modeStart:
				if pos == 0 || !isWordByte(s[pos-1]) {
					addStart(ref.rule, pos, min(last, pos+maxReach))
				}
			case modeValue:
				if r.names.get().MatchString(s[max(first, pos-valueBack):pos]) {
					addRegion(ref.rule, max(first, pos-2*valueBack), min(last, at+maxReach))
				}
			default:
				addRegion(ref.rule, max(lineStart(line-r.before), pos-maxReach), min(lineEnd(line+r.after), at+maxReach))
			}
		}
	})
	for ri := range regions {
		if check := rs.rules[ri].check; check != nil {
			kept := regions[ri][:0]
			for _, reg := range regions[ri] {
				if check(s[reg.lo:reg.hi]) {
					kept = append(kept, reg)
				}
			}
			regions[ri] = kept
		}
	}
	return bufs
}

// release empties what regions returned and keeps it for the next text.
func (rs *ruleSet) release(bufs *regionBufs) {
	for i := range bufs.regions {
		bufs.regions[i], bufs.starts[i] = bufs.regions[i][:0], bufs.starts[i][:0]
	}
	rs.bufs.Put(bufs)
}

// keywordIndex finds all rules' keywords in one pass: candidates are
// looked up by the text's next two bytes, folded to lower case.
type keywordIndex struct {
	words []string
	rules [][]ruleRef // keyword -> rules
	// pairs[pair[pairIndex(c0, c1)]-1] lists the keywords starting with
	// the bytes c0 c1 (0: none). Keywords are ASCII, so the table has
	// 2^14 entries (32 KB), not 2^16: the build of a process's first
	// redaction faults in 8 pages, not 32.
	pair  [1 << 14]uint16
	pairs [][]int
	// thirds[p] has the bit of byte c set when a keyword of pairs[p] has
	// c third (all bits: one is two bytes long), so that most pairs of
	// prose (the "to" of "total", the "se" of "session") are passed over
	// without comparing their keywords.
	thirds [][4]uint64
}

// pairIndex is the pair table's slot for two bytes folded to lower case;
// a byte past ASCII starts no keyword and shares a slot with an ASCII
// one, which hasPrefixFold then refuses.
func pairIndex(c0, c1 byte) uint16 {
	return uint16(lowerASCII(c0)&0x7f)<<7 | uint16(lowerASCII(c1)&0x7f)
}

// ruleRef is a rule a keyword belongs to, and how the keyword is searched.
type ruleRef struct {
	rule int
	mode hitMode
}

func newKeywordIndex(rules []rule) *keywordIndex {
	n := 0
	for _, r := range rules {
		n += len(r.keywords)
	}
	k := &keywordIndex{words: make([]string, 0, n), rules: make([][]ruleRef, 0, n)}
	ids := make(map[string]int, n)
	for ri, r := range rules {
		for _, w := range r.keywords {
			w = strings.ToLower(w)
			if len(w) < 2 {
				panic("redaction keyword shorter than two bytes: " + w)
			}
			id, ok := ids[w]
			if !ok {
				if !isASCII(w) {
					panic("redaction keyword not ASCII: " + w)
				}
				id = len(k.words)
				ids[w] = id
				k.words = append(k.words, w)
				k.rules = append(k.rules, nil)
				p := pairIndex(w[0], w[1])
				if k.pair[p] == 0 {
					k.pairs = append(k.pairs, nil)
					k.thirds = append(k.thirds, [4]uint64{})
					k.pair[p] = uint16(len(k.pairs))
				}
				k.pairs[k.pair[p]-1] = append(k.pairs[k.pair[p]-1], id)
				third := &k.thirds[k.pair[p]-1]
				if len(w) == 2 {
					*third = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
				} else {
					third[w[2]>>6] |= 1 << (w[2] & 63)
				}
			}
			if n := len(k.rules[id]); n == 0 || k.rules[id][n-1].rule != ri {
				k.rules[id] = append(k.rules[id], ruleRef{rule: ri, mode: r.modes[w]})
			}
		}
	}
	return k
}

// scan calls hit for every occurrence of a keyword in s (ASCII case
// folded), in order of position.
func (k *keywordIndex) scan(s string, hit func(pos, kw int)) {
	for i := 0; i+1 < len(s); i++ {
		p := k.pair[pairIndex(s[i], s[i+1])]
		if p == 0 {
			continue
		}
		if i+2 < len(s) {
			c := lowerASCII(s[i+2])
			if k.thirds[p-1][c>>6]&(1<<(c&63)) == 0 {
				continue
			}
		}
		for _, id := range k.pairs[p-1] {
			if hasPrefixFold(s[i:], k.words[id]) {
				hit(i, id)
			}
		}
	}
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold reports whether s starts with the lower-case word, ASCII
// case folded.
func hasPrefixFold(s, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for i := 0; i < len(word); i++ {
		if lowerASCII(s[i]) != word[i] {
			return false
		}
	}
	return true
}
