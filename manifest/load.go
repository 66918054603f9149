package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/rs/zerolog"
)

// Load reads every manifest under dir (see Scan), parses each with ParseFile
// and merges them with Build. Files that fail to read or parse end up in
// Registry.FileErrors and never stop the others.
//
// The returned Registry is never nil. The error is non-nil only when dir
// itself cannot be walked: when dir does not exist the error wraps
// fs.ErrNotExist and the registry is empty, so a caller may treat that as
// "no manifests yet".
func Load(dir string, opts Options) (*Registry, error) {
	log := opts.Logger
	paths, scanProblems, err := scan(dir, log)
	if err != nil {
		return Build(nil), err
	}

	loaded := make([]*File, len(paths))
	failed := make([]*FileError, len(paths))
	parallel(len(paths), func(i int) { loaded[i], failed[i] = loadFile(dir, paths[i], opts) })
	var (
		files []*File
		errs  []*FileError
	)
	for i := range paths {
		if failed[i] != nil {
			errs = append(errs, failed[i])
		} else {
			files = append(files, loaded[i])
		}
	}

	r := Build(files)
	r.Problems = append(scanProblems, r.Problems...)
	r.FileErrors = errs

	logDiagnostics(log, r.FileErrors, r.Problems, r.Skipped)
	log.Info().Str("dir", dir).Int("files", len(r.Files)).Int("tools", len(r.Tools)).
		Int("skipped", len(r.Skipped)).Int("problems", len(r.Problems)).Int("file_errors", len(r.FileErrors)).
		Msg("manifests loaded")
	return r, nil
}

// logDiagnostics logs rejected files, problems and skipped tools, each once,
// at debug level: the manifests are the app's, which the person running the
// bridge mostly cannot change, and a stdio client shows every line on stderr
// as an error. The registry holds them all for whoever reports them (the
// caller's summary, validate, doctor, the status resource).
func logDiagnostics(log zerolog.Logger, errs []*FileError, problems []Problem, skipped []Skipped) {
	for _, fe := range errs {
		log.Debug().Err(fe).Str("file", fe.Path).Msg("manifest rejected")
	}
	for _, p := range problems {
		log.Debug().Str("file", p.File).Str("tool", p.Tool).Str("severity", p.Severity.String()).Msg(p.Message)
	}
	for _, s := range skipped {
		switch s.Reason {
		case Duplicate, Hidden:
		default:
			continue // already reported as a problem
		}
		log.Debug().Str("file", s.File).Str("tool", s.ToolName).Str("name", s.Name).Str("reason", s.Reason.String()).Msg(s.Detail)
	}
}

// loadFile reads and parses one file, always returning a *FileError on failure.
func loadFile(dir, rel string, opts Options) (*File, *FileError) {
	data, err := readCapped(filepath.Join(dir, filepath.FromSlash(rel)), opts.maxFileSize())
	if err != nil {
		return nil, &FileError{Path: rel, Err: err}
	}
	f, err := ParseFile(rel, data, opts)
	if err != nil {
		return nil, asFileError(rel, err)
	}
	return f, nil
}

// parallel calls f(i) for every i in [0, n) on up to GOMAXPROCS goroutines,
// for reading and parsing files, most of a load; a few run on the caller's.
func parallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/4)
	if workers < 2 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

// asFileError returns err as a *FileError for the file at rel.
func asFileError(rel string, err error) *FileError {
	var fe *FileError
	if errors.As(err, &fe) {
		return fe
	}
	return &FileError{Path: rel, Err: err}
}

// ReadFile reads the manifest file name as Load does: opened without
// blocking, refused unless the opened descriptor is a regular file, and read
// up to the size limit of opts. A FIFO, device, socket or directory put in
// place of a manifest, even between a directory scan and the open, gives an
// error instead of blocking the caller.
func ReadFile(name string, opts Options) ([]byte, error) {
	return readCapped(name, opts.maxFileSize())
}

// testHookBeforeOpen, when set by a test, runs just before readCapped opens a
// file, to swap the file for another kind between the scan and the open.
var testHookBeforeOpen func(name string)

// readCapped reads a regular file of at most limit bytes. The file is opened
// with O_NONBLOCK, so that opening a FIFO with no writer returns at once, and
// its type is checked on the opened descriptor, so that no rename between a
// check and the open can make it block. Symbolic links are followed on
// purpose: the scan keeps links to manifest files.
func readCapped(name string, limit int64) ([]byte, error) {
	if testHookBeforeOpen != nil {
		testHookBeforeOpen(name)
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		// A Unix socket, or a device without its driver, cannot be opened.
		return nil, fmt.Errorf("reading file: not a regular file but a socket or device (%w)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("reading file: not a regular file but a %s (replace it with a regular .json file, or rename it so that it does not end in .json)", fileKind(fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, tooLarge(fi.Size(), limit)
	}
	// Read in one go into a buffer of the file's size; the file may still
	// grow between Stat and Read.
	r := io.LimitReader(f, limit+1)
	data := make([]byte, 0, fi.Size()+1)
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading file: %w", err)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(int64(len(data)), limit)
	}
	return data, nil
}

// fileKind names the type of a file that is not a regular file.
func fileKind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "device"
	case t.IsDir():
		return "directory"
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return fmt.Sprintf("special file (%v)", m.Type())
}

// Scan returns the candidate manifest files under dir as sorted, slash
// separated paths relative to dir. It walks dir recursively, following
// symbolic links to files and directories but visiting each real directory
// once, and keeps regular files for which IsCandidate is true, skipping
// dot-directories. Entries it cannot read are logged and skipped; the error is
// non-nil only when dir itself cannot be read, and wraps fs.ErrNotExist when
// dir does not exist.
func Scan(dir string, opts Options) ([]string, error) {
	paths, _, err := scan(dir, opts.Logger)
	return paths, err
}

// IsCandidate reports whether a file with base name name is loaded as a
// manifest: it ends in ".json" and is neither a dotfile nor an editor's
// temporary, swap or backup file.
func IsCandidate(name string) bool {
	return strings.HasSuffix(name, ".json") && !ignoredName(name)
}

// ignoredName reports dotfiles and editor temporary files.
func ignoredName(name string) bool {
	switch {
	case name == "", strings.HasPrefix(name, "."), // includes emacs .#lock files
		strings.HasSuffix(name, "~"),
		len(name) >= 2 && name[0] == '#' && name[len(name)-1] == '#',
		strings.HasSuffix(name, ".swp"), strings.HasSuffix(name, ".swx"),
		strings.HasSuffix(name, ".tmp"),
		name == "4913": // vim probes directory writability with this name
		return true
	}
	return false
}

// walker collects candidate files; it is used by one goroutine.
type walker struct {
	root     string
	log      zerolog.Logger
	visited  map[string]bool // real paths of directories already walked
	files    []string
	dirs     []walkedDir // directories walked, root first, in walk order
	problems []Problem
}

// walkedDir is a directory a walker read: its slash path relative to the
// walk's root ("" for the root) and its real path.
type walkedDir struct {
	rel, real string
}

func scan(dir string, log zerolog.Logger) ([]string, []Problem, error) {
	w, err := walkTree(dir, log, nil)
	if err != nil {
		return nil, nil, err
	}
	return w.files, w.problems, nil
}

// walkTree walks dir as Scan does, treating the directories whose real paths
// are in skip as already walked. The returned walker's files are sorted.
func walkTree(dir string, log zerolog.Logger, skip map[string]bool) (*walker, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("reading manifest directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("reading manifest directory: %s is not a directory", dir)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("reading manifest directory: %w", err)
	}
	w := &walker{root: dir, log: log, visited: make(map[string]bool, len(skip)+1)}
	for d := range skip {
		w.visited[d] = true
	}
	if w.visited[realDir] {
		return w, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading manifest directory: %w", err)
	}
	w.visited[realDir] = true
	w.dirs = append(w.dirs, walkedDir{"", realDir})
	w.walkEntries("", entries)
	slices.Sort(w.files)
	return w, nil
}

func (w *walker) problem(rel string, s Severity, format string, args ...any) {
	// Logged with the others by logDiagnostics.
	w.problems = append(w.problems, Problem{File: rel, Severity: s, Message: fmt.Sprintf(format, args...)})
}

// walkEntries visits the entries of the directory at relative path rel.
func (w *walker) walkEntries(rel string, entries []fs.DirEntry) {
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		erel := path.Join(rel, name)
		abs := filepath.Join(w.root, filepath.FromSlash(erel))
		mode := e.Type()
		if mode&fs.ModeSymlink != 0 {
			fi, err := os.Stat(abs)
			if err != nil {
				if IsCandidate(name) {
					w.problem(erel, Warning, "skipping broken symbolic link: %v", err)
				} else {
					w.log.Debug().Str("file", erel).Err(err).Msg("skipping broken symbolic link")
				}
				continue
			}
			mode = fi.Mode().Type()
		}
		switch {
		case mode.IsDir():
			w.walkDir(erel, abs)
		case mode.IsRegular() && IsCandidate(name):
			w.files = append(w.files, erel)
		default:
			w.log.Debug().Str("file", erel).Msg("skipping non-manifest entry")
		}
	}
}

func (w *walker) walkDir(rel, abs string) {
	realDir, err := filepath.EvalSymlinks(abs)
	if err != nil {
		w.problem(rel, Error, "skipping directory: %v", err)
		return
	}
	if w.visited[realDir] {
		w.log.Debug().Str("dir", rel).Str("real", realDir).Msg("skipping directory already walked")
		return
	}
	w.visited[realDir] = true
	w.dirs = append(w.dirs, walkedDir{rel, realDir})
	entries, err := os.ReadDir(abs)
	if err != nil {
		w.problem(rel, Error, "skipping directory: %v", err)
		// ReadDir returns what it could read before the error.
	}
	w.walkEntries(rel, entries)
}
