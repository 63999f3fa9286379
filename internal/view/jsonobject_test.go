package view

import (
	"encoding/json"
	"testing"
)

// decodesAsObject is isJSONObject's definition: the text decodes into a
// JSON object.
func decodesAsObject(s string) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &v) == nil && v != nil
}

var jsonObjectCases = []string{
	`{}`, ` {"a":1}`, "\t\r\n{\"a\":[1,{\"b\":null}]}\n", `{"a":1,"a":2}`, `{"a":"\u00e9"}`,
	"{\"a\":\"\xff\"}", `null`, ` null `, `[]`, `[{}]`, `"{}"`, `1`, `true`, ``, ` `, `{`, `}`,
	`{"a":1} x`, `{"a":1}{}`, `{"a":}`, `{'a':1}`, `{a:1}`, "\ufeff{}", "\v{}", `{"a":1,}`,
	`  {  "command" : "ls -la" ,"timeout":5 }  `,
}

// TestIsJSONObjectAsDecoding: the check that validates without decoding
// answers as decoding does.
func TestIsJSONObjectAsDecoding(t *testing.T) {
	t.Parallel()
	for _, s := range jsonObjectCases {
		if got, want := isJSONObject(s), decodesAsObject(s); got != want {
			t.Errorf("isJSONObject(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzIsJSONObject: go test ./internal/view -run '^$' -fuzz FuzzIsJSONObject
func FuzzIsJSONObject(f *testing.F) {
	for _, s := range jsonObjectCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isJSONObject(s), decodesAsObject(s); got != want {
			t.Errorf("isJSONObject(%q) = %v, want %v", s, got, want)
		}
	})
}
