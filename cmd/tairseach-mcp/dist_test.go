package main

// The release files make dist writes (scripts/dist.sh): the archives and
// checksums.txt, the MCP Bundle with its universal macOS binary, checked
// with the official mcpb CLI and started as its manifest says, the MCP
// Registry's server.json, checked against the registry's schema, and the
// Homebrew formula.

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestDist runs scripts/dist.sh, which make dist runs, for this machine's
// platform and the two macOS ones (all four take minutes more on a small
// machine): each archive holds a static binary stamped with the version,
// README.md and LICENSE; checksums.txt verifies every file; the macOS
// bundle's binary is universal, its two slices the two darwin archives'
// binaries; a bundle of this machine's binary, laid out alike, runs as its
// manifest says; server.json names the macOS bundle with its sha256.
//
// The build has no time limit of its own: it may use what is left of the
// test's -timeout, and whatever it started is killed and gone before the
// test ends.
func TestDist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three release binaries")
	}
	// Beside the tests that wait on agents and timers: a build that keeps
	// the CPU busy while they wait.
	t.Parallel()
	if _, err := exec.LookPath("tar"); err != nil {
		t.Skip("no tar")
	}
	host := runtime.GOOS + "/" + runtime.GOARCH
	targets := []string{"darwin/arm64", "darwin/amd64"}
	bundles := []string{"darwin"}
	if runtime.GOOS != "darwin" {
		targets = append([]string{host}, targets...)
		bundles = append(bundles, host)
	}
	out := t.TempDir()
	b, err := runScript(t, []string{"VERSION=v9.8.7", "TARGETS=" + strings.Join(targets, " "),
		"BUNDLES=" + strings.Join(bundles, " "), "DIST=" + out}, "scripts/dist.sh")
	if err != nil {
		t.Fatalf("scripts/dist.sh: %v\n%s", err, b)
	}

	sums := checkSums(t, out)
	var want []string
	for _, target := range targets {
		want = append(want, "tairseach-mcp_9.8.7_"+strings.ReplaceAll(target, "/", "_")+".tar.gz")
	}
	want = append(want, "tairseach-mcp-9.8.7.mcpb")
	if runtime.GOOS != "darwin" {
		want = append(want, "tairseach-mcp-9.8.7-"+strings.ReplaceAll(host, "/", "-")+".mcpb")
	}
	if got := slices.Sorted(maps.Keys(sums)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("checksums.txt lists %q, want %q\ndist.sh said:\n%s", got, want, b)
	}

	// The archives: the files at the top, as goreleaser packs them.
	bins := map[string][]byte{}
	for _, target := range targets {
		name := "tairseach-mcp_9.8.7_" + strings.ReplaceAll(target, "/", "_") + ".tar.gz"
		files, names := readTarGz(t, filepath.Join(out, name))
		if strings.Join(names, " ") != "tairseach-mcp README.md LICENSE" {
			t.Errorf("%s holds %q, want tairseach-mcp README.md LICENSE", name, names)
		}
		bins[target] = files["tairseach-mcp"]
	}
	bin := filepath.Join(t.TempDir(), "tairseach-mcp")
	if err := os.WriteFile(bin, bins[host], 0o755); err != nil {
		t.Fatal(err)
	}
	if v, err := exec.Command(bin, "--version").Output(); err != nil || string(v) != "tairseach-mcp v9.8.7\n" {
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

	// The macOS bundle: one universal binary, each slice the archive's.
	mac := checkBundle(t, filepath.Join(out, "tairseach-mcp-9.8.7.mcpb"), "9.8.7", "darwin")
	fat, err := macho.NewFatFile(bytes.NewReader(mac.binary))
	if err != nil {
		t.Fatalf("the macOS bundle's binary is not a universal Mach-O file: %v", err)
	}
	var cpus []string
	for _, a := range fat.Arches {
		cpus = append(cpus, a.Cpu.String())
		target := map[macho.Cpu]string{macho.CpuArm64: "darwin/arm64", macho.CpuAmd64: "darwin/amd64"}[a.Cpu]
		slice := mac.binary[a.Offset : a.Offset+a.Size]
		if !bytes.Equal(slice, bins[target]) {
			t.Errorf("the universal binary's %v slice is not the %s archive's binary", a.Cpu, target)
		}
	}
	if slices.Sort(cpus); !slices.Equal(cpus, []string{"CpuAmd64", "CpuArm64"}) {
		t.Errorf("the universal binary holds %v, want CpuAmd64 and CpuArm64", cpus)
	}
	verifyUniversal(t, mac.binary)

	// A bundle laid out alike for this machine runs as its manifest says.
	if runtime.GOOS != "darwin" {
		name := "tairseach-mcp-9.8.7-" + strings.ReplaceAll(host, "/", "-") + ".mcpb"
		native := checkBundle(t, filepath.Join(out, name), "9.8.7", runtime.GOOS)
		if !bytes.Equal(native.binary, bins[host]) {
			t.Errorf("%s: the binary is not the %s archive's", name, host)
		}
		if !slices.Equal(native.manifest.Tools, mac.manifest.Tools) {
			t.Errorf("%s lists other tools than the macOS bundle", name)
		}
		runBundle(t, filepath.Join(out, name), "v9.8.7")
	} else {
		runBundle(t, filepath.Join(out, "tairseach-mcp-9.8.7.mcpb"), "v9.8.7")
	}

	checkServerJSON(t, filepath.Join(out, "server.json"), "9.8.7", sums["tairseach-mcp-9.8.7.mcpb"])
	if _, err := os.Stat(filepath.Join(out, "tairseach-mcp.rb")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a Homebrew formula without the four archives: %v", err)
	}
}

// TestBundle bundles the binary the tests built with scripts/bundle as
// make dist does, and starts it from the unpacked bundle as Claude Desktop
// would, with the user's settings and without: the layout and the
// manifest's wiring, without the release builds of TestDist.
func TestBundle(t *testing.T) {
	if testing.Short() {
		t.Skip("zips the server twice")
	}
	t.Parallel() // as TestDist
	out := filepath.Join(t.TempDir(), "t.mcpb")
	b, err := runScript(t, nil, "go", "run", "./scripts/bundle", "-version", "1.2.3-rc.1",
		"-binary", bridgeBin, "-platform", runtime.GOOS, "-tools", "manifest/testdata/tairseach-manifests", "-o", out)
	if err != nil {
		t.Fatalf("scripts/bundle: %v\n%s", err, b)
	}
	checkBundle(t, out, "1.2.3-rc.1", runtime.GOOS)
	runBundle(t, out, "dev")

	// The same inputs give the same bytes, whatever the time.
	again := filepath.Join(t.TempDir(), "t.mcpb")
	if b, err := runScript(t, nil, "go", "run", "./scripts/bundle", "-version", "1.2.3-rc.1",
		"-binary", bridgeBin, "-platform", runtime.GOOS, "-tools", "manifest/testdata/tairseach-manifests", "-o", again); err != nil {
		t.Fatalf("scripts/bundle: %v\n%s", err, b)
	}
	if x, y := readFile(t, out), readFile(t, again); !bytes.Equal(x, y) {
		t.Error("two bundles of the same inputs differ")
	}
}

// TestDistFillRelease fills the release's server.json and Homebrew formula
// from a checksums.txt, as make dist does after building: server.json is
// valid for the MCP Registry and names the bundle and its sha256, the
// formula each archive and its sha256.
func TestDistFillRelease(t *testing.T) {
	dir := t.TempDir()
	files := []string{
		"tairseach-mcp-1.2.3.mcpb",
		"tairseach-mcp_1.2.3_darwin_amd64.tar.gz", "tairseach-mcp_1.2.3_darwin_arm64.tar.gz",
		"tairseach-mcp_1.2.3_linux_amd64.tar.gz", "tairseach-mcp_1.2.3_linux_arm64.tar.gz",
	}
	var sums strings.Builder
	want := map[string]string{}
	for _, f := range files {
		h := sha256.Sum256([]byte(f))
		want[f] = hex.EncodeToString(h[:])
		fmt.Fprintf(&sums, "%s  %s\n", want[f], f)
	}
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := runScript(t, nil, "sh", "scripts/fill-release.sh", dir, "v1.2.3"); err != nil {
		t.Fatalf("scripts/fill-release.sh: %v\n%s", err, b)
	}
	checkServerJSON(t, filepath.Join(dir, "server.json"), "1.2.3", want["tairseach-mcp-1.2.3.mcpb"])

	formula := string(readFile(t, filepath.Join(dir, "tairseach-mcp.rb")))
	if strings.Contains(formula, "@") {
		t.Errorf("the formula keeps a placeholder:\n%s", formula)
	}
	if !strings.Contains(formula, `version "1.2.3"`) {
		t.Errorf("the formula does not say version 1.2.3:\n%s", formula)
	}
	// Each url line is followed by its archive's sha256.
	url := regexp.MustCompile(`url "https://github.com/geilt/tairseach-mcp/releases/download/v1\.2\.3/([^"]+)"\n\s*sha256 "([0-9a-f]{64})"`)
	got := map[string]string{}
	for _, m := range url.FindAllStringSubmatch(formula, -1) {
		got[m[1]] = m[2]
	}
	for _, f := range files[1:] {
		if got[f] != want[f] {
			t.Errorf("the formula gives %s the sha256 %q, want %s", f, got[f], want[f])
		}
	}
	if len(got) != 4 {
		t.Errorf("the formula downloads %d archives, want 4:\n%s", len(got), formula)
	}
}

// TestServerJSONTemplate checks packaging/mcp-registry/server.json against
// the server: the variables and flags it names are the ones the server
// reads, and the bundle it names is the one make dist writes.
func TestServerJSONTemplate(t *testing.T) {
	var s registryServer
	if err := json.Unmarshal(readFile(t, filepath.Join(repoRoot, "packaging", "mcp-registry", "server.json")), &s); err != nil {
		t.Fatal(err)
	}
	flags := newRootCmd(nil, io.Discard, io.Discard).PersistentFlags()
	known := map[string]bool{tokenEnv: true}
	flags.VisitAll(func(f *pflag.Flag) { known[envName(f.Name)] = true })
	for i, p := range s.Packages {
		for _, e := range p.EnvironmentVariables {
			if !known[e.Name] {
				t.Errorf("packages[%d]: the server reads no %s", i, e.Name)
			}
		}
		for _, a := range p.PackageArguments {
			if a.Type == "named" && flags.Lookup(strings.TrimPrefix(a.Name, "--")) == nil {
				t.Errorf("packages[%d]: the server has no flag %s", i, a.Name)
			}
		}
		if p.Identifier != "https://github.com/geilt/tairseach-mcp/releases/download/v@VERSION@/tairseach-mcp-@VERSION@.mcpb" {
			t.Errorf("packages[%d].identifier %s is not the bundle make dist writes", i, p.Identifier)
		}
	}
}

// runScript runs a command from the repository's root with env added to
// the test's environment, and returns its output. It runs in a process
// group of its own with no time limit but the test's: when the test's
// -timeout is near, or the test ends, the group is killed, and runScript
// returns only when none of its processes runs any more, so that no
// compiler is still writing into a directory the test removes.
func runScript(t *testing.T, env []string, name string, args ...string) ([]byte, error) {
	t.Helper()
	ctx := t.Context()
	if deadline, ok := t.Deadline(); ok {
		// Time to report, and for the test's own cleanup, before the
		// test binary panics at its -timeout.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-30*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A child that outlives the group's leader may hold the output pipe.
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	err := cmd.Wait()
	killGroup(t, cmd.Process.Pid)
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (stopped: %v)", err, context.Cause(ctx))
	}
	return out.Bytes(), err
}

// killGroup kills what is left of process group pgid and waits until none
// of it runs.
func killGroup(t *testing.T, pgid int) {
	t.Helper()
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		running, err := groupRunning(pgid)
		if err != nil || !running {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("process group %d still runs 10s after SIGKILL", pgid)
			return
		}
	}
}

// groupRunning reports whether a process of group pgid runs. A killed
// process whose parent is gone stays a zombie until init reaps it, which
// some inits do late: on Linux, zombies do not count.
func groupRunning(pgid int) (bool, error) {
	if runtime.GOOS != "linux" {
		err := syscall.Kill(-pgid, 0)
		return err == nil || errors.Is(err, syscall.EPERM), nil
	}
	procs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return false, err
	}
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold anything, so read
		// after its last parenthesis.
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(fields) > 2 && fields[0] != "Z" && fields[2] == strconv.Itoa(pgid) {
			return true, nil
		}
	}
	return false, nil
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkSums checks every line of dir/checksums.txt against its file, and
// returns file → sha256.
func checkSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, filepath.Join(dir, "checksums.txt"))))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Errorf("checksums.txt: %q is not SHA256  NAME", sc.Text())
			continue
		}
		h := sha256.Sum256(readFile(t, filepath.Join(dir, name)))
		if hex.EncodeToString(h[:]) != sum {
			t.Errorf("checksums.txt: %s does not match %s", sum, name)
		}
		sums[name] = sum
	}
	return sums
}

// readTarGz returns the files of a .tar.gz by name, and their names in
// order.
func readTarGz(t *testing.T, name string) (map[string][]byte, []string) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(readFile(t, name)))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files, names
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, hdr.Name)
		files[hdr.Name] = b
	}
}

// verifyUniversal asks lipo (Apple's, or LLVM's where one is installed)
// whether the binary is universal with both slices.
func verifyUniversal(t *testing.T, bin []byte) {
	t.Helper()
	var lipo string
	for _, name := range []string{"lipo", "llvm-lipo"} {
		if p, err := exec.LookPath(name); err == nil {
			lipo = p
			break
		}
	}
	if lipo == "" {
		versioned, _ := filepath.Glob("/usr/bin/llvm-lipo-*")
		if len(versioned) == 0 {
			t.Log("no lipo or llvm-lipo to check the universal binary with; debug/macho read it")
			return
		}
		lipo = versioned[len(versioned)-1]
	}
	f := filepath.Join(t.TempDir(), "tairseach-mcp")
	if err := os.WriteFile(f, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(lipo, f, "-verify_arch", "arm64", "x86_64").CombinedOutput(); err != nil {
		t.Errorf("%s -verify_arch arm64 x86_64: %v\n%s", lipo, err, out)
	}
}

// bundleManifest is the part of a bundle's manifest.json the tests check.
type bundleManifest struct {
	ManifestVersion string `json:"manifest_version"`
	Name            string `json:"name"`
	Version         string `json:"version"`
	Server          struct {
		Type       string `json:"type"`
		EntryPoint string `json:"entry_point"`
		MCPConfig  struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcp_config"`
	} `json:"server"`
	Tools []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tools"`
	ToolsGenerated   bool   `json:"tools_generated"`
	PromptsGenerated bool   `json:"prompts_generated"`
	License          string `json:"license"`
	Compatibility    struct {
		Platforms []string `json:"platforms"`
	} `json:"compatibility"`
	UserConfig map[string]struct {
		Type    string          `json:"type"`
		Default json.RawMessage `json:"default"`
	} `json:"user_config"`
}

// bundle is a .mcpb file as read by checkBundle.
type bundle struct {
	manifest bundleManifest
	binary   []byte
}

// TestDistUntagged runs make dist as from a commit without a tag, for this
// machine's platform alone (the four take minutes): it says each step on
// stderr as it starts and ends, writes the archive, the bundle and
// checksums.txt, and refuses server.json and the Homebrew formula, which
// would point at release files that can never exist, saying why and what
// to do. TestDistFillRelease fills them for a release version.
func TestDistUntagged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a release binary")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	host := runtime.GOOS + "/" + runtime.GOARCH
	out := t.TempDir()
	const version = "v0.1.1-0.20261127120000-0123456789ab" // Go's pseudo-version of a commit after v0.1.0
	b, err := runScript(t, []string{"VERSION=" + version, "TARGETS=" + host, "BUNDLES=" + host, "DIST=" + out}, "make", "dist")
	if err != nil {
		t.Fatalf("make dist: %v\n%s", err, b)
	}
	archive := "tairseach-mcp_0.1.1-0.20261127120000-0123456789ab_" + strings.ReplaceAll(host, "/", "_") + ".tar.gz"
	bundle := "tairseach-mcp-0.1.1-0.20261127120000-0123456789ab-" + strings.ReplaceAll(host, "/", "-") + ".mcpb"
	for _, want := range []string{
		"make dist: 2 steps into " + out + ", version " + version,
		"[1/2] building tairseach-mcp_0.1.1-0.20261127120000-0123456789ab_" + strings.ReplaceAll(host, "/", "_") + "\n",
		"[2/2] bundling " + bundle + "\n",
		"no server.json and no tairseach-mcp.rb: " + version + " is not a release",
		"tag the commit (git tag v1.2.3) and run make dist again",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("make dist does not say %q:\n%s", want, b)
		}
	}
	if n := regexp.MustCompile(`(?m)^\[[12]/2\] done in [0-9]+s$`).FindAllIndex(b, -1); len(n) != 2 {
		t.Errorf("make dist says %d steps done, want 2:\n%s", len(n), b)
	}
	sums := checkSums(t, out)
	if got := slices.Sorted(maps.Keys(sums)); !slices.Equal(got, []string{bundle, archive}) && !slices.Equal(got, []string{archive, bundle}) {
		t.Errorf("checksums.txt lists %q, want %s and %s", got, archive, bundle)
	}
	for _, name := range []string{"server.json", "tairseach-mcp.rb"} {
		if _, err := os.Stat(filepath.Join(out, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s from a commit without a tag: %v", name, err)
		}
	}
}
