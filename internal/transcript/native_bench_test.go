package transcript

import (
	"bytes"
	"fmt"
	"testing"
)

// claudeSession is a Claude Code session file of n messages: a request,
// then Bash and Edit calls with their results, output of size bytes.
func claudeSession(n, size int) []byte {
	var b bytes.Buffer
	out := bytes.Repeat([]byte("x"), size)
	fmt.Fprintf(&b, `{"type":"user","cwd":"/w/p","sessionId":"s","uuid":"u0","timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"go"}}`+"\n")
	for i := 1; i+1 < n; i += 2 {
		call := fmt.Sprintf(`{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"cd /w/p/sub%d && rm -f f%d.txt"}}`, i, i%7, i)
		if i%4 == 1 {
			call = fmt.Sprintf(`{"type":"tool_use","id":"t%d","name":"Edit","input":{"file_path":"/w/p/src/f%d.go","old_string":"a","new_string":"b"}}`, i, i%100)
		}
		fmt.Fprintf(&b, `{"type":"assistant","cwd":"/w/p","uuid":"a%d","timestamp":"2025-01-01T00:00:01Z","message":{"id":"m%d","role":"assistant","model":"claude-x","content":[%s]}}`+"\n", i, i, call)
		fmt.Fprintf(&b, `{"type":"user","cwd":"/w/p","uuid":"r%d","timestamp":"2025-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"%s"}]}}`+"\n", i, i, out)
	}
	return b.Bytes()
}

var benchSizes = []int{1_000, 100_000}

// BenchmarkReadFormat reads (detects, maps, repairs, gives each call its
// directory) a Claude Code session of 1k and 100k messages: the time per
// message must stay flat.
func BenchmarkReadFormat(b *testing.B) {
	for _, n := range benchSizes {
		data := claudeSession(n, 100)
		b.Run(fmt.Sprintf("claude-code/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				msgs, _, _, err := ReadFormat(bytes.NewReader(data), "s.jsonl", "")
				if err != nil || len(msgs) < n-1 {
					b.Fatal(err, len(msgs))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/msg")
		})
	}
}
