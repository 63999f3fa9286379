package summarize

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/session"
)

type secretCase struct {
	Name   string `json:"name"`
	Text   string `json:"text"`
	Secret string `json:"secret"`
	Tag    string `json:"tag"`
}

// corpus reads testdata/secrets.json: the secrets and the ordinary code
// and text (hashes, ids, code that names passwords or tokens) that Redact
// must leave exactly as they are. The CLI's end-to-end test reads it too.
func corpus(t testing.TB) (secrets []secretCase, notSecrets []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "redact", "testdata", "secrets.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Secrets    []secretCase `json:"secrets"`
		NotSecrets []string     `json:"not_secrets"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c.Secrets, c.NotSecrets
}

// TestScrubSummaryCoversEveryField puts a secret and escape codes in
// every text field of a summary (found by reflection, so a field added
// later is covered by this test) and checks that scrubSummary leaves them
// in none but the identifiers, which no user or model text reaches. With
// redaction off the secret stays; the escape codes never do.
func TestScrubSummaryCoversEveryField(t *testing.T) {
	t.Parallel()
	const secret = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	const text = "token " + secret + " \x1b]52;c;cHduZWQ=\x07\x1b[2J\x00"
	identifiers := map[string]bool{"ID": true, "SessionID": true, "Model": true, "Merged": true, "SupersededBy": true, "TokenKey": true}
	for _, redact := range []bool{true, false} {
		var sum session.Summary
		fill(t, reflect.ValueOf(&sum).Elem(), text)
		shared := sum.UserRequests
		scrubSummary(&sum, redact)
		require.Equal(t, text, shared[0], "the caller's lists are not changed in place")
		var check func(v reflect.Value, path string)
		check = func(v reflect.Value, path string) {
			switch v.Kind() {
			case reflect.String:
				if strings.Contains(v.String(), secret) == redact {
					t.Errorf("redact=%v: %s = %q", redact, path, v.String())
				}
				if strings.ContainsAny(v.String(), "\x1b\x07\x00") {
					t.Errorf("%s still holds control characters: %q", path, v.String())
				}
			case reflect.Slice:
				for i := 0; i < v.Len(); i++ {
					check(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
				}
			case reflect.Struct:
				for i := 0; i < v.NumField(); i++ {
					f := v.Type().Field(i)
					if path == "Summary" && identifiers[f.Name] {
						continue
					}
					check(v.Field(i), path+"."+f.Name)
				}
			}
		}
		check(reflect.ValueOf(sum), "Summary")
	}
}

// fill sets every string reachable from v (fields, slices of strings or
// structs) to text.
func fill(t *testing.T, v reflect.Value, text string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(text)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.String || v.Type().Elem().Kind() == reflect.Struct {
			s := reflect.MakeSlice(v.Type(), 2, 2)
			for i := 0; i < 2; i++ {
				fill(t, s.Index(i), text)
			}
			v.Set(s)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			fill(t, v.Field(i), text)
		}
	}
}

// TestSecretsNeverReachAFallbackSummary is TestSecretsNeverLeave with a
// summarizer that fails: the deterministic summary (user requests, last
// request, commands, files, notable uses, the failure's reason) is what
// is stored, and the stored row read back holds no secret of the corpus.
func TestSecretsNeverReachAFallbackSummary(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	l := newLog(t, store)
	secretCorpus, _ := corpus(t)
	for i, sc := range secretCorpus {
		l.turn(fmt.Sprintf("Step %d: %s", i, sc.Text),
			writeCall(fmt.Sprintf("/w/conf%d.env", i), sc.Text),
			bashCall(sc.Text, "ran "+sc.Text, 1))
	}
	l.turn("Last: " + secretCorpus[len(secretCorpus)-1].Text)
	seedTurns(l, 100, 4)
	llm := &fakeLLM{answer: func(r Request) (Completion, error) {
		return Completion{}, fmt.Errorf("provider said: bad key %s", secretCorpus[0].Text)
	}}
	s := newSummarizer(store, llm, charCounter{}, testConfig(200000))
	defer s.Close()
	rep, err := s.SummarizeNow(context.Background(), l.id, "")
	require.NoError(t, err)
	require.True(t, rep.Fallback, "the summarizer failed: the deterministic summary is stored")
	all, err := store.Summaries(context.Background(), l.id, true)
	require.NoError(t, err)
	require.NotEmpty(t, all)
	row, err := json.Marshal(all)
	require.NoError(t, err)
	require.NotEmpty(t, all[0].UserRequests)
	require.NotEmpty(t, all[0].Commands)
	for _, sc := range secretCorpus {
		require.NotContains(t, string(row), sc.Secret, "%s stored in the fallback summary", sc.Name)
	}
	require.Contains(t, all[0].FallbackReason, "[REDACTED:")
}
