package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func envFrom(m map[string]string) Env { return func(k string) string { return m[k] } }

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

func TestLoadPrecedence(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "model = \"from-file\"\nbase_url = \"http://file:1/v1\"\n[summarize]\npreserve_recent = 4\n")
	flagModel := "from-flag"
	cfg, err := Load(file, envFrom(map[string]string{
		"GENCODE_MODEL":         "from-env",
		"OPENAI_BASE_URL":       "http://env:2/v1",
		"OPENAI_API_KEY":        "sk-test",
		"GENCODE_SUMMARY_MODEL": "small",
		"GENCODE_HOME":          "/tmp/gh",
	}), Flags{Model: &flagModel})
	require.NoError(t, err)
	tests := []struct{ key, got, want, wantSrc string }{
		{"model", cfg.Model, "from-flag", "flag --model"},
		{"base_url", cfg.BaseURL, "http://env:2/v1", "env OPENAI_BASE_URL"},
		{"summarize.preserve_recent", itoa(cfg.Summarize.PreserveRecent), "4", file},
		{"summarize.model", cfg.SummaryModel(), "small", "env GENCODE_SUMMARY_MODEL"},
		{"data_dir", cfg.DataDir, "/tmp/gh", "env GENCODE_HOME"},
		{"summarize.soft_ratio", ftoa(cfg.Summarize.SoftRatio), "0.6", ""},
		{"tools.max_calls_per_message", itoa(cfg.Tools.MaxCallsPerMessage), "25", ""},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.key, tt.got, tt.want)
		}
		if tt.wantSrc != "" && cfg.Sources[tt.key] != tt.wantSrc {
			t.Errorf("source of %s = %q, want %q", tt.key, cfg.Sources[tt.key], tt.wantSrc)
		}
	}
	for _, s := range cfg.Settings() {
		if s.Key == "api_key" && s.Value != "(set)" {
			t.Errorf("api_key shown as %q; the key must never be displayed", s.Value)
		}
	}
}

func itoa(i int) string { return ftoa(float64(i)) }

func TestLoadErrorsNameFileLineAndKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		wantErr string
	}{
		{"unknown key", "model = \"x\"\n[summarize]\nsoft_ration = 0.5\n", ":3: summarize.soft_ration: unknown key (did you mean summarize.soft_ratio?)"},
		{"typo of a top-level key", "modle = \"x\"\n", ":1: modle: unknown key (did you mean model?)"},
		{"typo of a table", "[sumarize]\nenabled = false\n", ":1: sumarize: unknown key (did you mean summarize?)"},
		{"nothing near", "colour_scheme = \"x\"\n", ":1: colour_scheme: unknown key"},
		{"wrong type", "model = \"x\"\ncontext_window = \"big\"\n", ":2: context_window:"},
		{"syntax", "model = \"x\n", ":1"},
		{"out of range", "[summarize]\nsoft_ratio = 0.95\nhard_ratio = 0.9\n", ":2: summarize.soft_ratio: must be below hard_ratio (0.90)"},
		{"bad url", "base_url = \"localhost:8080\"\n", ":1: base_url: must start with http:// or https://"},
		{"no tool calls", "[tools]\nmax_calls_per_message = 0\n", ":2: tools.max_calls_per_message: must be at least 1"},
		{"rewind age", "[rewind]\nmax_age = \"5m\"\n", ":2: rewind.max_age: must be at least 1h"},
		{"rewind file size", "[rewind]\nmax_file_bytes = 0\n", ":2: rewind.max_file_bytes: must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, tt.text)
			_, err := Load(file, envFrom(nil), Flags{})
			require.Error(t, err)
			require.Contains(t, err.Error(), file)
			require.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestLoadMissingFiles(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	// The default path may be absent: defaults apply.
	cfg, err := Load("", envFrom(map[string]string{"HOME": home}), Flags{})
	require.NoError(t, err)
	require.Equal(t, "gpt-4o-mini", cfg.Model)
	require.Equal(t, filepath.Join(home, ".local", "share", "gencode"), cfg.DataDir)
	// A file named with --config must exist.
	_, err = Load(filepath.Join(home, "nope.toml"), envFrom(nil), Flags{})
	require.ErrorContains(t, err, "nope.toml: cannot read file")
}

func TestEnvOverrideValidatedWithSource(t *testing.T) {
	t.Parallel()
	_, err := Load("", envFrom(map[string]string{"HOME": t.TempDir(), "OPENAI_BASE_URL": "ftp://x"}), Flags{})
	require.ErrorContains(t, err, "base_url: must start with http:// or https:// (from env OPENAI_BASE_URL)")
}

func TestTheme(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, env string
		want, wantSrc   string
		wantErr         string
	}{
		{"default", "", "", ThemeAuto, "", ""},
		{"file", "theme = \"light\"\n", "", ThemeLight, "file", ""},
		{"env over file", "theme = \"light\"\n", "dark", ThemeDark, "env GENCODE_THEME", ""},
		{"bad in file", "model = \"x\"\ntheme = \"solarized\"\n", "", "", "", `:2: theme: must be "dark", "light" or "auto", not "solarized"`},
		{"bad in env", "", "Dark", "", "", `theme: must be "dark", "light" or "auto", not "Dark" (from env GENCODE_THEME)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, tt.file)
			cfg, err := Load(file, envFrom(map[string]string{"HOME": t.TempDir(), "GENCODE_THEME": tt.env}), Flags{})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, cfg.Theme)
			if tt.wantSrc == "file" {
				tt.wantSrc = file
			}
			require.Equal(t, tt.wantSrc, cfg.Sources["theme"])
		})
	}
}

func TestTimeoutsAndAnswerCap(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeFile(t, ""), envFrom(map[string]string{"HOME": t.TempDir()}), Flags{})
	require.NoError(t, err)
	require.Equal(t, Duration{300 * time.Second}, cfg.RequestHeaderTimeout)
	require.Equal(t, Duration{300 * time.Second}, cfg.RequestIdleTimeout)
	require.Equal(t, 8<<20, cfg.MaxAnswerBytes)

	file := writeFile(t, "request_header_timeout = \"90s\"\nrequest_idle_timeout = \"10m\"\nmax_answer_bytes = 1_000_000\n")
	cfg, err = Load(file, envFrom(map[string]string{"HOME": t.TempDir()}), Flags{})
	require.NoError(t, err)
	require.Equal(t, Duration{90 * time.Second}, cfg.RequestHeaderTimeout)
	require.Equal(t, Duration{10 * time.Minute}, cfg.RequestIdleTimeout)
	require.Equal(t, 1_000_000, cfg.MaxAnswerBytes)
	settings := map[string]Setting{}
	for _, s := range cfg.Settings() {
		settings[s.Key] = s
	}
	require.Equal(t, Setting{Key: "request_idle_timeout", Value: "10m0s", Source: file + ":2"}, settings["request_idle_timeout"])
	require.Equal(t, Setting{Key: "max_answer_bytes", Value: "1000000", Source: file + ":3"}, settings["max_answer_bytes"])

	tests := []struct{ text, wantErr string }{
		{"request_idle_timeout = \"forever\"\n", `:1: request_idle_timeout: "forever" is not a duration such as "300s" or "5m" (with its unit, in quotes)`},
		// A bare number would be nanoseconds: refused (go-toml gives no line for it).
		{"request_header_timeout = 300\n", `"300" is not a duration such as "300s"`},
		{"model = \"x\"\nrequest_header_timeout = \"-1s\"\n", ":2: request_header_timeout: must be 0 (no bound) or positive"},
		{"max_answer_bytes = -5\n", ":1: max_answer_bytes: must be 0 (no bound) or positive"},
	}
	for _, tt := range tests {
		_, err := Load(writeFile(t, tt.text), envFrom(nil), Flags{})
		require.ErrorContains(t, err, tt.wantErr, "config %q", tt.text)
	}
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		mode os.FileMode
		env  map[string]string
		want []string // substrings, one per warning
	}{
		{name: "https", text: "base_url = \"https://api.example.com/v1\"\n", mode: 0o600},
		{name: "http to loopback", text: "base_url = \"http://127.0.0.1:11434/v1\"\n", mode: 0o600},
		{name: "http to localhost", text: "base_url = \"http://localhost:8080/v1\"\n", mode: 0o600},
		{name: "http to ::1", text: "base_url = \"http://[::1]:8080/v1\"\n", mode: 0o600},
		{name: "http to another host", text: "base_url = \"http://gpu-box.lan:8000/v1\"\n", mode: 0o600,
			want: []string{"base_url http://gpu-box.lan:8000/v1 is plain http to another machine"}},
		{name: "http from the environment", env: map[string]string{"OPENAI_BASE_URL": "http://10.0.0.7/v1"}, mode: 0o600,
			want: []string{"base_url http://10.0.0.7/v1 is plain http"}},
		{name: "key in a private file", text: "api_key = \"sk-secret\"\n", mode: 0o600},
		{name: "key in a group-readable file", text: "api_key = \"sk-secret\"\n", mode: 0o640,
			want: []string{"holds api_key and other users can read it (mode 0640): run chmod 600 "}},
		{name: "key in a world-readable file", text: "api_key = \"sk-secret\"\n", mode: 0o644,
			want: []string{"(mode 0644)"}},
		{name: "readable file without a key", text: "model = \"x\"\n", mode: 0o644},
		{name: "key from the environment", text: "model = \"x\"\n", mode: 0o644, env: map[string]string{"OPENAI_API_KEY": "sk-env"}},
		{name: "key in a readable file, the environment's in use", text: "api_key = \"sk-file\"\n", mode: 0o644,
			env: map[string]string{"OPENAI_API_KEY": "sk-env"}, want: []string{"holds api_key and other users can read it (mode 0644)"}},
		{name: "both", text: "api_key = \"k\"\nbase_url = \"http://example.com/v1\"\n", mode: 0o604,
			want: []string{"plain http", "(mode 0604)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, tt.text)
			require.NoError(t, os.Chmod(file, tt.mode))
			env := map[string]string{"HOME": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			cfg, err := Load(file, envFrom(env), Flags{})
			require.NoError(t, err)
			require.Len(t, cfg.Warnings, len(tt.want), "warnings: %q", cfg.Warnings)
			for i, w := range tt.want {
				require.Contains(t, cfg.Warnings[i], w)
			}
		})
	}
}

func TestToolCallCapFromFile(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "[tools]\nmax_calls_per_message = 5\n")
	cfg, err := Load(file, envFrom(nil), Flags{})
	require.NoError(t, err)
	require.Equal(t, 5, cfg.Tools.MaxCallsPerMessage)
	require.Equal(t, file, cfg.Sources["tools.max_calls_per_message"])
}

// TestSourcesFromTheParser: every way TOML has of writing a key (a table
// header, a dotted key, a quoted key, an inline table) gives /config the
// file and line that set it.
func TestSourcesFromTheParser(t *testing.T) {
	t.Parallel()
	text := `model = "m"
summarize.soft_ratio = 0.5
"summarize".'hard_ratio' = 0.8

[tools]
allow = [
  "Bash",
]
max_calls_per_message = 7 # a comment
`
	tests := []struct {
		name, text string
		want       map[string]string // key -> "value @line" (0: default)
	}{
		{"dotted and quoted keys", text, map[string]string{
			"model":                       "m @1",
			"summarize.soft_ratio":        "0.5 @2",
			"summarize.hard_ratio":        "0.8 @3",
			"tools.allow":                 "Bash @6",
			"tools.max_calls_per_message": "7 @9",
			"summarize.trigger_threshold": "50 @0",
		}},
		{"inline tables", "tools = { allow = [\"Edit\"] }\nsummarize = { soft_ratio = 0.4, target_compression = 0.2,\n  preserve_recent = 3 }\n", map[string]string{
			"tools.allow":                  "Edit @1",
			"summarize.soft_ratio":         "0.4 @2",
			"summarize.target_compression": "0.2 @2",
			"summarize.preserve_recent":    "3 @3",
			"summarize.hard_ratio":         "0.9 @0",
		}},
		{"table headers", "[summarize]\nmodel = \"s\"\n\"redact_secrets\" = false\n\n[ tools ]\nmax_calls_per_message = 3\n", map[string]string{
			"summarize.model":             "s @2",
			"summarize.redact_secrets":    "false @3",
			"tools.max_calls_per_message": "3 @6",
			"model":                       "gpt-4o-mini @0",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, tt.text)
			cfg, err := Load(file, envFrom(map[string]string{"HOME": t.TempDir()}), Flags{})
			require.NoError(t, err)
			got := map[string]Setting{}
			for _, s := range cfg.Settings() {
				got[s.Key] = s
			}
			for k, w := range tt.want {
				val, line, _ := strings.Cut(w, " @")
				src := "default"
				if line != "0" {
					src = file + ":" + line
				}
				require.Equal(t, Setting{Key: k, Value: val, Source: src}, got[k], "/config's line for %s", k)
			}
		})
	}
}

// TestBadKeysNameTheirLine: a bad value is reported with the file, the
// line and the whole dotted key, however the key was written.
func TestBadKeysNameTheirLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, wantErr string
	}{
		{"dotted key out of range", "model = \"x\"\nsummarize.soft_ratio = 0.95\nsummarize.hard_ratio = 0.9\n",
			":2: summarize.soft_ratio: must be below hard_ratio (0.90)"},
		{"dotted key, unknown", "model = \"x\"\nsummarize.soft_ration = 0.5\n", ":2: summarize.soft_ration: unknown key"},
		{"dotted key, wrong type", "model = \"x\"\nsummarize.soft_ratio = \"half\"\n",
			":2: summarize.soft_ratio: cannot decode TOML string into struct field config.SummarizeConfig.SoftRatio of type float64"},
		{"quoted dotted key, wrong type", "\n\"summarize\".'soft_ratio' = true\n", ":2: summarize.soft_ratio: cannot decode TOML boolean"},
		{"table header, unknown table", "model = \"x\"\n[summarise]\nenabled = false\n", ":2: summarise: unknown key"},
		{"inline table, unknown key", "model = \"x\"\nsummarize = { soft_ratio = 0.5, soft_ration = 0.5 }\n", ":2: summarize.soft_ration: unknown key"},
		{"inline table, wrong type", "summarize = {\n  enabled = true,\n  soft_ratio = \"x\" }\n", ":3: summarize.soft_ratio: cannot decode TOML string"},
		{"inline table, out of range", "model = \"x\"\nsummarize = { preserve_recent = -1 }\n", ":2: summarize.preserve_recent: must not be negative"},
		{"array, wrong element", "[tools]\nallow = [\n  \"Bash\",\n  3,\n]\n", ":4: tools.allow: cannot decode TOML integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, tt.text)
			_, err := Load(file, envFrom(map[string]string{"HOME": t.TempDir()}), Flags{})
			require.ErrorContains(t, err, "config "+file+tt.wantErr)
		})
	}
}

func TestStateDir(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"XDG_STATE_HOME", map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}, "/s/gencode"},
		{"HOME", map[string]string{"HOME": "/h"}, "/h/.local/state/gencode"},
		{"relative XDG_STATE_HOME is ignored", map[string]string{"XDG_STATE_HOME": "s", "HOME": "/h"}, "/h/.local/state/gencode"},
		{"neither", map[string]string{"XDG_STATE_HOME": "s"}, ""},
	}
	for _, tt := range tests {
		if got := StateDir(envFrom(tt.env)); got != tt.want {
			t.Errorf("%s: StateDir() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestPricing: [pricing] adds or overrides a model's price; cached_input
// defaults to input; /config lists each rate with its line; a price
// without input or output, or a negative one, is refused at its line.
func TestPricing(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "model = \"x\"\n[pricing.\"gpt-4.1\"]\ninput = 1.5\noutput = 6\n[pricing.local]\ninput = 0\ncached_input = 0\noutput = 0\n")
	cfg, err := Load(file, envFrom(map[string]string{"HOME": t.TempDir()}), Flags{})
	require.NoError(t, err)
	in, cached, out := cfg.Pricing["gpt-4.1"].Values()
	require.Equal(t, []float64{1.5, 1.5, 6}, []float64{in, cached, out})
	in, cached, out = cfg.Pricing["local"].Values()
	require.Equal(t, []float64{0, 0, 0}, []float64{in, cached, out})
	got := map[string]Setting{}
	for _, s := range cfg.Settings() {
		got[s.Key] = s
	}
	require.Equal(t, Setting{Key: "pricing.gpt-4.1.output", Value: "6", Source: file + ":4"}, got["pricing.gpt-4.1.output"])
	require.Equal(t, Setting{Key: "pricing.gpt-4.1.cached_input", Value: "1.5", Source: "default"}, got["pricing.gpt-4.1.cached_input"])

	for text, wantErr := range map[string]string{
		"[pricing.m]\ninput = 1\n":                  `:2: pricing.m.output: the price of "m" needs output too`,
		"[pricing.m]\ninput = 1\noutput = -2\n":     ":3: pricing.m.output: must be a price in US dollars per million tokens, 0 or more",
		"[pricing.m]\ninput = 1\noutputs = 2\n":     ":3: pricing.m.outputs: unknown key",
		"pricing.m = { output = 2, input = \"1\" }": ":1: pricing.m.input: cannot decode TOML string",
	} {
		file := writeFile(t, text)
		_, err := Load(file, envFrom(map[string]string{"HOME": t.TempDir()}), Flags{})
		require.ErrorContains(t, err, "config "+file+wantErr, text)
	}
}

// TestSandbox: the [sandbox] table, its defaults (on, nothing more
// writable, no network for auto-allowed commands, no auto-allow), its
// lines in /config and a writable dir that is not absolute.
func TestSandbox(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		want    SandboxConfig
		lines   map[string]string // key -> "value @line" (0: default)
		wantErr string
	}{
		{name: "defaults", text: "model = \"m\"\n", want: SandboxConfig{Enabled: true}, lines: map[string]string{
			"sandbox.enabled": "true @0", "sandbox.writable": " @0", "sandbox.network": "false @0", "sandbox.auto_allow": "false @0",
		}},
		{name: "every key", text: "[sandbox]\nenabled = true\nwritable = [\"/var/cache/x\", \"~/go\"]\nnetwork = true\nauto_allow = true\n",
			want: SandboxConfig{Enabled: true, Writable: []string{"/var/cache/x", "~/go"}, Network: true, AutoAllow: true},
			lines: map[string]string{
				"sandbox.enabled": "true @2", "sandbox.writable": "/var/cache/x,~/go @3", "sandbox.network": "true @4", "sandbox.auto_allow": "true @5",
			}},
		{name: "off", text: "sandbox.enabled = false\n", want: SandboxConfig{}},
		{name: "a relative writable dir", text: "[sandbox]\nwritable = [\"build\"]\n",
			wantErr: `:2: sandbox.writable: "build" must be an absolute directory or start with ~/`},
		{name: "unknown key", text: "[sandbox]\nnetwrk = true\n", wantErr: ":2: sandbox.netwrk: unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, tt.text)
			cfg, err := Load(file, envFrom(map[string]string{"HOME": t.TempDir()}), Flags{})
			if tt.wantErr != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, cfg.Sandbox)
			got := map[string]Setting{}
			for _, s := range cfg.Settings() {
				got[s.Key] = s
			}
			for k, w := range tt.lines {
				val, line, _ := strings.Cut(w, " @")
				src := "default"
				if line != "0" {
					src = file + ":" + line
				}
				require.Equal(t, Setting{Key: k, Value: val, Source: src}, got[k], "/config's line for %s", k)
			}
		})
	}
}

// TestBaseURLCredentialsAreTakenOut: a base URL given with a user name and
// password (http://admin:PASS@host) kept them in BaseURL, which /config,
// the warnings and every error naming the URL showed. Now they are taken
// out when the configuration is loaded (the client never sent them: the
// key goes as a bearer token), kept aside only to be redacted, and a
// warning says so without them.
func TestBaseURLCredentialsAreTakenOut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		file         string
		env          map[string]string
		flag         string
		wantURL      string
		wantUserinfo string
		wantSource   string
	}{
		{name: "env", env: map[string]string{"OPENAI_BASE_URL": "http://admin:S3cret-Pass@10.1.2.3:8000/v1"},
			wantURL: "http://10.1.2.3:8000/v1", wantUserinfo: "admin:S3cret-Pass", wantSource: "env OPENAI_BASE_URL"},
		{name: "file", file: "base_url = \"https://proxy:p%40ss@gw.example.com/v1?x=1\"\n",
			wantURL: "https://gw.example.com/v1?x=1", wantUserinfo: "proxy:p%40ss"},
		{name: "flag, user only", flag: "https://tok_abcdef0123456789@gw.example.com",
			wantURL: "https://gw.example.com", wantUserinfo: "tok_abcdef0123456789", wantSource: "flag --base-url"},
		{name: "an @ in the path is not userinfo", env: map[string]string{"OPENAI_BASE_URL": "https://gw.example.com/v1/@team"},
			wantURL: "https://gw.example.com/v1/@team"},
		{name: "no credentials", env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"},
			wantURL: "http://127.0.0.1:11434/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"HOME": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			file := ""
			if tt.file != "" {
				file = writeFile(t, tt.file)
			}
			var fl Flags
			if tt.flag != "" {
				fl.BaseURL = &tt.flag
			}
			cfg, err := Load(file, envFrom(env), fl)
			require.NoError(t, err)
			require.Equal(t, tt.wantURL, cfg.BaseURL)
			require.Equal(t, tt.wantUserinfo, cfg.BaseURLUserinfo)
			shown := strings.Join(cfg.Warnings, "\n")
			for _, s := range cfg.Settings() {
				shown += "\n" + s.Key + "=" + s.Value + " " + s.Source
			}
			if tt.wantUserinfo == "" {
				require.NotContains(t, shown, "user name and password")
				return
			}
			require.NotContains(t, shown, tt.wantUserinfo, "/config and the warnings never show them")
			_, pass, _ := strings.Cut(tt.wantUserinfo, ":")
			if pass != "" {
				require.NotContains(t, shown, pass)
			}
			require.Contains(t, shown, "holds a user name and password")
			if tt.wantSource != "" {
				require.Contains(t, shown, "("+tt.wantSource+")")
			}
		})
	}
}

func TestMCPServers(t *testing.T) {
	tests := []struct {
		name    string
		toml    string
		wantErr string
	}{
		{"stdio", "[mcp.fs]\ncommand = \"srv\"\nargs = [\"-v\"]\nenv = { A = \"b\" }\ntimeout = \"5s\"\ntools = [\"read\"]\n", ""},
		{"http", "[mcp.web]\nurl = \"https://x/mcp\"\nheaders = { Authorization = \"Bearer ${T}\" }\nenabled = false\n", ""},
		{"neither", "[mcp.x]\nargs = [\"a\"]\n", "set command"},
		{"both", "[mcp.x]\ncommand = \"a\"\nurl = \"http://x\"\n", "not both"},
		{"bad transport", "[mcp.x]\nurl = \"http://x\"\ntransport = \"ws\"\n", "must be stdio, http or sse"},
		{"bad ratio", "[tools]\nmcp_defer_ratio = 2.0\n", "mcp_defer_ratio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "config.toml")
			require.NoError(t, os.WriteFile(file, []byte(tt.toml), 0o600))
			cfg, err := Load(file, envFrom(map[string]string{"HOME": t.TempDir()}), Flags{})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, cfg.MCP, 1)
			require.InDelta(t, 0.1, cfg.Tools.MCPDeferRatio, 1e-9)
			for _, s := range cfg.Settings() {
				if strings.Contains(s.Key, ".headers.") || strings.Contains(s.Key, ".env.") {
					require.Equal(t, "(set)", s.Value, "%s is never shown", s.Key)
				}
			}
		})
	}
}

// TestREADMEDocumentsEverySetting: every key /config lists (Settings) is
// in the README's Configuration section, written as in a config file
// ("key = "), under its table ([tools], [summarize] ...); the keys of the
// named tables (models, pricing, mcp) by their last part.
func TestREADMEDocumentsEverySetting(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	readme := string(raw)
	start := strings.Index(readme, "\n## Configuration")
	require.Positive(t, start)
	end := strings.Index(readme[start+1:], "\n## ")
	require.Positive(t, end)
	doc := readme[start : start+1+end]

	c := Default()
	c.Pricing = map[string]Price{"m": {}}
	c.Models = map[string]ModelConfig{"m": {ContextWindow: 1, MaxTokens: 1, ReasoningEffort: "low"}}
	c.MCP = map[string]MCPServer{"s": {Command: "x", URL: "u"}}
	for _, s := range c.Settings() {
		key := s.Key
		table := ""
		if i := strings.LastIndexByte(key, '.'); i >= 0 {
			table, key = key[:i], key[i+1:]
		}
		switch p, _, _ := strings.Cut(table, "."); p {
		case "models", "pricing", "mcp":
			table = ""
		}
		require.Regexp(t, `(?m)^`+regexp.QuoteMeta(key)+` *=`, tableText(doc, table), "README's Configuration section documents %s", s.Key)
	}
}

// tableText is the part of a README's TOML examples under [table]: all of
// it for "" (the top-level keys and the named tables' keys).
func tableText(doc, table string) string {
	if table == "" {
		return doc
	}
	i := strings.Index(doc, "\n["+table+"]")
	if i < 0 {
		return ""
	}
	rest := doc[i+1:]
	if j := strings.Index(rest, "\n["); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
