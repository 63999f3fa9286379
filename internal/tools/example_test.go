package tools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gencode/gencode/internal/tools"
)

// Print mode (gencode -p "..." --allow Write): no Asker, so whatever would
// ask is denied, and the model is told how the user can allow it.
func Example_printMode() {
	dir, _ := os.MkdirTemp("", "gencode-example")
	defer os.RemoveAll(dir)

	perms := tools.DefaultPermissions()
	if err := perms.Allow("Write"); err != nil { // from --allow
		fmt.Println(err)
		return
	}
	set := tools.New(tools.Options{WorkDir: dir, Permissions: perms})

	ctx := context.Background()
	for _, c := range []tools.Call{
		{ID: "1", Name: "Write", Arguments: `{"file_path": "notes.txt", "content": "hello\n"}`},
		{ID: "2", Name: "Read", Arguments: `{"file_path": "notes.txt"}`},
		{ID: "3", Name: "Bash", Arguments: `{"command": "rm notes.txt"}`},
		{ID: "4", Name: "Write", Arguments: `{"file_path": "../escape.txt", "content": "x"}`},
	} {
		r := set.Run(ctx, c)
		first, _, _ := strings.Cut(r.Content, ";") // the message's first clause
		first = strings.ReplaceAll(first, filepath.Dir(set.WorkDir()), "$TMPDIR")
		fmt.Printf("%s error=%v denied=%v: %s\n", r.Meta.Tool, r.IsError, r.Denied, first)
	}
	// Output:
	// Write error=false denied=false: Created notes.txt (6 bytes, 1 line)
	// Read error=false denied=false:      1	hello
	// Bash error=true denied=true: permission denied: Bash needs approval
	// Write error=true denied=true: permission denied: Write outside the working directory ($TMPDIR/escape.txt) is refused
}

// Interactive mode (the TUI): the Asker shows a dialog; "allow for this
// session" is remembered, so the second Write is not asked about.
func Example_interactive() {
	dir, _ := os.MkdirTemp("", "gencode-example")
	defer os.RemoveAll(dir)

	dialog := tools.AskerFunc(func(_ context.Context, r tools.Request) (tools.Decision, error) {
		fmt.Printf("asked: %s %s (outside: %v)\n%s", r.Tool, r.Summary, r.OutsideWorkDir, r.Diff)
		return tools.AllowSession, nil
	})
	set := tools.New(tools.Options{WorkDir: dir, Asker: dialog})

	ctx := context.Background()
	for _, c := range []tools.Call{
		{ID: "1", Name: "Write", Arguments: `{"file_path": "a.txt", "content": "one\n"}`},
		{ID: "2", Name: "Write", Arguments: `{"file_path": "b.txt", "content": "two\n"}`},
	} {
		fmt.Println(set.Run(ctx, c).Content)
	}
	// Output:
	// asked: Write a.txt (1 line) (outside: false)
	// --- /dev/null
	// +++ b/a.txt
	// @@ -0,0 +1 @@
	// +one
	// Created a.txt (4 bytes, 1 line)
	// Created b.txt (4 bytes, 1 line)
}
