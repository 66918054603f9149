package install

// A client's configuration file: found, read and parsed (open), then,
// once edited, written through the user's links, in one rename, after a
// backup of the file as it was; the last few backups kept
// (clientconfig.Write).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/geilt/tairseach-mcp/internal/clientconfig"
)

// configFile is a client's configuration file as read.
type configFile struct {
	path  string // as the user knows it; written through its links (clientconfig.Write)
	shown string // the path in messages
	data  []byte // nil when the file does not exist
	mode  fs.FileMode
	doc   clientconfig.File
}

// open reads and parses the file cfg names, else c's usual one.
func (cfg Config) open(c Client) (*configFile, error) {
	p := cfg.File
	if p == "" {
		var err error
		if p, err = c.DefaultPath(); err != nil {
			return nil, err
		}
	} else if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	cf := &configFile{path: p, shown: p, mode: 0o600}
	fi, err := os.Stat(cf.path) // through the user's links; a dangling one is a file not made yet
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", p, err)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file; pass --config FILE", p)
	case fi.Size() > maxConfigBytes:
		return nil, fmt.Errorf("%s is %d bytes, larger than any client's file (%d at most); is it the right file? pass --config FILE", p, fi.Size(), maxConfigBytes)
	default:
		cf.mode = fi.Mode().Perm()
		if cf.data, err = os.ReadFile(cf.path); err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
	}
	cf.doc, err = c.Format.parse(cf.data, c.Key, EntryName)
	if err != nil {
		const leave = "left as it is: fix it, or move it aside and run this again"
		if se := (*clientconfig.SyntaxError)(nil); errors.As(err, &se) {
			return nil, &fileSyntaxError{fmt.Sprintf("%s:%d:%d: not valid %s: %s; %s", p, se.Line, se.Col, c.Format.Name, se.Cause, leave), p, se}
		}
		return nil, fmt.Errorf("%s: %v; %s", p, err, leave)
	}
	return cf, nil
}

// fileSyntaxError is a client file that open cannot parse.
type fileSyntaxError struct {
	msg  string
	path string
	err  *clientconfig.SyntaxError
}

func (e *fileSyntaxError) Error() string { return e.msg }

func (e *fileSyntaxError) Unwrap() error { return e.err }

// write writes the edited file with cf.mode, through the links it is
// reached by (they stay links), after a backup of the old file. It returns
// a note on the backup for the user. Every client's file is written here.
func (cf *configFile) write() (note string, err error) {
	name, err := clientconfig.Write(cf.path, cf.doc.Bytes(), cf.data, cf.mode)
	if err != nil {
		return "", err
	}
	if name != "" {
		note = " (the old file is in " + name + ")"
	}
	return note, nil
}

// maxConfigBytes bounds a client file install reads: Claude Code's
// ~/.claude.json, the largest, keeps its projects' history and grows to
// tens of megabytes.
const maxConfigBytes = 256 << 20
