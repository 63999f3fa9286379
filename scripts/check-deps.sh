#!/usr/bin/env bash
# Enforces the import graph drawn in README.md's Architecture section.
# Each package lists the internal packages it imports; an import not in
# its list, an edge listed but not imported, or a package not in the
# table fails the check. Only the TUI packages and cli (which starts
# them) import bubbletea, lipgloss, glamour or bubbles.
set -euo pipefail
mod=$(go list -m)
declare -A may=(
  [cmd/gencode]="cli sandbox sandbox/confine"
  [internal/cli]="agent checkpoint commands config crash facts hooks instructions llm logfile mcp models permstore pricing recall redact rewind sandbox session summarize termtext tokens tools transcript tui tui/report tui/theme view window"
  [internal/tui]="agent commands facts session summarize termtext tools tui/chat tui/conflicts tui/dialog tui/input tui/keys tui/markdown tui/paste tui/picker tui/status tui/theme view"
  [internal/tui/picker]="termtext tui/keys tui/theme"
  [internal/tui/conflicts]="termtext tui/keys tui/theme"
  [internal/tui/chat]="agent commands session summarize termtext tools tui/keys tui/markdown tui/paste tui/report tui/theme tui/vlist view"
  [internal/tui/vlist]=""
  [internal/tui/dialog]="termtext tools tui/keys tui/report tui/theme"
  [internal/tui/input]="session termtext tui/keys tui/paste tui/theme"
  [internal/tui/status]="summarize termtext tui/theme"
  [internal/tui/report]="commands termtext tui/theme"
  [internal/tui/markdown]="third_party/glamour third_party/glamour/ansi tui/theme"
  [internal/tui/paste]="session termtext"
  [internal/tui/keys]=""
  [internal/tui/theme]="third_party/glamour/ansi third_party/glamour/styles"
  [internal/commands]="config pricing rewind session summarize termtext tools transcript view window"
  [internal/agent]="crash llm pricing session termtext tokens tools view window"
  [internal/recall]="session termtext tools"
  [internal/transcript]="session shellfx tools"
  [internal/summarize]="crash facts redact session tools view"
  [internal/view]="facts session tokens"
  [internal/facts]="session shellfx tools"
  [internal/redact]=""
  [internal/redact/internal/genrules]=""
  [internal/tools]="fschange ignore sandbox shellfx termtext"
  [internal/permstore]="tools"
  [internal/hooks]="config"
  [internal/mcp]="termtext tools"
  [internal/mcp/mcptest]=""
  [internal/mcp/mcptest/cmd/mcptestserver]="mcp/mcptest"
  [internal/llm]="termtext"
  [internal/session]=""
  [internal/session/sessiontest]="session"
  [internal/tokens]=""
  [internal/config]="termtext"
  [internal/pricing]=""
  [internal/instructions]="termtext"
  [internal/logfile]=""
  [internal/crash]=""
  [internal/models]=""
  [internal/window]=""
  [internal/fschange]="ignore"
  [internal/ignore]=""
  [internal/checkpoint]="fschange"
  [internal/rewind]="checkpoint session"
  [internal/shellfx]=""
  [internal/sandbox]=""
  [internal/sandbox/confine]="sandbox"
  [internal/termtext]=""
  [internal/termtext/termtexttest]=""
  [internal/openaitest]=""
  [internal/gencodetest]=""
  [internal/openaitest/cmd/fakeopenai]="openaitest"
  [internal/sessionbench]="openaitest tokens"
  [internal/sessionbench/cmd/benchsession]="openaitest sessionbench"
  [scripts/testreport]=""
  [scripts/linkcache]=""
  [scripts/amd64level]=""
  [third_party/glamour]="third_party/glamour/ansi third_party/glamour/styles third_party/goldmark/extension"
  [third_party/glamour/ansi]="third_party/chroma/lexers third_party/chroma/styles third_party/glamour/internal/autolink"
  [third_party/glamour/styles]="third_party/glamour/ansi"
  [third_party/glamour/internal/autolink]=""
  [third_party/chroma/lexers]=""
  [third_party/chroma/styles]=""
  [third_party/goldmark/extension]=""
)
ui='^(charm.land/(bubbletea|lipgloss|glamour|bubbles)|github.com/charmbracelet/(bubbletea|lipgloss|glamour|bubbles|colorprofile)|github.com/gencode/gencode/third_party/glamour)'
fail=0
while read -r pkg imports; do
  rel=${pkg#"$mod/"}
  if [[ ! -v may[$rel] ]]; then
    echo "$rel is not in the import graph: add it to scripts/check-deps.sh and README.md's Architecture"
    fail=1; continue
  fi
  for imp in $imports; do
    case $imp in
    "$mod"/*)
      dep=${imp#"$mod/"}; dep=${dep#internal/}
      if [[ " ${may[$rel]} " != *" $dep "* ]]; then
        echo "$rel must not import $dep (not in the graph)"; fail=1
      fi ;;
    esac
    if [[ $imp =~ $ui && $rel != internal/tui* && $rel != internal/cli && $rel != third_party/glamour* ]]; then
      echo "$rel must not import $imp (only the TUI and cli draw)"; fail=1
    fi
  done
  # Strict both ways: an edge the table lists must be one the package has,
  # so that the table (and README's graph) says what the code does.
  for dep in ${may[$rel]}; do
    if [[ " $imports " != *" $mod/internal/$dep "* && " $imports " != *" $mod/$dep "* ]]; then
      echo "$rel does not import $dep: drop the edge from scripts/check-deps.sh and README.md"; fail=1
    fi
  done
done < <(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./...)
# The highlighter's lexers and styles are parsed on first use
# (third_party/chroma); upstream's chroma lexers, styles or quick packages
# (or glamour, which imports them) would parse all of them again at the
# start of every process, --help and the sandbox helper included, and
# bluemonday compile its CSS patterns (third_party/glamour strips HTML
# without it), and goldmark's extension package compile its linkify,
# table and task-list patterns (third_party/goldmark/extension).
eager=$(go list -deps ./cmd/gencode | grep -E '^(github.com/alecthomas/chroma/v2/(lexers|styles|quick)|charm.land/glamour/|github.com/microcosm-cc/bluemonday|github.com/yuin/goldmark/extension$)' || true)
if [[ -n $eager ]]; then
  echo "cmd/gencode links" $eager "(parsed at every start): use third_party/glamour, third_party/chroma and third_party/goldmark"
  fail=1
fi
exit $fail
