package manifest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"
)

// DefaultDebounce is the quiet period used when WatchOptions.Debounce is 0.
const DefaultDebounce = 100 * time.Millisecond

// maxBurst bounds how long a burst that never pauses can delay a reload, in
// debounce periods.
const maxBurst = 20

// maxPending bounds the paths queued between two reloads; past it the
// watcher forgets them and rescans everything, as on a queue overflow.
const maxPending = 10000

// WatchOptions controls a Watcher.
type WatchOptions struct {
	Options
	// Debounce is how long the directory must stay quiet after a change
	// before the watcher reloads; 0 or less means DefaultDebounce. A burst
	// that never pauses still reloads every 20 periods.
	Debounce time.Duration
}

func (o WatchOptions) debounce() time.Duration {
	if o.Debounce <= 0 {
		return DefaultDebounce
	}
	return o.Debounce
}

// A Watcher keeps a Registry up to date with a manifests directory.
//
// It watches the directory recursively with fsnotify, including directories
// created or moved in later, and the directory itself appearing, vanishing
// and coming back. Events are debounced; each reload then re-reads only the
// paths that had events (whole subtrees for directories) and re-parses only
// files whose content changed. Reloads are transactional per file: a file
// that becomes invalid keeps its last good tools and its error is reported
// once, a deleted file loses its tools, and a fixed file clears its error.
//
// In the registries a Watcher makes, Files and Tools include the last good
// version of files that are now rejected, and FileErrors lists every file
// whose latest version was rejected.
type Watcher struct {
	root     string // absolute
	opts     WatchOptions
	log      zerolog.Logger
	onReload func(Reload)

	reg     atomic.Pointer[Registry] // the current registry
	running atomic.Bool              // Run was called
	applies atomic.Int64             // reloads attempted, for tests

	queue queue // filled by the drain goroutine and Reload, emptied by Run

	// t is owned by the goroutine calling NewWatcher, then by the one
	// calling Run.
	t *tree
}

// NewWatcher loads the manifests under dir, as Load does, and returns a
// Watcher whose Run keeps them up to date. Once Run is running, onReload
// (if not nil) is called on Run's goroutine after each reload that changed
// something: no file changed content, appeared, vanished or changed error
// means no call. A missing dir is not an error: the registry is empty until
// the directory appears. NewWatcher starts no goroutine and holds no
// resources until Run.
func NewWatcher(dir string, opts WatchOptions, onReload func(Reload)) (*Watcher, error) {
	if dir == "" {
		return nil, errors.New("watching manifests: no directory given")
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("watching manifests: %w", err)
	}
	w := &Watcher{
		root:     root,
		opts:     opts,
		log:      opts.Logger,
		onReload: onReload,
		queue:    queue{names: make(map[string]struct{}), kick: make(chan struct{}, 1)},
		t:        newTree(root, opts.Options),
	}
	w.t.apply(nil, true)
	r := w.t.reg
	w.reg.Store(r)
	if !w.t.present {
		w.log.Warn().Str("dir", dir).Msg("manifest directory is missing or not a directory; waiting for it to appear")
	}
	w.log.Info().Str("dir", dir).Int("files", len(r.Files)).Int("tools", len(r.Tools)).
		Int("skipped", len(r.Skipped)).Int("problems", len(r.Problems)).Int("file_errors", len(r.FileErrors)).
		Msg("manifests loaded")
	return w, nil
}

// Registry returns the current registry. It is safe to call concurrently.
func (w *Watcher) Registry() *Registry { return w.reg.Load() }

// Reload asks Run for a full re-read of the directory after the debounce
// period, for when file notifications cannot be trusted (network file
// systems, SIGHUP). It never blocks and is safe to call concurrently.
func (w *Watcher) Reload() { w.queue.rescan() }

// Run watches the directory until ctx is cancelled, then stops watching
// and returns nil once its goroutines have stopped. It first rescans the
// directory to catch changes made since NewWatcher. When the file system
// cannot be watched, Run logs why and still serves Reload. Run must be
// called at most once.
//
// The goroutine calling Run owns the watcher's state, debounces and reloads;
// Run starts one more goroutine, which only moves fsnotify's events to it.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("watching manifests: Run called twice")
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		w.log.Error().Err(err).Str("dir", w.root).Msg("cannot watch manifests; they reload on demand only")
	} else {
		var wg sync.WaitGroup
		wg.Go(func() { w.drain(fsw) })
		defer func() {
			// Closing fsw closes its channels, which stops drain.
			if err := fsw.Close(); err != nil {
				w.log.Debug().Err(err).Msg("closing file watcher")
			}
			wg.Wait()
			w.t.fsw = nil
		}()
		w.t.fsw = fsw
	}
	w.apply(nil, true)

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var burst time.Time // when the pending burst began; zero when idle
	debounce := w.opts.debounce()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.queue.kick:
			for _, name := range w.queue.takeCreated() {
				w.t.watchNew(name)
			}
			now := time.Now()
			if burst.IsZero() {
				burst = now
			}
			timer.Reset(max(0, min(debounce, burst.Add(maxBurst*debounce).Sub(now))))
		case <-timer.C:
			burst = time.Time{}
			w.apply(w.queue.take())
		}
	}
}

// apply reloads the given paths, or everything if full, publishes the new
// registry and calls onReload. It runs on Run's goroutine.
func (w *Watcher) apply(names []string, full bool) {
	if rep, changed := w.t.apply(names, full); changed {
		r := rep.Registry
		w.reg.Store(r)
		// The owner logs the outcome (what clients saw change) as one line.
		w.log.Debug().Str("dir", w.root).Int("changed", len(rep.Changed)).Int("removed", len(rep.Removed)).
			Int("failed", len(rep.Failed)).Int("failing", len(r.FileErrors)).Int("tools", len(r.Tools)).
			Bool("tools_changed", rep.ToolsChanged).Bool("full", rep.Full).
			Msg("manifests reloaded")
		if w.onReload != nil {
			w.onReload(rep)
		}
	}
	w.applies.Add(1)
}

// drain moves fsnotify's events into the queue as fast as they come, so that
// the kernel's queue does not overflow while a reload runs. It never calls
// into fsw: a goroutine that both reads events and adds or removes watches
// can deadlock (see gopls's filewatcher and fsnotify#502). It returns when
// fsw is closed.
func (w *Watcher) drain(fsw *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-fsw.Events:
			if !ok {
				return
			}
			if within(ev.Name, w.root) || within(w.root, ev.Name) {
				w.queue.add(ev.Name, ev.Has(fsnotify.Create))
			}
		case err, ok := <-fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn().Err(err).Msg("file events lost; rescanning manifests")
			} else {
				w.log.Error().Err(err).Msg("watching manifests; rescanning them")
			}
			w.queue.rescan()
		}
	}
}

// queue collects the work for the next reload. The drain goroutine and
// Reload add to it; Run's goroutine takes from it.
type queue struct {
	kick chan struct{} // capacity 1: work was added since Run last looked

	mu      sync.Mutex
	names   map[string]struct{} // absolute paths that had events
	full    bool                // rescan everything
	created []string            // paths created since Run last looked
}

func (q *queue) add(name string, created bool) {
	q.mu.Lock()
	if len(q.names) < maxPending {
		q.names[name] = struct{}{}
	} else {
		q.full = true
	}
	if created && len(q.created) < maxPending {
		q.created = append(q.created, name)
	}
	q.mu.Unlock()
	q.signal()
}

// takeCreated returns and forgets the paths created since the last call.
func (q *queue) takeCreated() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.created
	q.created = nil
	return c
}

func (q *queue) rescan() {
	q.mu.Lock()
	q.full = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue) signal() {
	select {
	case q.kick <- struct{}{}:
	default:
	}
}

// take empties the queue.
func (q *queue) take() (names []string, full bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.full {
		names = make([]string, 0, len(q.names))
		for n := range q.names {
			names = append(names, n)
		}
	}
	full = q.full
	clear(q.names)
	q.full = false
	return names, full
}
