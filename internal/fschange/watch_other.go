//go:build !linux

package fschange

import (
	"context"
	"errors"
)

// watcher is Linux-only (inotify); elsewhere each call walks the tree or
// asks git.
type watcher struct{}

func startWatcher(context.Context, *Observer) (*watcher, error) {
	return nil, errors.New("no file watching on this system")
}

func (w *watcher) close() {}

func (w *watcher) settle(context.Context) (Changes, error) { return Changes{}, nil }
