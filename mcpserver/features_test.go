package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/media"
)

const captureManifest = `{"id": "screen", "tools": [{"name": "screen.capture", "inputSchema": {"type": "object"},
   "outputSchema": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}}],
 "implementation": {"methods": {"screen.capture": "screen.capture"}}}`

// TestMediaOnlyFromPictureCapabilities: the class "the bridge reads a file
// whose path somebody else chose". An echo-like tool hands back the
// model's own path: no picture, whatever the file is. screen.capture's
// picture, written where it writes, is attached.
func TestMediaOnlyFromPictureCapabilities(t *testing.T) {
	var png1 bytes.Buffer
	png.Encode(&png1, image.NewGray(image.Rect(0, 0, 2, 2)))
	path := filepath.Join(t.TempDir(), "passport.png")
	os.WriteFile(path, png1.Bytes(), 0o600)
	args, _ := json.Marshal(map[string]string{"path": path})

	srv := New(Config{DefaultSocket: startDemo(t), Media: media.Images(0)}, registryOf(t, `{"id": "demo", "tools": [{"name": "demo.echo", "inputSchema": {"type": "object"}}, {"name": "screen.capture", "inputSchema": {"type": "object"}}],
 "implementation": {"methods": {"demo.echo": "demo.echo", "screen.capture": "screen.capture"}}}`))
	defer srv.Close()
	res := srv.Call(context.Background(), "tairseach_demo_echo", args)
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != string(args) {
		t.Fatalf("an echo of a picture's path: %d blocks, want its text alone: %+v", len(res.Content), res.Content)
	}

	for _, on := range []bool{true, false} {
		cfg := Config{DefaultSocket: startDemo(t)}
		if on {
			cfg.Media = media.Images(0)
		}
		srv := New(cfg, registryOf(t, captureManifest))
		res := srv.Call(context.Background(), "tairseach_screen_capture", json.RawMessage(`{}`))
		srv.Close()
		if res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"path":"/tmp/tairseach_screenshot_`) {
			t.Fatalf("media %v: the text block: %+v", on, res.Content[0])
		}
		if !on {
			if len(res.Content) != 1 {
				t.Fatalf("media off: %d blocks", len(res.Content))
			}
			continue
		}
		img, ok := res.Content[1].(*mcp.ImageContent)
		if len(res.Content) != 2 || !ok || img.MIMEType != "image/png" || !bytes.HasPrefix(img.Data, []byte("\x89PNG")) {
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

// TestMediaOverTheLimitKeepsTheText: a picture that does not fit the
// message is left out with a sentence; the text result survives, and the
// message is within --max-result-bytes.
func TestMediaOverTheLimitKeepsTheText(t *testing.T) {
	limit := MinMaxResultBytes * 4
	srv := New(Config{DefaultSocket: startDemo(t), MaxResultBytes: limit, Media: media.Images(0)}, registryOf(t, captureManifest))
	defer srv.Close()
	// 100 × 100 pixels of noise: a PNG of over 40,000 bytes.
	res := srv.Call(context.Background(), "tairseach_screen_capture", json.RawMessage(`{"side": 100}`))
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("isError %v, %d blocks: %+v", res.IsError, len(res.Content), res.Content)
	}
	if !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"width":100`) {
		t.Fatalf("the text result is lost: %+v", res.Content[0])
	}
	why := res.Content[1].(*mcp.TextContent).Text
	if !strings.Contains(why, "No picture attached") || !strings.Contains(why, "--max-result-bytes") {
		t.Fatalf("the sentence: %q", why)
	}
	if n := len(check.Encode(res)); n > limit {
		t.Fatalf("the message is %d bytes, over the limit of %d", n, limit)
	}
}

func TestMediaUnderStrictOutputSchemas(t *testing.T) {
	srv := New(Config{DefaultSocket: startDemo(t), OutputSchemas: true, Media: media.Images(0)}, registryOf(t, captureManifest))
	defer srv.Close()
	res := srv.Call(context.Background(), "tairseach_screen_capture", json.RawMessage(`{}`))
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError || len(res.Content) != 2 || string(res.StructuredContent.(json.RawMessage)) != text {
		t.Fatalf("strict: isError %v, %d blocks, structuredContent %v", res.IsError, len(res.Content), res.StructuredContent)
	}
}
