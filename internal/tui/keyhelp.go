package tui

import (
	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/tui/keys"
)

// KeyHelp is what /help lists after the commands (commands.Deps.Keys):
// every binding of the key map, by group.
func KeyHelp() []commands.Section {
	var out []commands.Section
	for _, g := range keys.Default().Groups() {
		sec := commands.Section{Title: g.Title}
		for _, b := range g.Bindings {
			sec.Lines = append(sec.Lines, keys.Line(b))
		}
		out = append(out, sec)
	}
	return out
}
