package socketrpc

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
)

// This file holds the checks that the socket, and the process answering on
// it, belong to the current user. The Tairseach server checks its peer's uid
// in the same way; without these checks anyone who can put a socket at the
// configured path, or write to ours, could answer our calls.

// ErrUntrusted means the socket, or the server on it, does not belong to the
// current user, or other users may write to it. Options.Insecure skips the
// checks.
var ErrUntrusted = errors.New("untrusted socket")

// insecureHint ends every ErrUntrusted message; --insecure-socket is the
// CLI's name for Options.Insecure.
const insecureHint = "pass --insecure-socket to skip this check"

// untrustedError reports why a socket is not trusted, and how to fix it.
// errors.Is(err, ErrUntrusted) holds for it.
type untrustedError struct {
	path   string // as configured
	target string // where a symlink at path leads; "" if path is no symlink
	cause  string
	fix    string // "" for none beyond insecureHint
}

func (e *untrustedError) Error() string {
	via := ""
	if e.target != "" {
		via = fmt.Sprintf(" (a symlink to %s)", e.target)
	}
	fix := insecureHint
	if e.fix != "" {
		fix = e.fix + ", or " + insecureHint
	}
	return fmt.Sprintf("refusing socket %s%s: %s; %s", e.path, via, e.cause, fix)
}

func (e *untrustedError) Is(target error) bool { return target == ErrUntrusted }

// CheckSocketFile checks that path is a Unix socket owned by the current user
// that neither group nor others may write to. A symlink is followed, and the
// socket it leads to is checked.
//
// A missing path, or one that is not a socket, wraps ErrUnavailable: nothing
// could answer there. A socket that fails a check wraps ErrUntrusted, with a
// message naming the cause and the fix.
func CheckSocketFile(path string) error {
	lfi, err := os.Lstat(path)
	if err != nil {
		return &UnavailableError{Path: path, Err: err, Hint: "is the Tairseach server running?"}
	}
	fi, target := lfi, ""
	if lfi.Mode()&fs.ModeSymlink != 0 {
		target = path
		if t, err := filepath.EvalSymlinks(path); err == nil {
			target = t
		}
		if fi, err = os.Stat(path); err != nil {
			return &UnavailableError{Path: path, Err: fmt.Errorf("%s is a symlink whose target cannot be used: %w", path, err), Hint: "is the Tairseach server running?"}
		}
	}
	shown := path // the file to name in a fix
	if target != "" {
		shown = target
	}
	if fi.Mode().Type() != fs.ModeSocket {
		what := "a " + fileKind(fi.Mode())
		if target != "" {
			what = fmt.Sprintf("a symlink to %s, which is %s", target, what)
		}
		return &UnavailableError{Path: path, Err: fmt.Errorf("%s is %s, not a socket", path, what), Hint: "is the Tairseach server running? is the socket path right?"}
	}
	me := os.Getuid()
	owner, ok := fileOwner(fi)
	switch {
	case !ok:
		return &untrustedError{path: path, target: target, cause: "cannot tell who owns it on this system"}
	case int64(owner) != int64(me):
		return &untrustedError{path: path, target: target,
			cause: fmt.Sprintf("it is owned by uid %d, not you (uid %d)", owner, me),
			fix:   fmt.Sprintf("run the Tairseach server as uid %d", me)}
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		who := "group and others"
		switch perm & 0o022 {
		case 0o020:
			who = "group"
		case 0o002:
			who = "others"
		}
		return &untrustedError{path: path, target: target,
			cause: fmt.Sprintf("it is writable by %s (mode %04o)", who, perm),
			fix:   fmt.Sprintf("run chmod 600 %s", shown)}
	}
	return nil
}

// fileKind names the type of a file that is not a socket.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "file of type " + m.Type().String()
}

// CheckPeer checks that the process on the other end of nc, a connection
// to the socket at path, runs as the current user, as a Client checks
// every connection it opens unless Options.Insecure. A failed check wraps
// ErrUntrusted, with a message naming the cause and the fix.
func CheckPeer(nc net.Conn, path string) error {
	uc, ok := nc.(*net.UnixConn)
	if !ok {
		return &untrustedError{path: path, cause: fmt.Sprintf("the connection is a %T, not a Unix socket", nc)}
	}
	uid, err := PeerUID(uc)
	if err != nil {
		return &untrustedError{path: path, cause: fmt.Sprintf("cannot tell who the server on it runs as: %v", err)}
	}
	if me := os.Getuid(); int64(uid) != int64(me) {
		return &untrustedError{path: path,
			cause: fmt.Sprintf("the server on it runs as uid %d, not you (uid %d)", uid, me),
			fix:   fmt.Sprintf("run the Tairseach server as uid %d", me)}
	}
	return nil
}
