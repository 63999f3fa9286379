package summarize

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// secretCase is one secret shape Redact must catch, in the context it is
// usually met in; secret is the part that must vanish, tag the kind it
// must be labeled with (when the test cares).
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
	b, err := os.ReadFile("testdata/secrets.json")
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

func TestRedactCorpus(t *testing.T) {
	t.Parallel()
	secrets, _ := corpus(t)
	if len(secrets) < 20 {
		t.Fatalf("corpus has %d shapes, want at least 20", len(secrets))
	}
	for _, tt := range secrets {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			got, n := Redact(tt.Text)
			if strings.Contains(got, tt.Secret) || n == 0 {
				t.Fatalf("Redact(%q) = %q (%d), still holds %q", tt.Text, got, n, tt.Secret)
			}
			if tt.Tag != "" && !strings.Contains(got, "[REDACTED:"+tt.Tag+"]") {
				t.Errorf("Redact(%q) = %q, want a [REDACTED:%s] tag", tt.Text, got, tt.Tag)
			}
			again, n2 := Redact(got)
			if again != got || n2 != 0 {
				t.Errorf("Redact is not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestRedactLeavesOrdinaryTextAlone(t *testing.T) {
	t.Parallel()
	_, notSecrets := corpus(t)
	if len(notSecrets) < 20 {
		t.Fatalf("the not-to-redact list has %d entries, want at least 20", len(notSecrets))
	}
	for _, text := range notSecrets {
		if got, n := Redact(text); got != text || n != 0 {
			t.Errorf("Redact(%q) = %q (%d), want it unchanged", text, got, n)
		}
	}
}

func TestRedactKeepsSurroundingText(t *testing.T) {
	t.Parallel()
	in := "connect with postgres://app:Tr0ub4dor-and-3@db:5432/prod then run make"
	got, _ := Redact(in)
	want := "connect with postgres://app:[REDACTED:url-password]@db:5432/prod then run make"
	if got != want {
		t.Errorf("Redact(%q) = %q, want %q", in, got, want)
	}
}

func BenchmarkRedact(b *testing.B) {
	secretCorpus, notSecrets := corpus(b)
	var sb strings.Builder
	for sb.Len() < 64<<10 {
		for _, s := range notSecrets {
			sb.WriteString(s + "\n")
		}
		sb.WriteString(secretCorpus[sb.Len()%len(secretCorpus)].Text + "\n")
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Redact(text)
	}
}
