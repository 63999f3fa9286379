package shellfx_test

import (
	"reflect"
	"testing"

	"github.com/gencode/gencode/internal/shellfx"
)

func TestCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		command string
		want    [][]string // nil: not a plain command line
	}{
		{"one command", "go test ./...", [][]string{{"go", "test", "./..."}}},
		{"quotes removed", `go test -run 'TestA|TestB' "./internal/x"`, [][]string{{"go", "test", "-run", "TestA|TestB", "./internal/x"}}},
		{"and list", "go build ./... && go vet ./...", [][]string{{"go", "build", "./..."}, {"go", "vet", "./..."}}},
		{"or, semicolon, newline, pipe", "make || true; ls\ngo test | tail -5", [][]string{{"make"}, {"true"}, {"ls"}, {"go", "test"}, {"tail", "-5"}}},
		{"output redirection", "go test > out.txt", nil},
		{"append redirection", "echo hi >> notes", nil},
		{"input redirection", "wc -l < go.mod", nil},
		{"fd duplication", "go test 2>&1", nil},
		{"heredoc", "cat <<EOF\nhi\nEOF", nil},
		{"redirection in a list", "go test && echo ok > done", nil},
		{"variable", "go test $PKG", nil},
		{"quoted variable", `echo "$HOME"`, nil},
		{"command substitution", "go test $(go list ./...)", nil},
		{"backquotes", "echo `id`", nil},
		{"process substitution", "diff <(ls a) <(ls b)", nil},
		{"arithmetic", "echo $((1+2))", nil},
		{"glob", "rm *.o", nil},
		{"brace expansion", "touch {a,b}.go", nil},
		{"tilde", "cat ~/.ssh/id_rsa", nil},
		{"assignment prefix", "GOFLAGS=-x go test", nil},
		{"bare assignment", "PATH=/tmp", nil},
		{"subshell", "(go test)", nil},
		{"block", "{ go test; }", nil},
		{"background", "go test &", nil},
		{"negation", "! go test", nil},
		{"if", "if true; then go test; fi", nil},
		{"for", "for i in 1 2; do echo $i; done", nil},
		{"function", "f() { rm -rf .; }; f", nil},
		{"not shell", "go test '", nil},
		{"empty", "   ", nil},
		{"comment only", "# nothing", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := shellfx.Commands(tt.command)
			if ok != (tt.want != nil) || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Commands(%q) = %q, %v; want %q", tt.command, got, ok, tt.want)
			}
		})
	}
}
