package socketrpc_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

// peerHelperEnv names the socket the helper process listens on.
const peerHelperEnv = "SOCKETRPC_TEST_PEER_HELPER"

// TestPeerHelper is not a test: run with peerHelperEnv set, it becomes a
// server that runs as otherUID, answers echo on the socket, and exits when
// its stdin is closed.
func TestPeerHelper(t *testing.T) {
	path := os.Getenv(peerHelperEnv)
	if path == "" {
		t.Skip("helper process of TestServerRunsAsAnotherUser")
	}
	// The kernel records the uid of the process that calls listen.
	if err := syscall.Setgid(otherUID); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setuid(otherUID); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				br := bufio.NewReader(nc)
				for {
					if _, err := br.ReadBytes('\n'); err != nil {
						return
					}
					io.WriteString(nc, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n")
				}
			}()
		}
	}()
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	ln.Close()
}

// TestServerRunsAsAnotherUser gives the socket of a server running as
// another user to the current one: the file checks pass, the peer check
// refuses it.
func TestServerRunsAsAnotherUser(t *testing.T) {
	requireRoot(t)
	path := socketPath(t)
	chown(t, filepath.Dir(path), otherUID)

	cmd := exec.Command(os.Args[0], "-test.run=^TestPeerHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), peerHelperEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper process: %v", err)
		}
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "ready" {
	}
	go io.Copy(io.Discard, stdout)
	chown(t, path, os.Getuid())
	chmod(t, path, 0o600)
	if err := socketrpc.CheckSocketFile(path); err != nil {
		t.Fatalf("CheckSocketFile = %v, want nil", err)
	}

	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	uid, err := socketrpc.PeerUID(nc.(*net.UnixConn))
	peerErr := socketrpc.CheckPeer(nc, path)
	nc.Close()
	if err != nil || uid != otherUID {
		t.Fatalf("PeerUID = %d, %v; want %d", uid, err, otherUID)
	}

	c := newClient(t, path, socketrpc.Options{})
	_, err = c.Call(context.Background(), "echo", nil)
	if !errors.Is(err, socketrpc.ErrUntrusted) {
		t.Fatalf("Call = %v, want ErrUntrusted", err)
	}
	want := fmt.Sprintf("refusing socket %s: the server on it runs as uid %d, not you (uid %d)", path, otherUID, os.Getuid())
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
	// The check a Client makes, on a connection of the caller's (doctor's).
	if !errors.Is(peerErr, socketrpc.ErrUntrusted) || !strings.Contains(peerErr.Error(), want) {
		t.Errorf("CheckPeer = %v, want ErrUntrusted saying %q", peerErr, want)
	}

	insecure := newClient(t, path, socketrpc.Options{Insecure: true})
	if _, err := insecure.Call(context.Background(), "echo", nil); err != nil {
		t.Errorf("Call with Insecure = %v", err)
	}
}
