package ansi

import (
	"testing"

	"github.com/microcosm-cc/bluemonday"
)

// TestStripHTMLIsBluemondaysStrictPolicy: this fork's stripHTML gives
// what upstream glamour's bluemonday.StrictPolicy().Sanitize gave.
func TestStripHTMLIsBluemondaysStrictPolicy(t *testing.T) {
	t.Parallel()
	strict := bluemonday.StrictPolicy()
	for _, s := range []string{
		"", "  \n", "plain text", "a < b && c > d", "<b>bold</b> and <i>it</i>",
		"<p class=\"x\" onclick=\"evil()\">para</p>", "<br/>line<br />two", "<img src=x onerror=alert(1)>",
		"<script>alert('x')</script>after", "<style>p{color:red}</style>shown", "<SCRIPT>x</SCRIPT>y",
		"<title>t</title><iframe src=x>inside</iframe>out", "<object><param>o</param></object>z",
		"<noscript>n<b>b</b></noscript>m", "</title>unbalanced", "<title><title>a</title>b</title>c",
		"<!-- comment -->text<!DOCTYPE html>", "&amp; &lt;tag&gt; &copy; &#39;", "<a href=\"http://x\">link</a>",
		"<div>unclosed <span>spans", "<details><summary>s</summary>body</details>", "<scr<script>ipt>x",
		"<textarea><b>raw</b></textarea>", "<math><mi>x</mi></math>", "<svg><title>s</title>t</svg>",
		"<p>ü ß 中文 <em>emoji 🎉</em></p>", "<style>a</style><script>b</script>c<title>d</title>e",
	} {
		if got, want := stripHTML(s), strict.Sanitize(s); got != want {
			t.Errorf("stripHTML(%q) = %q, want %q (bluemonday)", s, got, want)
		}
	}
}
