package session

// One writer per session.
//
// A session's log has one writer at a time. Two processes appending to it
// interleave their messages (a tool call and its result end up apart), and
// the repair of calls a crash left without a result would answer the other
// process's call while it is still running. So a process takes a session's
// lease before it writes to the session's log, and holds it for as long as
// it may write (a turn, a print-mode run, the session a TUI shows).
//
// The lease is an exclusive advisory lock (flock) on a file beside the
// database, locks/<session id>.lock, which also names its holder (pid,
// host, since). The file stays when the lease ends, for the next writer. The kernel drops the lock when the holder's process ends,
// however it ends: after a kill -9 the session is free at once, without a
// stale lease to wait out and without trusting a pid that may have been
// reused. A process that cannot take the lease waits a little, then gets a
// *BusyError naming the holder. Reading a session never needs the lease.
//
// Within one Store the lease is re-entrant: a front end holding it can run
// the agent's turn, which takes it too. Two Stores (two processes, or two
// opens in one process) exclude each other.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// LeaseWait is how long a writer waits for another process to finish with
// a session before it gives up: long enough for a turn of a print-mode
// loop to end, short enough that a user is not left wondering.
const LeaseWait = 5 * time.Second

// ErrInUse means another process holds the session's lease.
var ErrInUse = errors.New("session in use by another process")

// Holder is the process that holds a session's lease.
type Holder struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
}

// BusyError is returned when another process holds a session's lease.
type BusyError struct {
	SessionID string
	// Holder is zero when the lock file did not say who holds it.
	Holder Holder
	// Waited is how long the caller waited for it.
	Waited time.Duration
}

func (e *BusyError) Error() string {
	who := "another gencode process"
	if e.Holder.PID > 0 {
		who = fmt.Sprintf("gencode pid %d", e.Holder.PID)
		if host, _ := os.Hostname(); e.Holder.Host != "" && e.Holder.Host != host {
			who += " on " + e.Holder.Host
		}
		if !e.Holder.Since.IsZero() {
			who += " since " + clock(e.Holder.Since)
		}
	}
	return fmt.Sprintf("session %s is in use by %s", e.SessionID, who)
}

// Unwrap makes errors.Is(err, ErrInUse) true.
func (e *BusyError) Unwrap() error { return ErrInUse }

// clock is a time as a person reads it: 10:31 today, else with the date.
func clock(t time.Time) string {
	t = t.Local()
	if y, m, d := t.Date(); time.Now().Year() == y && time.Now().Month() == m && time.Now().Day() == d {
		return t.Format("15:04")
	}
	return t.Format("Jan 2 15:04")
}

// Lease is this process's claim to write a session. Release it when done;
// closing the Store releases every lease it holds.
type Lease struct {
	s    *Store
	id   string
	once sync.Once
}

// SessionID is the id of the session the lease is for.
func (l *Lease) SessionID() string { return l.id }

// Release gives the lease up (once; later calls do nothing).
func (l *Lease) Release() {
	if l == nil {
		return
	}
	l.once.Do(func() { l.s.unlease(l.id) })
}

// heldLock is a lock file this Store holds, and how many Leases use it.
type heldLock struct {
	f    *os.File
	refs int
}

// leases are the lock files a Store holds, by session id.
type leases struct {
	mu   sync.Mutex
	held map[string]*heldLock
}

// Lease takes the lease of a session (an id or a unique prefix), waiting
// up to wait for another holder to let it go. It returns a *BusyError
// (errors.Is ErrInUse) when the wait ends first, and ctx's error when ctx
// ends first.
func (s *Store) Lease(ctx context.Context, sessionID string, wait time.Duration) (*Lease, error) {
	sess, err := s.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	id := sess.ID
	if s.readOnly {
		return nil, s.errorf("take session %s: %w", id, ErrReadOnly)
	}
	dir := filepath.Join(filepath.Dir(s.path), "locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, s.errorf("take session %s: %w", id, err)
	}
	path := filepath.Join(dir, lockName(id))
	start := time.Now()
	poll := 20 * time.Millisecond
	for {
		ok, err := s.tryLease(id, path)
		if err != nil {
			return nil, s.errorf("take session %s: %w", id, err)
		}
		if ok {
			return &Lease{s: s, id: id}, nil
		}
		left := wait - time.Since(start)
		if left <= 0 {
			return nil, &BusyError{SessionID: id, Holder: readHolder(path), Waited: time.Since(start)}
		}
		t := time.NewTimer(min(poll, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, s.errorf("take session %s: %w", id, ctx.Err())
		case <-t.C:
		}
		poll = min(2*poll, 200*time.Millisecond)
	}
}

// tryLease takes the lease without waiting: at once when this Store holds
// it already, else if no other holder has the lock file locked.
func (s *Store) tryLease(id, path string) (bool, error) {
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	if h := s.leases.held[id]; h != nil {
		h.refs++
		return true, nil
	}
	f, err := lockFile(path)
	if err != nil || f == nil {
		return false, err
	}
	_, _ = f.WriteAt(holderRecord(), 0)
	if s.leases.held == nil {
		s.leases.held = map[string]*heldLock{}
	}
	s.leases.held[id] = &heldLock{f: f, refs: 1}
	return true, nil
}

func (s *Store) unlease(id string) {
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	h := s.leases.held[id]
	if h == nil {
		return
	}
	if h.refs--; h.refs > 0 {
		return
	}
	delete(s.leases.held, id)
	h.release()
}

// releaseAll drops every lease (Close).
func (s *Store) releaseAll() {
	s.leases.mu.Lock()
	defer s.leases.mu.Unlock()
	for id, h := range s.leases.held {
		delete(s.leases.held, id)
		h.release()
	}
}

// release unlocks the lock file. The file stays, for the next writer:
// removing or truncating it costs milliseconds on some filesystems (a
// freed block is discarded), a lease every turn.
func (h *heldLock) release() {
	_ = h.f.Close() // closing the last descriptor drops the lock
}

// holderSize is the lock file's record size: a record is written in place,
// padded, so that the file is never truncated.
const holderSize = 256

// holderRecord is this process as a lock file's record.
func holderRecord() []byte {
	host, _ := os.Hostname()
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Host: host, Since: time.Now()})
	if len(b) >= holderSize {
		b, _ = json.Marshal(Holder{PID: os.Getpid(), Since: time.Now()})
	}
	rec := make([]byte, holderSize)
	copy(rec, b)
	for i := len(b); i < holderSize-1; i++ {
		rec[i] = ' '
	}
	rec[holderSize-1] = '\n'
	return rec
}

// lockFile opens and locks the lock file at path without waiting. It
// returns a nil file when another process holds it.
func lockFile(path string) (*os.File, error) {
	for range 10 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		ok, err := tryLock(f)
		if err != nil || !ok {
			_ = f.Close()
			return nil, err
		}
		// A lock on a file removed meanwhile (by hand) locks nothing
		// anyone else can see.
		fi, ferr := f.Stat()
		pi, perr := os.Stat(path)
		if ferr == nil && perr == nil && os.SameFile(fi, pi) {
			return f, nil
		}
		_ = f.Close()
	}
	return nil, nil
}

// readHolder reads who holds a lock file; zero when it cannot tell (the
// holder may be between locking and writing it, and the record still be
// the previous holder's).
func readHolder(path string) Holder {
	host, _ := os.Hostname()
	for range 3 {
		var h Holder
		b, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(b, &h) == nil && h.PID > 0 && (h.Host != host || alive(h.PID)) {
			return h
		}
		time.Sleep(10 * time.Millisecond)
	}
	return Holder{}
}

// lockName is the lock file's name for a session id: the id itself when
// it is a plain name (gencode's ids are hex), else a hash of it.
func lockName(id string) string {
	plain := len(id) > 0 && len(id) <= 64
	for _, r := range id {
		plain = plain && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_')
	}
	if plain {
		return id + ".lock"
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:12]) + ".lock"
}
