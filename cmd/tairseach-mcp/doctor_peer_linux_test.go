//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDoctorPeerOfAnotherUser: a socket file that is the user's own, on
// which a process of another user answers. doctor's peer check is the
// server's own (socketrpc.CheckPeer): it fails with the words the server
// refuses the socket with.
func TestDoctorPeerOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("running the backend as another user needs root (CI runs the tests as root)")
	}
	cleanEnv(t)
	noFeatureDirs(t)
	const other = 12345
	dir := shortDir(t)
	bin := filepath.Join(dir, "tairseach-demo")
	data, err := os.ReadFile(demoBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, other, other); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	cmd := exec.Command(bin, "--socket", sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: other, Gid: other}}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "listening") {
	}
	go func() {
		for sc.Scan() {
		}
	}()
	// The file is the user's own and private: only the process behind it is not.
	if err := os.Chown(sock, os.Getuid(), os.Getgid()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		t.Fatal(err)
	}

	stdout, errout, code := cli("", "--manifests", exampleDir, "--socket", sock, "doctor")
	if code != 1 {
		t.Errorf("exit code %d, want 1\n%s%s", code, stdout, errout)
	}
	for _, want := range []string{
		fmt.Sprintf("OK    socket %s is yours and not writable by group or others (mode 0600)", sock),
		fmt.Sprintf("FAIL  peer: refusing socket %s: the server on it runs as uid %d, not you (uid %d); run the Tairseach server as uid %d, or pass --insecure-socket to skip this check",
			sock, other, os.Getuid(), os.Getuid()),
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor does not say %q:\n%s", want, stdout)
		}
	}
}
