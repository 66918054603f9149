package resources

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/geilt/tairseach-mcp/mcpserver/internal/watchable"
)

// maxTouched bounds the files remembered between two looks; past it the
// next look is of the whole directory.
const maxTouched = 1024

// Run watches the log directory until ctx ends: an append or a rewrite of
// a file tells its subscribers, a file appearing or vanishing changes the
// list. It is driven by the directory's change events: an idle directory
// costs nothing. After the first event it waits Config.Poll for more, then
// looks once: at the files written, or through the directory when files
// came or went. A directory that does not exist yet is looked for every
// second; one too large to watch here (watchable.TooLarge) is looked
// through every Poll.
//
// Run's goroutine owns the watch and is the only one that looks at the
// directory after New; it drains fsnotify's events at once (fsnotify#502)
// and does the looking itself, at most once per Poll.
func (s *Set) Run(ctx context.Context) error {
	dir := s.logsDir()
	if dir == "" {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.log.Warn().Err(err).Msg("cannot watch the log directory; looking at it every poll")
		return s.poll(ctx)
	}
	defer w.Close()
	var (
		watching bool
		polling  bool // the directory is too large to watch here
		full     bool
		touched  = map[string]bool{}
		retry    = time.NewTicker(time.Second)
		look     = time.NewTimer(time.Hour)
		pending  bool // look is set
	)
	defer retry.Stop()
	look.Stop()
	later := func() {
		if !pending {
			pending = true
			look.Reset(s.cfg.Poll)
		}
	}
	watch := func() {
		if watching {
			return
		}
		if watchable.TooLarge(dir) {
			polling = true
			later()
			return
		}
		polling = false
		if err := w.Add(dir); err == nil {
			watching = true
			retry.Stop()
			full = true // it may have changed while unwatched
			later()
		}
	}
	watch()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			switch {
			case filepath.Clean(ev.Name) == dir:
				if ev.Has(fsnotify.Remove | fsnotify.Rename) {
					watching = false
					_ = w.Remove(dir)
					retry.Reset(time.Second)
					full = true
				}
			case ev.Has(fsnotify.Create | fsnotify.Remove | fsnotify.Rename):
				full = true
			case len(touched) < maxTouched:
				touched[filepath.Clean(ev.Name)] = true
			default:
				full = true
			}
			later()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			s.log.Debug().Err(err).Msg("log directory watcher")
			full = true // an overflow loses events
			later()
		case <-retry.C:
			watch()
		case <-look.C:
			pending = false
			if polling {
				full = true
				watching = false
				watch() // still too large? then again after Poll
			}
			s.compareLogs(full, touched)
			full = false
			clear(touched)
			if watching && len(s.files()) >= MaxLogFiles && watchable.TooLarge(dir) {
				// Grown past what kqueue should hold open.
				_ = w.Remove(dir)
				watching = false
				watch()
			}
		}
	}
}

// poll looks through the log directory every Config.Poll until ctx ends:
// for a system without a watcher.
func (s *Set) poll(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			s.compareLogs(true, nil)
		}
	}
}

// files returns what was seen of the log directory.
func (s *Set) files() map[string]logState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logFiles
}

// statLog is what is seen now of the log file path, if it is still one
// (a regular file of this user).
func (s *Set) statLog(path string) (logState, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return logState{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid != uint32(os.Getuid()) {
		return logState{}, false
	}
	return logState{size: fi.Size(), mtime: fi.ModTime(), ino: uint64(st.Ino)}, true
}

// compareLogs brings what was seen of the log directory up to date:
// looked through again when full, else only the files in touched. The
// subscribers of a file that changed are told, and every server's list is
// synced when the files served changed. Run's goroutine calls it.
func (s *Set) compareLogs(full bool, touched map[string]bool) {
	s.mu.Lock()
	old := s.logFiles
	s.mu.Unlock()
	now := old
	if full {
		now = s.scanLogs()
	} else if len(touched) > 0 {
		now = maps.Clone(old)
		for p := range touched {
			if _, served := old[p]; !served {
				continue // a new file comes with a full look (Create)
			}
			if st, ok := s.statLog(p); ok {
				now[p] = st
			} else {
				delete(now, p)
			}
		}
	}
	var changed []string
	for p, st := range now {
		if o, ok := old[p]; ok && o != st {
			changed = append(changed, FileURI(p))
		}
	}
	listChanged := len(old) != len(now)
	for p := range now {
		if _, ok := old[p]; !ok {
			listChanged = true
			break
		}
	}
	s.mu.Lock()
	s.logFiles = now
	servers := s.servers.List()
	if listChanged {
		s.servers.SyncLocked()
	}
	s.mu.Unlock()
	s.updated(servers, changed...)
}
