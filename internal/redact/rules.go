package redact

import (
	"math"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// isWordByte reports a byte of \w: a letter, a digit or _.
func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// assignAhead bounds an assignment match of the heuristics after its
// keyword: the rest of the name and a quoted value of 300 characters.
const assignAhead = 448

// gitleaksAhead bounds a keyword-assignment match of gitleaks after its
// keyword: 20 name characters, 3 quotes, the separator, 5 quotes, a value
// (at most 150 characters in gitleaks' rules) and its end.
const gitleaksAhead = 320

// sepAfterName reports what assignRe and envRe need after a secret word:
// the rest of the name, a quote or backslash, spaces, then = or :.
func sepAfterName(s string, _, at int) bool {
	i := at
	for i < len(s) && i-at <= 128 && (isWordByte(s[i]) || s[i] == '-') {
		i++
	}
	for n := 0; i < len(s) && n < 2 && (s[i] == '"' || s[i] == '\'' || s[i] == '\\'); n++ {
		i++
	}
	for n := 0; i < len(s) && n < 16 && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'); n++ {
		i++
	}
	return i < len(s) && (s[i] == '=' || s[i] == ':')
}

// sepNear reports what gitleaks' keyword-assignment rules need after
// their keyword: at most 20 name characters and 3 quotes or spaces, then a
// separator (=, :, >, ||, ?=, a comma).
func sepNear(s string, _, at int) bool {
	for i := at; i < len(s) && i-at <= 24; i++ {
		switch c := s[i]; {
		case c == '=' || c == ':' || c == '>' || c == '|' || c == '?' || c == ',':
			return true
		case isWordByte(c) || c == '-' || c == '.' || c == ' ' || c == '\t' || c == '\'' || c == '"' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
		default:
			return false
		}
	}
	return false
}

// nameStart is where gitleaks' keyword-assignment match holding the
// keyword at pos begins: its [\w.-]{0,50}? prefix starts at the first of
// the name characters before the keyword, at most 50 back.
func nameStart(s string, pos int) int {
	i := pos
	for i > 0 && pos-i < 50 {
		c := s[i-1]
		if !isWordByte(c) && c != '.' && c != '-' {
			break
		}
		i--
	}
	return i
}

// nearSep reports what nearRe needs around a word like token: no letter
// before it, and a run of 20 token characters starting within 40 bytes
// after it.
func nearSep(s string, pos, at int) bool {
	if pos > 0 && (s[pos-1]|0x20 >= 'a' && s[pos-1]|0x20 <= 'z') {
		return false
	}
	run := 0
	for i := at; i < len(s) && i-at < 40+20; i++ {
		c := s[i]
		if c == '+' || c == '/' || c == '_' || c == '=' || c == '.' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			run++
			if run >= 20 {
				return true
			}
			continue
		}
		if c == '\n' || i-at >= 40 {
			return false
		}
		run = 0
	}
	return false
}

// gitleaksRule is one rule of gitleaks.toml, as generated.
type gitleaksRule struct {
	id          string
	regex       string
	secretGroup int
	entropy     float64
	multiLine   bool
	keywords    []string
	// assignGroup is the group of names of a keyword-assignment rule
	// (NAME [sep] VALUE); assignKeywords are the keywords it matches,
	// valueKeywords those found in the VALUE.
	assignGroup    string
	assignKeywords []string
	valueKeywords  []string
	// startKeywords begin a match, right after a word boundary.
	startKeywords []string
	allow         []gitleaksAllow
}

// gitleaksAllow is a gitleaks allowlist: a finding is allowed when one of
// the regexes matches its target (the secret, the whole match or the
// line) or the secret holds one of the stopwords.
type gitleaksAllow struct {
	target    string
	regexes   []string
	stopwords []string
}

type compiledAllow struct {
	target    string
	regexes   []*lazyRegexp
	stopwords []string
}

func compileAllow(a gitleaksAllow) compiledAllow {
	c := compiledAllow{target: a.target, stopwords: a.stopwords}
	for _, re := range a.regexes {
		c.regexes = append(c.regexes, lazyCompile(re))
	}
	return c
}

// allowed reports whether the allowlist lets a finding pass.
func (a compiledAllow) allowed(secret, match, line string) bool {
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	if target != "" {
		for _, re := range a.regexes {
			if re.get().MatchString(target) {
				return true
			}
		}
	}
	if len(a.stopwords) > 0 && secret != "" {
		lower := strings.ToLower(secret)
		for _, w := range a.stopwords {
			if strings.Contains(lower, w) {
				return true
			}
		}
	}
	return false
}

// gitleaksAdapt makes a rule of a gitleaks rule: keywords of its name
// group searched in modeAssign, keywords that start its token in
// modeStart, keywords inside the value of a NAME=VALUE rule in modeValue.
func gitleaksAdapt(g gitleaksRule, global compiledAllow, allows []compiledAllow) rule {
	r := rule{kind: g.id, tier: tierGitleaks, keywords: g.keywords, re: lazyCompile(g.regex),
		after: 1, find: gitleaksFind(g, global, allows)}
	if n := len(g.valueKeywords) + len(g.assignKeywords) + len(g.startKeywords); n > 0 {
		r.modes = make(map[string]hitMode, n) // else every keyword is modeRegion
	}
	if strings.HasPrefix(g.id, "generic-") {
		r.tier = tierGeneric
	}
	if g.multiLine {
		r.before, r.after = multiLineReach, multiLineReach
	}
	if g.assignGroup != "" || len(g.startKeywords) > 0 {
		r.startRe = lazyWrap(`^(?:`, g.regex, `)`)
	}
	if g.assignGroup != "" {
		r.sep, r.nameFrom, r.ahead = sepNear, nameStart, gitleaksAhead
		r.names = lazyWrap(`(?i)(?:`, g.assignGroup, `)`)
		for _, k := range g.valueKeywords {
			r.modes[k] = modeValue
		}
		for _, k := range g.assignKeywords {
			r.modes[k] = modeAssign
		}
	}
	for _, k := range g.startKeywords {
		r.modes[k] = modeStart
	}
	if g.id == "kubernetes-secret-yaml" {
		// Its keyword, secret, is everywhere; a match needs kind: too.
		r.check = func(region string) bool { return containsFold(region, "kind:") }
	}
	return r
}

// containsFold reports whether s holds the lower-case word, ASCII case
// folded.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if lowerASCII(s[i]) == word[0] && hasPrefixFold(s[i:], word) {
			return true
		}
	}
	return false
}

// gitleaksFind applies gitleaks' semantics to a match: the secret is the
// secret group, else the first non-empty group, else the match; its
// entropy must exceed the rule's; no allowlist may hold.
func gitleaksFind(r gitleaksRule, global compiledAllow, allows []compiledAllow) finder {
	generic := strings.HasPrefix(r.id, "generic-")
	return func(text string, loc []int) (int, int, string, bool) {
		lo, hi := loc[0], loc[1]
		// gitleaks trims newlines off the match.
		for lo < hi && text[lo] == '\n' {
			lo++
		}
		for hi > lo && text[hi-1] == '\n' {
			hi--
		}
		match := text[lo:hi]
		slo, shi := lo, hi
		if n := len(loc) / 2; n > 1 {
			if r.secretGroup > 0 {
				if r.secretGroup >= n || loc[2*r.secretGroup] < 0 {
					return 0, 0, "", false
				}
				slo, shi = loc[2*r.secretGroup], loc[2*r.secretGroup+1]
			} else {
				for g := 1; g < n; g++ {
					if loc[2*g] >= 0 && loc[2*g+1] > loc[2*g] {
						slo, shi = loc[2*g], loc[2*g+1]
						break
					}
				}
			}
		}
		secret := text[slo:shi]
		if secret == "" || (r.entropy != 0 && runeEntropy(secret) <= r.entropy) {
			return 0, 0, "", false
		}
		if generic && hashLike().MatchString(secret) {
			return 0, 0, "", false // a commit, digest or UUID next to a word like key or token
		}
		line := lineAround(text, lo, hi)
		if global.allowed(secret, match, line) {
			return 0, 0, "", false
		}
		for _, a := range allows {
			if a.allowed(secret, match, line) {
				return 0, 0, "", false
			}
		}
		return slo, shi, "", true
	}
}

// lineAround is the whole lines of text that text[lo:hi] touches, within
// maxReach bytes on either side.
func lineAround(text string, lo, hi int) string {
	from := max(0, lo-maxReach)
	start := from + strings.LastIndexByte(text[from:lo], '\n') + 1
	to := min(len(text), hi+maxReach)
	end := to
	if i := strings.IndexByte(text[hi:to], '\n'); i >= 0 {
		end = hi + i
	}
	return text[start:end]
}

// groupFind redacts submatch group g (0: the whole match) when valid
// (if set) accepts it.
func groupFind(g int, valid func(string) bool) finder {
	return func(text string, loc []int) (int, int, string, bool) {
		lo, hi := loc[2*g], loc[2*g+1]
		if lo < 0 || lo == hi || (valid != nil && !valid(text[lo:hi])) {
			return 0, 0, "", false
		}
		return lo, hi, "", true
	}
}

// firstGroupFind redacts the first submatch group that matched, when valid
// (if set) accepts it.
func firstGroupFind(valid func(string) bool) finder {
	return func(text string, loc []int) (int, int, string, bool) {
		for g := 1; g < len(loc)/2; g++ {
			if lo, hi := loc[2*g], loc[2*g+1]; lo >= 0 && hi > lo {
				if valid != nil && !valid(text[lo:hi]) {
					return 0, 0, "", false
				}
				return lo, hi, "", true
			}
		}
		return 0, 0, "", false
	}
}

// pemRe finds PEM private keys, the one secret that spans many lines; one
// whose END line is missing is cut to the end of the text.
var pemRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----|\z)`)
})

// vendorRules are the local rules for secrets known by their own shape.
func vendorRules() []rule {
	v := func(kind string, keywords []string, re string, find finder) rule {
		if find == nil {
			find = groupFind(0, nil)
		}
		return rule{kind: kind, tier: tierVendor, keywords: keywords, re: lazyCompile(re), find: find}
	}
	return []rule{
		v("anthropic-key", []string{"sk-ant-"}, `\bsk-ant-[A-Za-z0-9_-]{20,}`, nil),
		v("openai-key", []string{"sk-"}, `\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}`, groupFind(0, hasLetterAndDigit)),
		v("github-token", []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, `\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b`, nil),
		v("github-token", []string{"github_pat_"}, `\bgithub_pat_[A-Za-z0-9_]{40,}`, nil),
		v("gitlab-token", []string{"glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glft-", "glimt-", "gloas-", "glsoat-"}, `\bgl(?:pat|dt|ptt|rt|cbt|ft|imt|oas|soat)-[A-Za-z0-9_-]{20,}`, nil),
		v("slack-webhook", []string{"hooks.slack.com"}, `https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}`, nil),
		v("slack-token", []string{"xox"}, `\bxox[abposre]-[A-Za-z0-9-]{10,}`, nil),
		v("aws-access-key", []string{"akia", "asia", "abia", "acca", "aida", "aroa", "agpa", "anpa"}, `\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AGPA|ANPA)[A-Z0-9]{16}\b`, nil),
		v("aws-secret-key", []string{"secret"}, `(?i)aws_?secret_?(?:access_?)?key["']?\s*(?::=|=>|=|:)\s*["']?([A-Za-z0-9/+=]{40})`, groupFind(1, nil)),
		v("gcp-api-key", []string{"aiza"}, `\bAIza[0-9A-Za-z_-]{35}`, nil),
		v("gcp-oauth-secret", []string{"gocspx-"}, `\bGOCSPX-[A-Za-z0-9_-]{20,}`, nil),
		// A service account's key file names its private key by a 40-hex
		// private_key_id beside the (PEM-redacted) key: with the account's
		// email it identifies the key to revoke or abuse. gitleaks has no
		// rule for it, and 40 hex digits alone are a git hash: only the
		// name says what it is (quoted JSON, escaped JSON in tool
		// arguments, YAML or NAME=VALUE).
		v("gcp-private-key-id", []string{"private_key_id"}, `(?i)private_key_id(?:\\*["'])?\s*[:=]\s*(?:\\*["'])?([a-f0-9]{40})\b`, groupFind(1, nil)),
		v("google-oauth-token", []string{"ya29."}, `\bya29\.[0-9A-Za-z_-]{20,}`, nil),
		v("stripe-key", []string{"_live_", "_test_", "_prod_"}, `\b(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,}`, nil),
		v("stripe-webhook-secret", []string{"whsec_"}, `\bwhsec_[A-Za-z0-9]{20,}`, nil),
		v("jwt", []string{"eyj"}, `\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`, nil),
		v("npm-token", []string{"npm_"}, `\bnpm_[A-Za-z0-9]{36}\b`, nil),
		// .npmrc: _authToken (a UUID in legacy tokens), _auth (base64 of
		// user:password) and _password.
		v("npm-token", []string{"_authtoken", "_auth", "_password"}, `(?:^|[\s:"'])_(?:authToken|auth|password)\s*=\s*["']?([^\s"']+)`, groupFind(1, notPlaceholder)),
		v("pypi-token", []string{"pypi-age"}, `\bpypi-AgE[A-Za-z0-9_-]{50,}`, nil),
		v("huggingface-token", []string{"hf_"}, `\bhf_[A-Za-z0-9]{30,}\b`, nil),
		v("sendgrid-key", []string{"sg."}, `\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]*`, nil),
		v("digitalocean-token", []string{"doo_v1_", "dop_v1_", "dor_v1_"}, `\bdo[opr]_v1_[a-f0-9]{64}\b`, nil),
		v("shopify-token", []string{"shpat_", "shpss_", "shpca_", "shppa_"}, `\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b`, nil),
		v("telegram-bot-token", []string{":aa"}, `\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b`, nil),
		// Vault tokens: gitleaks wants 90+ characters; dev-server and
		// older tokens are 24.
		v("vault-token", []string{"hvs.", "hvb.", "hvr."}, `\bhv[sbr]\.[A-Za-z0-9_-]{20,}`, nil),
		// A password (or, with no password, a random-looking user) in
		// a URL's userinfo.
		v("url-password", []string{"://"}, `\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@"'<>\[\]]*:([^\s/"'<>]+)@`, groupFind(1, nil)),
		v("url-token", []string{"://"}, `\b[a-zA-Z][a-zA-Z0-9+.-]*://([^\s/:@"'<>\[\]]+)@`, groupFind(1, looksRandom)),
		v("bearer-token", []string{"bearer"}, `(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})`, groupFind(1, hasLetterAndDigit)),
		v("basic-auth", []string{"basic"}, `(?i)\bauthorization["']?\s*[:=]\s*["']?basic\s+([A-Za-z0-9+/=]{12,})`, groupFind(1, nil)),
		// Any other Authorization header: the credentials after the
		// scheme (token, Bot, SSWS, ApiKey, none).
		v("authorization", []string{"authorization"}, `(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:[a-z][a-z0-9-]*\s+)?([A-Za-z0-9._~+/=:-]{8,})`, groupFind(1, credentialLike)),
		v("azure-key", []string{"accountkey=", "sharedaccesskey="}, `(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/=]{20,})`, groupFind(1, nil)),
		// Azure shared access signatures: the sig parameter of a SAS URL
		// or connection string.
		v("azure-sas", []string{"sig="}, `(?i)(?:^|[?&;\s"']|\\u0026)sig=([A-Za-z0-9%+/=_-]{16,})`, groupFind(1, nil)),
	}
}

// heuristicRules find secrets by the name or flag they are given to.
func heuristicRules() []rule {
	h := func(kind string, keywords []string, re string, after int, find finder) rule {
		return rule{kind: kind, tier: tierHeuristic, keywords: keywords, re: lazyCompile(re), after: after, find: find}
	}
	return []rule{
		// curl -u user:password and --user user:password, also on the
		// continuation lines of a curl command.
		h("password", []string{"curl"}, `(?:^|[ \t])(?:-u|--user)(?:=|[ \t]+)(?:"[^"\n:]*:([^"\n]+)"|'[^'\n:]*:([^'\n]+)'|[^\s"':]*:(\S+))`, 5, firstGroupFind(notUIDGID)),
		// mysql -psecret (attached; -p alone prompts) and sshpass -p.
		h("password", []string{"mysql", "mariadb"}, `\b(?:mysql\w*|mariadb\w*)\b[^\n]*?[ \t]-p(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"'-]\S*))`, 0, firstGroupFind(nil)),
		h("password", []string{"sshpass"}, `\bsshpass\b[^\n]*?[ \t]-p[ \t]*(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"'-]\S*))`, 0, firstGroupFind(nil)),
		// --password VALUE, --token VALUE (the = form is an assignment).
		h("password", []string{"--pass", "--token", "--secret", "--api-key", "--apikey", "--client-secret", "--auth-token", "--access-token"},
			`(?:^|[ \t])--(password|passwd|pass|token|secret|api-key|apikey|client-secret|auth-token|access-token)[ \t]+(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"'$-]\S*))`, 0, flagFind),
		// .netrc: machine HOST login USER password PASSWORD.
		h("password", []string{"machine"}, `\bmachine[ \t]+\S+(?:\s+login[ \t]+\S+)?\s+password[ \t]+(\S+)`, 2, groupFind(1, nil)),
		// Environment style: DB_PASSWORD=..., GITHUB_TOKEN=..., and the
		// same names in YAML (docker compose).
		assigned("password", envKeywords, envRe, envFind, sepAfterName, wordStart),
		assigned("secret", assignKeywords, assignRe, assignFind, sepAfterName, func(_ string, pos int) int { return pos }),
		assigned("high-entropy", nearKeywords, nearRe, nearFind, nearSep, func(_ string, pos int) int { return max(0, pos-1) }),
	}
}

// assigned is a heuristic searched in modeAssign for all its keywords.
func assigned(kind string, keywords []string, re string, find finder, sep func(string, int, int) bool, from func(string, int) int) rule {
	r := rule{kind: kind, tier: tierHeuristic, keywords: keywords, re: lazyCompile(re), find: find,
		modes: map[string]hitMode{}, startRe: lazyWrap(`^(?:`, re, `)`), sep: sep, nameFrom: from, ahead: assignAhead}
	for _, k := range keywords {
		r.modes[k] = modeAssign
	}
	if kind == "high-entropy" {
		r.ahead = maxReach
	}
	return r
}

// wordStart is where the word holding pos starts.
func wordStart(s string, pos int) int {
	for pos > 0 && isWordByte(s[pos-1]) {
		pos--
	}
	return pos
}

// The keywords of the assignment heuristics: where a match of theirs
// may begin (assignRe, nearRe), or a part of its name (envRe).
var (
	envKeywords    = []string{"pass", "pwd", "secret", "token", "key", "credential", "auth"}
	assignKeywords = []string{"pass", "pwd", "secret", "token", "api", "access", "private", "credential", "auth"}
	nearKeywords   = []string{"api", "secret", "token", "passw", "credential", "access", "private"}
)

// envRe finds NAME=value where NAME is an environment-style name ending in
// a word that says it holds a secret. Group 1 is the name, 2 the
// separator, 3-5 the value (double-quoted, single-quoted, bare).
const envRe = `\b((?:[A-Z][A-Z0-9_]*)?(?:PASSWORD|PASSWD|PWD|_PASS|TOKEN|SECRET|SECRET_KEY|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|_AUTH|CREDENTIALS?))(=|:[ \t]+)(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|((?:[^\s"'\\]|\\[^\s"nrt])+))`

// envFind redacts the value of an environment-style assignment unless it
// is empty, a reference or template, a placeholder, or a literal.
func envFind(text string, loc []int) (int, int, string, bool) {
	g := 3
	for g <= 5 && loc[2*g] < 0 {
		g++
	}
	if g > 5 {
		return 0, 0, "", false
	}
	lo, hi := loc[2*g], loc[2*g+1]
	v := text[lo:hi]
	if g == 5 {
		v = strings.TrimRight(cutEscapedBreak(v), ";,")
		hi = lo + len(v)
	}
	if v == "" || !notPlaceholder(v) || strings.HasPrefix(v, "$") || strings.HasPrefix(v, "%") {
		return 0, 0, "", false
	}
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "null", "none", "nil", "0", "1":
		return 0, 0, "", false
	}
	return lo, hi, nameKind(text[loc[2]:loc[3]]), true
}

// nearFind redacts the random-looking run after a word like token, less
// the separator it may start with (=, :, .).
func nearFind(text string, loc []int) (int, int, string, bool) {
	lo, hi := loc[2], loc[3]
	for lo < hi && strings.IndexByte("=.-", text[lo]) >= 0 {
		lo++
	}
	if lo >= hi || !looksRandom(text[lo:hi]) {
		return 0, 0, "", false
	}
	return lo, hi, "", true
}

// flagFind redacts the value of a --password or --token flag.
func flagFind(text string, loc []int) (int, int, string, bool) {
	for g := 2; g <= 4; g++ {
		if lo, hi := loc[2*g], loc[2*g+1]; lo >= 0 && hi > lo {
			if !notPlaceholder(text[lo:hi]) {
				return 0, 0, "", false
			}
			return lo, hi, nameKind(text[loc[2]:loc[3]]), true
		}
	}
	return 0, 0, "", false
}

// nameKind labels a value by the name it is assigned to.
func nameKind(name string) string {
	switch k := strings.ToLower(name); {
	case strings.Contains(k, "pass") || strings.Contains(k, "pwd"):
		return "password"
	case !strongName().MatchString(name):
		return "token"
	}
	return "secret"
}

// assignRe finds `name = value` (also :, :=, =>, and quoted names as in
// JSON or YAML) where the name says it holds a secret. Group 1 is the
// name, group 2 the separator, groups 3-5 the value (double-quoted, also
// with escaped quotes as inside JSON strings; single-quoted; unquoted).
const assignRe = `(?i)((?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?|auth)[a-z0-9_]*)["']?(\s*(?::=|=>|=|:)[ \t]*)(?:\\?"((?:[^"\\\n]|\\[^"\n]){1,300})\\?"|'([^'\n]{1,300})'|([^\s"',;=)}\]][^\s"',;)}\]]*))`

// strongName matches names whose value is a secret whatever it looks like;
// for the others (token, auth, credentials) the value must look random.
var strongName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)password|passwd|pwd|passphrase|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key`)
})

// nearRe finds a long random-looking string shortly after a word that says
// what follows is a key, token or secret ("my API key is ...").
const nearRe = `(?i)(?:^|[^a-z])(?:api[ _-]?key|secret|token|password|passwd|credential|access[ _-]?key|private[ _-]?key)s?\b[^\n]{0,24}?([A-Za-z0-9+/_=.-]{20,})`

// hashLike are strings that look random but are not secrets: git object
// ids, sha1/sha256/sha512 digests and UUIDs.
var hashLike = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9A-F]{40}|[0-9a-f]{64}|[0-9A-F]{64}|[0-9a-f]{128}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$`)
})

var uuidRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
})

// callRe is a value that is a call: name(…), a.b.c(…).
var callRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][\w.]*[(\[]`) })

// codeWords are values of a secret-named assignment that are code, types
// or placeholders, not secrets.
var codeWords = map[string]bool{
	"string": true, "str": true, "int": true, "bool": true, "boolean": true, "bytes": true, "byte": true,
	"none": true, "null": true, "nil": true, "true": true, "false": true, "undefined": true, "optional": true,
	"required": true, "any": true, "object": true, "text": true, "varchar": true, "number": true, "secretstr": true,
	"password": true, "secret": true, "token": true, "env": true, "os": true, "self": true, "this": true,
	"func": true, "function": true, "return": true, "new": true, "const": true, "var": true, "let": true,
}

// assignFind redacts the value of an assignment to a secret-named
// variable when secretValue says it is one.
func assignFind(text string, loc []int) (int, int, string, bool) {
	name := nameAround(text, loc[2], loc[3])
	if start := loc[3] - len(name); start > 0 && (text[start-1] == '$' || start > 1 && text[start-2:start] == "${") {
		return 0, 0, "", false // $PWD:/src, ${TOKEN}: a variable used, not set
	}
	if qualifiedName(name) {
		return 0, 0, "", false
	}
	sep := text[loc[4]:loc[5]]
	g := 3
	for g <= 5 && loc[2*g] < 0 {
		g++
	}
	if g > 5 {
		return 0, 0, "", false
	}
	lo, hi := loc[2*g], loc[2*g+1]
	v := text[lo:hi]
	if g == 5 {
		// In a query string the next parameter is not the value; in
		// JSON-escaped text \n ends the line.
		if i := strings.IndexByte(v, '&'); i > 0 && queryParam().MatchString(v[i:]) {
			v = v[:i]
		}
		if i := strings.Index(v, `\u0026`); i > 0 && queryParam().MatchString("&"+v[i+6:]) {
			v = v[:i]
		}
		v = cutEscapedBreak(v)
		hi = lo + len(v)
	}
	if !secretValue(name, sep, v, g == 5) {
		return 0, 0, "", false
	}
	return lo, hi, nameKind(name), true
}

// cutEscapedBreak cuts v at an escaped line break or tab (\n, \r, \t as
// two characters), which ends a line in JSON-escaped text.
func cutEscapedBreak(v string) string {
	for i := 0; i+1 < len(v); i++ {
		if v[i] == '\\' && (v[i+1] == 'n' || v[i+1] == 'r' || v[i+1] == 't') {
			return v[:i]
		}
	}
	return v
}

var queryParam = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^&[A-Za-z_][\w.-]*=`) })

// nameAround widens the secret word found at s[lo:hi] to the whole name
// it is part of (DB_PASSWORD, client.secret).
func nameAround(s string, lo, hi int) string {
	for lo > 0 {
		c := s[lo-1]
		if c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			lo--
			continue
		}
		break
	}
	return s[lo:hi]
}

// secretValue decides whether a value assigned to name with sep is a
// secret. A name like password or api_key makes any quoted value one, and an
// unquoted one unless it reads as code: a call, a field, a type, a
// template, or a plain word assigned with spaces or a colon (api_key = key,
// APIKey: key) rather than in env or flag style (API_KEY=value). For other
// names (token, auth, credentials, plurals) the value must look random, or
// be a UUID assigned to a name ending in a secret word (auth_token = UUID).
func secretValue(name, sep, val string, unquoted bool) bool {
	v := strings.TrimSpace(val)
	if v == "" || strings.Contains(v, redactedPrefix) {
		return false
	}
	lname := strings.ToLower(name)
	if !strongName().MatchString(name) || strings.HasSuffix(lname, "s") {
		return looksRandom(v) || (uuidRe().MatchString(v) && endsWithSecretWord(lname))
	}
	if !notPlaceholder(v) {
		return false
	}
	if !unquoted {
		return true
	}
	if codeWords[strings.ToLower(strings.TrimRight(v, "?!"))] || isReference(v) || callRe().MatchString(v) ||
		strings.ContainsAny(v[:1], "$({[<@&|") || strings.Contains(v, "->") || strings.Contains(v, "::") ||
		strings.Contains(v, "||") || strings.Contains(v, "&&") {
		return false
	}
	if isWord(v) && sep != "=" {
		return false
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") {
		return false // a path: where the secret is kept, not the secret
	}
	return true
}

// qualifiers end names that are about a secret without holding one:
// password_min_length, token_file, api_key_env, secretName.
var qualifiers = map[string]bool{
	"length": true, "len": true, "min": true, "max": true, "minimum": true, "maximum": true, "file": true, "path": true,
	"dir": true, "env": true, "var": true, "name": true, "names": true, "id": true, "ids": true, "url": true, "uri": true,
	"endpoint": true, "type": true, "policy": true, "required": true, "enabled": true, "enable": true, "field": true,
	"header": true, "prompt": true, "expiry": true, "expires": true, "ttl": true, "count": true, "size": true,
	"regex": true, "pattern": true, "label": true, "hint": true, "format": true, "mode": true, "provider": true,
	"strategy": true, "reset": true, "changed": true, "limit": true, "timeout": true, "version": true, "index": true,
}

// qualifiedName reports a name whose last part is a qualifier.
func qualifiedName(name string) bool {
	i := strings.LastIndexAny(name, "_-.")
	last := name[i+1:]
	// camelCase: the last capitalized word.
	for j := len(last) - 1; j > 0; j-- {
		if last[j] >= 'A' && last[j] <= 'Z' && last[j-1] >= 'a' && last[j-1] <= 'z' {
			last = last[j:]
			break
		}
	}
	return qualifiers[strings.ToLower(last)]
}

// endsWithSecretWord reports a name whose last part says it holds a
// secret: auth_token, apiKey, x-auth.
func endsWithSecretWord(lname string) bool {
	for _, w := range []string{"token", "auth", "key", "secret", "password", "credential"} {
		if strings.HasSuffix(lname, w) {
			return true
		}
	}
	return false
}

// notPlaceholder rejects masked values (****, xxx, <...>) and templates
// (${X}, $(cmd), {{ x }}).
func notPlaceholder(v string) bool {
	if strings.Trim(v, "*xX.•<>_-") == "" || strings.HasPrefix(v, "${") || strings.HasPrefix(v, "$(") ||
		strings.HasPrefix(v, "{{") || strings.HasPrefix(v, "<") {
		return false
	}
	return true
}

// notUIDGID rejects the uid:gid of docker -u 1000:1000.
func notUIDGID(v string) bool {
	for _, r := range v {
		if r < '0' || r > '9' {
			return notPlaceholder(v) && !strings.HasPrefix(v, "$")
		}
	}
	return false
}

// credentialLike accepts the credentials of an Authorization header: not
// a plain word (a header described in prose), unless long.
func credentialLike(v string) bool {
	return notPlaceholder(v) && (!isWord(v) || len(v) >= 24)
}

// isWord reports a plain identifier without digits (key, defaultValue).
func isWord(v string) bool {
	for _, r := range v {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func isReference(v string) bool {
	if !strings.Contains(v, ".") && !strings.Contains(v, "->") && !strings.Contains(v, "::") {
		return false
	}
	for _, r := range v {
		if !(r == '.' || r == '_' || r == '-' || r == '>' || r == ':' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// looksRandom reports whether s could be a generated credential: long,
// letters and digits mixed, high Shannon entropy, and not a hash or UUID.
func looksRandom(s string) bool {
	s = strings.Trim(s, ".-=")
	if len(s) < 16 || hashLike().MatchString(s) || strings.HasPrefix(s, redactedPrefix) {
		return false
	}
	if !hasLetterAndDigit(s) {
		return false
	}
	if strings.Count(s, "/") > 2 || strings.Count(s, ".") > 2 {
		return false // a path or a host name
	}
	if i := strings.IndexByte(s, '='); i >= 0 && strings.TrimRight(s[i:], "=") != "" {
		return false // name=value, not base64 padding
	}
	return entropy(s) >= 3.5
}

func hasLetterAndDigit(s string) bool {
	var letter, digit bool
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			letter = true
		}
	}
	return letter && digit
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// runeEntropy is gitleaks' entropy: over runes, divided by the length in
// bytes.
func runeEntropy(s string) float64 {
	if !utf8.ValidString(s) || !isASCII(s) {
		counts := map[rune]int{}
		for _, r := range s {
			counts[r]++
		}
		h, inv := 0.0, 1/float64(len(s))
		for _, c := range counts {
			p := float64(c) * inv
			h -= p * math.Log2(p)
		}
		return h
	}
	return entropy(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
