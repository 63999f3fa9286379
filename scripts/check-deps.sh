#!/usr/bin/env bash
# Enforces the import direction of DESIGN.md:
#   cmd -> tui -> {commands, agent} -> summarize -> session
# Nothing imports tui; only tui and cmd/cli import bubbletea, lipgloss or glamour.
set -euo pipefail
mod=$(go list -m)
fail=0
check() { # package, forbidden import regexp, reason
  local pkg=$1 re=$2 why=$3
  [ -d "internal/$pkg" ] || return 0
  local bad
  bad=$(go list -f '{{join .Imports "\n"}}' "./internal/$pkg/..." 2>/dev/null | grep -E "$re" | sort -u || true)
  if [ -n "$bad" ]; then
    echo "internal/$pkg must not import ($why):"; echo "$bad" | sed 's/^/  /'; fail=1
  fi
}
ui='github.com/charmbracelet/(bubbletea|lipgloss|glamour|bubbles)'
for p in session summarize agent commands llm tools tokens config models recall transcript termtext logfile instructions pricing; do
  check "$p" "^$mod/internal/tui" "nothing imports tui"
  check "$p" "^$ui" "only tui draws"
done
check session   "^$mod/internal/(summarize|agent|commands|cli|llm|tools)" "session is the bottom layer"
check summarize "^$mod/internal/(agent|commands|cli|llm|tokens)" "summarize -> session (and tools, to read a call); it declares its own Completer"
check agent     "^$mod/internal/(commands|cli)" "agent does not know its front ends"
check commands  "^$mod/internal/cli" "commands is below the CLI"
check transcript "^$mod/internal/(summarize|agent|commands|cli|llm|tokens)" "transcript formats sessions: it knows only session (and tools, to read a call)"
check termtext  "^$mod/internal/" "termtext is a leaf: tools, commands, cli and tui all use it"
check logfile   "^$mod/internal/" "logfile is a leaf: the CLI hands its logger down"
exit $fail
