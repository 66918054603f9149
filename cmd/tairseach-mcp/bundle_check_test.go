package main

// Checks of what make dist writes besides the archives: the MCP Bundle
// (unpacked, validated by the official mcpb CLI and started as a host would)
// and server.json against the MCP Registry's schema.

// The release files make dist writes (scripts/dist.sh): the archives and
// checksums.txt, the MCP Bundle with its universal macOS binary, checked
// with the official mcpb CLI and started as its manifest says, the MCP
// Registry's server.json, checked against the registry's schema, and the
// Homebrew formula.

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
)

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

	// Each setting reaches the server as a flag on its command line, and
	// has a default, without which the host passes "${user_config.…}" as
	// it is. None travels in env: Claude Desktop records a binary
	// bundle's env but does not pass it to the process
	// (modelcontextprotocol/mcpb#297), and two routes could disagree.
	flags := newRootCmd(nil, io.Discard, io.Discard).PersistentFlags()
	wired := map[string]string{"manifests": "manifests", "socket": "socket", "read_only": "read-only", "toolsets": "toolsets"}
	if got := slices.Sorted(maps.Keys(m.UserConfig)); !slices.Equal(got, slices.Sorted(maps.Keys(wired))) {
		t.Errorf("manifest: user_config %q, want %q", got, slices.Sorted(maps.Keys(wired)))
	}
	for key, flag := range wired {
		if flags.Lookup(flag) == nil {
			t.Fatalf("the server has no --%s", flag)
		}
		// --flag=VALUE, one argument: "--read-only" "false" would make
		// false a command.
		if arg := "--" + flag + "=${user_config." + key + "}"; !slices.Contains(cfg.Args, arg) {
			t.Errorf("manifest: args %q lack %s", cfg.Args, arg)
		}
		if len(m.UserConfig[key].Default) == 0 {
			t.Errorf("manifest: user_config.%s has no default", key)
		}
	}
	if len(cfg.Args) != len(wired)+1 || cfg.Args[0] != "--transport=stdio" {
		t.Errorf("manifest: args %q, want --transport=stdio and the user's settings", cfg.Args)
	}
	if len(cfg.Env) != 0 {
		t.Errorf("manifest: env %v: Claude Desktop does not pass it on (mcpb#297); put settings in args", cfg.Env)
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
// server as Claude Desktop does: the command and arguments the official
// library (@anthropic-ai/mcpb, scripts/mcpb-config.mjs) makes of the
// manifest, in an environment of its own that holds none of the
// manifest's env (Claude Desktop drops it, mcpb#297), first with the
// defaults on a HOME laid out as the Tairseach app lays it out, then with
// the user's settings. The server answers initialize with its version, and
// serves the tools the settings ask for: under read-only, no tool that
// changes anything.
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
		// Read-only alone: permissions.request and screen.capture go.
		{"read-only", map[string]any{"read_only": true}, []string{
			"tairseach_contacts_get", "tairseach_contacts_list", "tairseach_contacts_search", "tairseach_demo_blob",
			"tairseach_demo_echo", "tairseach_demo_fail", "tairseach_demo_slow", "tairseach_permissions_check",
			"tairseach_permissions_list", "tairseach_server_status", "tairseach_word_count"}},
		// Toolsets alone: the other manifests' tools go, contacts'
		// destructive ones stay.
		{"toolsets", map[string]any{
			"manifests": filepath.Join(repoRoot, "manifest", "testdata", "tairseach-manifests"), "socket": elsewhere,
			"toolsets": "contacts",
		}, []string{"tairseach_contacts_create", "tairseach_contacts_delete", "tairseach_contacts_get", "tairseach_contacts_list",
			"tairseach_contacts_search", "tairseach_contacts_update"}},
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

			for _, a := range cfg.Args {
				if strings.Contains(a, "${") {
					t.Errorf("the host passes %q as it is: a setting without a default", a)
				}
			}
			// As Claude Desktop starts a binary bundle: cfg.Env is dropped.
			cmd := exec.Command(cfg.Command, cfg.Args...)
			cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
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
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tool := range list.Tools {
				if tool.Name == "tairseach_result_part" {
					continue // the bridge's own, listed whenever a tool is served
				}
				got = append(got, tool.Name)
				a := tool.Annotations
				if tc.userConfig["read_only"] == true && (a == nil || !a.ReadOnlyHint || a.DestructiveHint != nil && *a.DestructiveHint) {
					t.Errorf("read-only, yet %s is served, annotated %+v", tool.Name, a)
				}
			}
			if !slices.Equal(got, tc.want) {
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
