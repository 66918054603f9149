package demo

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// captureSize is the side of the picture screen.capture draws.
const captureSize = 32

// captures serves screen.capture: it knows where to write the pictures the
// call names no path for, and remembers those it named so that Serve can
// remove them as it returns.
type captures struct {
	dir  string   // Options.CaptureDir; "" means /tmp
	made sync.Map // paths named, removed by removeAll
}

type captureParams struct {
	Display int `json:"display"`
	// Side, for tests (the real server has no such parameter): a noisy
	// picture of Side × Side pixels, which does not compress.
	Side   int    `json:"side"`
	Format string `json:"format"`
	Path   string `json:"path"`
}

type captureResult struct {
	Path     string `json:"path"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	FileSize int    `json:"fileSize"`
	Format   string `json:"format"`
}

// screenCapture writes a small real PNG, as the real server writes a
// screenshot, and returns its path: to params.path, else to a new file
// named as the real server names it, in c.dir (default /tmp, as the real
// server); those it named are removed by removeAll.
func (c *captures) screenCapture(_ context.Context, params []byte) ([]byte, *rpcError) {
	var p captureParams
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.Format != "" && p.Format != "png" {
		return nil, invalidParams("the demo captures png only")
	}
	side := captureSize
	if p.Side < 0 || p.Side > 4096 {
		return nil, invalidParams("side must be 0 to 4096")
	}
	img := image.NewRGBA(image.Rect(0, 0, captureSize, captureSize))
	for y := range captureSize {
		for x := range captureSize {
			img.Set(x, y, color.RGBA{R: uint8(x * 8), G: uint8(y * 8), B: uint8(40 * p.Display), A: 255})
		}
	}
	if p.Side > 0 {
		side = p.Side
		img = image.NewRGBA(image.Rect(0, 0, side, side))
		rnd := rand.New(rand.NewPCG(uint64(side), 1))
		for i := range img.Pix {
			img.Pix[i] = byte(rnd.Uint32())
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, &rpcError{Code: codeHandlerError, Message: err.Error()}
	}
	path := p.Path
	if path != "" && !filepath.IsAbs(path) {
		return nil, invalidParams("path must be absolute")
	}
	if path == "" {
		// Where the real server writes (proxy/handlers/screen.rs):
		// /tmp/tairseach_screenshot_<unix ms>.png, a new name each time.
		dir := cmp.Or(c.dir, "/tmp")
		for ms := time.Now().UnixMilli(); ; ms++ {
			path = filepath.Join(dir, fmt.Sprintf("tairseach_screenshot_%d.png", ms))
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				return nil, &rpcError{Code: codeHandlerError, Message: "writing the capture: " + err.Error()}
			}
			f.Close()
			c.made.Store(path, struct{}{})
			break
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		return nil, &rpcError{Code: codeHandlerError, Message: "writing the capture: " + err.Error()}
	}
	return marshalResult(captureResult{Path: path, Width: side, Height: side, FileSize: buf.Len(), Format: "png"})
}

// removeAll removes the files screenCapture named.
func (c *captures) removeAll() {
	c.made.Range(func(path, _ any) bool {
		os.Remove(path.(string))
		c.made.Delete(path)
		return true
	})
}
