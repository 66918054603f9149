package media

import (
	"bytes"
	"fmt"
	"image"
	"io"
	"sync"
)

// MaxDecodeBytes bounds the memory of a check that must hold the picture:
// a JPEG's entropy-coded data and a WebP's VP8 and VP8L data can be checked
// only by decoding them, and image/jpeg and golang.org/x/image/webp decode
// a whole picture at once. (A PNG and a GIF are decoded as they stream, in
// a window.)
const MaxDecodeBytes = 128 << 20

// decoding lets one picture be decoded whole at a time, so that
// MaxDecodeBytes bounds the process, not each call.
var decoding sync.Mutex

// decodeWhole decodes data with decode if that takes at most
// MaxDecodeBytes (cost, measured for the decoder); what names the kind of
// picture in the sentence when it would take more.
func decodeWhole(data []byte, cfg image.Config, what string, cost float64, decode func(io.Reader) (image.Image, error)) error {
	if cost > MaxDecodeBytes {
		return asIs{fmt.Errorf("is a %s of %d × %d pixels, and checking it means decoding it whole, which would take about %d MiB, over the %d MiB a check may", what, cfg.Width, cfg.Height, int64(cost)>>20, MaxDecodeBytes>>20)}
	}
	decoding.Lock()
	defer decoding.Unlock()
	_, err := decode(bytes.NewReader(data))
	return err
}
