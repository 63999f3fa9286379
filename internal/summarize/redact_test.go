package summarize

import (
	"strings"
	"testing"
)

// secretCorpus holds one example of each secret shape Redact must catch, in
// the context it is usually met in. secret is the part that must vanish.
// All values are made up; none is a live credential.
var secretCorpus = []struct {
	name    string
	text    string
	secret  string
	wantTag string
}{
	{"openai project key", `export OPENAI_API_KEY=sk-proj-4fT9xQ2mLp8Zr7Vb3Nc6Hd1Kw5Js0Ye`, "sk-proj-4fT9xQ2mLp8Zr7Vb3Nc6Hd1Kw5Js0Ye", "openai-key"},
	{"openai legacy key in prose", `I used the key sk-9aZ8bY7cX6dW5eV4fU3gT2hS1iR0jQ9kP8lO7mN6 for testing`, "sk-9aZ8bY7cX6dW5eV4fU3gT2hS1iR0jQ9kP8lO7mN6", "openai-key"},
	{"anthropic key", `ANTHROPIC_API_KEY="sk-ant-api03-Xy7Zq9Wv3Ut5Sr1Qp0On8Ml6Kj4Ih2Gf-AbCdEf"`, "sk-ant-api03-Xy7Zq9Wv3Ut5Sr1Qp0On8Ml6Kj4Ih2Gf-AbCdEf", "anthropic-key"},
	{"github classic token", `git clone https://ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8@github.com/o/r`, "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "github-token"},
	{"github fine-grained token", `GH_TOKEN=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV`, "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV", "github-token"},
	{"github actions token", `token: ghs_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8`, "ghs_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8", "github-token"},
	{"gitlab token", `curl --header "PRIVATE-TOKEN: glpat-xR4kT8mN2pQ6vW9zB3cF" https://gitlab.com/api/v4/projects`, "glpat-xR4kT8mN2pQ6vW9zB3cF", "gitlab-token"},
	{"slack bot token", `SLACK_BOT_TOKEN=xoxb-1234567890-0987654321098-AbCdEfGhIjKlMnOpQrStUvWx`, "xoxb-1234567890-0987654321098-AbCdEfGhIjKlMnOpQrStUvWx", "slack-token"},
	{"slack webhook", `post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX now`, "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "slack-webhook"},
	{"aws access key id", `aws_access_key_id = AKIAIOSFODNN7EXAMPLE`, "AKIAIOSFODNN7EXAMPLE", "aws-access-key"},
	{"aws secret access key", `aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""},
	{"gcp api key", `const firebaseKey = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY";`, "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "gcp-api-key"},
	{"gcp oauth client secret", `"client_secret": "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"`, "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", ""},
	{"google oauth access token", `Authorization header had ya29.a0AfH6SMBx7Yq2Lr9Vt3Wp8Zk1Nm4Jh6Gf`, "ya29.a0AfH6SMBx7Yq2Lr9Vt3Wp8Zk1Nm4Jh6Gf", "google-oauth-token"},
	{"stripe live key", `Stripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'`, "sk_live_4eC39HqLyjWDarjtT1zdp7dc", ""},
	{"stripe restricted key", `rk_test_51H8xYzAbCdEfGhIjKlMnOpQr used in CI`, "rk_test_51H8xYzAbCdEfGhIjKlMnOpQr", "stripe-key"},
	{"jwt", `got eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c back`, "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "jwt"},
	{"pem private key", "key file:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\naFDrBz9vFqU4yQk5sYqGmKMqVfh1m1d9i3fY0W9Zt0NnL2Vb7hQYb8cR0n6M2a1c\n-----END RSA PRIVATE KEY-----\ndone", "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn", "private-key"},
	{"openssh private key in json", `{"key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n"}`, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "private-key"},
	{"bearer token", `curl -H "Authorization: Bearer 8f2kLm93nQ0pRt5vWx7yZa1bC4dE6gH" https://api.example.com`, "8f2kLm93nQ0pRt5vWx7yZa1bC4dE6gH", "bearer-token"},
	{"basic auth header", `Authorization: Basic dXNlcjpodW50ZXIyX3MzY3IzdA==`, "dXNlcjpodW50ZXIyX3MzY3IzdA==", "basic-auth"},
	{"password in postgres url", `DATABASE_URL=postgres://app:Tr0ub4dor-and-3@db.internal:5432/prod`, "Tr0ub4dor-and-3", "url-password"},
	{"password in https url", `pip install --index-url https://deploy:hunter2horse@pypi.corp.example/simple pkg`, "hunter2horse", "url-password"},
	{"password assignment", `DB_PASSWORD=correcthorsebatterystaple`, "correcthorsebatterystaple", "password"},
	{"quoted password in code", `cfg := Config{User: "admin", Password: "S3cure!pass"}`, "S3cure!pass", "password"},
	{"password cli flag", `mysql -u root --password=rootpw2024 -h 127.0.0.1`, "rootpw2024", "password"},
	{"yaml secret", "database:\n  secret: q8Wn2Lr5Tz\n", "q8Wn2Lr5Tz", "secret"},
	{"client secret json", `{"client_id": "abc", "client_secret": "dGhpcyBpcyBhIHNlY3JldA"}`, "dGhpcyBpcyBhIHNlY3JldA", "secret"},
	{"generic api key in env", `export WEATHER_API_KEY=4d7f2a9c1e8b3f6a0d5c`, "4d7f2a9c1e8b3f6a0d5c", ""},
	{"random token next to the word", `the deploy token is Zx81KqP0vNw3Ls7Tj2Rm9Yh4`, "Zx81KqP0vNw3Ls7Tj2Rm9Yh4", ""},
	{"auth token assignment", `auth_token: "p9Q2w8E4r6T1y7U3i5O0pA"`, "p9Q2w8E4r6T1y7U3i5O0pA", ""},
	{"npm token", `//registry.npmjs.org/:_authToken=npm_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2`, "npm_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2", ""},
	{"huggingface token", `HF token hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789`, "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "huggingface-token"},
	{"sendgrid key", `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`, "SG.ngeVfQFYQlKU0ufo8x5d1A", "sendgrid-key"},
	{"azure storage key", `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq==;`, "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq==", "azure-key"},
	{"telegram bot token", `bot = Bot("123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1")`, "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1", "telegram-bot-token"},
}

// notSecrets are ordinary code and text that Redact must leave exactly as
// they are: hashes, ids, and code that names passwords or tokens.
var notSecrets = []string{
	`commit 3f786850e387550fdab836ed7e6dc881de23001b`,
	`git checkout a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 -- main.go`,
	`sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855`,
	`go.sum: github.com/pkoukk/tiktoken-go v0.1.8 h1:AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdef=`,
	`session id 550e8400-e29b-41d4-a716-446655440000 was resumed`,
	`token := lexer.Next()`,
	`password := os.Getenv("DB_PASSWORD")`,
	`if password == "" { return errEmptyPassword }`,
	`func (c *Client) Token() (string, error) {`,
	`type Login struct { Password string ` + "`json:\"password\"`" + ` }`,
	`password: string;`,
	`max_tokens: 4096`,
	`tokens = counter.Count(text)`,
	`secretName := req.SecretName`,
	`api_key = self.api_key`,
	`PASSWORD=${DB_PASSWORD}`,
	`password: "********"`,
	`Use the Bearer token from the login response.`,
	`https://github.com/sashabaranov/go-openai/blob/master/chat.go`,
	`postgres://localhost:5432/app?sslmode=disable`,
	`/home/user/project/internal/session/store_test.go:137`,
	`func TestApplySummaryConcurrentOnlyOneWins(t *testing.T) {`,
	`strings.HasPrefix(key, "sk-")`,
	`for key, value := range m {`,
	`docker pull golang@sha256:9f12bb4a0d3ac9c5c91b5b1e56d2f8a3cb43f5cc7ac9b0e6d7a1e1e5b6c7d8e9`,
	`[REDACTED:openai-key] stays as it is`,
	`The tokenizer loads o200k_base lazily.`,
}

func TestRedactCorpus(t *testing.T) {
	t.Parallel()
	if len(secretCorpus) < 20 {
		t.Fatalf("corpus has %d shapes, want at least 20", len(secretCorpus))
	}
	for _, tt := range secretCorpus {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, n := Redact(tt.text)
			if strings.Contains(got, tt.secret) || n == 0 {
				t.Fatalf("Redact(%q) = %q (%d), still holds %q", tt.text, got, n, tt.secret)
			}
			if tt.wantTag != "" && !strings.Contains(got, "[REDACTED:"+tt.wantTag+"]") {
				t.Errorf("Redact(%q) = %q, want a [REDACTED:%s] tag", tt.text, got, tt.wantTag)
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
	var sb strings.Builder
	for sb.Len() < 64<<10 {
		for _, s := range notSecrets {
			sb.WriteString(s + "\n")
		}
		sb.WriteString(secretCorpus[sb.Len()%len(secretCorpus)].text + "\n")
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Redact(text)
	}
}
