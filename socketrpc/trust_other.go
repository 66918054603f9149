//go:build !linux && !darwin

package socketrpc

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"runtime"
)

// PeerUID is not implemented on this system: it always returns an error
// wrapping errors.ErrUnsupported.
func PeerUID(c *net.UnixConn) (uint32, error) {
	return 0, fmt.Errorf("reading peer credentials on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// fileOwner cannot tell a file's owner on this system.
func fileOwner(fs.FileInfo) (uint32, bool) { return 0, false }
