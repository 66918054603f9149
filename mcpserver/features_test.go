package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/media"
)

const echoManifest = `{"id": "demo", "tools": [{"name": "demo.echo", "inputSchema": {"type": "object"}}],
 "implementation": {"methods": {"demo.echo": "demo.echo"}}}`

func TestMediaAddsAnImageBlock(t *testing.T) {
	var png1 bytes.Buffer
	png.Encode(&png1, image.NewGray(image.Rect(0, 0, 2, 2)))
	path := filepath.Join(t.TempDir(), "shot")
	os.WriteFile(path, png1.Bytes(), 0o600)
	args, _ := json.Marshal(map[string]string{"path": path})

	for _, on := range []bool{true, false} {
		cfg := Config{DefaultSocket: startDemo(t)}
		if on {
			cfg.Media = media.Images(0)
		}
		srv := New(cfg, registryOf(t, echoManifest))
		res := srv.Call(context.Background(), "tairseach_demo_echo", args)
		srv.Close()
		if res.IsError || res.Content[0].(*mcp.TextContent).Text != string(args) {
			t.Fatalf("media %v: the text block changed: %+v", on, res.Content[0])
		}
		if !on {
			if len(res.Content) != 1 {
				t.Fatalf("media off: %d blocks", len(res.Content))
			}
			continue
		}
		img, ok := res.Content[1].(*mcp.ImageContent)
		if len(res.Content) != 2 || !ok || !bytes.Equal(img.Data, png1.Bytes()) || img.MIMEType != "image/png" {
			t.Fatalf("media on: %+v", res.Content)
		}
		// The fast path gives the go-sdk's bytes for it.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(res)
		if got := check.Encode(res); string(got) != string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))) {
			t.Fatalf("encodeResult:\n got %s\nwant %s", got, buf.Bytes())
		}
	}
}

func TestMediaUnderStrictOutputSchemas(t *testing.T) {
	var png1 bytes.Buffer
	png.Encode(&png1, image.NewGray(image.Rect(0, 0, 2, 2)))
	path := filepath.Join(t.TempDir(), "shot.png")
	os.WriteFile(path, png1.Bytes(), 0o600)
	args, _ := json.Marshal(map[string]string{"path": path})
	srv := New(Config{DefaultSocket: startDemo(t), OutputSchemas: true, Media: media.Images(0)}, registryOf(t,
		`{"id": "demo", "tools": [{"name": "demo.echo", "inputSchema": {"type": "object"},
		  "outputSchema": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}}],
		 "implementation": {"methods": {"demo.echo": "demo.echo"}}}`))
	defer srv.Close()
	res := srv.Call(context.Background(), "tairseach_demo_echo", args)
	if res.IsError || len(res.Content) != 2 || string(res.StructuredContent.(json.RawMessage)) != string(args) {
		t.Fatalf("strict: isError %v, %d blocks, structuredContent %v", res.IsError, len(res.Content), res.StructuredContent)
	}
}
