package ansi

import (
	"io"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// skipContent are the elements whose text bluemonday's policies leave out
// with the element (addDefaultSkipElementContent).
var skipContent = map[string]bool{
	"frame": true, "frameset": true, "iframe": true, "noembed": true, "noframes": true,
	"noscript": true, "nostyle": true, "object": true, "script": true, "style": true, "title": true,
}

// stripHTML is bluemonday v1.0.27's StrictPolicy().Sanitize(s), which
// allows no element: the text of s, HTML-escaped, without its tags,
// comments, doctype, nor the text of the elements in skipContent, script
// and style. Upstream glamour calls bluemonday for it, whose package
// initialisation compiles its CSS patterns in every process
// (../PATCHED.md); strip_test.go compares the two.
func stripHTML(s string) string {
	if strings.TrimSpace(s) == "" {
		return s
	}
	var (
		b        strings.Builder
		skip     bool
		skipping int64
		recent   string // the element most recently started
	)
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		if z.Next() == html.ErrorToken {
			if z.Err() == io.EOF {
				return b.String()
			}
			return ""
		}
		t := z.Token()
		switch t.Type {
		case html.StartTagToken:
			recent = normaliseElementName(t.Data)
			if recent == "script" || recent == "style" {
				continue
			}
			if skipContent[t.Data] {
				skip = true
				skipping++
			}
		case html.EndTagToken:
			name := normaliseElementName(t.Data)
			if recent == name {
				recent = ""
			}
			if name == "script" || name == "style" {
				continue
			}
			if skipContent[t.Data] {
				skipping--
				if skipping == 0 {
					skip = false
				}
			}
		case html.TextToken:
			if !skip && recent != "script" && recent != "style" {
				b.WriteString(t.String())
			}
		}
	}
}

// normaliseElementName is bluemonday's.
func normaliseElementName(str string) string {
	return strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(strconv.QuoteToASCII(str)), `"`), `"`)
}
