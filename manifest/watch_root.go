package manifest

// This file holds how a tree follows its root: the directory itself, its
// parent while it is there (a symbolic link renamed or re-pointed), its
// nearest ancestor while it is not, and directories made during a burst.

import (
	"os"
	"path/filepath"
)

// checkRoot notes whether root is a directory. While it is not, it watches
// root's nearest existing ancestor, to see it appear. It reports whether
// root must be rescanned: it appeared or was replaced.
func (t *tree) checkRoot() (rescan bool) {
	for range 100 { // each round watches a deeper ancestor
		fi, err := os.Stat(t.root)
		if err == nil && fi.IsDir() {
			if t.ancestor != "" {
				if t.fsw != nil {
					_ = t.fsw.Remove(t.ancestor)
				}
				t.ancestor = ""
			}
			rescan = !t.present || !os.SameFile(t.rootInfo, fi)
			t.present, t.rootInfo = true, fi
			t.watchParent(true)
			return rescan
		}
		if t.present {
			t.log.Warn().Str("dir", t.root).Msg("manifest directory is gone; waiting for it to reappear")
			t.present, t.rootInfo = false, nil
			t.drop("")
		}
		t.watchParent(false)
		if t.fsw == nil {
			return false
		}
		a := nearestDir(filepath.Dir(t.root))
		if a == t.ancestor {
			return false
		}
		if t.ancestor != "" {
			_ = t.fsw.Remove(t.ancestor)
			t.ancestor = ""
		}
		if err := t.fsw.Add(a); err != nil {
			t.watchFailed(a, err)
			return false
		}
		t.ancestor = a
		// Look again: root or a deeper ancestor may have appeared before the watch.
	}
	return false
}

// watchParent watches root's parent directory while root is present, or
// stops. The watch on root itself follows a symbolic link to its target, so
// only the parent sees the link renamed, removed or pointed elsewhere
// (ln -sfn); the drain goroutine keeps only the parent's events about root.
func (t *tree) watchParent(on bool) {
	if t.fsw == nil || on == t.parentWatched {
		return
	}
	parent := filepath.Dir(t.root)
	if parent == t.root {
		return // the file system root has no parent
	}
	if on {
		if err := t.fsw.Add(parent); err != nil {
			t.log.Debug().Err(err).Str("dir", parent).Msg("cannot watch the manifest directory's parent; replacing the directory is seen only on reload")
			return
		}
	} else if parent != t.ancestor {
		_ = t.fsw.Remove(parent)
	}
	t.parentWatched = on
}

// watchNew watches a directory just created in a walked one, before the
// reload that walks it: otherwise files written into it during a burst would
// raise no event, and the reload would come before the burst ends.
func (t *tree) watchNew(name string) {
	if t.fsw == nil || !t.present || name == t.root || !within(name, t.root) {
		return
	}
	rel, err := filepath.Rel(t.root, name)
	if err != nil {
		return
	}
	rel = filepath.ToSlash(rel)
	if hidden(rel) || t.dirs[rel] != nil || t.dirs[parentDir(rel)] == nil {
		return
	}
	fi, err := os.Lstat(name)
	if err != nil || !fi.IsDir() {
		return // symbolic links are left to the walk
	}
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return
	}
	if err := t.fsw.Add(name); err != nil {
		t.watchFailed(rel, err)
		return
	}
	t.dirs[rel] = &dirState{info: fi, real: real, watched: true}
}

// nearestDir returns dir or its nearest ancestor that is a directory.
func nearestDir(dir string) string {
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}
