package summarize

import (
	"math"
	"regexp"
	"strings"
)

// A secret rule finds one shape of secret. When group > 0 only that
// submatch is replaced (the password in a URL, the value of a header), so
// the text around it still reads; valid, when set, vetoes a match that
// looks like ordinary code. The regexp only runs when the lower-cased text
// holds one of hints: most text holds none, and a substring search is far
// cheaper than a regexp.
type secretRule struct {
	kind  string
	hints []string
	re    *regexp.Regexp
	group int
	valid func(match string) bool
}

// pemRe finds PEM private keys, the one secret that spans lines; one
// whose END line is missing is cut to the end of the text.
var pemRe = regexp.MustCompile(`-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\z)`)

// secretRules are tried in order on each line: secrets known by their own shape (a
// vendor prefix, PEM armor) first, then by what stands before them.
var secretRules = []secretRule{
	{kind: "anthropic-key", hints: []string{"sk-ant-"}, re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`)},
	{kind: "openai-key", hints: []string{"sk-"}, re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}`), valid: hasLetterAndDigit},
	{kind: "github-token", hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, re: regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}\b`)},
	{kind: "github-token", hints: []string{"github_pat_"}, re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{40,}`)},
	{kind: "gitlab-token", hints: []string{"glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glft-", "glimt-", "gloas-", "glsoat-"}, re: regexp.MustCompile(`\bgl(?:pat|dt|ptt|rt|cbt|ft|imt|oas|soat)-[A-Za-z0-9_-]{20,}`)},
	{kind: "slack-webhook", hints: []string{"hooks.slack.com"}, re: regexp.MustCompile(`https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}`)},
	{kind: "slack-token", hints: []string{"xox"}, re: regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{10,}`)},
	{kind: "aws-access-key", hints: []string{"akia", "asia", "abia", "acca", "aida", "aroa", "agpa", "anpa"}, re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AGPA|ANPA)[A-Z0-9]{16}\b`)},
	{kind: "aws-secret-key", hints: []string{"secret"}, re: regexp.MustCompile(`(?i)aws_?secret_?(?:access_?)?key["']?\s*(?::=|=>|=|:)\s*["']?([A-Za-z0-9/+=]{40})`), group: 1},
	{kind: "gcp-api-key", hints: []string{"aiza"}, re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
	{kind: "gcp-oauth-secret", hints: []string{"gocspx-"}, re: regexp.MustCompile(`\bGOCSPX-[A-Za-z0-9_-]{20,}`)},
	{kind: "google-oauth-token", hints: []string{"ya29."}, re: regexp.MustCompile(`\bya29\.[0-9A-Za-z_-]{20,}`)},
	{kind: "stripe-key", hints: []string{"_live_", "_test_"}, re: regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}`)},
	{kind: "stripe-webhook-secret", hints: []string{"whsec_"}, re: regexp.MustCompile(`\bwhsec_[A-Za-z0-9]{20,}`)},
	{kind: "jwt", hints: []string{"eyj"}, re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`)},
	{kind: "npm-token", hints: []string{"npm_"}, re: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`)},
	{kind: "pypi-token", hints: []string{"pypi-age"}, re: regexp.MustCompile(`\bpypi-AgE[A-Za-z0-9_-]{50,}`)},
	{kind: "huggingface-token", hints: []string{"hf_"}, re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}\b`)},
	{kind: "sendgrid-key", hints: []string{"sg."}, re: regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]*`)},
	{kind: "digitalocean-token", hints: []string{"doo_v1_", "dop_v1_", "dor_v1_"}, re: regexp.MustCompile(`\bdo[opr]_v1_[a-f0-9]{64}\b`)},
	{kind: "shopify-token", hints: []string{"shpat_", "shpss_", "shpca_", "shppa_"}, re: regexp.MustCompile(`\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b`)},
	{kind: "telegram-bot-token", hints: []string{":aa"}, re: regexp.MustCompile(`\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b`)},
	{kind: "azure-key", hints: []string{"accountkey=", "sharedaccesskey="}, re: regexp.MustCompile(`(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/=]{20,})`), group: 1},
	{kind: "url-password", hints: []string{"://"}, re: regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@"'<>\[\]]+:([^\s/@"'<>\[\]]+)@`), group: 1},
	{kind: "bearer-token", hints: []string{"bearer"}, re: regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})`), group: 1, valid: hasLetterAndDigit},
	{kind: "basic-auth", hints: []string{"basic"}, re: regexp.MustCompile(`(?i)\bauthorization["']?\s*[:=]\s*["']?basic\s+([A-Za-z0-9+/=]{12,})`), group: 1},
}

// secretWords are the hints of assignRe and nearRe.
var secretWords = []string{"pass", "pwd", "secret", "token", "key", "credential", "auth"}

// assignRe finds `name = value` (also :, :=, =>, and quoted names as in
// JSON or YAML) where the name says it holds a secret. Group 1 is the
// name, group 2 the separator, groups 3-5 the value (double-quoted, also
// with escaped quotes as inside JSON strings; single-quoted; unquoted).
var assignRe = regexp.MustCompile(`(?i)((?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?|auth)[a-z0-9_]*)["']?(\s*(?::=|=>|=|:)[ \t]*)(?:\\?"((?:[^"\\\n]|\\[^"\n]){1,300})\\?"|'([^'\n]{1,300})'|([^\s"',;=)}\]][^\s"',;)}\]]*))`)

// strongName matches names whose value is a secret whatever it looks like;
// for the others (token, auth, credentials) the value must look random.
var strongName = regexp.MustCompile(`(?i)password|passwd|pwd|passphrase|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key`)

// nearRe finds a long random-looking string shortly after a word that says
// what follows is a key, token or secret ("my API key is ...").
var nearRe = regexp.MustCompile(`(?i)(?:^|[^a-z])(?:api[ _-]?key|secret|token|password|passwd|credential|access[ _-]?key|private[ _-]?key)s?\b[^\n]{0,24}?([A-Za-z0-9+/_=.-]{20,})`)

// hashLike are strings that look random but are not secrets: git object
// ids, sha1/sha256/sha512 digests and UUIDs.
var hashLike = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9A-F]{40}|[0-9a-f]{64}|[0-9A-F]{64}|[0-9a-f]{128}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$`)

// codeWords are values of a secret-named assignment that are code, types
// or placeholders, not secrets.
var codeWords = map[string]bool{
	"string": true, "str": true, "int": true, "bool": true, "boolean": true, "bytes": true, "byte": true,
	"none": true, "null": true, "nil": true, "true": true, "false": true, "undefined": true, "optional": true,
	"required": true, "any": true, "object": true, "text": true, "varchar": true, "number": true, "secretstr": true,
	"password": true, "secret": true, "token": true, "env": true, "os": true, "self": true, "this": true,
	"func": true, "function": true, "return": true, "new": true, "const": true, "var": true, "let": true,
}

const redactedPrefix = "[REDACTED:"

// Redact replaces every secret it finds in s with [REDACTED:kind] and
// returns the new text and how many it replaced. It errs on the side of
// redacting, but leaves ordinary code alone: identifiers, calls and types
// assigned to variables named password or token, git and sha256 hashes,
// UUIDs and paths. Apart from PEM blocks every shape fits on one line, so
// the regexps only run on the lines that hold one of their hints.
func Redact(s string) (string, int) {
	if s == "" {
		return s, 0
	}
	n := 0
	if strings.Contains(s, "PRIVATE KEY") {
		s = replaceMatches(s, pemRe, 0, func(string) (string, bool) {
			n++
			return redactedPrefix + "private-key]", true
		})
	}
	var b strings.Builder
	changed := false
	for rest := s; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			rest = ""
		}
		red := redactLine(line, &n)
		if red != line && !changed {
			changed = true
			b.Grow(len(s))
			b.WriteString(s[:len(s)-len(rest)-len(line)])
		}
		if changed {
			b.WriteString(red)
		}
	}
	if !changed {
		return s, n
	}
	return b.String(), n
}

func redactLine(s string, n *int) string {
	lower := strings.ToLower(s)
	for _, r := range secretRules {
		if !containsAny(lower, r.hints) {
			continue
		}
		s = replaceMatches(s, r.re, r.group, func(m string) (string, bool) {
			if r.valid != nil && !r.valid(m) {
				return "", false
			}
			*n++
			return redactedPrefix + r.kind + "]", true
		})
	}
	if !containsAny(lower, secretWords) {
		return s
	}
	s = replaceAssignments(s, n)
	return replaceMatches(s, nearRe, 1, func(m string) (string, bool) {
		if !looksRandom(m) {
			return "", false
		}
		*n++
		return redactedPrefix + "high-entropy]", true
	})
}

// replaceMatches replaces, for each match of re, its submatch group (0:
// the whole match) by what f returns, when f says so.
func replaceMatches(s string, re *regexp.Regexp, group int, f func(string) (string, bool)) string {
	locs := re.FindAllStringSubmatchIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		lo, hi := loc[2*group], loc[2*group+1]
		if lo < 0 || lo < last {
			continue
		}
		rep, ok := f(s[lo:hi])
		if !ok {
			continue
		}
		b.WriteString(s[last:lo])
		b.WriteString(rep)
		last = hi
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func replaceAssignments(s string, n *int) string {
	locs := assignRe.FindAllStringSubmatchIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		name := nameAround(s, loc[2], loc[3])
		sep := s[loc[4]:loc[5]]
		g := 3
		for g <= 5 && loc[2*g] < 0 {
			g++
		}
		if g > 5 {
			continue
		}
		lo, hi := loc[2*g], loc[2*g+1]
		if lo < last || !secretValue(name, sep, s[lo:hi], g == 5) {
			continue
		}
		b.WriteString(s[last:lo])
		kind := "secret"
		switch k := strings.ToLower(name); {
		case strings.Contains(k, "pass") || strings.Contains(k, "pwd"):
			kind = "password"
		case !strongName.MatchString(name):
			kind = "token"
		}
		b.WriteString(redactedPrefix + kind + "]")
		last = hi
		*n++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

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
// names (token, auth, credentials, plurals) the value must look random.
func secretValue(name, sep, val string, unquoted bool) bool {
	v := strings.TrimSpace(val)
	if v == "" || strings.Contains(v, redactedPrefix) {
		return false
	}
	lname := strings.ToLower(name)
	if !strongName.MatchString(name) || strings.HasSuffix(lname, "s") {
		return looksRandom(v)
	}
	if strings.Trim(v, "*xX.•<>_-") == "" || strings.HasPrefix(v, "${") || strings.HasPrefix(v, "$(") ||
		strings.HasPrefix(v, "{{") || strings.HasPrefix(v, "<") {
		return false // masked, a template or a placeholder
	}
	if !unquoted {
		return true
	}
	if codeWords[strings.ToLower(strings.TrimRight(v, "?!"))] || strings.ContainsAny(v, "()[]{}$<>&|") || isReference(v) {
		return false
	}
	if isWord(v) && sep != "=" {
		return false
	}
	return true
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
	if len(s) < 16 || hashLike.MatchString(s) || strings.HasPrefix(s, redactedPrefix) {
		return false
	}
	if !hasLetterAndDigit(s) {
		return false
	}
	if strings.Count(s, "/") > 2 || strings.Count(s, ".") > 2 {
		return false // a path or a host name
	}
	return entropy(s) >= 3.5
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
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

// entropy is the Shannon entropy of s in bits per character.
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
