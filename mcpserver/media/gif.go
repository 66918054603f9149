package media

import (
	"bytes"
	"compress/lzw"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"io"
)

// checkGIF reads a GIF as image/gif decodes it, without holding a frame:
// the header by image/gif itself; then each block, every extension known
// and whole, every frame within the screen and with a colour table; the
// first frame, the one image/gif decodes and a still picture shows,
// decompressed as it streams from its sub-blocks (compress/lzw, as
// image/gif) to exactly its width × height pixels, each within its colour
// table (or the transparent index); the frames after it walked block by
// block; and the trailer at the end. It holds the LZW table and 4 KiB.
func checkGIF(data []byte) (image.Config, error) {
	cfg, err := gif.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return cfg, err
	}
	if err := within(cfg); err != nil {
		return cfg, err
	}
	at, global := 13, 0
	if f := data[10]; f&0x80 != 0 {
		global = 1 << (1 + f&7)
		at += 3 * global // there, as DecodeConfig read it
	}
	frames, transparent := 0, -1
	for {
		if at >= len(data) {
			return cfg, errors.New("is cut short (it has no trailer)")
		}
		block := data[at]
		at++
		switch block {
		case 0x21: // an extension
			if at >= len(data) {
				return cfg, errors.New("is cut short in an extension")
			}
			label := data[at]
			at++
			switch label {
			case 0xF9: // graphic control: one block of 4 bytes
				if at+6 > len(data) || data[at] != 4 || data[at+5] != 0 {
					return cfg, errors.New("has a graphic control extension that is not 4 bytes in one block")
				}
				if data[at+1]&1 != 0 {
					transparent = int(data[at+4])
				}
				at += 6
				continue
			case 0x01, 0xFE, 0xFF: // plain text, comment, application
			default:
				return cfg, fmt.Errorf("has an extension (0x%02X) GIF does not have", label)
			}
			if at, err = gifSkipBlocks(data, at); err != nil {
				return cfg, err
			}
		case 0x2C: // an image descriptor
			if at+9 > len(data) {
				return cfg, errors.New("is cut short in an image descriptor")
			}
			left, top := int(binary.LittleEndian.Uint16(data[at:])), int(binary.LittleEndian.Uint16(data[at+2:]))
			w, h := int(binary.LittleEndian.Uint16(data[at+4:])), int(binary.LittleEndian.Uint16(data[at+6:]))
			f := data[at+8]
			at += 9
			if left+w > cfg.Width || top+h > cfg.Height {
				return cfg, fmt.Errorf("has a frame (%d × %d at %d, %d) outside its screen", w, h, left, top)
			}
			colours := global
			if f&0x80 != 0 {
				colours = 1 << (1 + f&7)
				at += 3 * colours
			}
			if colours == 0 {
				return cfg, errors.New("has a frame with no colour table")
			}
			if at >= len(data) {
				return cfg, errors.New("is cut short in a frame")
			}
			lit := int(data[at])
			at++
			if lit < 2 || lit > 8 {
				return cfg, fmt.Errorf("has a frame of LZW code size %d, not 2 to 8", lit)
			}
			if frames == 0 {
				if transparent >= colours {
					colours = transparent + 1 // as image/gif, Firefox and Chrome take it
				}
				at, err = gifFrame(data, at, lit, w*h, colours)
			} else {
				at, err = gifSkipBlocks(data, at)
			}
			if err != nil {
				return cfg, err
			}
			frames, transparent = frames+1, -1
		case 0x3B: // the trailer
			switch {
			case frames == 0:
				return cfg, errors.New("has no frame")
			case data[len(data)-1] != 0x3B:
				return cfg, errors.New("does not end with its trailer")
			}
			return cfg, nil
		default:
			return cfg, fmt.Errorf("has a block (0x%02X) GIF does not have", block)
		}
	}
}

// gifSkipBlocks walks the data sub-blocks at data[at:] to their
// terminator and returns where they end.
func gifSkipBlocks(data []byte, at int) (int, error) {
	for {
		if at >= len(data) {
			return at, errors.New("is cut short in its data blocks")
		}
		n := int(data[at])
		at += 1 + n
		if n == 0 {
			return at, nil
		}
	}
}

// gifFrame decompresses the frame data at data[at:] to exactly pixels
// bytes, each below colours (when that is under 256), and returns where
// its sub-blocks end.
func gifFrame(data []byte, at, lit, pixels, colours int) (int, error) {
	blocks := &gifBlocks{data: data, at: at}
	lr := lzw.NewReader(blocks, lzw.LSB, lit)
	defer lr.Close()
	var buf [4096]byte
	for got := 0; got < pixels; {
		n, err := lr.Read(buf[:min(len(buf), pixels-got)])
		if colours < 256 {
			for _, c := range buf[:n] {
				if int(c) >= colours {
					return at, fmt.Errorf("has a pixel of colour %d, outside its colour table of %d", c, colours)
				}
			}
		}
		got += n
		switch {
		case got == pixels:
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return at, fmt.Errorf("has a frame of %d pixels short of its size", pixels-got)
		case err != nil:
			return at, fmt.Errorf("has frame data that does not decompress (%v)", err)
		}
	}
	// giflib ends a frame without the end code, and image/gif takes that.
	if n, err := lr.Read(buf[:1]); n != 0 || err != io.EOF && err != io.ErrUnexpectedEOF {
		if err != nil {
			return at, fmt.Errorf("has frame data that does not decompress (%v)", err)
		}
		return at, errors.New("has a frame of more pixels than its size")
	}
	if err := blocks.close(); err != nil {
		return at, err
	}
	return blocks.at, nil
}

// gifBlocks reads a frame's data sub-blocks as one stream, for compress/lzw.
type gifBlocks struct {
	data []byte
	at   int    // the next sub-block's size byte
	cur  []byte // what is left of the current sub-block
	err  error  // io.EOF at the terminator
}

func (b *gifBlocks) fill() {
	if b.err != nil {
		return
	}
	if b.at >= len(b.data) {
		b.err = io.ErrUnexpectedEOF
		return
	}
	n := int(b.data[b.at])
	if b.at+1+n > len(b.data) {
		b.err = io.ErrUnexpectedEOF
		return
	}
	b.cur, b.at = b.data[b.at+1:b.at+1+n], b.at+1+n
	if n == 0 {
		b.err = io.EOF
	}
}

func (b *gifBlocks) ReadByte() (byte, error) {
	if len(b.cur) == 0 {
		if b.fill(); b.err != nil {
			return 0, b.err
		}
	}
	c := b.cur[0]
	b.cur = b.cur[1:]
	return c, nil
}

func (b *gifBlocks) Read(p []byte) (int, error) {
	if len(b.cur) == 0 {
		if b.fill(); b.err != nil {
			return 0, b.err
		}
	}
	n := copy(p, b.cur)
	b.cur = b.cur[n:]
	return n, nil
}

// close reads to the terminator after the LZW data, taking what image/gif
// takes (golang.org/issue/16146): at most one more sub-block, of one byte,
// or the rest of the current one.
func (b *gifBlocks) close() error {
	errMore := errors.New("has more frame data than its pixels")
	if b.err == nil && len(b.cur) == 0 {
		b.fill()
		if b.err == nil && len(b.cur) > 1 {
			return errMore
		}
	}
	if b.err == nil {
		b.fill()
		if b.err == nil {
			return errMore
		}
	}
	if b.err != io.EOF {
		return errors.New("is cut short in its frame data")
	}
	return nil
}
