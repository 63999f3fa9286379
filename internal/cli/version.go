package cli

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// version and commit are set at link time by `make build`
// (-ldflags "-X github.com/gencode/gencode/internal/cli.version=..."); the
// only package variables of the program. Unset, the build's own record
// says them: `go install ...@v1.2.3` records the module version, a build
// in a checkout the VCS revision.
var (
	version string
	commit  string
)

// Build is what `gencode --version` and /config say about the binary.
type Build struct {
	Version, Commit, Go string
	Modified            bool // built from a checkout with uncommitted changes
}

// String is the one line --version prints: "v1.2.3 (commit 0123abcd, go1.26.8)".
func (b Build) String() string {
	c := b.Commit
	if c == "" {
		c = "unknown"
	}
	if b.Modified {
		c += ", modified"
	}
	return fmt.Sprintf("%s (commit %s, %s)", b.Version, c, b.Go)
}

// buildInfo reads the link-time values, else the build's record.
func buildInfo() Build {
	b := Build{Version: version, Commit: commit}
	info, ok := debug.ReadBuildInfo()
	if ok {
		b.Go = info.GoVersion
		if b.Version == "" && info.Main.Version != "" {
			b.Version = info.Main.Version // "(devel)" in a checkout
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
		if b.Commit == "" {
			b.Commit = pseudoCommit(info.Main.Version)
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	if b.Go == "" {
		b.Go = "go?"
	}
	if len(b.Commit) > 12 {
		b.Commit = b.Commit[:12]
	}
	return b
}

// pseudoCommit is the commit a pseudo-version names
// (v0.0.0-20260102030405-0123456789ab: `go install ...@<commit>`), "" for
// another version.
func pseudoCommit(v string) string {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 {
		return ""
	}
	h := v[i+1:]
	if strings.Trim(h, "0123456789abcdef") != "" {
		return ""
	}
	return h
}
