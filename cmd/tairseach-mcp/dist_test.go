package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestDist runs scripts/dist.sh, which make dist runs, for this machine's
// platform alone (all four take minutes on a small machine): the archive
// holds a static binary stamped with the version, and checksums.txt
// verifies.
func TestDist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release binary")
	}
	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("no tar")
	}
	out := t.TempDir()
	target := runtime.GOOS + "/" + runtime.GOARCH
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "scripts/dist.sh")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "VERSION=v9.8.7", "TARGETS="+target, "DIST="+out)
	cmd.WaitDelay = time.Second
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/dist.sh: %v\n%s", err, b)
	}

	name := "tairseach-mcp_9.8.7_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"
	sums, err := os.ReadFile(filepath.Join(out, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	archive, err := os.ReadFile(filepath.Join(out, name))
	if err != nil {
		t.Fatalf("%v; dist holds:\n%s", err, b)
	}
	h := sha256.Sum256(archive)
	if want := hex.EncodeToString(h[:]) + "  " + name + "\n"; string(sums) != want {
		t.Errorf("checksums.txt:\n%s\nwant:\n%s", sums, want)
	}

	// The files at the top of the archive, as goreleaser packs them.
	zr, err := gzip.NewReader(strings.NewReader(string(archive)))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	bin := filepath.Join(t.TempDir(), "tairseach-mcp")
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		if hdr.Name == "tairseach-mcp" {
			f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	if strings.Join(names, " ") != "tairseach-mcp README.md" {
		t.Errorf("archive holds %q, want tairseach-mcp README.md", names)
	}
	v, err := exec.Command(bin, "--version").Output()
	if err != nil || string(v) != "tairseach-mcp v9.8.7\n" {
		t.Errorf("--version: %q, %v", v, err)
	}
	if runtime.GOOS == "linux" {
		// Static: no program interpreter (dynamic loader) to run it.
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("the binary asks for a dynamic loader; it is not static")
			}
		}
	}
}
