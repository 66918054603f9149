package resources

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logState is what was last seen of one log file.
type logState struct {
	size  int64
	mtime time.Time
	ino   uint64
}

// logsDir is the absolute log directory, or "".
func (s *Set) logsDir() string {
	if s.cfg.LogsDir == "" {
		return ""
	}
	d, err := filepath.Abs(s.cfg.LogsDir)
	if err != nil {
		return ""
	}
	return d
}

// scanLogs lists the regular files of this user directly in the log
// directory; symlinks, directories, special files and other users' files
// are not resources.
func (s *Set) scanLogs() map[string]logState {
	out := map[string]logState{}
	dir := s.logsDir()
	if dir == "" {
		return out
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	uid := uint32(os.Getuid())
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != uid {
			continue
		}
		out[filepath.Join(dir, e.Name())] = logState{size: fi.Size(), mtime: fi.ModTime(), ino: uint64(st.Ino)}
	}
	return out
}

// FileURI is the file:// URI of an absolute path.
func FileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

func (s *Set) logResource(path string, st logState) *mcp.Resource {
	return &mcp.Resource{URI: FileURI(path), Name: filepath.Base(path), Title: "log " + filepath.Base(path),
		Description: fmt.Sprintf("the end of the Tairseach log %s (at most %d bytes)", path, s.cfg.MaxBytes),
		MIMEType:    mimeFor(filepath.Base(path))}
}

// Run watches the log directory until ctx ends: an append or a rewrite of
// a file tells its subscribers, a file appearing or vanishing changes the
// list. It polls: on macOS a kqueue watch holds a descriptor per file, and
// a log written every few milliseconds needs no more than one look per
// Poll.
func (s *Set) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		s.pollLogs()
	}
}

// pollLogs compares the log directory with what was seen last.
func (s *Set) pollLogs() {
	now := s.scanLogs()
	s.mu.Lock()
	old := s.logFiles
	s.logFiles = now
	var changed []string
	for p, st := range now {
		if o, ok := old[p]; ok && o != st {
			changed = append(changed, FileURI(p))
		}
	}
	listChanged := !slices.Equal(slices.Sorted(maps.Keys(old)), slices.Sorted(maps.Keys(now)))
	servers := slices.Clone(s.servers)
	if listChanged {
		for _, a := range servers {
			s.sync(a)
		}
	}
	s.mu.Unlock()
	s.updated(servers, changed...)
}

// errRefused is a log file that is not a regular file of this user.
var errRefused = errors.New("not a regular file of this user")

// readLog reads the end of a log file, from a line boundary.
func (s *Set) readLog(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	path := filepath.FromSlash(u.Path)
	if dir := s.logsDir(); dir == "" || filepath.Dir(path) != dir {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, skipped, size, err := ReadTail(path, s.cfg.MaxBytes)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, mcp.ResourceNotFoundError(uri)
	case errors.Is(err, errRefused):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s is refused: %v", path, err)}
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeFor(filepath.Base(path))}
	if skipped > 0 {
		c.Meta = mcp.Meta{"truncated": true, "omittedBytes": skipped, "size": size}
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		c.MIMEType = "application/octet-stream"
		c.Blob = data
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
	}
	text := string(data)
	if skipped > 0 {
		text = fmt.Sprintf("[the first %d of %d bytes are left out; this is the last %d, from a line boundary]\n", skipped, size, len(data)) + text
	}
	c.Text = text
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// ReadTail reads at most limit bytes from the end of the regular file path,
// starting after a newline when it does not start at the beginning. It
// refuses (errRefused) symlinks, special files and files of other users,
// checked on the open file: a FIFO is opened without blocking.
func ReadTail(path string, limit int64) (data []byte, skipped, size int64, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, 0, 0, fmt.Errorf("a symlink: %w", errRefused)
		}
		return nil, 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, 0, fmt.Errorf("a %s: %w", fi.Mode().Type(), errRefused)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uint32(os.Getuid()) {
		return nil, 0, 0, fmt.Errorf("another user's file: %w", errRefused)
	}
	size = fi.Size()
	off := max(0, size-limit)
	data, err = io.ReadAll(io.NewSectionReader(f, off, size-off))
	if err != nil {
		return nil, 0, 0, err
	}
	if off > 0 {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
			off += int64(i + 1)
		}
	}
	return data, off, size, nil
}
