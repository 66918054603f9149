package resources

import (
	"context"
	"maps"
	"os"
	"syscall"
	"time"

	"github.com/geilt/tairseach-mcp/mcpserver/internal/dirwatch"
)

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
	w, err := dirwatch.New(dirwatch.Config{Dir: dir, Delay: s.cfg.Poll,
		Errors: func(err error) { s.log.Debug().Err(err).Msg("log directory watcher") }})
	if err != nil {
		s.log.Warn().Err(err).Msg("cannot watch the log directory; looking at it every poll")
		return s.poll(ctx)
	}
	defer w.Close()
	for {
		ch, ok := w.Next(ctx)
		if !ok {
			return nil
		}
		s.compareLogs(ch.Full, ch.Files)
		if len(s.files()) >= MaxLogFiles {
			w.Recheck() // grown past what kqueue should hold open?
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
