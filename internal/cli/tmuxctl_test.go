package cli_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// tmuxControl is one tmux client in control mode (tmux -C): it sends tmux
// commands written to its stdin to the server and writes each one's
// output between %begin and %end (or %error) lines on its stdout. The
// tmux tests drive their pane through it, instead of starting a tmux
// client process per command: a screen poll (capture-pane every 50 ms)
// or a key was one process each, ~800 tmux processes in the package's
// run.
//
// The client is started with -f no-output: tmux then does not copy what
// the pane prints to it (the tests read the screen with capture-pane).
// A control client that has not set a size (refresh-client -C) does not
// size the window, so the pane stays as new-session made it.
type tmuxControl struct {
	proc   *exec.Cmd
	in     io.WriteCloser
	mu     sync.Mutex     // one command at a time: tmux answers in order
	blocks chan tmuxBlock // each command's output block, in order
	exited chan struct{}  // closed once the client's output ends
	gone   atomic.Bool    // the client said %exit: the server is going away
	// lost is set when a command went unanswered: its answer may still
	// come and would be taken for the next command's, so none is sent.
	lost atomic.Bool
}

// tmuxBlock is one command's output; failed when tmux ended it with
// %error (the output is then the error message).
type tmuxBlock struct {
	out    string
	failed bool
}

var (
	errTmuxGone = errors.New("the tmux server has exited")
	errTmuxLost = errors.New("tmux did not answer a command in 30s (later answers would be out of step)")
)

// startTmuxControl starts tmux with args (a command, run by the new
// client in control mode) and waits for that command's answer.
func startTmuxControl(tmux string, args ...string) (*tmuxControl, error) {
	c := &tmuxControl{blocks: make(chan tmuxBlock, 4), exited: make(chan struct{})}
	c.proc = exec.Command(tmux, args...)
	in, err := c.proc.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := c.proc.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	c.proc.Stderr = &stderr
	c.in = in
	if err := c.proc.Start(); err != nil {
		return nil, err
	}
	go c.read(out)
	if _, err := c.answer(); err != nil {
		c.close()
		return nil, fmt.Errorf("%w %s", err, strings.TrimSpace(stderr.String()))
	}
	return c, nil
}

// read parses the client's output: the command blocks go to c.blocks in
// order; of the notifications between them only %exit matters.
func (c *tmuxControl) read(r io.Reader) {
	defer close(c.exited)
	br := bufio.NewReaderSize(r, 64<<10)
	var block strings.Builder
	end := "" // the %begin line's arguments while inside a block
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case end != "" && (line == "%end "+end || line == "%error "+end):
			c.blocks <- tmuxBlock{out: block.String(), failed: line[1] == 'e' && line[2] == 'r'}
			block.Reset()
			end = ""
		case end != "":
			block.WriteString(line)
			block.WriteByte('\n')
		case strings.HasPrefix(line, "%begin "):
			end = strings.TrimPrefix(line, "%begin ")
		case line == "%exit" || strings.HasPrefix(line, "%exit "):
			c.gone.Store(true)
		}
	}
}

// answer waits for the next command block.
func (c *tmuxControl) answer() (string, error) {
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	select {
	case b := <-c.blocks:
		return b.result()
	case <-c.exited:
		select { // a block read just before the end
		case b := <-c.blocks:
			return b.result()
		default:
			return "", errTmuxGone
		}
	case <-timeout.C:
		c.lost.Store(true)
		return "", errTmuxLost
	}
}

func (b tmuxBlock) result() (string, error) {
	if b.failed {
		return b.out, errors.New(strings.TrimSpace(b.out))
	}
	return b.out, nil
}

// run runs one tmux command (its arguments as exec would pass them) and
// returns its output, as the tmux command line would print it.
func (c *tmuxControl) run(args ...string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone.Load() {
		return "", errTmuxGone
	}
	if c.lost.Load() {
		return "", errTmuxLost
	}
	if _, err := io.WriteString(c.in, tmuxCommandLine(args)+"\n"); err != nil {
		return "", errTmuxGone
	}
	return c.answer()
}

// close ends the client (and the server with it, when it is still
// running) and waits for it.
func (c *tmuxControl) close() {
	_, _ = c.run("kill-server")
	_ = c.in.Close()
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		_ = c.proc.Process.Kill()
	}
	_ = c.proc.Wait()
}

// tmuxCommandLine quotes args for tmux's command parser: each in double
// quotes, every byte but letters, digits and -_./ written as an octal
// escape (\ooo), so that nothing in it ($, ~, ;, #, quotes, a newline,
// UTF-8) means anything to the parser.
func tmuxCommandLine(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		for j := 0; j < len(a); j++ {
			switch ch := a[j]; {
			case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9',
				ch == '-', ch == '_', ch == '.', ch == '/':
				b.WriteByte(ch)
			default:
				fmt.Fprintf(&b, `\%03o`, ch)
			}
		}
		b.WriteByte('"')
	}
	return b.String()
}
