package demo

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"sync/atomic"
)

// captureSize is the side of the picture screen.capture draws.
const captureSize = 32

type captureParams struct {
	Display int    `json:"display"`
	Format  string `json:"format"`
	Path    string `json:"path"`
}

type captureResult struct {
	Path     string `json:"path"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	FileSize int    `json:"fileSize"`
	Format   string `json:"format"`
}

var captures atomic.Int64

// screenCapture writes a small real PNG, as the real server writes a
// screenshot, and returns its path: to params.path, else to a new file in
// Options.CaptureDir (default: the temporary directory).
func (s *Server) screenCapture(_ context.Context, params []byte) ([]byte, *rpcError) {
	var p captureParams
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.Format != "" && p.Format != "png" {
		return nil, invalidParams("the demo captures png only")
	}
	img := image.NewRGBA(image.Rect(0, 0, captureSize, captureSize))
	for y := range captureSize {
		for x := range captureSize {
			img.Set(x, y, color.RGBA{R: uint8(x * 8), G: uint8(y * 8), B: uint8(40 * p.Display), A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, &rpcError{Code: codeHandlerError, Message: err.Error()}
	}
	path := p.Path
	if path == "" {
		dir := s.opts.CaptureDir
		if dir == "" {
			dir = os.TempDir()
		}
		path = filepath.Join(dir, fmt.Sprintf("tairseach-demo-capture-%d-%d.png", os.Getpid(), captures.Add(1)))
	}
	if !filepath.IsAbs(path) {
		return nil, invalidParams("path must be absolute")
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		return nil, &rpcError{Code: codeHandlerError, Message: "writing the capture: " + err.Error()}
	}
	return marshalResult(captureResult{Path: path, Width: captureSize, Height: captureSize, FileSize: buf.Len(), Format: "png"})
}
