// Package observe records what happens to tool calls, for the operator:
// the audit log (one JSON line per call, written as a journal), the
// OpenTelemetry traces and metrics, and the progress notifications a call
// sends its client while it waits. It knows nothing of where a call came
// from but what the call pipeline tells it.
package observe

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// Audit writes one JSON line per tool call to a file only the user can
// read: who called which tool, with which arguments (a hash of them, or
// the arguments themselves), and how it ended. Never the result.
//
// With a Delay, an ended call waits in memory at most that long and its
// line is made and written with those of the calls that ended meanwhile,
// in one write, by the goroutine of a timer: the call neither makes its
// line nor waits for it, and a write serves many calls. Close writes what
// is waiting. Without a Delay, or
// with Sync, a call's line is in the file before the call is answered:
// record returns once it is written (and with Sync, synced), and the
// lines of calls that end at the same time are written together by one
// of their callers (a group commit), the others waiting for it.
type Audit struct {
	path     string
	args     bool  // store the arguments themselves, not only their hash
	maxBytes int64 // rotate to path.1 past this size; 0: never
	sync     bool  // sync the file after each write, before the calls return
	delay    time.Duration
	log      zerolog.Logger

	client atomic.Pointer[clientJSON] // the clientInfo last written, and its JSON

	mu         sync.Mutex
	wrote      sync.Cond // broadcast when a write ends
	pending    []byte    // lines waiting for the next write, each ending in '\n'
	spare      []byte    // the buffer of the last write, for the next one
	ended      []*Call   // with a Delay: calls whose lines the next write makes, before pending
	spareEnded []*Call
	queued     uint64      // lines ever queued
	written    uint64      // of them, those written or lost
	writing    bool        // a caller is writing, or Close is closing; the others wait
	lost       int         // records not written
	timer      *time.Timer // writes the lines waiting, delay after the first of them
	armed      bool        // the timer is set, or its write is to come
	closed     bool        // Close has begun: a record is written before it returns

	// Owned by the caller that set writing:
	f       journal
	size    int64
	endsNL  bool   // the file ends with a newline (or is empty)
	longest int    // the longest line written, for layout
	out     []byte // the bytes of one write
	made    []byte // the lines of the calls handed over, made for one write
	failed  bool   // the last write failed (logged once until one succeeds)
}

// AuditOptions configure OpenAudit.
type AuditOptions struct {
	Args     bool  // --audit-args
	MaxBytes int64 // --audit-max-bytes; 0 never rotates
	Sync     bool  // --audit-sync: each call's line reaches the disk before its answer
	// Delay is how long a call's line may wait in memory to be written
	// with others (DefaultAuditDelay in serve); 0, or Sync, writes it
	// before the call is answered.
	Delay  time.Duration
	Logger zerolog.Logger
}

// DefaultAuditDelay is the longest a line waits to be written by serve:
// a sequential client's 70 lines a write, 8 callers' 200, where a write
// and the wake of the thread that makes it cost about 30 µs whatever they
// hold (at 1 ms, a write every 7 sequential calls was 4 µs a call); a
// process killed (not ended) loses the lines of its last 10 ms.
const DefaultAuditDelay = 10 * time.Millisecond

// maxWaiting bounds the calls waiting for the timer's write: past it a
// call waits for that write, so that a disk slower than the calls holds
// them back rather than fill memory.
const maxWaiting = 4096

// clientJSON is a clientInfo as the audit line writes it.
type clientJSON struct {
	impl mcp.Implementation // a copy, without icons
	json []byte
}

// OpenAudit opens (creating it with mode 0600) the audit log at path for
// appending. It refuses a symlink, a file that is not a regular file, one
// owned by another user, and one that others can read or write.
func OpenAudit(path string, o AuditOptions) (*Audit, error) {
	a := &Audit{path: path, args: o.Args, maxBytes: o.MaxBytes, sync: o.Sync, log: o.Logger}
	if !o.Sync && o.Delay > 0 {
		a.delay = o.Delay
		a.timer = time.AfterFunc(time.Hour, a.writeDelayed)
		a.timer.Stop()
	}
	a.wrote.L = &a.mu
	if err := a.open(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Audit) open() error {
	// O_NONBLOCK: opening a FIFO for writing would wait for a reader, and
	// hold up the start; it is refused below as not a regular file. Read
	// too: the last byte says whether a line was left cut short.
	f, err := os.OpenFile(a.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0o600)
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
	a.f, a.size, a.endsNL = f, fi.Size(), true
	if a.size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], a.size-1); err == nil && last[0] != '\n' {
			// A process killed as it wrote left a line cut short: the
			// next write ends it first, so that the lines after it are
			// whole.
			a.endsNL = false
			a.log.Warn().Str("path", a.path).Msg("audit log: its last line was cut short (a process was stopped while writing it); it is ended with a newline and left as it is")
		}
	}
	return nil
}

// journal is the open audit file: an *os.File, or in tests one that fails.
type journal interface {
	Write([]byte) (int, error)
	Truncate(size int64) error
	Sync() error
	Close() error
}

// Close writes the lines waiting, syncs the file and closes it, reporting
// the records that could not be written. A record after Close opens the
// file again.
func (a *Audit) Close() error {
	a.mu.Lock()
	a.closed = true
	if a.timer != nil {
		a.timer.Stop() // what it would write is written below
	}
	for {
		for a.writing {
			a.wrote.Wait()
		}
		if len(a.pending) == 0 && len(a.ended) == 0 {
			break
		}
		a.writeWaiting()
	}
	a.writing = true
	lost := a.lost
	a.mu.Unlock()
	if lost > 0 {
		a.log.Error().Int("lost", lost).Str("path", a.path).Msg("audit log: records that could not be written")
	}
	var err error
	if a.f != nil {
		err = errors.Join(a.f.Sync(), a.f.Close())
		a.f = nil
	}
	a.mu.Lock()
	a.writing = false
	a.wrote.Broadcast()
	a.mu.Unlock()
	return err
}

// Lost is the number of records that could not be written.
func (a *Audit) Lost() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lost
}

// record writes the line of one finished call: with a Delay, it hands the
// call to the log's writer (queue); else it returns once the line is in
// the file (and with Sync on the disk). A failure is logged, never
// returned: the call itself has succeeded or failed already.
func (a *Audit) record(o *Call) {
	if a.delay > 0 && a.queue(o) {
		return
	}
	var buf [1024]byte
	b, ok := a.line(buf[:0], o)
	o.free()
	if ok {
		a.commit(b)
	}
}

// queue hands an ended call to the log's writer: to the timer's write,
// armed by the first call waiting. A call that finds maxWaiting calls
// waiting (a disk slower than the calls) waits for its line, which holds
// the calls back rather than fill memory. queue reports false, having
// queued nothing, once Close has begun, for the caller to write its line
// itself. The call's arguments are copied: they may lie in a buffer its
// transport reads the next request into.
//
// A call with no other in flight (a sequential client's) could write its
// own line at once, as no other call would share the write: measured, it
// made such calls slower (p50 1.09–1.18× the bridge's without the log,
// against 1.04–1.07× with the timer, in interleaved runs of make bench),
// as the write and the line then lie on the call's own path.
func (a *Audit) queue(o *Call) bool {
	o.keep()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return false
	}
	a.ended = append(a.ended, o)
	a.queued++
	if len(a.ended) >= maxWaiting {
		a.waitWritten(a.queued)
		return true
	}
	if !a.armed {
		a.armed = true
		a.timer.Reset(a.delay)
	}
	return true
}

// writeDelayed is the timer's: it writes the lines waiting, after any
// write under way. The timer stays armed while it waits, so that the calls
// that end meanwhile leave their lines to it rather than each arm the
// timer again, and start a goroutine that would wait too.
func (a *Audit) writeDelayed() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.writing {
		a.wrote.Wait()
	}
	a.armed = false
	if (len(a.pending) > 0 || len(a.ended) > 0) && !a.closed {
		a.writeWaiting()
	}
}

// line appends the line of a call, with its newline, to b, the lines made
// before it; false, with b as it was, if it could not be encoded. The
// usual line is written without allocating: appendLine writes the time,
// the ids and the hash from their bytes.
func (a *Audit) line(b []byte, o *Call) ([]byte, bool) {
	start := len(b)
	var buf [512]byte
	canon := appendCanonicalJSON(buf[:0], o.args)
	sum := sha256.Sum256(canon)
	l := a.fields(o)
	l.at, l.callID, l.sum = o.start, &o.id, &sum
	if o.traced {
		l.traceID = &o.trace.traceID
	}
	if a.args {
		l.Args = canon
	}
	if out, ok := appendLine(b, &l, a.clientJSON(o.info.Client)); ok {
		return append(out, '\n'), true
	}
	return a.marshalLine(b[:start], o) // what appendLine wrote of it cut
}

// fields is the record of a call but for its time, ids and arguments.
func (a *Audit) fields(o *Call) auditLine {
	l := auditLine{
		Transport:   "stdio",
		Kind:        "tool",
		Tool:        o.tool,
		Target:      o.target,
		Method:      o.method,
		Socket:      o.socket,
		Outcome:     o.outcome,
		Code:        o.code,
		DurationMs:  float64(o.end.Sub(o.start).Microseconds()) / 1000,
		ResultBytes: o.resultBytes,
	}
	ci := &o.info
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
	return l
}

// marshalLine is line through json.Marshal, for what appendLine leaves to
// it (a request id or arguments that are not JSON, an odd duration).
func (a *Audit) marshalLine(b []byte, o *Call) ([]byte, bool) {
	canon := canonicalJSON(o.args)
	sum := sha256.Sum256(canon)
	l := a.fields(o)
	l.Time = o.start.UTC().Format(time.RFC3339Nano)
	l.CallID, l.ArgsSHA256 = hex.EncodeToString(o.id[:]), hex.EncodeToString(sum[:])
	if o.traced {
		l.TraceID = hex.EncodeToString(o.trace.traceID[:])
	}
	if a.args {
		l.Args = canon
	}
	j, err := json.Marshal(l)
	if err != nil {
		a.log.Warn().Err(err).Str("tool", o.tool).Msg("audit log: encoding the record")
		return b, false
	}
	return append(append(b, j...), '\n'), true
}

// clientJSON returns c as json.Marshal writes it, from the last one
// written when it is the same (its fields, not its pointer: a session's
// clientInfo may change); nil for json.Marshal to write it.
func (a *Audit) clientJSON(c *mcp.Implementation) []byte {
	if c == nil {
		return nil
	}
	if last := a.client.Load(); last != nil && sameClient(&last.impl, c) {
		return last.json
	}
	j, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	if len(c.Icons) == 0 {
		a.client.Store(&clientJSON{impl: *c, json: j})
	}
	return j
}

// sameClient reports whether two clientInfos without icons are written alike.
func sameClient(x, y *mcp.Implementation) bool {
	return x.Name == y.Name && x.Title == y.Title && x.Description == y.Description && x.Version == y.Version && x.WebsiteURL == y.WebsiteURL && len(y.Icons) == 0
}

// commit queues a line and returns once it is written: by this caller,
// with every line waiting, if no write is under way, else by the caller
// writing when that one ends.
func (a *Audit) commit(line []byte) {
	a.mu.Lock()
	a.pending = append(a.pending, line...)
	a.queued++
	a.waitWritten(a.queued)
	a.mu.Unlock()
}

// waitWritten returns once the first seq records queued are written: by
// this caller, with every one waiting, when no write is under way, else
// by the one writing, or the next. a.mu is held.
func (a *Audit) waitWritten(seq uint64) {
	for a.written < seq {
		if a.writing {
			a.wrote.Wait()
			continue
		}
		a.writeWaiting()
	}
}

// writeWaiting writes the lines waiting, as the writer: a.mu is held, and
// no write is under way; it is released during the write.
func (a *Audit) writeWaiting() {
	pending, ended, last := a.pending, a.ended, a.queued
	// The spare buffers become pending, and are no longer the spares:
	// what is queued during this write goes into them, and the next write
	// must not take them as its spares too.
	a.pending, a.spare, a.writing = a.spare[:0], nil, true
	a.ended, a.spareEnded = a.spareEnded[:0], nil
	a.mu.Unlock()
	// The calls handed over ended before any line in pending was queued:
	// lines are queued so only once Close has begun, which stops handing
	// calls over.
	lines := slices.Grow(a.made[:0], len(ended)*max(a.longest, 256)+len(pending))
	for _, o := range ended {
		lines, _ = a.line(lines, o) // one that cannot be made is logged and left out
		o.free()
	}
	clear(ended)
	lines = append(lines, pending...)
	lost := a.write(lines)
	if cap(lines) <= maxMade {
		a.made = lines[:0]
	}
	a.mu.Lock()
	if cap(pending) <= maxSpare {
		a.spare = pending[:0]
	}
	a.spareEnded = ended[:0]
	a.written, a.writing = last, false
	a.lost += lost
	a.wrote.Broadcast()
}

// maxSpare is the largest write buffer kept for the next write.
const maxSpare = 1 << 20

// maxMade is the largest buffer of lines made kept for the next write:
// maxWaiting lines of up to 1 KiB.
const maxMade = maxWaiting << 10

// write appends lines (each ending in '\n') to the file in one write and
// returns how many of them could not be written. A write that fails part
// way is cut back to the end of the last whole line written, so the file
// stays one record a line (a full disk must not leave half a line for the
// next to join). Only the writer calls it.
func (a *Audit) write(lines []byte) (lost int) {
	n := bytes.Count(lines, []byte{'\n'})
	var err error
	if a.f == nil {
		err = a.open()
	}
	if err == nil {
		a.out = a.layout(a.out[:0], lines)
		if a.maxBytes > 0 && a.size > 0 && a.size+int64(len(a.out)) > a.maxBytes {
			if err = a.rotate(); err == nil {
				a.out = a.layout(a.out[:0], lines)
			}
		}
	}
	written := 0
	if err == nil {
		out := a.out
		var w int
		w, err = a.f.Write(out)
		if err == nil && w < len(out) {
			err = io.ErrShortWrite
		}
		keep := len(out)
		if err != nil {
			keep = bytes.LastIndexByte(out[:max(w, 0)], '\n') + 1
			if keep < w {
				if terr := a.f.Truncate(a.size + int64(keep)); terr != nil {
					err = errors.Join(err, fmt.Errorf("cutting back a partial record: %w", terr))
				}
			}
		}
		written = bytes.Count(out[:keep], []byte{'\n'})
		if !a.endsNL && keep > 0 {
			written-- // the newline that ended an earlier process's last line
			a.endsNL = true
		}
		a.size += int64(keep)
		if err == nil && a.sync {
			if serr := a.f.Sync(); serr != nil {
				a.log.Error().Err(serr).Str("path", a.path).Msg("audit log: syncing failed; the lines are written but may not be on the disk")
			}
		}
	}
	if err != nil {
		if !a.failed {
			a.log.Error().Err(err).Str("path", a.path).Msg("audit log: writing failed; calls go on unrecorded until a write succeeds")
		}
		a.failed = true
		return n - written
	}
	if a.failed {
		a.log.Info().Str("path", a.path).Msg("audit log: writing again")
		a.failed = false
	}
	return 0
}

// pageSize is the unit in which the kernel copies a write into a file;
// a process killed during a write stops between two of them, so a write
// that goes past a multiple of pageSize can be cut short there (Linux's
// generic_perform_write checks for a fatal signal before each). The lines
// are laid out so that none crosses such a line, where one can be helped:
// a kill then leaves whole lines only.
const pageSize = 4096

// maxEndPad bounds the padding at the end of a write (see layout).
const maxEndPad = 1024

// spaces pads a line before its newline: JSON allows white space after a
// value, so a padded line parses as the same record.
var spaces = bytes.Repeat([]byte{' '}, pageSize)

// layout appends to out the bytes of one write of lines at the end of
// the file (a.size): a newline first if an earlier process left a line
// cut short, then each line, with spaces before the newline of a line
// when the next line would otherwise cross a multiple of pageSize, so that
// it starts on one. The first line of the next write cannot be helped so:
// if what is left to the next multiple is shorter than the longest line
// yet (up to maxEndPad), the last line is padded to it.
func (a *Audit) layout(out, lines []byte) []byte {
	if !a.endsNL {
		out = append(out, '\n')
	}
	for len(lines) > 0 {
		i := bytes.IndexByte(lines, '\n')
		if i < 0 {
			i = len(lines) - 1
		}
		line := lines[:i+1]
		lines = lines[i+1:]
		a.longest = max(a.longest, len(line))
		pos := a.size + int64(len(out))
		if n := int64(len(line)); n <= pageSize && len(out) > 0 && pos/pageSize != (pos+n-1)/pageSize {
			out = padLast(out, int(pageSize-pos%pageSize))
		}
		out = append(out, line...)
	}
	if left := int(pageSize - (a.size+int64(len(out)))%pageSize); left < pageSize && left < min(a.longest, maxEndPad) && len(out) > 0 {
		out = padLast(out, left)
	}
	return out
}

// padLast puts n spaces before the newline that ends out.
func padLast(out []byte, n int) []byte {
	out = slices.Grow(out, n)
	out = append(out[:len(out)-1], spaces[:n]...)
	return append(out, '\n')
}

// rotate renames the log to path.1 (replacing an older one) and opens a new
// one. Only the writer calls it.
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
