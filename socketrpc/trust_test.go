package socketrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

// otherUID owns the sockets of the tests about someone else's socket.
const otherUID = 12345

// requireRoot skips a test that must chown files or change uid.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skipf("needs root to give a file to uid %d or to run a process as that uid (running as uid %d)", otherUID, os.Getuid())
	}
}

func TestCheckSocketFile(t *testing.T) {
	me := os.Getuid()
	tests := []struct {
		name     string
		root     bool                                   // needs root
		setup    func(t *testing.T, path string) string // returns the path to check
		want     error                                  // nil, ErrUnavailable or ErrUntrusted
		contains []string                               // PATH stands for the socket path
	}{
		{"good socket", false, func(t *testing.T, path string) string {
			return path
		}, nil, nil},
		{"missing", false, func(t *testing.T, path string) string {
			return path + ".missing"
		}, socketrpc.ErrUnavailable, []string{"PATH.missing", "no such file", "is the Tairseach server running?"}},
		{"regular file", false, func(t *testing.T, path string) string {
			f := path + ".file"
			if err := os.WriteFile(f, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return f
		}, socketrpc.ErrUnavailable, []string{"PATH.file is a regular file, not a socket"}},
		{"directory", false, func(t *testing.T, path string) string {
			return filepath.Dir(path)
		}, socketrpc.ErrUnavailable, []string{"is a directory, not a socket"}},
		{"writable by all", false, func(t *testing.T, path string) string {
			chmod(t, path, 0o666)
			return path
		}, socketrpc.ErrUntrusted, []string{
			"refusing socket PATH: it is writable by group and others (mode 0666); run chmod 600 PATH, or pass --insecure-socket",
		}},
		{"writable by group", false, func(t *testing.T, path string) string {
			chmod(t, path, 0o620)
			return path
		}, socketrpc.ErrUntrusted, []string{"writable by group (mode 0620)"}},
		{"writable by others", false, func(t *testing.T, path string) string {
			chmod(t, path, 0o602)
			return path
		}, socketrpc.ErrUntrusted, []string{"writable by others (mode 0602)"}},
		{"readable by all", false, func(t *testing.T, path string) string {
			chmod(t, path, 0o644)
			return path
		}, nil, nil},
		{"owned by someone else", true, func(t *testing.T, path string) string {
			chown(t, path, otherUID)
			return path
		}, socketrpc.ErrUntrusted, []string{
			fmt.Sprintf("refusing socket PATH: it is owned by uid %d, not you (uid %d)", otherUID, me),
			"--insecure-socket",
		}},
		{"symlink to good socket", false, func(t *testing.T, path string) string {
			return symlink(t, path)
		}, nil, nil},
		{"symlink to bad socket", false, func(t *testing.T, path string) string {
			chmod(t, path, 0o666)
			return symlink(t, path)
		}, socketrpc.ErrUntrusted, []string{"refusing socket PATH.link (a symlink to PATH): it is writable", "chmod 600 PATH,"}},
		{"dangling symlink", false, func(t *testing.T, path string) string {
			return symlink(t, path+".missing")
		}, socketrpc.ErrUnavailable, []string{"PATH.link is a symlink", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root {
				requireRoot(t)
			}
			b := newBackend(t, echo)
			path, _ := filepath.EvalSymlinks(b.path) // the temp dir may be reached by a symlink
			err := socketrpc.CheckSocketFile(tt.setup(t, path))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("CheckSocketFile = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("CheckSocketFile = %v, want %v", err, tt.want)
			}
			other := socketrpc.ErrUntrusted
			if tt.want == socketrpc.ErrUntrusted {
				other = socketrpc.ErrUnavailable
			}
			if errors.Is(err, other) {
				t.Errorf("error %q is also %v", err, other)
			}
			for _, want := range tt.contains {
				if want = strings.ReplaceAll(want, "PATH", path); !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\ndoes not contain %q", err, want)
				}
			}
		})
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func chown(t *testing.T, path string, uid int) {
	t.Helper()
	if err := os.Chown(path, uid, -1); err != nil {
		t.Fatal(err)
	}
}

// symlink makes path.link point to target's name and returns it.
func symlink(t *testing.T, target string) string {
	t.Helper()
	link := strings.TrimSuffix(target, ".missing") + ".link"
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func TestPeerUID(t *testing.T) {
	b := newBackend(t, echo)
	nc, err := net.Dial("unix", b.path)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	uid, err := socketrpc.PeerUID(nc.(*net.UnixConn))
	if err != nil {
		t.Fatal(err)
	}
	if int64(uid) != int64(os.Getuid()) {
		t.Errorf("PeerUID = %d, want %d", uid, os.Getuid())
	}
}

// TestClientRefusesUntrustedSocket checks that the Client makes the file
// checks before connecting, and that Insecure skips them.
func TestClientRefusesUntrustedSocket(t *testing.T) {
	tests := []struct {
		name  string
		root  bool
		setup func(t *testing.T, path string)
		cause string
	}{
		{"writable by all", false, func(t *testing.T, path string) { chmod(t, path, 0o666) }, "writable by group and others"},
		{"owned by someone else", true, func(t *testing.T, path string) { chown(t, path, otherUID) }, "owned by uid 12345"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root {
				requireRoot(t)
			}
			b := newBackend(t, echo)
			tt.setup(t, b.path)

			c := newClient(t, b.path, socketrpc.Options{})
			_, callErr := c.Call(context.Background(), "echo", nil)
			pingErr := c.Ping(context.Background())
			for _, err := range []error{callErr, pingErr} {
				if !errors.Is(err, socketrpc.ErrUntrusted) {
					t.Fatalf("error = %v, want ErrUntrusted", err)
				}
				for _, want := range []string{"refusing socket " + b.path, tt.cause, "--insecure-socket"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
			}
			if n := b.accepted.Load(); n != 0 {
				t.Errorf("the client connected %d times to a socket it refuses", n)
			}

			insecure := newClient(t, b.path, socketrpc.Options{Insecure: true})
			mustEcho(t, insecure, `{}`)
			if err := insecure.Ping(context.Background()); err != nil {
				t.Errorf("Ping with Insecure = %v", err)
			}

			// Fixing the socket is enough: nothing was cached.
			chown(t, b.path, os.Getuid())
			chmod(t, b.path, 0o600)
			mustEcho(t, c, `{}`)
		})
	}
}

func TestClientChecksEveryNewConnection(t *testing.T) {
	b := newBackend(t, echo)
	c := newClient(t, b.path, socketrpc.Options{})
	mustEcho(t, c, `{}`)
	// A server restart that leaves the socket open to all: the idle
	// connection is found dead, and the redial is refused.
	b.stop()
	b.start()
	chmod(t, b.path, 0o666)
	_, err := c.Call(context.Background(), "echo", nil)
	if !errors.Is(err, socketrpc.ErrUntrusted) {
		t.Fatalf("Call after restart = %v, want ErrUntrusted", err)
	}
}
