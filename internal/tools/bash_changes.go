package tools

import (
	"context"
	"errors"
	"runtime"

	"github.com/gencode/gencode/internal/fschange"
)

// FileChanges is what a Bash command did to the files under WorkDir, for
// the summaries (never sent to the model). Observed says the tree was
// compared before and after; when it could not be (too many files, too
// slow), Observed is false, Reason says why, and the lists are empty: the
// summaries then read the command line instead.
type FileChanges struct {
	Observed                             bool
	Reason                               string
	Created, Modified, Deleted, Reverted []string // relative to WorkDir
}

// observer is the Set's watch on WorkDir, made at the first Bash call and
// closed when the Set is collected.
func (s *Set) observer() *fschange.Observer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.obs == nil {
		s.obs = fschange.New(s.workDir, fschange.Options{})
		runtime.AddCleanup(s, func(o *fschange.Observer) { o.Close() }, s.obs)
	}
	return s.obs
}

// observeBefore snapshots WorkDir before a command; observeAfter says what
// the command changed. A failed or cancelled command is compared all the
// same: what it did before it stopped counts.
func (s *Set) observeBefore(ctx context.Context) (*fschange.Snapshot, error) {
	return s.observer().Before(ctx)
}

func observeAfter(ctx context.Context, snap *fschange.Snapshot, err error) *FileChanges {
	if err == nil {
		var c fschange.Changes
		if c, err = snap.After(context.WithoutCancel(ctx)); err == nil {
			return &FileChanges{Observed: true, Created: c.Created, Modified: c.Modified, Deleted: c.Deleted, Reverted: c.Reverted}
		}
	}
	reason := err.Error()
	if !errors.Is(err, fschange.ErrTooLarge) {
		reason = "not observed: " + reason
	}
	return &FileChanges{Reason: reason}
}

// Checkpointer keeps a restorable state of WorkDir (a rewind's way back):
// Checkpoint returns an ID for the state of the files now; Changed lists
// the paths that differ between two of its states (by ID).
type Checkpointer interface {
	Checkpoint(ctx context.Context) (string, error)
	Changed(ctx context.Context, from, to string) ([]string, error)
}

// Checkpoint is the state of WorkDir kept before and after a call that may
// change files (Write, Edit, Bash, an observed MCP tool), by the Set's
// Checkpointer. Err says why one could not be kept.
type Checkpoint struct {
	Before, After string
	Err           string
	// Changed are the paths that differ between Before and After, as the
	// Checkpointer compared them when After was taken (what a rewind
	// takes as the call's own work); ChangedKnown says they were
	// compared (false: the comparison failed, and a rewind compares them
	// itself).
	Changed      []string
	ChangedKnown bool
}

// checkpointBefore keeps WorkDir's state before a change-capable call;
// nil when the Set has no Checkpointer.
func (s *Set) checkpointBefore(ctx context.Context) *Checkpoint {
	if s.checkpoints == nil {
		return nil
	}
	id, err := s.checkpoints.Checkpoint(context.WithoutCancel(ctx))
	if err != nil {
		return &Checkpoint{Err: err.Error()}
	}
	return &Checkpoint{Before: id}
}

// checkpointAfterChanges is checkpointAfter for a call whose changes were
// observed: when it changed nothing, the state after is the one before
// and no snapshot is taken (most shell commands only read).
func (s *Set) checkpointAfterChanges(ctx context.Context, cp *Checkpoint, ch *FileChanges) *Checkpoint {
	if cp != nil && cp.Err == "" && ch != nil && ch.Observed &&
		len(ch.Created)+len(ch.Modified)+len(ch.Deleted)+len(ch.Reverted) == 0 {
		cp.After, cp.Changed, cp.ChangedKnown = cp.Before, []string{}, true
		return cp
	}
	return s.checkpointAfter(ctx, cp)
}

// checkpointAfter completes cp once the call is over.
func (s *Set) checkpointAfter(ctx context.Context, cp *Checkpoint) *Checkpoint {
	if cp == nil || cp.Err != "" {
		return cp
	}
	id, err := s.checkpoints.Checkpoint(context.WithoutCancel(ctx))
	if err != nil {
		cp.Err = err.Error()
		return cp
	}
	cp.After = id
	// A call that changed more than maxRecordedPaths (an install, a
	// branch switch) keeps no record: the log's meta is decoded at every
	// read, and a rewind compares such a call's checkpoints itself.
	if paths, err := s.checkpoints.Changed(context.WithoutCancel(ctx), cp.Before, id); err == nil && len(paths) <= s.maxRecorded {
		cp.Changed, cp.ChangedKnown = paths, true
	}
	return cp
}

// maxRecordedPaths bounds the paths a call's checkpoint records.
const maxRecordedPaths = 2000
