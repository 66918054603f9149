package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"

	"golang.org/x/image/webp"
)

// checkWebP checks a WebP: its RIFF size and every chunk within it, as the
// container has them; its header (golang.org/x/image/webp); that it is not
// animated (its frames are not decoded); then decodes it whole, as libwebp
// does before a client gets a pixel: a VP8 partition cut short, a VP8L
// code that does not decode, is refused there. Decoding costs 1.5 bytes a
// pixel lossy and about 4.5 lossless or with alpha (measured), so a
// picture that would take over MaxDecodeBytes is left out unchecked.
func checkWebP(data []byte) (image.Config, error) {
	var cfg image.Config
	if size := binary.LittleEndian.Uint32(data[4:8]); uint64(size)+8 != uint64(len(data)) {
		return cfg, fmt.Errorf("says it has %d bytes but has %d", uint64(size)+8, len(data))
	}
	var lossless, animated bool
	for rest := data[12:]; len(rest) > 0; {
		if len(rest) < 8 {
			return cfg, errors.New("is cut short in a chunk header")
		}
		id, n := string(rest[:4]), uint64(binary.LittleEndian.Uint32(rest[4:]))
		if 8+n+n&1 > uint64(len(rest)) {
			return cfg, fmt.Errorf("has a chunk %q that runs past its end", id)
		}
		switch id {
		case "VP8L", "ALPH":
			lossless = true
		case "VP8X":
			animated = n >= 1 && rest[8]&2 != 0
		}
		rest = rest[8+n+n&1:]
	}
	cfg, err := webp.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return cfg, err
	}
	if err := within(cfg); err != nil {
		return cfg, err
	}
	if animated {
		return cfg, asIs{errors.New("is an animated WebP, whose frames are not checked")}
	}
	perPixel, what := 1.5, "lossy WebP"
	if lossless {
		perPixel, what = 4.5, "lossless or transparent WebP"
	}
	return cfg, decodeWhole(data, cfg, what, float64(cfg.Width)*float64(cfg.Height)*perPixel, webp.Decode)
}
