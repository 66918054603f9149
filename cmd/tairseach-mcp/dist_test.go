package main

// The release files make dist writes (scripts/dist.sh): the archives and
// checksums.txt, the MCP Bundle with its universal macOS binary, checked
// with the official mcpb CLI and started as its manifest says, the MCP
// Registry's server.json, checked against the registry's schema, and the
// Homebrew formula.

import (
	"archive/tar"
	"archive/zip"
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

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/manifest"
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

// checkBundle checks a .mcpb file: its files, its manifest (the official
// mcpb CLI validates it, where it is installed), and that the manifest
// runs the binary with the settings a user can make, as the server reads
// them.
func checkBundle(t *testing.T, name, version, platform string) bundle {
	t.Helper()
	zr, err := zip.OpenReader(name)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := map[string][]byte{}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name], err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := fs.FileMode(0o644)
		if f.Name == "server/tairseach-mcp" {
			want = 0o755
		}
		if f.Mode() != want {
			t.Errorf("%s: %s has mode %v, want %v", filepath.Base(name), f.Name, f.Mode(), want)
		}
	}
	if strings.Join(names, " ") != "manifest.json server/tairseach-mcp LICENSE" {
		t.Errorf("%s holds %q, want manifest.json server/tairseach-mcp LICENSE", filepath.Base(name), names)
	}
	if !bytes.Equal(files["LICENSE"], readFile(t, filepath.Join(repoRoot, "LICENSE"))) {
		t.Errorf("%s: LICENSE is not the repository's", filepath.Base(name))
	}

	var m bundleManifest
	if err := json.Unmarshal(files["manifest.json"], &m); err != nil {
		t.Fatalf("%s: manifest.json: %v", filepath.Base(name), err)
	}
	cfg := m.Server.MCPConfig
	if m.ManifestVersion != "0.3" || m.Name != "tairseach-mcp" || m.Version != version || m.License != "MIT" {
		t.Errorf("manifest: manifest_version %q, name %q, version %q, license %q", m.ManifestVersion, m.Name, m.Version, m.License)
	}
	if m.Server.Type != "binary" || m.Server.EntryPoint != "server/tairseach-mcp" || cfg.Command != "${__dirname}/server/tairseach-mcp" {
		t.Errorf("manifest: server %+v", m.Server)
	}
	if !slices.Equal(m.Compatibility.Platforms, []string{platform}) {
		t.Errorf("manifest: platforms %q, want %s", m.Compatibility.Platforms, platform)
	}

	// The tools listed are the app's manifests' (with tools_generated: the
	// folder the server reads decides), by the names the server gives them.
	reg, err := manifest.Load(filepath.Join(repoRoot, "manifest", "testdata", "tairseach-manifests"), manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, tool := range m.Tools {
		got = append(got, tool.Name)
	}
	for _, tool := range reg.Tools {
		want = append(want, tool.Name)
	}
	if !slices.Equal(got, want) || !m.ToolsGenerated || !m.PromptsGenerated {
		t.Errorf("manifest: tools %q (tools_generated %v, prompts_generated %v), want the app's %q, generated",
			got, m.ToolsGenerated, m.PromptsGenerated, want)
	}

	// Each setting reaches the server as the variable it reads, and has a
	// default, without which the host passes "${user_config.…}" as it is.
	flags := newRootCmd(nil, io.Discard, io.Discard).PersistentFlags()
	wired := map[string]string{"manifests": "manifests", "socket": "socket", "read_only": "read-only", "toolsets": "toolsets"}
	if got := slices.Sorted(maps.Keys(m.UserConfig)); !slices.Equal(got, slices.Sorted(maps.Keys(wired))) {
		t.Errorf("manifest: user_config %q, want %q", got, slices.Sorted(maps.Keys(wired)))
	}
	for key, flag := range wired {
		if flags.Lookup(flag) == nil {
			t.Fatalf("the server has no --%s", flag)
		}
		if v := cfg.Env[envName(flag)]; v != "${user_config."+key+"}" {
			t.Errorf("manifest: env %s is %q, want ${user_config.%s}", envName(flag), v, key)
		}
		if len(m.UserConfig[key].Default) == 0 {
			t.Errorf("manifest: user_config.%s has no default", key)
		}
	}
	if len(cfg.Env) != len(wired) {
		t.Errorf("manifest: env %v sets more than the user's settings", cfg.Env)
	}

	if mcpb := mcpbCLI(t); mcpb != "" {
		dir := t.TempDir()
		if out, err := exec.Command(mcpb, "unpack", name, dir).CombinedOutput(); err != nil {
			t.Fatalf("mcpb unpack: %v\n%s", err, out)
		}
		out, err := exec.Command(mcpb, "validate", filepath.Join(dir, "manifest.json")).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Manifest schema validation passes!") {
			t.Errorf("mcpb validate %s: %v\n%s", filepath.Base(name), err, out)
		}
		out, err = exec.Command(mcpb, "info", name).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "File: "+filepath.Base(name)) {
			t.Errorf("mcpb info %s: %v\n%s", filepath.Base(name), err, out)
		}
	}
	return bundle{manifest: m, binary: files["server/tairseach-mcp"]}
}

// mcpbCLI returns the official mcpb CLI that scripts/package.json pins,
// or "" where it is not installed (the test then says so).
func mcpbCLI(t *testing.T) string {
	t.Helper()
	p := filepath.Join(repoRoot, "scripts", "node_modules", ".bin", "mcpb")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the mcpb CLI is not installed (%v); CI=true: the npm tools are required", err)
		}
		t.Logf("not checking with the mcpb CLI: %v (`make test` installs it)", err)
		return ""
	}
	return p
}

// runBundle unpacks a bundle with the official mcpb CLI and starts its
// server as Claude Desktop would: the command, arguments and environment
// the official library (@anthropic-ai/mcpb, scripts/mcpb-config.mjs) makes
// of the manifest, in an environment of its own, first with the defaults
// on a HOME laid out as the Tairseach app lays it out, then with the user's
// settings. The server answers initialize with its version, and serves the
// tools the settings ask for.
func runBundle(t *testing.T, name, version string) {
	t.Helper()
	mcpb := mcpbCLI(t)
	if mcpb == "" {
		return
	}
	if _, err := exec.LookPath("node"); err != nil {
		missingClients(t, "node is not installed: %v", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command(mcpb, "unpack", name, dir).CombinedOutput(); err != nil {
		t.Fatalf("mcpb unpack: %v\n%s", err, out)
	}

	home := shortDir(t)
	if err := os.CopyFS(filepath.Join(home, ".tairseach", "manifests"), os.DirFS(filepath.Join(repoRoot, "manifests.example"))); err != nil {
		t.Fatal(err)
	}
	startBackend(t, filepath.Join(home, ".tairseach", "tairseach.sock"))
	elsewhere := filepath.Join(shortDir(t), "s.sock")
	startBackend(t, elsewhere)

	for _, tc := range []struct {
		name       string
		userConfig map[string]any
		want       []string // the tools served
	}{
		{"defaults", nil, []string{
			"tairseach_contacts_get", "tairseach_contacts_list", "tairseach_contacts_search", "tairseach_demo_blob",
			"tairseach_demo_echo", "tairseach_demo_fail", "tairseach_demo_slow", "tairseach_permissions_check",
			"tairseach_permissions_list", "tairseach_permissions_request", "tairseach_screen_capture",
			"tairseach_server_status", "tairseach_word_count"}},
		// The app's own manifests, where read-only leaves out contacts'
		// create, update and delete.
		{"settings", map[string]any{
			"manifests": filepath.Join(repoRoot, "manifest", "testdata", "tairseach-manifests"), "socket": elsewhere,
			"read_only": true, "toolsets": "contacts",
		}, []string{"tairseach_contacts_get", "tairseach_contacts_list", "tairseach_contacts_search"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			userConfig, err := json.Marshal(tc.userConfig)
			if err != nil {
				t.Fatal(err)
			}
			if tc.userConfig == nil {
				userConfig = []byte("{}")
			}
			stdout, stderr, code := runNode(t, 60*time.Second, "node", "mcpb-config.mjs", dir, home, string(userConfig))
			if code != 0 {
				t.Fatalf("mcpb-config.mjs exited %d\n%s%s", code, stdout, stderr)
			}
			var cfg struct {
				Command string            `json:"command"`
				Args    []string          `json:"args"`
				Env     map[string]string `json:"env"`
			}
			if err := json.Unmarshal([]byte(stdout), &cfg); err != nil {
				t.Fatalf("mcpb-config.mjs: %v\n%s", err, stdout)
			}
			if cfg.Command != filepath.Join(dir, "server", "tairseach-mcp") {
				t.Errorf("the host runs %s, want the bundle's binary", cfg.Command)
			}

			cmd := exec.Command(cfg.Command, cfg.Args...)
			cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
			for k, v := range cfg.Env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			cmd.Dir = "/"
			stderrBuf := &syncBuffer{}
			cmd.Stderr = stderrBuf
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "claude-ai", Version: "0"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatalf("starting %s %q with %v: %v\nstderr:\n%s", cfg.Command, cfg.Args, cfg.Env, err, stderrBuf.String())
			}
			defer func() {
				_ = cs.Close()
				if t.Failed() {
					t.Logf("env %v; server stderr:\n%s", cfg.Env, stderrBuf.String())
				}
			}()
			if info := cs.InitializeResult().ServerInfo; info.Name != "tairseach-mcp" || info.Version != version {
				t.Errorf("initialize: serverInfo %+v, want tairseach-mcp %s", info, version)
			}
			if got := toolNames(t, cs); !slices.Equal(got, tc.want) {
				t.Errorf("tools/list: %q, want %q", got, tc.want)
			}
			res := callTool(t, cs, "tairseach_contacts_get", map[string]any{"id": "c-001"})
			if res.IsError || !strings.Contains(text(res), "c-001") {
				t.Errorf("contacts.get: isError %v, %s", res.IsError, text(res))
			}
		})
	}
}

// registryServer is the part of a server.json the tests check.
type registryServer struct {
	Schema   string `json:"$schema"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Packages []struct {
		RegistryType string `json:"registryType"`
		Identifier   string `json:"identifier"`
		Version      string `json:"version"`
		FileSha256   string `json:"fileSha256"`
		Transport    struct {
			Type    string `json:"type"`
			URL     string `json:"url"`
			Headers []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"headers"`
		} `json:"transport"`
		PackageArguments []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"packageArguments"`
		EnvironmentVariables []struct {
			Name string `json:"name"`
		} `json:"environmentVariables"`
	} `json:"packages"`
}

// registryModule is the version of the MCP Registry's Go module whose
// schema server.json is checked against. It keeps the published schemas it
// validates with in internal/validators/schemas (copied from
// static.modelcontextprotocol.io) and names the current one in
// pkg/model/constants.go.
const registryModule = "github.com/modelcontextprotocol/registry@v1.8.9"

// registrySchema returns the MCP Registry's schema that server.json names
// in $schema, from the pinned registry module (the Go module proxy brings
// it, once), and checks that the registry takes it as current.
func registrySchema(t *testing.T, schemaURL string) *jsonschema.Resolved {
	t.Helper()
	version, ok := strings.CutPrefix(schemaURL, "https://static.modelcontextprotocol.io/schemas/")
	version, ok2 := strings.CutSuffix(version, "/server.schema.json")
	if !ok || !ok2 {
		t.Fatalf("$schema %q is not a schema of static.modelcontextprotocol.io", schemaURL)
	}
	cmd := exec.Command("go", "mod", "download", "-json", registryModule)
	cmd.Dir = t.TempDir() // outside this module: nothing is added to go.mod
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if err == nil {
		err = json.Unmarshal(out, &mod)
	}
	if err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s: %v %s", registryModule, err, mod.Error)
	}
	constants := readFile(t, filepath.Join(mod.Dir, "pkg", "model", "constants.go"))
	if m := regexp.MustCompile(`CurrentSchemaVersion = "([^"]+)"`).FindSubmatch(constants); m == nil || string(m[1]) != version {
		t.Errorf("$schema names %s; %s takes %q as current", version, registryModule, m)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(readFile(t, filepath.Join(mod.Dir, "internal", "validators", "schemas", version+".json")), &s); err != nil {
		t.Fatalf("the registry's schema %s: %v", version, err)
	}
	if s.ID != schemaURL {
		t.Fatalf("the registry's schema %s has $id %s", version, s.ID)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolving the registry's schema: %v", err)
	}
	return rs
}

// checkServerJSON checks a filled-in server.json: valid against the
// registry's schema, with the rules the registry adds for bundles (an
// https download from the project's releases whose URL says mcp, and its
// sha256), and every {variable} of a transport defined by its package.
func checkServerJSON(t *testing.T, name, version, sha string) {
	t.Helper()
	raw := readFile(t, name)
	var instance any
	if err := json.Unmarshal(raw, &instance); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var s registryServer
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if err := registrySchema(t, s.Schema).Validate(instance); err != nil {
		t.Errorf("server.json is not valid for the MCP Registry: %v", err)
	}
	if s.Name != "io.github.geilt/tairseach-mcp" || s.Version != version {
		t.Errorf("server.json: name %q, version %q", s.Name, s.Version)
	}
	url := "https://github.com/geilt/tairseach-mcp/releases/download/v" + version + "/tairseach-mcp-" + version + ".mcpb"
	var transports []string
	for i, p := range s.Packages {
		transports = append(transports, p.Transport.Type)
		if p.RegistryType != "mcpb" || p.Identifier != url || p.Version != version || p.FileSha256 != sha {
			t.Errorf("packages[%d]: %s %s version %s sha256 %s, want mcpb %s version %s sha256 %s",
				i, p.RegistryType, p.Identifier, p.Version, p.FileSha256, url, version, sha)
		}
		vars := map[string]bool{}
		for _, a := range p.PackageArguments {
			vars[a.Name] = true
		}
		for _, e := range p.EnvironmentVariables {
			vars[e.Name] = true
		}
		templated := []string{p.Transport.URL}
		for _, h := range p.Transport.Headers {
			templated = append(templated, h.Value)
		}
		for _, s := range templated {
			for _, m := range regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(s, -1) {
				if !vars[m[1]] {
					t.Errorf("packages[%d]: %q names {%s}, which the package does not define", i, s, m[1])
				}
			}
		}
	}
	if !slices.Equal(transports, []string{"stdio", "streamable-http"}) {
		t.Errorf("server.json: transports %q, want stdio and streamable-http", transports)
	}
}
