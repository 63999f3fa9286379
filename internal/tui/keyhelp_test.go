package tui

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	"github.com/stretchr/testify/require"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/tui/keys"
)

// bindings is every key.Binding field of v (a struct), by field name.
func bindings(v reflect.Value, prefix string, out map[string]key.Binding) {
	for i := range v.NumField() {
		f, name := v.Field(i), prefix+v.Type().Field(i).Name
		switch b := f.Interface().(type) {
		case key.Binding:
			out[name] = b
		default:
			if f.Kind() == reflect.Struct {
				bindings(f, name+".", out)
			}
		}
	}
}

// named reports whether help key text names k: "up" is shown as ↑, a
// space as "space", and letters in either case.
func named(helpKey, k string) bool {
	k = strings.ToLower(k)
	if strings.ToLower(helpKey) == k {
		return true // a key that is its own help, such as "/"
	}
	if shown, ok := map[string]string{"up": "↑", "down": "↓", "shift+up": "shift+↑", "shift+down": "shift+↓", " ": "space"}[k]; ok {
		k = shown
	}
	for _, part := range strings.Split(strings.ToLower(helpKey), "/") {
		if part == k {
			return true
		}
	}
	return false
}

// TestHelpListsTheKeyMap pins /help's key list to the KeyMap: /help, run
// through the real registry with the keys the CLI gives it, lists every
// binding of the editor and the chat (the keys the old hand-written text
// left out, Ctrl+R, Ctrl+O, Home/End, Shift+Up/Down, included, and the
// pickers' keys), and
// nothing else; each binding's help names every key it matches, so the
// help cannot drift from what the keys do. The dialog's answering keys
// are on its key line.
func TestHelpListsTheKeyMap(t *testing.T) {
	t.Parallel()
	km := keys.Default()
	all := map[string]key.Binding{}
	bindings(reflect.ValueOf(km), "", all)
	require.Greater(t, len(all), 20)
	for name, b := range all {
		require.NotEmptyf(t, b.Help().Key, "%s has no help", name)
		require.NotEmptyf(t, b.Help().Desc, "%s has no help", name)
		for _, k := range b.Keys() {
			require.Truef(t, named(b.Help().Key, k), "%s matches %q but its help says %q", name, k, b.Help().Key)
		}
	}

	res, err := commands.New(commands.Deps{Keys: KeyHelp()}).Run(context.Background(), commands.State{}, "/help")
	require.NoError(t, err)
	require.NotNil(t, res.Report)
	var listed []string
	for _, s := range res.Report.Sections[2:] { // after the commands and what a message may hold
		listed = append(listed, s.Lines...)
	}
	var want []string
	for name, b := range all {
		if strings.HasPrefix(name, "Dialog.") {
			continue
		}
		want = append(want, keys.Line(b))
	}
	require.ElementsMatch(t, want, listed, "/help's keys are not the KeyMap's")
	for _, k := range []string{"ctrl+r", "ctrl+o", "home", "end", "shift+↑", "shift+↓", "↑/ctrl+p", "↓/ctrl+n"} {
		require.Contains(t, strings.Join(listed, "\n"), k)
	}
}
