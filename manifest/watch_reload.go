package manifest

// This file holds how a tree reloads: it re-reads the paths that had
// events, or everything, and reports what changed as a Reload.

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"

	"github.com/rs/zerolog"
)

// Reload describes one applied reload of a watched directory.
type Reload struct {
	// Registry is the new current registry, as Watcher.Registry returns it.
	Registry *Registry
	// Changed lists, sorted, the files that loaded new content: new files,
	// edited files and files whose error cleared.
	Changed []string
	// Removed lists, sorted, the files that are gone, together with their tools.
	Removed []string
	// Failed lists, sorted by path, the files rejected with an error not
	// reported before. A file that loaded earlier keeps its last good tools.
	Failed []*FileError
	// ToolsChanged reports whether Registry.Tools differs from the previous
	// registry's; when false, clients need not be told.
	ToolsChanged bool
	// Full reports a rescan of the whole directory rather than of the paths
	// that had events: on Reload, a lost event, or the directory appearing.
	Full bool
}

// apply brings the tree up to date for the absolute paths that had events,
// or for everything when full. It reports false when nothing changed.
func (t *tree) apply(names []string, full bool) (Reload, bool) {
	t.changed, t.removed, t.failed, t.dirty = make(map[string]bool), make(map[string]bool), nil, false
	var rels []string
	for _, n := range names {
		if n == t.root {
			// The directory itself was removed, moved, replaced or created.
			full = true
			continue
		}
		rel, err := filepath.Rel(t.root, n)
		if err != nil || !within(n, t.root) {
			continue // an ancestor of root: checkRoot looks at it
		}
		rel = filepath.ToSlash(rel)
		if !hidden(rel) {
			rels = append(rels, rel)
		}
	}
	if t.checkRoot() {
		full = true
	}
	if t.present {
		if full {
			t.rescanDir("")
		} else {
			t.applyPaths(rels)
		}
	}
	return t.finish(full)
}

// applyPaths re-reads the paths that had events.
func (t *tree) applyPaths(rels []string) {
	slices.Sort(rels)
	rels = slices.Compact(rels)
	type entry struct {
		rel string
		fi  os.FileInfo
	}
	var live []entry
	// Drop what is gone first: a directory moved within the tree must lose
	// its watches under the old name before it is watched under the new one,
	// as inotify would otherwise hand back the old watches.
	for _, rel := range rels {
		fi, err := os.Stat(t.abs(rel))
		switch {
		case err == nil:
			live = append(live, entry{rel, fi})
		case errors.Is(err, fs.ErrNotExist):
			t.drop(rel)
		case t.files[rel] != nil:
			t.setError(rel, &FileError{Path: rel, Err: fmt.Errorf("reading file: %w", err)}, true)
		}
	}
	rescanned := make(map[string]bool)
	for _, e := range live {
		if t.dirs[parentDir(e.rel)] == nil || coveredBy(rescanned, e.rel) {
			continue // not in a walked directory, or just read
		}
		switch {
		case e.fi.IsDir():
			t.removeFile(e.rel)
			t.rescanDir(e.rel)
			rescanned[e.rel] = true
		case e.fi.Mode().IsRegular() && IsCandidate(path.Base(e.rel)):
			if t.dirs[e.rel] != nil {
				t.drop(e.rel) // was a directory
			}
			t.readFile(e.rel)
		default:
			t.drop(e.rel)
		}
	}
}

// rescanDir walks the directory rel (root for ""), watches its directories,
// reads its files and forgets what is no longer there.
func (t *tree) rescanDir(rel string) {
	// Directories already walked elsewhere are not walked again, as in Scan.
	skip := make(map[string]bool)
	for k, d := range t.dirs {
		if !under(k, rel) {
			skip[d.real] = true
		}
	}
	var w *walker
	watched := make(map[string]bool) // directories watched by this rescan
	for range 5 {
		var err error
		w, err = walkTree(t.abs(rel), zerolog.Nop(), skip)
		if err != nil {
			if rel == "" {
				t.log.Error().Err(err).Str("dir", t.root).Msg("cannot read manifests")
			}
			t.drop(rel)
			return
		}
		// Walk again after watching new directories: files created between
		// the walk and the watch have no event.
		if !t.syncDirs(rel, w.dirs, watched) {
			break
		}
	}

	seen := make(map[string]bool, len(w.files))
	for _, f := range w.files {
		seen[path.Join(rel, f)] = true
	}
	for k := range t.files {
		if under(k, rel) && !seen[k] {
			t.removeFile(k)
		}
	}
	rels := make([]string, len(w.files))
	for i, f := range w.files {
		rels[i] = path.Join(rel, f)
	}
	t.readFiles(rels)
	t.setScanProblems(rel, w.problems)
}

// syncDirs records the directories walked under rel, forgets those gone and
// watches those not watched by this rescan yet, recording them in watched.
// It reports whether it added a watch.
func (t *tree) syncDirs(rel string, walked []walkedDir, watched map[string]bool) (added bool) {
	seen := make(map[string]os.FileInfo, len(walked))
	for _, d := range walked {
		k := path.Join(rel, d.rel)
		if fi, err := os.Stat(t.abs(k)); err == nil {
			seen[k] = fi
		}
	}
	// Forget the directories that are gone or were replaced before watching
	// new ones, for the reason given in applyPaths.
	for k, d := range t.dirs {
		if !under(k, rel) {
			continue
		}
		if fi, ok := seen[k]; !ok || !os.SameFile(d.info, fi) {
			t.unwatchDir(k)
		}
	}
	for _, d := range walked {
		k := path.Join(rel, d.rel)
		fi, ok := seen[k]
		if !ok {
			continue // gone already; its event follows
		}
		ds := t.dirs[k]
		if ds == nil {
			ds = &dirState{}
			t.dirs[k] = ds
		}
		ds.info, ds.real = fi, d.real
		if t.fsw == nil || watched[k] {
			continue
		}
		// Adding a watch again is harmless and revives one the kernel
		// dropped for a directory replaced by one with the same inode.
		watched[k], added = true, true
		if err := t.fsw.Add(t.abs(k)); err != nil {
			ds.watched = false
			t.watchFailed(k, err)
			continue
		}
		ds.watched = true
	}
	return added
}

// readFile reads the file rel and parses it if its content changed.
func (t *tree) readFile(rel string) { t.record(rel, t.load(rel)) }

// loaded is a file read and parsed by load, for record.
type loaded struct {
	sum     [sha256.Size]byte
	same    bool  // the content is the last content read
	f       *File // parsed, unless same or err
	err     error // from ParseFile
	readErr error // from reading the file
}

// load reads and parses rel. It only reads t, so that several files can
// be loaded at once.
func (t *tree) load(rel string) loaded {
	data, err := readCapped(t.abs(rel), t.opts.maxFileSize())
	if err != nil {
		return loaded{readErr: err}
	}
	l := loaded{sum: sha256.Sum256(data)}
	if st := t.files[rel]; st != nil && st.read && !st.readFailed && st.sum == l.sum {
		l.same = true // same content, same outcome
		return l
	}
	l.f, l.err = ParseFile(rel, data, t.opts)
	return l
}

// record applies the outcome of load(rel).
func (t *tree) record(rel string, l loaded) {
	if err := l.readErr; err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			t.removeFile(rel) // raced with a removal
			return
		}
		t.setError(rel, &FileError{Path: rel, Err: err}, true)
		return
	}
	if l.same {
		return
	}
	st := t.files[rel]
	if st == nil {
		st = &fileState{}
		t.files[rel] = st
	}
	st.sum, st.read = l.sum, true
	if l.err != nil {
		t.setError(rel, asFileError(rel, l.err), false)
		return
	}
	st.good, st.err, st.readFailed = l.f, nil, false
	t.changed[rel] = true
	delete(t.removed, rel)
}

// readFiles reads the files rels (relative to root) as readFile does,
// loading them in parallel and recording them in order.
func (t *tree) readFiles(rels []string) {
	out := make([]loaded, len(rels))
	parallel(len(rels), func(i int) { out[i] = t.load(rels[i]) })
	for i, rel := range rels {
		t.record(rel, out[i])
	}
}

// setError records that the latest version of rel was rejected, keeping its
// last good version; an error already reported is not reported again.
func (t *tree) setError(rel string, fe *FileError, fromRead bool) {
	st := t.files[rel]
	if st == nil {
		st = &fileState{}
		t.files[rel] = st
	}
	delete(t.removed, rel)
	st.readFailed = fromRead
	if st.err != nil && st.err.Error() == fe.Error() {
		return
	}
	st.err = fe
	t.failed = append(t.failed, fe)
	t.dirty = true
}

// setScanProblems replaces the walk problems under rel.
func (t *tree) setScanProblems(rel string, problems []Problem) {
	fresh := make(map[string]Problem, len(problems))
	for _, p := range problems {
		p.File = path.Join(rel, p.File)
		fresh[p.File] = p
	}
	for k, p := range t.scanProblems {
		if np, ok := fresh[k]; under(k, rel) && (!ok || np != p) {
			delete(t.scanProblems, k)
			t.dirty = true
		}
	}
	for k, p := range fresh {
		if old, ok := t.scanProblems[k]; !ok || old != p {
			t.scanProblems[k] = p
			t.dirty = true
		}
	}
}

// finish builds the new registry if anything changed, logs what is new and
// reports it.
func (t *tree) finish(full bool) (Reload, bool) {
	if len(t.changed) == 0 && len(t.removed) == 0 && !t.dirty {
		return Reload{}, false
	}
	var (
		good []*File
		errs []*FileError
	)
	for _, st := range t.files {
		if st.good != nil {
			good = append(good, st.good)
		}
		if st.err != nil {
			errs = append(errs, st.err)
		}
	}
	byPath := func(a, b *FileError) int { return cmp.Compare(a.Path, b.Path) }
	slices.SortFunc(errs, byPath)

	r := Build(good)
	problems := make([]Problem, 0, len(t.scanProblems)+len(r.Problems))
	for _, p := range t.scanProblems {
		problems = append(problems, p)
	}
	slices.SortFunc(problems, func(a, b Problem) int { return cmp.Compare(a.File, b.File) })
	r.Problems = append(problems, r.Problems...)
	r.FileErrors = errs

	// A file can fail and then vanish within one reload.
	failed := slices.DeleteFunc(t.failed, func(fe *FileError) bool {
		st := t.files[fe.Path]
		return st == nil || st.err != fe
	})
	slices.SortFunc(failed, byPath)
	rep := Reload{
		Registry:     r,
		Changed:      sortedKeys(t.changed),
		Removed:      sortedKeys(t.removed),
		Failed:       failed,
		ToolsChanged: !reflect.DeepEqual(t.reg.Tools, r.Tools),
		Full:         full,
	}
	logDiagnostics(t.log, rep.Failed, added(t.reg.Problems, r.Problems), added(t.reg.Skipped, r.Skipped))
	t.reg = r
	return rep, true
}

// added returns the elements of cur that are not in old.
func added[T comparable](old, cur []T) []T {
	had := make(map[T]bool, len(old))
	for _, v := range old {
		had[v] = true
	}
	var out []T
	for _, v := range cur {
		if !had[v] {
			out = append(out, v)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
