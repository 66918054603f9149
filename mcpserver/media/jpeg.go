package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
)

// jpegFrame is what the frame header (SOFn) says, as far as the scans
// need it.
type jpegFrame struct {
	progressive bool
	ids         []byte // component identifiers
	h, v, tq    []byte // sampling factors and quantisation table of each
}

// checkJPEG checks a JPEG in two steps. The first walks its markers from
// SOI to EOI as libjpeg reads them, holding nothing, and refuses what
// libjpeg refuses: a frame of a coding the clients' decoders do not all
// take (only baseline, extended and progressive Huffman coding are), a
// second frame, a Huffman table that is over-subscribed or uses the
// all-ones code, a quantisation or Huffman table a scan uses and nothing
// defined (libjpeg-turbo supplies the standard Huffman tables; image/jpeg
// does not), a scan before the frame or of a component it does not have,
// progression parameters out of range, an MCU of over 10 blocks, a marker
// it does not know, a segment that runs past the data, no scan at all;
// and each scan's entropy-coded data to the marker that ends it. Then,
// the frame known to be within bounds, image/jpeg decodes it whole, within
// MaxDecodeBytes: a scan cut short or a bad Huffman code, which libjpeg
// repairs with a warning, is refused by image/jpeg and may be by a
// client's decoder.
func checkJPEG(data []byte) (image.Config, error) {
	var (
		cfg   image.Config
		err   error
		frame *jpegFrame
		quant [4]bool
		huff  [2][4]bool // [DC, AC][table]
		scans int
	)
	at := 2 // after SOI
	for {
		// Bytes before a marker other than fill bytes (0xFF) are
		// extraneous: libjpeg warns and skips them, as image/jpeg does.
		for at+1 < len(data) && (data[at] != 0xFF || data[at+1] == 0x00 || data[at+1] == 0xFF) {
			at++
		}
		if at+1 >= len(data) {
			return cfg, errors.New("is cut short (it has no end of image marker)")
		}
		marker := data[at+1]
		at += 2
		switch {
		case marker == 0xD9: // EOI
			if frame == nil {
				return cfg, errors.New("has no frame header")
			}
			if scans == 0 {
				return cfg, errors.New("has no scan: no image data")
			}
			if !bytes.HasSuffix(data, []byte{0xFF, 0xD9}) {
				return cfg, errors.New("does not end with its end of image marker")
			}
			return cfg, decodeWhole(data, cfg, frame.kind(), frame.cost(cfg), jpeg.Decode)
		case marker >= 0xD0 && marker <= 0xD7 || marker == 0x01: // RSTn, TEM: no segment
			continue
		case marker == 0xD8:
			return cfg, errors.New("has a second start of image marker")
		}
		if at+2 > len(data) {
			return cfg, errors.New("is cut short in a marker segment, before its end of image marker")
		}
		n := int(binary.BigEndian.Uint16(data[at:]))
		if n < 2 || at+n > len(data) {
			return cfg, fmt.Errorf("is cut short in a marker segment (0xFF%02X), before its end of image marker", marker)
		}
		seg := data[at+2 : at+n]
		at += n
		switch {
		case marker == 0xC0 || marker == 0xC1 || marker == 0xC2: // SOF0-2
			if frame != nil {
				return cfg, errors.New("has a second frame header")
			}
			if frame, err = jpegSOF(seg, marker == 0xC2); err != nil {
				return cfg, err
			}
			cfg.Width, cfg.Height = int(binary.BigEndian.Uint16(seg[3:])), int(binary.BigEndian.Uint16(seg[1:]))
			if err := within(cfg); err != nil {
				return cfg, err
			}
		case marker >= 0xC3 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
			return cfg, fmt.Errorf("uses a coding (SOF%d: lossless, hierarchical or arithmetic) the clients' decoders do not all take", marker-0xC0)
		case marker == 0xC4: // DHT
			if err := jpegDHT(seg, &huff); err != nil {
				return cfg, err
			}
		case marker == 0xDB: // DQT
			if err := jpegDQT(seg, &quant); err != nil {
				return cfg, err
			}
		case marker == 0xDD: // DRI
			if len(seg) != 2 {
				return cfg, errors.New("has a restart interval segment of the wrong length")
			}
		case marker == 0xDA: // SOS
			if frame == nil {
				return cfg, errors.New("has a scan before its frame header")
			}
			if err := jpegSOS(seg, frame, &quant, &huff); err != nil {
				return cfg, err
			}
			scans++
			// The entropy-coded data: up to a marker that is not a
			// stuffed 0xFF (0xFF00) or a restart marker.
			for {
				i := bytes.IndexByte(data[at:], 0xFF)
				if i < 0 || at+i+1 >= len(data) {
					return cfg, errors.New("is cut short in its scan (it has no end of image marker)")
				}
				at += i
				if m := data[at+1]; m == 0x00 || m >= 0xD0 && m <= 0xD7 {
					at += 2
					continue
				} else if m == 0xFF {
					at++
					continue
				}
				break
			}
		case marker >= 0xE0 && marker <= 0xEF || marker == 0xFE: // APPn, COM
		default: // DNL, DHP, EXP, JPGn, DAC, reserved
			return cfg, fmt.Errorf("has a marker (0xFF%02X) the clients' decoders do not take", marker)
		}
	}
}

// kind names the frame's coding, for a sentence.
func (f *jpegFrame) kind() string {
	if f.progressive {
		return "progressive JPEG"
	}
	return "JPEG"
}

// cost is the memory image/jpeg takes to decode the frame (measured): a
// byte for each sample, chroma subsampled as the frame has it; a
// progressive frame keeps four more for each, its coefficients; four
// components (CMYK) are converted at four bytes a pixel.
func (f *jpegFrame) cost(cfg image.Config) float64 {
	var hmax, vmax, samples float64 = 1, 1, 0
	for i := range f.h {
		hmax, vmax = max(hmax, float64(f.h[i])), max(vmax, float64(f.v[i]))
	}
	for i := range f.h {
		samples += float64(f.h[i]) * float64(f.v[i]) / (hmax * vmax)
	}
	perPixel := samples
	if f.progressive {
		perPixel += 4 * samples
	}
	if len(f.h) == 4 {
		perPixel += 4
	}
	return float64(cfg.Width) * float64(cfg.Height) * perPixel
}

// jpegSOF reads a frame header.
func jpegSOF(seg []byte, progressive bool) (*jpegFrame, error) {
	if len(seg) < 6 || len(seg) != 6+3*int(seg[5]) {
		return nil, errors.New("has a frame header of the wrong length")
	}
	f := &jpegFrame{progressive: progressive}
	switch {
	case seg[0] != 8:
		return nil, fmt.Errorf("has samples of %d bits, not 8", seg[0])
	case binary.BigEndian.Uint16(seg[1:]) == 0 || binary.BigEndian.Uint16(seg[3:]) == 0:
		return nil, errors.New("has a frame with no rows or no columns")
	case seg[5] != 1 && seg[5] != 3 && seg[5] != 4:
		return nil, fmt.Errorf("has %d components, not 1, 3 or 4", seg[5])
	}
	for c := seg[6:]; len(c) > 0; c = c[3:] {
		if bytes.IndexByte(f.ids, c[0]) >= 0 {
			return nil, fmt.Errorf("has component %d twice", c[0])
		}
		h, v := c[1]>>4, c[1]&15
		if h < 1 || h > 4 || v < 1 || v > 4 {
			return nil, fmt.Errorf("has sampling factors %d×%d, not 1 to 4", h, v)
		}
		if c[2] > 3 {
			return nil, fmt.Errorf("has quantisation table %d, not 0 to 3", c[2])
		}
		f.ids, f.h, f.v, f.tq = append(f.ids, c[0]), append(f.h, h), append(f.v, v), append(f.tq, c[2])
	}
	return f, nil
}

// jpegDHT reads a DHT segment's tables, checking each as libjpeg builds
// it (jdhuff.c, jpeg_make_d_derived_tbl).
func jpegDHT(seg []byte, defined *[2][4]bool) error {
	for len(seg) > 0 {
		if len(seg) < 17 {
			return errors.New("has a Huffman table segment of the wrong length")
		}
		class, id := seg[0]>>4, seg[0]&15
		if class > 1 || id > 3 {
			return fmt.Errorf("has a Huffman table of class %d, number %d", class, id)
		}
		counts, total := seg[1:17], 0
		code := 0
		for l, n := range counts {
			total += int(n)
			code += int(n)
			// Every code of length l+1 must fit in l+1 bits, and none
			// may be all ones.
			if code >= 1<<(l+1) {
				return errors.New("has a Huffman table with more codes than its code lengths hold")
			}
			code <<= 1
		}
		if total == 0 || total > 256 || len(seg) < 17+total {
			return errors.New("has a Huffman table of the wrong length")
		}
		if class == 0 {
			for _, s := range seg[17 : 17+total] {
				if s > 15 {
					return fmt.Errorf("has a DC Huffman table with symbol %d, over 15", s)
				}
			}
		}
		defined[class][id] = true
		seg = seg[17+total:]
	}
	return nil
}

// jpegDQT reads a DQT segment's tables.
func jpegDQT(seg []byte, defined *[4]bool) error {
	for len(seg) > 0 {
		precision, id := seg[0]>>4, seg[0]&15
		size := 1 + 64*(1+int(precision))
		if precision > 1 || id > 3 || len(seg) < size {
			return errors.New("has a quantisation table segment that is not a table")
		}
		defined[id] = true
		seg = seg[size:]
	}
	return nil
}

// jpegSOS reads a scan header: its components, their tables (which must
// be defined by now) and its progression.
func jpegSOS(seg []byte, f *jpegFrame, quant *[4]bool, huff *[2][4]bool) error {
	if len(seg) < 1 || seg[0] < 1 || seg[0] > 4 || len(seg) != 4+2*int(seg[0]) {
		return errors.New("has a scan header of the wrong length")
	}
	ns := int(seg[0])
	ss, se, ah, al := seg[1+2*ns], seg[2+2*ns], seg[3+2*ns]>>4, seg[3+2*ns]&15
	if f.progressive {
		bad := ss > se || se > 63 || al > 13 || ah != 0 && al != ah-1
		if ss == 0 {
			bad = bad || se != 0
		} else {
			bad = bad || ns != 1
		}
		if bad {
			return fmt.Errorf("has a scan with progression parameters Ss=%d Se=%d Ah=%d Al=%d, which JPEG does not allow", ss, se, ah, al)
		}
	}
	blocks, seen := 0, make([]bool, len(f.ids))
	for c := seg[1 : 1+2*ns]; len(c) > 0; c = c[2:] {
		k := bytes.IndexByte(f.ids, c[0])
		if k < 0 || seen[k] {
			return fmt.Errorf("has a scan of component %d, which its frame does not have or the scan names twice", c[0])
		}
		seen[k] = true
		blocks += int(f.h[k]) * int(f.v[k])
		if !quant[f.tq[k]] {
			return fmt.Errorf("has a scan of component %d, whose quantisation table %d is not defined", c[0], f.tq[k])
		}
		td, ta := c[1]>>4, c[1]&15
		if td > 3 || ta > 3 {
			return fmt.Errorf("has a scan that names Huffman tables %d and %d, not 0 to 3", td, ta)
		}
		needDC := !f.progressive || ss == 0 && ah == 0
		needAC := !f.progressive || ss > 0
		if needDC && !huff[0][td] || needAC && !huff[1][ta] {
			return fmt.Errorf("has a scan of component %d, whose Huffman table is not defined", c[0])
		}
	}
	if ns > 1 && blocks > 10 {
		return fmt.Errorf("has a scan whose MCU is %d blocks, over 10", blocks)
	}
	return nil
}
