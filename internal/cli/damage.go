package cli

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gencode/gencode/internal/session"
	"github.com/gencode/gencode/internal/termtext"
)

// reportDamage says what the store found damaged while this command ran:
// the messages it could not read (the rest was read around them), a search
// index it rebuilt, or damage the check at open found; and how to recover
// what SQLite can.
func (a *app) reportDamage() {
	d := a.store.Damage()
	if !d.Any() {
		return
	}
	path := a.store.Path()
	for _, id := range slices.Sorted(maps.Keys(d.Lost)) {
		lost := d.Lost[id]
		fmt.Fprintf(a.stderr, "gencode: warning: the session store %s is damaged: %s of session %s could not be read (%s); the rest was read around them\n",
			path, termtext.Count(len(lost), "message", "messages"), id, seqRanges(lost))
	}
	if d.Check != "" && len(d.Lost) == 0 {
		fmt.Fprintf(a.stderr, "gencode: warning: the session store %s is damaged (%s); what can be read is read around it\n",
			path, termtext.OneLine(d.Check, maxMessageChars))
	}
	if d.IndexRebuilt {
		fmt.Fprintln(a.stderr, "gencode: warning: the search index was damaged and is being rebuilt; searches find older messages again once it is")
	}
	if len(d.Lost) > 0 || d.Check != "" {
		fmt.Fprintln(a.stderr, "gencode: "+session.RecoverHint(path))
	}
}

// corruptMessage words a failure on a damaged database file.
func corruptMessage(err error) string {
	var se *session.StorageError
	if !errors.As(err, &se) {
		return "the session store is damaged: " + detail(err)
	}
	return fmt.Sprintf("the session store %s is damaged: %s; %s", se.Path, detail(err), session.RecoverHint(se.Path))
}

// seqRanges lists sorted seqs as ranges: "3, 7-9, 12".
func seqRanges(seqs []int64) string {
	var b strings.Builder
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j > i {
			fmt.Fprintf(&b, "#%d-%d", seqs[i], seqs[j])
		} else {
			fmt.Fprintf(&b, "#%d", seqs[i])
		}
		i = j + 1
	}
	return b.String()
}
