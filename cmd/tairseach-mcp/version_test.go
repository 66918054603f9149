package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildInfoVersion(t *testing.T) {
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install of a tag", debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, "v0.3.1"},
		{"go install of a commit", debug.BuildInfo{Main: debug.Module{Version: "v0.3.2-0.20261101120000-a1b2c3d4e5f6"}}, "v0.3.2-0.20261101120000-a1b2c3d4e5f6"},
		{"go build in a clone, modified", debug.BuildInfo{Main: debug.Module{Version: "v0.3.2-0.20261101120000-a1b2c3d4e5f6+dirty"}}, "v0.3.2-0.20261101120000-a1b2c3d4e5f6+dirty"},
		{"-buildvcs=false", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"nothing recorded", debug.BuildInfo{}, "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildInfoVersion(&tt.bi); got != tt.want {
				t.Errorf("buildInfoVersion = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersionScheme checks that scripts/version.sh, which make build and
// make dist stamp into the binaries, names each commit as Go does in the
// binaries it builds itself (go build in a clone; go install names the
// commit the same way): in a fresh repository, before the first tag, on a
// tag, past it, past a pre-release tag, and with changes not committed.
func TestVersionScheme(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program five times")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	script, err := filepath.Abs(filepath.Join(repoRoot, "scripts", "version.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		// -buildvcs=true overrides a GOFLAGS of -buildvcs=false, as the
		// tests' own builds use.
		cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
			"TZ=JST-9") // the commit times count in UTC all the same
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/versioned\n\ngo 1.22\n")
	write(".gitignore", "/prog\n")
	write("main.go", "package main\n\nimport (\n\t\"fmt\"\n\t\"runtime/debug\"\n)\n\n"+
		"func main() {\n\tbi, _ := debug.ReadBuildInfo()\n\tfmt.Println(bi.Main.Version)\n}\n")
	commit := func(msg string) {
		t.Helper()
		write("CHANGES", msg+"\n")
		run("git", "add", "-A")
		run("git", "commit", "-q", "-m", msg)
	}
	check := func(step, pattern string) {
		t.Helper()
		ours := run("sh", script)
		run("go", "build", "-o", "prog", ".")
		goes := run(filepath.Join(dir, "prog"))
		if ours != goes {
			t.Errorf("%s: scripts/version.sh says %q, go build %q", step, ours, goes)
		}
		if ok, _ := filepath.Match(pattern, ours); !ok {
			t.Errorf("%s: version %q, want the form %s", step, ours, pattern)
		}
	}
	if v := run("sh", script); v != "dev" {
		t.Errorf("outside a checkout: %q, want dev", v)
	}
	run("git", "init", "-q")
	commit("one")
	check("before the first tag", "v0.0.0-[0-9]*-[0-9a-f]*[0-9a-f]")
	run("git", "tag", "v0.3.0")
	check("on a tag", "v0.3.0")
	commit("two")
	check("past a tag", "v0.3.1-0.[0-9]*-[0-9a-f]*[0-9a-f]")
	write("CHANGES", "not committed\n")
	check("modified", "v0.3.1-0.*+dirty")
	commit("three")
	run("git", "tag", "v0.4.0-rc.1")
	commit("four")
	check("past a pre-release", "v0.4.0-rc.1.0.[0-9]*-[0-9a-f]*[0-9a-f]")
}

// TestMakeStampsTheScheme: make build and make dist stamp what
// scripts/version.sh prints, unless VERSION is given.
func TestMakeStampsTheScheme(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	cmd := exec.Command("sh", "scripts/version.sh")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(out))
	cmd = exec.Command("make", "-n", "build", "dist")
	cmd.Dir = repoRoot
	cmd.Env = slicesWithout(os.Environ(), "VERSION=")
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n: %v\n%s", err, out)
	}
	for _, want := range []string{"-X main.version=" + v + "'", "VERSION='" + v + "' sh scripts/dist.sh"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make -n build dist does not say %q:\n%s", want, out)
		}
	}
}

// slicesWithout returns env without the variables starting with prefix.
func slicesWithout(env []string, prefix string) []string {
	var kept []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			kept = append(kept, kv)
		}
	}
	return kept
}
