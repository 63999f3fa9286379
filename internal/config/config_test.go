package config

import (
	"os"
	"path/filepath"
	"testing"

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
		{"unknown key", "model = \"x\"\n[summarize]\nsoft_ration = 0.5\n", ":3: summarize.soft_ration: unknown key"},
		{"wrong type", "model = \"x\"\ncontext_window = \"big\"\n", ":2: context_window:"},
		{"syntax", "model = \"x\n", ":1"},
		{"out of range", "[summarize]\nsoft_ratio = 0.95\nhard_ratio = 0.9\n", ":2: summarize.soft_ratio: must be below hard_ratio (0.90)"},
		{"bad url", "base_url = \"localhost:8080\"\n", ":1: base_url: must start with http:// or https://"},
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
