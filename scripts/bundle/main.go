// Command bundle writes the MCP Bundle (.mcpb) of a release: a zip holding
// manifest.json, the server binary under server/ and the LICENSE, as the
// MCPB manifest spec (github.com/modelcontextprotocol/mcpb, MANIFEST.md)
// lays it out. make dist runs it (scripts/dist.sh) with the universal macOS
// binary; Claude Desktop installs the file on a double-click.
//
// The manifest is packaging/mcpb/manifest.json with the version, the
// platform and the tools filled in: the tools are those of the manifests in
// -tools (the ones the Tairseach app ships), as the server would name them
// with its default prefix. The zip is the same bytes for the same inputs:
// its entries are in a fixed order, stamped with -mtime.
//
//	go run ./scripts/bundle -version 1.2.3 -binary BIN -platform darwin -tools DIR -o OUT.mcpb
package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/geilt/tairseach-mcp/manifest"
)

// entryPoint is where the binary is in the bundle; the manifest template
// names the same path.
const entryPoint = "server/tairseach-mcp"

// config is what one run of bundle is asked to do.
type config struct {
	template string // the manifest.json template
	version  string // semantic version, without the v
	binary   string // the server binary to ship
	platform string // darwin, linux or win32
	tools    string // manifests directory whose tools the manifest lists; "" for none
	license  string // the LICENSE file
	mtime    time.Time
	output   string
}

func main() {
	var c config
	var mtime int64
	flag.StringVar(&c.template, "template", "packaging/mcpb/manifest.json", "the manifest.json template")
	flag.StringVar(&c.version, "version", "", "the bundle's version, a semantic version without the v (required)")
	flag.StringVar(&c.binary, "binary", "", "the server binary to ship (required)")
	flag.StringVar(&c.platform, "platform", "darwin", "the platform the binary runs on: darwin, linux or win32")
	flag.StringVar(&c.tools, "tools", "", "a manifests directory whose tools the manifest lists (empty: none)")
	flag.StringVar(&c.license, "license", "LICENSE", "the license file shipped beside the binary")
	flag.Int64Var(&mtime, "mtime", 0, "modification time of every entry, in seconds since 1970 (default: $SOURCE_DATE_EPOCH, else 1980-01-01)")
	flag.StringVar(&c.output, "o", "", "the .mcpb file to write (required)")
	flag.Parse()
	if c.version == "" || c.binary == "" || c.output == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: bundle -version VERSION -binary BIN -o OUT.mcpb [-platform P] [-tools DIR] [-template FILE] [-license FILE] [-mtime SECONDS]")
		os.Exit(2)
	}
	c.mtime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	if mtime == 0 {
		if v, err := parseEpoch(os.Getenv("SOURCE_DATE_EPOCH")); err == nil {
			mtime = v
		}
	}
	if mtime > c.mtime.Unix() {
		c.mtime = time.Unix(mtime, 0).UTC()
	}
	if err := run(c); err != nil {
		fmt.Fprintf(os.Stderr, "bundle: %v\n", err)
		os.Exit(1)
	}
}

func parseEpoch(s string) (int64, error) {
	var v int64
	_, err := fmt.Sscan(s, &v)
	return v, err
}

// mcpbManifest is the part of the MCPB manifest (0.3) this project uses,
// in the order the spec lists the fields. Reading the template refuses any
// other field, so that none is dropped without notice.
type mcpbManifest struct {
	ManifestVersion  string                `json:"manifest_version"`
	Name             string                `json:"name"`
	DisplayName      string                `json:"display_name,omitempty"`
	Version          string                `json:"version"`
	Description      string                `json:"description"`
	LongDescription  string                `json:"long_description,omitempty"`
	Author           mcpbAuthor            `json:"author"`
	Repository       *mcpbRepository       `json:"repository,omitempty"`
	Homepage         string                `json:"homepage,omitempty"`
	Documentation    string                `json:"documentation,omitempty"`
	Support          string                `json:"support,omitempty"`
	Server           mcpbServer            `json:"server"`
	Tools            []mcpbTool            `json:"tools"`
	ToolsGenerated   bool                  `json:"tools_generated"`
	PromptsGenerated bool                  `json:"prompts_generated"`
	Keywords         []string              `json:"keywords,omitempty"`
	License          string                `json:"license,omitempty"`
	Compatibility    mcpbCompatibility     `json:"compatibility"`
	UserConfig       map[string]userOption `json:"user_config,omitempty"`
}

type mcpbAuthor struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

type mcpbRepository struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type mcpbServer struct {
	Type       string        `json:"type"`
	EntryPoint string        `json:"entry_point"`
	MCPConfig  mcpbMCPConfig `json:"mcp_config"`
}

type mcpbMCPConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

type mcpbTool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type mcpbCompatibility struct {
	ClaudeDesktop string   `json:"claude_desktop,omitempty"`
	Platforms     []string `json:"platforms"`
}

// userOption is one entry of user_config. Default is raw: a string, a
// number or a boolean, as the option's type wants.
type userOption struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Required    bool            `json:"required"`
	Default     json.RawMessage `json:"default,omitempty"`
	Multiple    bool            `json:"multiple,omitempty"`
	Sensitive   bool            `json:"sensitive,omitempty"`
	Min         *float64        `json:"min,omitempty"`
	Max         *float64        `json:"max,omitempty"`
}

func run(c config) error {
	m, err := readTemplate(c.template)
	if err != nil {
		return err
	}
	if m.Server.EntryPoint != entryPoint {
		return fmt.Errorf("%s: server.entry_point is %q; the bundle puts the binary at %s", c.template, m.Server.EntryPoint, entryPoint)
	}
	m.Version = c.version
	m.Compatibility.Platforms = []string{c.platform}
	m.Tools = []mcpbTool{}
	if c.tools != "" {
		if m.Tools, err = listTools(c.tools); err != nil {
			return err
		}
	}
	manifestJSON, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	manifestJSON = append(manifestJSON, '\n')

	bin, err := os.ReadFile(c.binary)
	if err != nil {
		return err
	}
	license, err := os.ReadFile(c.license)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct {
		name string
		mode fs.FileMode
		data []byte
	}{
		{"manifest.json", 0o644, manifestJSON},
		{entryPoint, 0o755, bin},
		{"LICENSE", 0o644, license},
	} {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: c.mtime}
		// Unix permissions in the external attributes: mcpb unpack and
		// Claude Desktop restore them, so the binary stays executable.
		h.SetMode(e.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(e.data); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.output), 0o755); err != nil {
		return err
	}
	return os.WriteFile(c.output, buf.Bytes(), 0o644)
}

// readTemplate reads the manifest template, refusing fields this program
// does not know.
func readTemplate(name string) (*mcpbManifest, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m mcpbManifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &m, nil
}

// listTools returns the tools the server would serve from the manifests in
// dir with its default settings, by MCP name.
func listTools(dir string) ([]mcpbTool, error) {
	reg, err := manifest.Load(dir, manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		return nil, fmt.Errorf("loading the manifests in %s: %w", dir, err)
	}
	if len(reg.Tools) == 0 {
		return nil, errors.New(dir + ": no tools")
	}
	tools := make([]mcpbTool, 0, len(reg.Tools))
	for _, t := range reg.Tools {
		tools = append(tools, mcpbTool{Name: t.Name, Description: t.Description})
	}
	return tools, nil
}
