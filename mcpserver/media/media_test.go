package media_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/media"
)

func pngBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func result(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestBlock(t *testing.T) {
	dir := t.TempDir()
	img := pngBytes(t)
	shot := filepath.Join(dir, "shot.dat") // sniffed, not named
	os.WriteFile(shot, img, 0o600)
	text := filepath.Join(dir, "notes.png")
	os.WriteFile(text, []byte("just text"), 0o600)
	big := filepath.Join(dir, "big.png")
	os.WriteFile(big, append(img, make([]byte, 2000)...), 0o600)
	fifo := filepath.Join(dir, "fifo.png")
	syscall.Mkfifo(fifo, 0o600)
	link := filepath.Join(dir, "link.png")
	os.Symlink(shot, link)

	tests := []struct {
		name, method string
		text         []byte
		image        bool
		why          string // in the sentence; "" none
	}{
		{"png by content", "screen.capture", result(map[string]any{"path": shot, "width": 4}), true, ""},
		{"not an image", "files.write", result(map[string]any{"path": text}), false, ""},
		{"too large", "screen.capture", result(map[string]any{"path": big}), false, "over the limit of 1000 bytes"},
		{"fifo", "camera.snap", result(map[string]any{"path": fifo}), false, "FIFO"},
		{"symlink", "files.info", result(map[string]any{"path": link}), false, "symlink"},
		{"missing", "screen.capture", result(map[string]any{"path": filepath.Join(dir, "gone.png")}), false, "does not exist"},
		{"missing, other method", "files.delete", result(map[string]any{"path": filepath.Join(dir, "gone.txt")}), false, ""},
		{"files.read base64", "files.read", result(map[string]any{"encoding": "base64", "content": base64.StdEncoding.EncodeToString(img)}), true, ""},
		{"files.read text", "files.read", result(map[string]any{"encoding": "utf-8", "content": "hello"}), false, ""},
		{"array", "screen.capture", []byte(`[1]`), false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan struct{})
			var (
				c   mcp.Content
				why string
			)
			go func() { c, why = media.Block(tt.method, tt.text, 1000); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				t.Fatal("blocked")
			}
			ic, ok := c.(*mcp.ImageContent)
			if ok != tt.image {
				t.Fatalf("image %v, want %v (%q)", ok, tt.image, why)
			}
			if ok && (ic.MIMEType != "image/png" || !bytes.Equal(ic.Data, img)) {
				t.Fatalf("image %s of %d bytes", ic.MIMEType, len(ic.Data))
			}
			if tt.why == "" && why != "" || !strings.Contains(why, tt.why) {
				t.Fatalf("sentence %q, want one with %q", why, tt.why)
			}
		})
	}
}

func TestOtherUsersImage(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a file of another user needs root")
	}
	path := filepath.Join(t.TempDir(), "theirs.png")
	os.WriteFile(path, pngBytes(t), 0o644)
	if err := os.Chown(path, 1, 1); err != nil {
		t.Fatal(err)
	}
	c, why := media.Block("screen.capture", result(map[string]any{"path": path}), 1000)
	if c != nil || !strings.Contains(why, "belongs to another user") {
		t.Fatalf("another user's picture: %v %q", c, why)
	}
}
