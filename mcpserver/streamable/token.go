package streamable

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// TokenEnv holds the bearer token itself; it has no flag, so that the token
// never shows in a process listing.
const TokenEnv = "TAIRSEACH_MCP_TOKEN"

// MinTokenLen keeps guessable tokens off the network.
const MinTokenLen = 16

// TokenFileName is the default token file, under ~/.tairseach.
const TokenFileName = "mcp-token"

// DefaultTokenPath is ~/.tairseach/mcp-token.
func DefaultTokenPath() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".tairseach", TokenFileName)
}

// CheckToken refuses a token too short to be safe on a network, or one that
// cannot be sent in a header; source says where it came from.
func CheckToken(token, source string) error {
	if len(token) < MinTokenLen || strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
		return fmt.Errorf("the token in %s must be at least %d printable ASCII characters without spaces; make one with: openssl rand -hex 32", source, MinTokenLen)
	}
	return nil
}

// osReason is err without the operation and the path, which the message
// that quotes it names itself: "no such file or directory".
func osReason(err error) string {
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// ReadTokenFile reads a token file that only its owner, the user running
// the server, can read: a symlink, anything but a regular file, a file of
// another user or one readable by group or others is refused, since anyone
// who can read or swap it can call the tools.
func ReadTokenFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return "", fmt.Errorf("%s is a symlink; a token file must be a regular file: rm %s, then start again to make a new one (or point at the real file)", path, path)
		}
		return "", wrappedError{fmt.Sprintf("%s: %s", path, osReason(err)), err}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file (%s); a token file must be one: remove it and start again to make a new one", path, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("%s belongs to uid %d, not to you (uid %d); another user could read or change it: remove it and start again to make a new one", path, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("%s is readable by other users (mode %s), who could then call your tools: chmod 600 %s (and make a new token if others may have read it)", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("%s: %s", path, osReason(err))
	}
	return strings.TrimSpace(string(b)), nil
}

// wrappedError is a message for people that still matches its cause.
type wrappedError struct {
	msg   string
	cause error
}

func (e wrappedError) Error() string { return e.msg }
func (e wrappedError) Unwrap() error { return e.cause }

// ReadOrMakeTokenFile reads the token file at path or, when it does not
// exist and create is set, makes it: 32 random bytes in hex, mode 0600, in
// a directory made 0700 when missing. The file is written under a temporary
// name and linked into place, which fails when the name exists: of two
// servers starting at once, one makes the token and both use it, and no one
// ever reads a half-written file.
func ReadOrMakeTokenFile(path string, create bool) (token string, made bool, err error) {
	token, err = ReadTokenFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !create {
		return token, false, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, fmt.Errorf("making %s for the token: %s", dir, osReason(err))
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", false, err
	}
	token = hex.EncodeToString(raw)
	tmp, err := os.CreateTemp(dir, "."+TokenFileName+".*")
	if err != nil {
		return "", false, fmt.Errorf("writing the token in %s: %s", dir, osReason(err))
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600.
	_, err = tmp.WriteString(token + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, fmt.Errorf("writing the token in %s: %s", dir, osReason(err))
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another server made it first: use that one.
			token, err = ReadTokenFile(path)
			return token, false, err
		}
		return "", false, fmt.Errorf("writing the token to %s: %s", path, osReason(err))
	}
	return token, true, nil
}

// TokenHint says where a client finds the token: its file, with ~ for the
// home directory, or the server's environment.
func TokenHint(path string) string {
	if path == "" {
		return "the token in TAIRSEACH_MCP_TOKEN of the server's environment"
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(path, home+string(filepath.Separator)) {
		path = "~" + path[len(home):]
	}
	return "the token in " + path
}
