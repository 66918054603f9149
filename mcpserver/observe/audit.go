// Package observe records what happens to tool calls, for the operator:
// the audit log (one JSON line per call, written as a journal), the
// OpenTelemetry traces and metrics, and the progress notifications a call
// sends its client while it waits. It knows nothing of where a call came
// from but what the call pipeline tells it.
package observe

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// Audit writes one JSON line per tool call to a file only the user can
// read: who called which tool, with which arguments (a hash of them, or
// the arguments themselves), and how it ended. Never the result.
type Audit struct {
	path     string
	args     bool  // store the arguments themselves, not only their hash
	maxBytes int64 // rotate to path.1 past this size; 0: never
	log      zerolog.Logger

	mu     sync.Mutex
	f      journal
	size   int64
	failed bool // the last write failed (logged once until one succeeds)
	lost   int  // records not written
}

// AuditOptions configure OpenAudit.
type AuditOptions struct {
	Args     bool  // --audit-args
	MaxBytes int64 // --audit-max-bytes; 0 never rotates
	Logger   zerolog.Logger
}

// OpenAudit opens (creating it with mode 0600) the audit log at path for
// appending. It refuses a symlink, a file that is not a regular file, one
// owned by another user, and one that others can read or write.
func OpenAudit(path string, o AuditOptions) (*Audit, error) {
	a := &Audit{path: path, args: o.Args, maxBytes: o.MaxBytes, log: o.Logger}
	if err := a.open(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Audit) open() error {
	// O_NONBLOCK: opening a FIFO for writing would wait for a reader, and
	// hold up the start; it is refused below as not a regular file.
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		switch {
		case errors.Is(err, syscall.ELOOP):
			return fmt.Errorf("audit log %s is a symlink; refusing to follow it: give the path of a regular file", a.path)
		case errors.Is(err, syscall.ENXIO):
			return fmt.Errorf("audit log %s is a FIFO or socket, not a regular file; give the path of a regular file", a.path)
		}
		return fmt.Errorf("opening the audit log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit log %s: %w", a.path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("audit log %s is not a regular file (%s); give the path of a regular file", a.path, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		f.Close()
		return fmt.Errorf("audit log %s belongs to uid %d, not to you (uid %d); remove it or choose another path", a.path, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		f.Close()
		return fmt.Errorf("audit log %s has mode %04o: others may read or change it; chmod 600 it or choose another path", a.path, fi.Mode().Perm())
	}
	a.f, a.size = f, fi.Size()
	return nil
}

// journal is the open audit file: an *os.File, or in tests one that fails.
type journal interface {
	Write([]byte) (int, error)
	Truncate(size int64) error
	Sync() error
	Close() error
}

// Close flushes the file to disk and closes it, reporting the records
// that could not be written.
func (a *Audit) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lost > 0 {
		a.log.Error().Int("lost", a.lost).Str("path", a.path).Msg("audit log: records that could not be written")
	}
	if a.f == nil {
		return nil
	}
	err := errors.Join(a.f.Sync(), a.f.Close())
	a.f = nil
	return err
}

// Lost is the number of records that could not be written.
func (a *Audit) Lost() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lost
}

// record writes the line of one finished call. A failure is logged, never
// returned: the call itself has succeeded or failed already.
func (a *Audit) record(o *Call) {
	canon := canonicalJSON(o.args)
	sum := sha256.Sum256(canon)
	l := auditLine{
		Time:        o.start.UTC().Format(time.RFC3339Nano),
		Transport:   "stdio",
		Kind:        "tool",
		Tool:        o.tool,
		Target:      o.target,
		Method:      o.method,
		Socket:      o.socket,
		ArgsSHA256:  hex.EncodeToString(sum[:]),
		Outcome:     o.outcome,
		Code:        o.code,
		DurationMs:  float64(time.Since(o.start).Microseconds()) / 1000,
		ResultBytes: o.resultBytes,
	}
	if ci := &o.info; ci != nil {
		if ci.Transport != "" {
			l.Transport = ci.Transport
		}
		if ci.Kind != "" {
			l.Kind = ci.Kind
		}
		l.Session, l.Client, l.Protocol = ci.Session, ci.Client, ci.Protocol
		if ci.RequestID != "" {
			l.RequestID = json.RawMessage(ci.RequestID)
		}
	}
	if a.args {
		l.Args = canon
	}
	b, ok := appendLine(make([]byte, 0, 512), &l)
	if !ok {
		var err error
		if b, err = json.Marshal(l); err != nil {
			a.log.Warn().Err(err).Str("tool", o.tool).Msg("audit log: encoding the record")
			return
		}
	}
	b = append(b, '\n')
	a.write(b)
}

// write appends one record whole, or not at all: a failed or short write
// is cut back to where the record began, so the file stays one record a
// line (a full disk must not leave half a line for the next to join).
func (a *Audit) write(b []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var err error
	if a.maxBytes > 0 && a.size > 0 && a.size+int64(len(b)) > a.maxBytes {
		err = a.rotate()
	}
	if err == nil && a.f == nil {
		err = a.open()
	}
	if err == nil {
		var n int
		n, err = a.f.Write(b)
		if err == nil && n < len(b) {
			err = io.ErrShortWrite
		}
		if err != nil && n > 0 {
			if terr := a.f.Truncate(a.size); terr != nil {
				err = errors.Join(err, fmt.Errorf("cutting back a partial record: %w", terr))
			}
		} else if err == nil {
			a.size += int64(n)
		}
	}
	if err != nil {
		a.lost++
		if !a.failed {
			a.log.Error().Err(err).Str("path", a.path).Msg("audit log: writing failed; calls go on unrecorded until a write succeeds")
		}
		a.failed = true
		return
	}
	if a.failed {
		a.log.Info().Str("path", a.path).Int("lost", a.lost).Msg("audit log: writing again")
		a.failed = false
	}
}

// rotate renames the log to path.1 (replacing an older one) and opens a new
// one. a.mu must be held.
func (a *Audit) rotate() error {
	if a.f != nil {
		_ = a.f.Close()
		a.f = nil
	}
	if err := os.Rename(a.path, a.path+".1"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("rotating the audit log: %w", err)
	}
	return a.open()
}
