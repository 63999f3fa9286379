package shellfx

import "testing"

// TestShellCarriesCd: cause 1 of issue 28, the directory a persistent
// shell keeps from one call to the next.
func TestShellCarriesCd(t *testing.T) {
	s := &Shell{Dir: "/p"}
	for _, step := range []struct{ cmd, want string }{
		{"cd backend", "/p/backend"},
		{"rm -rf .cache build", "/p/backend"},
		{"pushd ../docs && ls", "/p/docs"},
		{"popd", "/p/backend"},
		{"cd - && pytest", "/p/docs"},
		{"(cd /tmp && ls)", "/p/docs"},
		{`cd "$HOME"`, "/p/docs"},
		{"cd /abs/x || exit 1", "/abs/x"},
	} {
		s.Run(step.cmd)
		if s.Dir != step.want {
			t.Fatalf("after %q: dir %q, want %q", step.cmd, s.Dir, step.want)
		}
	}
}

// TestLedgerMadeDirRemoved: cause 3, a directory the session made, filled
// and removed is no change at any depth.
func TestLedgerMadeDirRemoved(t *testing.T) {
	l := NewLedger()
	for _, cmd := range []string{"mkdir -p /r/build", "touch /r/build/a.o", "rm -rf /r/build"} {
		e, err := Parse(cmd, "/r")
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range e.Ops {
			l.Apply(op)
		}
	}
	l.Apply(Op{Kind: Delete, Path: "/r/build/sub"}) // a tool's output inside, never seen
	if c, d, m := l.Created(), l.Deleted(), l.Modified(); len(c)+len(d)+len(m) != 0 {
		t.Fatalf("created %v deleted %v modified %v, want none", c, d, m)
	}
}
