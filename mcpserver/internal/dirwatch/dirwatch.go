// Package dirwatch watches one directory for the features that serve its
// files (the logs, the prompts) and says when to look at it again, and
// what changed since the last look.
//
// A directory that does not exist yet, or that was removed or renamed, is
// looked for every second and watched again once it is there; a look
// follows, since it may have changed while unwatched. One too large to
// watch here (watchable.TooLarge) is not watched: it is looked through
// every Delay, or, with ByModTime, looked at every second and looked
// through when its modification time changed.
package dirwatch

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/geilt/tairseach-mcp/mcpserver/internal/watchable"
)

// MaxFiles bounds the files remembered between two looks; past it the
// next look is of the whole directory.
const MaxFiles = 1024

// Config is what a Watch needs.
type Config struct {
	Dir string
	// Delay is how long after a change the directory is looked at: changes
	// meanwhile are taken in the same look. With Quiet, the directory must
	// have been quiet that long: each change starts the wait again.
	Delay time.Duration
	Quiet bool
	// ByModTime looks at a directory too large to watch by its
	// modification time, every second, rather than through it every Delay:
	// for files replaced when they change (an editor's save), not appended
	// to.
	ByModTime bool
	// Errors is told of the watcher's errors (an overflow loses events,
	// so the next look is Full); nil ignores them.
	Errors func(error)
}

// Change is what happened in the directory since the last look.
type Change struct {
	// Full says to look through the whole directory: files came or went,
	// it was watched anew, it is too large to watch, events were lost, or
	// too many files were written to remember.
	Full bool
	// Files are the files written (cleaned paths), when not Full; valid
	// until the next call of Next.
	Files map[string]bool
}

// tooLarge is watchable.TooLarge, which the tests replace.
var tooLarge = watchable.TooLarge

// retryEvery is how often a directory not watched is looked for.
var retryEvery = time.Second

// Watch watches one directory. It has no goroutine of its own: the
// goroutine that calls Next owns all of it, drains fsnotify's events in
// Next at once (fsnotify#502) and debounces there.
type Watch struct {
	cfg      Config
	dir      string
	w        *fsnotify.Watcher
	watching bool
	polling  bool      // too large to watch: looked through every Delay
	modTime  time.Time // of a directory too large to watch, ByModTime
	retry    *time.Ticker
	look     *time.Timer
	pending  bool // look is set
	ch       Change
}

// New starts watching cfg.Dir, or looking for it; the first look follows.
// It fails only when the system gives no watcher.
func New(cfg Config) (*Watch, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	d := &Watch{cfg: cfg, dir: filepath.Clean(cfg.Dir), w: w, retry: time.NewTicker(retryEvery), look: time.NewTimer(time.Hour)}
	d.look.Stop()
	d.watch()
	return d, nil
}

// Close stops watching.
func (d *Watch) Close() error {
	d.retry.Stop()
	d.look.Stop()
	return d.w.Close()
}

// Next waits until it is time to look at the directory and returns what
// changed since the last look; false once ctx ends or the watcher is
// closed.
func (d *Watch) Next(ctx context.Context) (Change, bool) {
	for {
		select {
		case <-ctx.Done():
			return Change{}, false
		case ev, ok := <-d.w.Events:
			if !ok {
				return Change{}, false
			}
			d.event(ev)
		case err, ok := <-d.w.Errors:
			if !ok {
				return Change{}, false
			}
			if d.cfg.Errors != nil {
				d.cfg.Errors(err)
			}
			d.ch.Full = true
			d.later()
		case <-d.retry.C:
			d.watch()
		case <-d.look.C:
			d.pending = false
			if d.polling {
				d.ch.Full = true
				d.watching = false
				d.watch() // still too large? then again after Delay
			}
			ch := d.ch
			d.ch = Change{}
			return ch, true
		}
	}
}

// Recheck stops watching a directory watched that has grown too large to
// be, and looks through it every Delay instead (as a directory too large
// when first watched is).
func (d *Watch) Recheck() {
	if d.watching && tooLarge(d.dir) {
		_ = d.w.Remove(d.dir)
		d.watching = false
		d.watch()
	}
}

// event takes in one event of fsnotify.
func (d *Watch) event(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	switch {
	case name == d.dir:
		if ev.Has(fsnotify.Remove | fsnotify.Rename) {
			_ = d.w.Remove(d.dir)
			d.watching = false
			d.retry.Reset(retryEvery)
			d.ch.Full = true
		}
	case ev.Has(fsnotify.Create | fsnotify.Remove | fsnotify.Rename):
		d.ch.Full = true
	case len(d.ch.Files) < MaxFiles:
		if d.ch.Files == nil {
			d.ch.Files = map[string]bool{}
		}
		d.ch.Files[name] = true
	default:
		d.ch.Full = true
	}
	d.later()
}

// watch watches the directory unless it is watched already, is not there
// (then it is looked for again at the next retry), or is too large to.
func (d *Watch) watch() {
	if d.watching {
		return
	}
	if tooLarge(d.dir) {
		if !d.cfg.ByModTime {
			d.polling = true
			d.later()
			return
		}
		if fi, err := os.Stat(d.dir); err == nil && !fi.ModTime().Equal(d.modTime) {
			d.modTime = fi.ModTime()
			d.ch.Full = true
			d.later()
		}
		return
	}
	d.polling = false
	if err := d.w.Add(d.dir); err == nil {
		d.watching = true
		d.retry.Stop()
		d.ch.Full = true // it may have changed while unwatched
		d.later()
	}
}

// later sets the look: Delay from now, or with Quiet Delay from the last
// change.
func (d *Watch) later() {
	if d.cfg.Quiet || !d.pending {
		d.pending = true
		d.look.Reset(d.cfg.Delay)
	}
}
