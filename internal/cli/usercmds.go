package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gencode/gencode/internal/commands"
	"github.com/gencode/gencode/internal/config"
	"github.com/gencode/gencode/internal/tools"
)

// userCommands are the user's own commands: the project's
// .gencode/commands and .claude/commands, then
// $XDG_CONFIG_HOME/gencode/commands (the first found wins a name).
func (a *app) userCommands() ([]commands.UserCommand, []string) {
	cfgDir := filepath.Join(filepath.Dir(config.DefaultPath(a.env.Getenv)), "commands")
	label := cfgDir
	if home := a.env.Getenv("HOME"); home != "" && strings.HasPrefix(cfgDir, home+string(filepath.Separator)) {
		label = "~" + strings.TrimPrefix(cfgDir, home)
	}
	return commands.LoadUserCommands([]commands.CommandDir{
		{Path: filepath.Join(a.cwd, ".gencode", "commands"), Label: ".gencode/commands"},
		{Path: filepath.Join(a.cwd, ".claude", "commands"), Label: ".claude/commands"},
		{Path: cfgDir, Label: label},
	})
}

// expander runs a user command's "!`cmd`" as a Bash call of ts, with its
// permission (the dialog; print mode's --allow), and reads its "@path"
// files with Read, as a mention typed by the user.
func expander(ts *tools.Set) commands.Expander {
	if ts == nil {
		return commands.Expander{}
	}
	return commands.Expander{
		Shell: func(ctx context.Context, command string) (string, error) {
			args, _ := json.Marshal(map[string]string{"command": command})
			r := ts.Run(ctx, tools.Call{Name: tools.ToolBash, Arguments: string(args)})
			if r.Denied {
				return "", errors.New(strings.TrimPrefix(r.Content, "permission denied: ") + " (it needs the Bash tool's permission: --allow Bash in print mode)")
			}
			// A command that succeeded is its output; a failure keeps the
			// exit code, which the model should see.
			if r.ExitCode != nil && *r.ExitCode == 0 {
				return tools.TrimExitTrailer(r.Content, 0), nil
			}
			return r.Content, nil
		},
		Attach: func(ctx context.Context, path string) (string, bool, error) {
			abs := path
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(ts.WorkDir(), path)
			}
			if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
				return "", false, nil
			}
			args, _ := json.Marshal(map[string]string{"file_path": path})
			r := ts.RunByUser(ctx, tools.Call{Name: tools.ToolRead, Arguments: string(args)})
			if r.IsError {
				return "", false, errors.New(r.Content)
			}
			return r.Content, true, nil
		},
	}
}
