package media

import (
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"io"
	"slices"
)

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// pngHeader is what IHDR says.
type pngHeader struct {
	width, height uint32
	depth, colour byte
	interlaced    bool
}

// pngDepths are the bit depths PNG allows for each colour type, and
// pngChannels the samples a pixel of that type has.
var (
	pngDepths   = map[byte][]byte{0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}
	pngChannels = map[byte]uint64{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
)

// checkPNG checks a PNG as a decoder reads it, in two passes over the
// data. The first walks the chunks: the signature, IHDR first and valid
// as the PNG specification has it, every checksum, no critical chunk a
// decoder does not know, PLTE where the colour type needs or allows it and
// of a length it allows, tRNS likewise (image/png refuses a wrong one),
// the IDAT chunks one run, and IEND last with
// nothing after it. Then, the dimensions known to be within bounds, the
// second inflates the image data as it streams from the IDAT chunks
// (compress/zlib, which checks the Adler-32) and counts it: it must be the
// exact size the header implies, every scanline starting with a filter
// type of 0 to 4, and the zlib stream must end where the IDAT data ends.
// It holds no more than zlib's window: no row, no picture.
func checkPNG(data []byte) (image.Config, error) {
	var (
		cfg     image.Config
		h       pngHeader
		palette int // entries, 0 none
		trns    bool
		idatAt  = -1
		idatEnd = -1
	)
	at := len(pngSignature)
	for first := true; ; first = false {
		rest := data[at:]
		if len(rest) < 12 {
			return cfg, errors.New("is cut short")
		}
		n := binary.BigEndian.Uint32(rest)
		if n > 1<<31-1 || uint64(n)+12 > uint64(len(rest)) {
			return cfg, errors.New("is cut short")
		}
		typ, body := string(rest[4:8]), rest[8:8+n]
		if crc32.ChecksumIEEE(rest[4:8+n]) != binary.BigEndian.Uint32(rest[8+n:]) {
			return cfg, fmt.Errorf("chunk %q has a wrong checksum", typ)
		}
		if !pngChunkName(rest[4:8]) {
			return cfg, fmt.Errorf("has a chunk named %q, which is no chunk name", typ)
		}
		if first != (typ == "IHDR") {
			if first {
				return cfg, errors.New("does not start with its header")
			}
			return cfg, errors.New("has a second header")
		}
		if idatAt >= 0 && idatEnd < 0 && typ != "IDAT" {
			idatEnd = at
		}
		switch typ {
		case "IHDR":
			var err error
			if h, err = pngIHDR(body); err != nil {
				return cfg, err
			}
			cfg.Width, cfg.Height = int(h.width), int(h.height)
		case "PLTE":
			switch {
			case palette > 0:
				return cfg, errors.New("has a second palette")
			case trns:
				return cfg, errors.New("has its palette after its transparency chunk")
			case idatAt >= 0:
				return cfg, errors.New("has its palette after its image data")
			case h.colour == 0 || h.colour == 4:
				return cfg, fmt.Errorf("has a palette, which colour type %d does not allow", h.colour)
			case n == 0 || n%3 != 0 || n > 3*256 || h.colour == 3 && n/3 > 1<<h.depth:
				return cfg, fmt.Errorf("has a palette of %d bytes, which is not 1 to %d colours of 3 bytes", n, min(256, 1<<h.depth))
			}
			palette = int(n / 3)
		case "tRNS": // ancillary, but image/png refuses one that is wrong
			switch {
			case trns:
				return cfg, errors.New("has a second transparency chunk")
			case idatAt >= 0:
				return cfg, errors.New("has its transparency chunk after its image data")
			case h.colour == 4 || h.colour == 6:
				return cfg, fmt.Errorf("has a transparency chunk, which colour type %d (with alpha) does not allow", h.colour)
			case h.colour == 3 && palette == 0:
				return cfg, errors.New("has its transparency chunk before its palette")
			case h.colour == 0 && n != 2 || h.colour == 2 && n != 6 || h.colour == 3 && int(n) > palette:
				return cfg, fmt.Errorf("has a transparency chunk of %d bytes, which colour type %d does not allow", n, h.colour)
			}
			trns = true
		case "IDAT":
			switch {
			case idatEnd >= 0:
				return cfg, errors.New("has its image data in more than one run of chunks")
			case h.colour == 3 && palette == 0:
				return cfg, errors.New("has image data before its palette (colour type 3 needs one)")
			case idatAt < 0:
				idatAt = at
			}
		case "IEND":
			switch {
			case idatAt < 0:
				return cfg, errors.New("has no image data")
			case n != 0:
				return cfg, errors.New("has an end chunk that is not empty")
			case len(rest) != 12:
				return cfg, errors.New("has bytes after its end")
			}
			if err := within(cfg); err != nil {
				return cfg, err
			}
			return cfg, inflatePNG(h, data[idatAt:idatEnd])
		default:
			if typ[0]&0x20 == 0 { // upper case: critical
				return cfg, fmt.Errorf("has a critical chunk %q that decoders do not know", typ)
			}
		}
		at += 12 + int(n)
	}
}

// pngChunkName reports whether a chunk type is four ASCII letters.
func pngChunkName(b []byte) bool {
	for _, c := range b {
		if c|0x20 < 'a' || c|0x20 > 'z' {
			return false
		}
	}
	return true
}

// pngIHDR reads an IHDR chunk's 13 bytes and checks every field.
func pngIHDR(b []byte) (pngHeader, error) {
	if len(b) != 13 {
		return pngHeader{}, fmt.Errorf("has a header of %d bytes, not 13", len(b))
	}
	h := pngHeader{width: binary.BigEndian.Uint32(b), height: binary.BigEndian.Uint32(b[4:]), depth: b[8], colour: b[9]}
	depths, ok := pngDepths[h.colour]
	// Its width and height are left to within: 0, or over 2³¹-1, is
	// outside the bounds.
	switch {
	case !ok:
		return h, fmt.Errorf("has colour type %d, which PNG does not have", h.colour)
	case !slices.Contains(depths, h.depth):
		return h, fmt.Errorf("has bit depth %d, which colour type %d does not allow", h.depth, h.colour)
	case b[10] != 0:
		return h, fmt.Errorf("has compression method %d, which PNG does not have", b[10])
	case b[11] != 0:
		return h, fmt.Errorf("has filter method %d, which PNG does not have", b[11])
	case b[12] > 1:
		return h, fmt.Errorf("has interlace method %d, which PNG does not have", b[12])
	}
	h.interlaced = b[12] == 1
	return h, nil
}

// adam7 is where each of the seven passes of an interlaced PNG starts and
// how far it steps: x, y, dx, dy.
var adam7 = [7][4]uint64{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}

// scanlines counts a PNG's inflated image data against what its header
// implies: passes of rows, each row a filter type byte and its pixels.
type scanlines struct {
	h      pngHeader
	pass   int    // the next pass to begin
	rows   uint64 // rows of the current pass not yet begun
	rowLen uint64 // bytes of a row of the current pass, its filter type included
	left   uint64 // bytes of the current row not yet read
}

// passes is how many passes the picture is stored in.
func (s *scanlines) passes() int {
	if s.h.interlaced {
		return len(adam7)
	}
	return 1
}

// passSize is the width and height of pass p (of the picture, when it is
// not interlaced).
func (s *scanlines) passSize(p int) (w, h uint64) {
	if !s.h.interlaced {
		return uint64(s.h.width), uint64(s.h.height)
	}
	a := adam7[p]
	if uint64(s.h.width) > a[0] {
		w = (uint64(s.h.width) - a[0] + a[2] - 1) / a[2]
	}
	if uint64(s.h.height) > a[1] {
		h = (uint64(s.h.height) - a[1] + a[3] - 1) / a[3]
	}
	return w, h
}

// nextRow begins the next row, of this pass or a later one; false when
// there is none. A pass with no pixels has no rows, not even filter types.
func (s *scanlines) nextRow() bool {
	for s.rows == 0 {
		if s.pass == s.passes() {
			return false
		}
		w, h := s.passSize(s.pass)
		s.pass++
		if w > 0 && h > 0 {
			s.rows, s.rowLen = h, 1+(w*pngChannels[s.h.colour]*uint64(s.h.depth)+7)/8
		}
	}
	s.rows--
	s.left = s.rowLen
	return true
}

var errPNGTooMuch = errors.New("has more image data than its header says")

// Write takes the inflated bytes in order.
func (s *scanlines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if s.left == 0 {
			if !s.nextRow() {
				return 0, errPNGTooMuch
			}
			if p[0] > 4 {
				return 0, fmt.Errorf("has a scanline of filter type %d, which PNG does not have", p[0])
			}
		}
		k := min(uint64(len(p)), s.left)
		p, s.left = p[k:], s.left-k
	}
	return n, nil
}

// done reports whether every row of every pass has been read whole.
func (s *scanlines) done() bool {
	if s.left != 0 || s.rows != 0 {
		return false
	}
	for p := s.pass; p < s.passes(); p++ {
		if w, h := s.passSize(p); w > 0 && h > 0 {
			return false
		}
	}
	return true
}

// idatReader reads the data of a run of IDAT chunks (their CRCs already
// checked) as one stream. It is a flate.Reader, so zlib reads no further
// than the stream's end and what follows is seen.
type idatReader struct {
	chunks []byte // the chunks not yet begun
	body   []byte // what is left of the current chunk's data
}

func (r *idatReader) fill() bool {
	for len(r.body) == 0 {
		if len(r.chunks) < 12 {
			return false
		}
		n := binary.BigEndian.Uint32(r.chunks)
		r.body, r.chunks = r.chunks[8:8+n], r.chunks[12+n:]
	}
	return true
}

func (r *idatReader) Read(p []byte) (int, error) {
	if !r.fill() {
		return 0, io.EOF
	}
	n := copy(p, r.body)
	r.body = r.body[n:]
	return n, nil
}

func (r *idatReader) ReadByte() (byte, error) {
	if !r.fill() {
		return 0, io.EOF
	}
	c := r.body[0]
	r.body = r.body[1:]
	return c, nil
}

// inflatePNG inflates the image data of the IDAT chunks idat.
func inflatePNG(h pngHeader, idat []byte) error {
	src := &idatReader{chunks: idat}
	peek := *src
	cmf, _ := peek.ReadByte()
	if flg, err := peek.ReadByte(); err == nil && cmf&0x0F == 8 && flg&0x20 != 0 {
		return errors.New("has image data that is not zlib data as PNG has it (it needs a preset dictionary)")
	}
	zr, err := zlib.NewReader(src)
	if err != nil {
		return fmt.Errorf("has image data that is not zlib data (%v)", err)
	}
	defer zr.Close()
	lines := &scanlines{h: h}
	var buf [4096]byte
	for {
		n, err := zr.Read(buf[:])
		if _, werr := lines.Write(buf[:n]); werr != nil {
			return werr
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("has image data that does not inflate (%v)", err)
		}
	}
	switch {
	case !lines.done():
		return errors.New("has less image data than its header says")
	case src.fill():
		return errors.New("has bytes after its compressed image data")
	}
	return nil
}
