package manifest

import (
	"crypto/sha256"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"
)

// tree is a Watcher's view of the manifests directory: what was last read
// from every file and which directories are watched. It is used by one
// goroutine at a time (see Watcher.t).
type tree struct {
	root string // absolute
	opts Options
	log  zerolog.Logger
	fsw  *fsnotify.Watcher // nil when not watching

	present  bool        // root is a directory
	rootInfo os.FileInfo // root's identity while present
	ancestor string      // the watched nearest existing ancestor of root while root is missing
	// parentWatched: root's parent is watched, to see root replaced while present.
	parentWatched bool

	files        map[string]*fileState // by slash path relative to root
	dirs         map[string]*dirState  // walked directories by slash path; "" is root
	scanProblems map[string]Problem    // problems met walking, by Problem.File
	watchErr     string                // the last error adding a watch, logged once
	reg          *Registry             // the result of the last reload

	// The reload in progress.
	changed, removed map[string]bool
	failed           []*FileError
	dirty            bool // FileErrors or walk problems changed
}

// fileState is what a tree knows of one candidate file.
type fileState struct {
	sum        [sha256.Size]byte // of the content last read
	read       bool              // sum is set
	good       *File             // the last version that loaded; nil if none did
	err        *FileError        // why the latest version was rejected; nil if it loaded
	readFailed bool              // err came from reading the file, not from the content with sum
}

// dirState is what a tree knows of one walked directory.
type dirState struct {
	info    os.FileInfo // identity when last walked
	real    string      // real path, so that a symbolic link loop is walked once
	watched bool
}

func newTree(root string, opts Options) *tree {
	return &tree{
		root:         root,
		opts:         opts,
		log:          opts.Logger,
		files:        make(map[string]*fileState),
		dirs:         make(map[string]*dirState),
		scanProblems: make(map[string]Problem),
		reg:          Build(nil),
	}
}

func (t *tree) abs(rel string) string { return filepath.Join(t.root, filepath.FromSlash(rel)) }

// hidden reports whether a walk skips rel: one of its elements is a dot name.
func hidden(rel string) bool {
	for elem := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(elem, ".") {
			return true
		}
	}
	return false
}

// parentDir returns the relative slash path of rel's directory, "" for root.
func parentDir(rel string) string {
	if d := path.Dir(rel); d != "." {
		return d
	}
	return ""
}

// coveredBy reports whether an ancestor of rel is in dirs.
func coveredBy(dirs map[string]bool, rel string) bool {
	for d := parentDir(rel); d != ""; d = parentDir(d) {
		if dirs[d] {
			return true
		}
	}
	return false
}

// under reports whether rel is dir or inside it; everything is under "".
func under(rel, dir string) bool {
	return dir == "" || rel == dir || strings.HasPrefix(rel, dir+"/")
}

// within reports whether name is dir or inside it.
func within(name, dir string) bool {
	if len(name) < len(dir) || name[:len(dir)] != dir {
		return false
	}
	return len(name) == len(dir) || os.IsPathSeparator(name[len(dir)]) || os.IsPathSeparator(dir[len(dir)-1])
}

func (t *tree) watchFailed(dir string, err error) {
	if msg := err.Error(); msg != t.watchErr {
		t.watchErr = msg
		t.log.Error().Err(err).Str("dir", dir).Msg("cannot watch directory; changes in it need a reload")
	}
}

func (t *tree) unwatchDir(rel string) {
	if d := t.dirs[rel]; d != nil && d.watched && t.fsw != nil {
		// The watch may be gone with its directory already.
		_ = t.fsw.Remove(t.abs(rel))
	}
	delete(t.dirs, rel)
}

// drop forgets the file or directory rel and everything under it.
func (t *tree) drop(rel string) {
	t.removeFile(rel)
	if _, ok := t.dirs[rel]; ok || rel == "" {
		for k := range t.files {
			if under(k, rel) {
				t.removeFile(k)
			}
		}
		for k := range t.dirs {
			if under(k, rel) {
				t.unwatchDir(k)
			}
		}
	}
	for k := range t.scanProblems {
		if under(k, rel) {
			delete(t.scanProblems, k)
			t.dirty = true
		}
	}
}

func (t *tree) removeFile(rel string) {
	if _, ok := t.files[rel]; ok {
		delete(t.files, rel)
		delete(t.changed, rel)
		t.removed[rel] = true
	}
}
