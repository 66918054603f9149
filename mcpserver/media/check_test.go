package media_test

import (
	"bytes"
	"compress/lzw"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	_ "golang.org/x/image/webp" // for image.Decode

	"github.com/geilt/tairseach-mcp/mcpserver/media"
)

// The pictures these tests make are built from their parts, so that each
// is wrong in one way only: every checksum right, every length consistent.

// ihdr is the body of an IHDR chunk.
func ihdr(w, h uint32, depth, colour, interlace byte) []byte {
	b := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, w), h)
	return append(b, depth, colour, 0, 0, interlace)
}

// pngOf is a PNG of the signature, an IHDR of hdr, the chunks and IEND.
func pngOf(hdr []byte, chunks ...[]byte) []byte {
	b := append([]byte("\x89PNG\r\n\x1a\n"), chunk("IHDR", hdr)...)
	for _, c := range chunks {
		b = append(b, c...)
	}
	return append(b, chunk("IEND", nil)...)
}

// zlibOf compresses raw as a PNG's image data is compressed.
func zlibOf(raw []byte) []byte {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write(raw)
	w.Close()
	return b.Bytes()
}

// rows is the image data of h rows of n bytes, each of filter type 0.
func rows(h, n int) []byte {
	b := make([]byte, 0, h*(n+1))
	for range h {
		b = append(b, 0)
		b = append(b, make([]byte, n)...)
	}
	return b
}

// idat is one IDAT chunk of raw, compressed.
func idat(raw []byte) []byte { return chunk("IDAT", zlibOf(raw)) }

// testdata reads a file of testdata/, made by cjpeg and cwebp (see
// testdata/README).
func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jpegOf is a baseline JPEG of 16 × 16 pixels of a pattern, as image/jpeg
// writes it (SOI, DQT, SOF0, DHT, SOS, EOI) with a JFIF segment after SOI,
// as most have.
func jpegOf(t testing.TB) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 37)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return with(b.Bytes(), 2, 0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0)
}

// segment finds the first marker segment m of a JPEG: where it starts and
// where it ends.
func segment(t testing.TB, data []byte, m byte) (int, int) {
	t.Helper()
	i := bytes.Index(data, []byte{0xFF, m})
	if i < 0 {
		t.Fatalf("no marker 0xFF%02X", m)
	}
	return i, i + 2 + int(binary.BigEndian.Uint16(data[i+2:]))
}

// without is data without data[i:j].
func without(data []byte, i, j int) []byte {
	return append(bytes.Clone(data[:i]), data[j:]...)
}

// with is data with b put in at i.
func with(data []byte, i int, b ...byte) []byte {
	return append(append(bytes.Clone(data[:i]), b...), data[i:]...)
}

// set is data with the bytes at i set to b.
func set(data []byte, i int, b ...byte) []byte {
	d := bytes.Clone(data)
	copy(d[i:], b)
	return d
}

// gifOf is a GIF of one frame of w × h pixels of colour 1, in a screen of
// sw × sh with a global colour table of 4 colours, as image/gif writes it.
func gifOf(t testing.TB) []byte {
	img := image.NewPaletted(image.Rect(0, 0, 8, 8), color.Palette{color.Black, color.White, color.Gray{128}, color.Gray{64}})
	for i := range img.Pix {
		img.Pix[i] = byte(i % 4)
	}
	var b bytes.Buffer
	if err := gif.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// gifFrame is where a GIF's first frame descriptor is, after its 13-byte
// header and global colour table of 4 colours, as gifOf makes it.
const gifFrame = 13 + 3*4

// gifWithData is gifOf's GIF with its first frame's LZW data replaced:
// lzw is the code size byte and the sub-blocks with their terminator.
func gifWithData(t testing.TB, lzw ...byte) []byte {
	g := gifOf(t)
	at := gifFrame + 10 // the descriptor; no local colour table
	return append(append(bytes.Clone(g[:at]), lzw...), 0x3B)
}

// lzwOf is pixels compressed as a GIF frame's data is, in sub-blocks
// ending with the terminator.
func lzwOf(lit int, pixels []byte) []byte {
	var z bytes.Buffer
	w := lzw.NewWriter(&z, lzw.LSB, lit)
	w.Write(pixels)
	w.Close()
	var b []byte
	for d := z.Bytes(); len(d) > 0; {
		n := min(len(d), 255)
		b = append(append(b, byte(n)), d[:n]...)
		d = d[n:]
	}
	return append(b, 0)
}

// riff is a RIFF WEBP file of the chunks given (id and body).
func riff(chunks ...any) []byte {
	b := []byte("RIFF\x00\x00\x00\x00WEBP")
	for i := 0; i < len(chunks); i += 2 {
		body := chunks[i+1].([]byte)
		b = append(b, chunks[i].(string)...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(body)))
		b = append(b, body...)
		if len(body)%2 == 1 {
			b = append(b, 0)
		}
	}
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
	return b
}

// webpChunk is the body of the first chunk id of a WebP file.
func webpChunk(t testing.TB, data []byte, id string) []byte {
	t.Helper()
	for rest := data[12:]; len(rest) >= 8; {
		n := int(binary.LittleEndian.Uint32(rest[4:]))
		if string(rest[:4]) == id {
			return rest[8 : 8+n]
		}
		rest = rest[8+n+n%2:]
	}
	t.Fatalf("no %s chunk", id)
	return nil
}

// TestCheckTakesWhatDecodersTake: pictures of every format, and of every
// kind within one, that decoders take are attached: the check refuses no
// more than what it must. Each is decoded by the standard decoder too.
func TestCheckTakesWhatDecodersTake(t *testing.T) {
	encoded := func(img image.Image) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	var anim bytes.Buffer
	frame := image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Black, color.White})
	gif.EncodeAll(&anim, &gif.GIF{Image: []*image.Paletted{frame, frame, frame}, Delay: []int{1, 1, 1}})
	var grey bytes.Buffer
	jpeg.Encode(&grey, image.NewGray(image.Rect(0, 0, 17, 9)), nil)
	split := zlibOf(rows(4, 4))
	lossless, _ := base64.StdEncoding.DecodeString(webp1x1)
	tests := []struct {
		name string
		data []byte
		mime string
	}{
		{"png, rgba 8", encoded(image.NewRGBA(image.Rect(0, 0, 7, 5))), "image/png"},
		{"png, grey 16", encoded(image.NewGray16(image.Rect(0, 0, 7, 5))), "image/png"},
		{"png, palette", encoded(image.NewPaletted(image.Rect(0, 0, 7, 5), color.Palette{color.Black, color.White, color.Opaque})), "image/png"},
		{"png, grey 1 bit, 3 pixels a row", pngOf(ihdr(3, 2, 1, 0, 0), idat(rows(2, 1))), "image/png"},
		{"png, palette of 2 bits", pngOf(ihdr(5, 2, 2, 3, 0), chunk("PLTE", make([]byte, 12)), idat(rows(2, 2))), "image/png"},
		{"png, rgba 16", pngOf(ihdr(2, 2, 16, 6, 0), idat(rows(2, 16))), "image/png"},
		// Adam7 of 5 × 3: passes of 1×1, 1×1, none, 1×1, 3×1, 2×2, 5×1.
		{"png, interlaced 5 × 3", pngOf(ihdr(5, 3, 8, 0, 1), idat(bytes.Join([][]byte{rows(1, 1), rows(1, 1), rows(1, 1), rows(1, 3), rows(2, 2), rows(1, 5)}, nil))), "image/png"},
		{"png, interlaced 1 × 1", pngOf(ihdr(1, 1, 8, 2, 1), idat(rows(1, 3))), "image/png"},
		{"png, image data in three chunks, text before", pngOf(ihdr(4, 4, 8, 0, 0), chunk("tEXt", []byte("k\x00v")), chunk("IDAT", split[:3]), chunk("IDAT", split[3:5]), chunk("IDAT", split[5:])), "image/png"},
		{"png, palette with transparency", pngOf(ihdr(1, 1, 8, 3, 0), chunk("PLTE", make([]byte, 6)), chunk("tRNS", []byte{0}), idat(rows(1, 1))), "image/png"},
		{"png, rgb with a transparent colour", pngOf(ihdr(1, 1, 16, 2, 0), chunk("tRNS", make([]byte, 6)), idat(rows(1, 6))), "image/png"},
		{"png, every filter type", pngOf(ihdr(1, 5, 8, 0, 0), idat([]byte{0, 9, 1, 9, 2, 9, 3, 9, 4, 9})), "image/png"},
		{"jpeg, colour", jpegOf(t), "image/jpeg"},
		{"jpeg, grey", grey.Bytes(), "image/jpeg"},
		{"jpeg, progressive", testdata(t, "progressive.jpg"), "image/jpeg"},
		{"jpeg, restart markers", testdata(t, "restart.jpg"), "image/jpeg"},
		{"jpeg, a second picture after its end (MPF)", append(jpegOf(t), jpegOf(t)...), "image/jpeg"},
		{"gif", gifOf(t), "image/gif"},
		{"gif, animated", anim.Bytes(), "image/gif"},
		{"webp, lossless", lossless, "image/webp"},
		{"webp, lossy", testdata(t, "lossy.webp"), "image/webp"},
		{"webp, lossy with alpha", testdata(t, "alpha.webp"), "image/webp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := image.Decode(bytes.NewReader(tt.data)); err != nil {
				t.Fatalf("the standard decoder refuses it: %v", err)
			}
			if mime, err := media.Check(tt.data); mime != tt.mime {
				t.Fatalf("mime %q, want %q (%v)", mime, tt.mime, err)
			}
		})
	}
}

// TestCheckHeaderFields: the class "a header whose fields its format does
// not allow". A client's decoder refuses such a picture, and with it the
// whole request; it is left out with a sentence saying why.
func TestCheckHeaderFields(t *testing.T) {
	rgb := idat(rows(1, 3))
	j := jpegOf(t)
	dhtAt, dhtEnd := segment(t, j, 0xC4)
	dqtAt, dqtEnd := segment(t, j, 0xDB)
	sofAt, sofEnd := segment(t, j, 0xC0)
	sosAt, _ := segment(t, j, 0xDA)
	prog := testdata(t, "progressive.jpg")
	progSOS, progSOSEnd := segment(t, prog, 0xDA)
	g := gifOf(t)
	lossless, _ := base64.StdEncoding.DecodeString(webp1x1)
	vp8l := webpChunk(t, lossless, "VP8L")
	tests := []struct {
		name string
		data []byte
		why  string
	}{
		{"png of colour type 5", pngOf(ihdr(1, 1, 8, 5, 0), rgb), "colour type 5"},
		{"png, rgb at bit depth 3", pngOf(ihdr(1, 1, 3, 2, 0), rgb), "bit depth 3"},
		{"png, grey at bit depth 3", pngOf(ihdr(1, 1, 3, 0, 0), rgb), "bit depth 3"},
		{"png, palette at bit depth 16", pngOf(ihdr(1, 1, 16, 3, 0), chunk("PLTE", make([]byte, 3)), rgb), "bit depth 16"},
		{"png, grey and alpha at bit depth 4", pngOf(ihdr(1, 1, 4, 4, 0), rgb), "bit depth 4"},
		{"png, compression method 1", pngOf(set(ihdr(1, 1, 8, 2, 0), 10, 1), rgb), "compression method 1"},
		{"png, filter method 1", pngOf(set(ihdr(1, 1, 8, 2, 0), 11, 1), rgb), "filter method 1"},
		{"png, interlace method 2", pngOf(ihdr(1, 1, 8, 2, 2), rgb), "interlace method 2"},
		{"png, palette image with no palette", pngOf(ihdr(1, 1, 8, 3, 0), idat(rows(1, 1))), "palette"},
		{"png, palette not of 3-byte colours", pngOf(ihdr(1, 1, 8, 3, 0), chunk("PLTE", make([]byte, 4)), idat(rows(1, 1))), "palette of 4 bytes"},
		{"png, palette of 5 colours at bit depth 2", pngOf(ihdr(1, 1, 2, 3, 0), chunk("PLTE", make([]byte, 15)), idat(rows(1, 1))), "palette of 15 bytes"},
		{"png, palette in a grey image", pngOf(ihdr(1, 1, 8, 0, 0), chunk("PLTE", make([]byte, 3)), idat(rows(1, 1))), "colour type 0 does not allow"},
		{"png, palette after the image data", pngOf(ihdr(1, 1, 8, 2, 0), rgb, chunk("PLTE", make([]byte, 3))), "palette after"},
		{"png, two palettes", pngOf(ihdr(1, 1, 8, 2, 0), chunk("PLTE", make([]byte, 3)), chunk("PLTE", make([]byte, 3)), rgb), "second palette"},
		{"png, transparency in an rgba image", pngOf(ihdr(1, 1, 8, 6, 0), chunk("tRNS", make([]byte, 6)), idat(rows(1, 4))), "colour type 6 (with alpha)"},
		{"png, transparency of 3 bytes in an rgb image", pngOf(ihdr(1, 1, 8, 2, 0), chunk("tRNS", make([]byte, 3)), rgb), "transparency chunk of 3 bytes"},
		{"png, transparency for more colours than the palette has", pngOf(ihdr(1, 1, 8, 3, 0), chunk("PLTE", make([]byte, 3)), chunk("tRNS", make([]byte, 2)), idat(rows(1, 1))), "transparency chunk of 2 bytes"},
		{"png, transparency before the palette", pngOf(ihdr(1, 1, 8, 3, 0), chunk("tRNS", make([]byte, 1)), chunk("PLTE", make([]byte, 3)), idat(rows(1, 1))), "before its palette"},
		{"png, a critical chunk decoders do not know", pngOf(ihdr(1, 1, 8, 2, 0), chunk("CRIT", nil), rgb), `critical chunk "CRIT"`},
		{"png, a chunk name that is not letters", pngOf(ihdr(1, 1, 8, 2, 0), chunk("tE1t", nil), rgb), "no chunk name"},
		{"png, a second header", pngOf(ihdr(1, 1, 8, 2, 0), chunk("IHDR", ihdr(1, 1, 8, 2, 0)), rgb), "second header"},
		{"png, image data in two runs", pngOf(ihdr(1, 1, 8, 2, 0), chunk("IDAT", zlibOf(rows(1, 3))[:4]), chunk("tEXt", []byte("k\x00v")), chunk("IDAT", zlibOf(rows(1, 3))[4:])), "more than one run"},
		{"png, an end chunk that is not empty", append(bytes.TrimSuffix(pngOf(ihdr(1, 1, 8, 2, 0), rgb), chunk("IEND", nil)), chunk("IEND", []byte{0})...), "not empty"},
		{"jpeg, no Huffman tables", without(j, dhtAt, dhtEnd), "Huffman table is not defined"},
		{"jpeg, no quantisation tables", without(j, dqtAt, dqtEnd), "quantisation table 0 is not defined"},
		{"jpeg, no scan", append(bytes.Clone(j[:sosAt]), 0xFF, 0xD9), "no scan"},
		{"jpeg, a Huffman table of 3 codes of 1 bit", set(j, dhtAt+5, 3), "more codes than"},
		{"jpeg, a DC Huffman symbol of 16", set(j, dhtAt+5+16, 16), "symbol 16"},
		{"jpeg, a second frame", with(j, sofEnd, j[sofAt:sofEnd]...), "second frame"},
		{"jpeg, a segment that runs past its end", append(bytes.Clone(j[:dhtAt+30]), 0xFF, 0xD9), "cut short in a marker segment"},
		{"jpeg, a marker decoders do not take (JPG0)", with(j, sosAt, 0xFF, 0xF0, 0, 4, 0, 0), "0xFFF0"},
		{"jpeg, progressive, Al not Ah-1", set(prog, progSOSEnd-1, 0x31), "progression"},
		{"jpeg, progressive, an AC scan of two components", progressiveTwoComponentAC(t, prog, progSOS), "progression"},
		{"gif, an extension GIF does not have", with(g, gifFrame, 0x21, 0x02, 0), "extension (0x02)"},
		{"gif, a graphic control of 5 bytes", with(g, gifFrame, 0x21, 0xF9, 5, 0, 0, 0, 0, 0, 0), "graphic control"},
		{"gif, a frame outside its screen", set(g, gifFrame+5, 9), "outside its screen"},
		{"gif, LZW code size 9", set(g, gifFrame+10, 9), "code size 9"},
		{"gif, LZW code size 1", set(g, gifFrame+10, 1), "code size 1"},
		{"gif, a frame with no colour table", func() []byte { b := without(g, 13, gifFrame); b[10] &^= 0x80; return b }(), "no colour table"},
		{"gif, a block GIF does not have", with(g, gifFrame, 0x2A), "block (0x2A)"},
		{"webp, a chunk that runs past its end", func() []byte {
			b := append(bytes.Clone(lossless), "EXIF\x10\x00\x00\x00ab"...)
			binary.LittleEndian.PutUint32(b[4:], uint32(len(b)-8))
			return b
		}(), "runs past its end"},
		{"webp, animated", riff("VP8X", []byte{0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "ANIM", make([]byte, 6), "ANMF", append(make([]byte, 16), append([]byte("VP8L\x0d\x00\x00\x00"), append(bytes.Clone(vp8l), 0)...)...)), "an animated WebP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mime, err := media.Check(tt.data)
			if mime != "" || err == nil || !strings.Contains(err.Error(), tt.why) {
				t.Fatalf("Check: %q, %v; want it refused with %q", mime, err, tt.why)
			}
		})
	}
}

// progressiveTwoComponentAC is a progressive JPEG whose first scan, a DC
// scan of three components, is made an AC scan (Ss 1, Se 5).
func progressiveTwoComponentAC(t testing.TB, prog []byte, sos int) []byte {
	n := int(prog[sos+4]) // components in the scan
	if n < 2 {
		t.Fatalf("the first scan has %d components", n)
	}
	return set(prog, sos+5+2*n, 1, 5)
}

// TestCheckData: the class "data that does not decode". A header that
// holds with data a decoder refuses (image data that does not inflate, or
// not to the size the header says; a scan cut short; LZW codes that are
// no codes; a VP8 partition cut short) is left out, as a client refuses
// it and the request with it.
func TestCheckData(t *testing.T) {
	z := zlibOf(rows(2, 6))
	adler := set(z, len(z)-1, z[len(z)-1]^1)
	corrupt := set(z, 2, 0xFF) // a deflate block of type 3, which there is none of
	j := jpegOf(t)
	_, sosEnd := segment(t, j, 0xDA)
	scan := len(j) - 2 - sosEnd
	lossy := testdata(t, "lossy.webp")
	vp8 := webpChunk(t, lossy, "VP8 ")
	lossless, _ := base64.StdEncoding.DecodeString(webp1x1)
	vp8l := webpChunk(t, lossless, "VP8L")
	tests := []struct {
		name string
		data []byte
		why  string
	}{
		{"png, image data that is not zlib", pngOf(ihdr(2, 2, 8, 2, 0), chunk("IDAT", []byte("<html>not zlib data</html>"))), "not zlib data"},
		{"png, image data that does not inflate", pngOf(ihdr(2, 2, 8, 2, 0), chunk("IDAT", corrupt)), "does not inflate"},
		{"png, image data with a wrong Adler-32", pngOf(ihdr(2, 2, 8, 2, 0), chunk("IDAT", adler)), "does not inflate"},
		{"png, image data cut short", pngOf(ihdr(2, 2, 8, 2, 0), chunk("IDAT", z[:len(z)-6])), "does not inflate"},
		{"png, image data inflating short", pngOf(ihdr(2, 3, 8, 2, 0), idat(rows(2, 6))), "less image data"},
		{"png, image data inflating a byte short", pngOf(ihdr(2, 2, 8, 2, 0), idat(rows(2, 6)[:13])), "less image data"},
		{"png, image data inflating long", pngOf(ihdr(2, 1, 8, 2, 0), idat(rows(2, 6))), "more image data"},
		{"png, a scanline of filter type 5", pngOf(ihdr(2, 2, 8, 2, 0), idat(set(rows(2, 6), 7, 5))), "filter type 5"},
		{"png, bytes after the zlib stream", pngOf(ihdr(2, 2, 8, 2, 0), chunk("IDAT", append(zlibOf(rows(2, 6)), 0))), "after its compressed"},
		{"png, interlaced, the data of a picture that is not", pngOf(ihdr(5, 3, 8, 0, 1), idat(rows(3, 5))), "image data than"},
		// FDICT, the dictionary's Adler-32 that of none (1), which
		// compress/zlib takes.
		{"png, a preset dictionary", pngOf(ihdr(2, 2, 8, 2, 0), chunk("IDAT", append([]byte{0x78, 0xBB, 0, 0, 0, 1}, z[2:]...))), "preset dictionary"},
		{"jpeg, a scan cut short, then its end", append(bytes.Clone(j[:sosEnd+scan/2]), 0xFF, 0xD9), "not a whole image/jpeg"},
		{"jpeg, a scan of no data", append(bytes.Clone(j[:sosEnd]), 0xFF, 0xD9), "not a whole image/jpeg"},
		// All ones: a code no Huffman table has.
		{"jpeg, a scan of bad Huffman codes", append(append(bytes.Clone(j[:sosEnd]), bytes.Repeat([]byte{0xFF, 0}, scan/2)...), 0xFF, 0xD9), "not a whole image/jpeg"},
		// Codes of 3 bits, first bit first: clear (4), then 7, which no
		// table that has just been cleared holds.
		{"gif, LZW data that is no codes", gifWithData(t, 2, 1, 4|7<<3, 0), "does not decompress"},
		{"gif, a frame short of its pixels", gifWithData(t, append([]byte{2}, lzwOf(2, make([]byte, 63))...)...), "short of its size"},
		{"gif, a frame of more pixels than its size", gifWithData(t, append([]byte{2}, lzwOf(2, make([]byte, 65))...)...), "more pixels"},
		{"gif, a pixel outside its colour table", func() []byte {
			g := set(gifOf(t), 10, 0x80) // a global table of 2 colours, not 4
			g = without(g, 13+6, gifFrame)
			return g
		}(), "outside its colour table"},
		{"gif, a sub-block of 2 bytes after its data", gifWithData(t, append(append([]byte{2}, bytes.TrimSuffix(lzwOf(2, make([]byte, 64)), []byte{0})...), 2, 0, 0, 0)...), "more frame data"},
		{"webp, a VP8 partition cut short", riff("VP8 ", vp8[:len(vp8)-60]), "not a whole image/webp"},
		{"webp, VP8L data cut short", riff("VP8L", vp8l[:len(vp8l)-4]), "not a whole image/webp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mime, err := media.Check(tt.data)
			if mime != "" || err == nil || !strings.Contains(err.Error(), tt.why) {
				t.Fatalf("Check: %q, %v; want it refused with %q", mime, err, tt.why)
			}
		})
	}
}

// TestCheckDecodeBound: a picture that can be checked only by decoding it
// whole is left out, undecoded, when that would take over MaxDecodeBytes;
// its header may claim what it likes.
func TestCheckDecodeBound(t *testing.T) {
	prog := testdata(t, "progressive.jpg")
	sof, _ := segment(t, prog, 0xC2)
	var vp8l []byte
	vp8l = binary.LittleEndian.AppendUint32(append(vp8l, 0x2F), 7999|7999<<14)
	for _, data := range [][]byte{
		set(prog, sof+5, 8000>>8, 8000&0xFF, 8000>>8, 8000&0xFF),
		riff("VP8L", append(vp8l, make([]byte, 64)...)),
	} {
		mime, err := media.Check(data)
		if mime != "" || err == nil || !strings.Contains(err.Error(), "MiB a check may") {
			t.Errorf("%s of 8000 × 8000: %q, %v", media.Sniff(data), mime, err)
		}
	}
}

// bigPNG is a grey PNG of side × side black pixels, its image data in
// stored (uncompressed) deflate blocks: made in no time, even under -race,
// as the Adler-32 of n zeros is n mod 65521 << 16 | 1.
func bigPNG(side int) []byte {
	n := side * (side + 1)
	z := make([]byte, 0, n+n/65535*5+16)
	z = append(z, 0x78, 0x01)
	for left := n; left > 0; {
		k := min(left, 65535)
		left -= k
		final := byte(0)
		if left == 0 {
			final = 1
		}
		z = append(z, final, byte(k), byte(k>>8), ^byte(k), ^byte(k>>8))
		z = z[:len(z)+k] // zeros
	}
	z = binary.BigEndian.AppendUint32(z, uint32(n%65521)<<16|1)
	return pngOf(ihdr(uint32(side), uint32(side), 8, 0, 0), chunk("IDAT", z))
}

// TestCheckMemory: checking a PNG of 8000 × 8000 pixels, the most there
// may be, holds zlib's window and a buffer, not the picture's 64 MB.
func TestCheckMemory(t *testing.T) {
	data := bigPNG(8000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	mime, err := media.Check(data)
	runtime.ReadMemStats(&after)
	if mime != "image/png" {
		t.Fatalf("Check: %q, %v", mime, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<10 {
		t.Errorf("checking a PNG of 8000 × 8000 allocated %d bytes", alloc)
	}
}

// BenchmarkCheckPNG8000 checks a PNG of 8000 × 8000 black pixels: 64 MB
// of image data, compressed as an encoder would, inflated and counted.
func BenchmarkCheckPNG8000(b *testing.B) {
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	w.Write(make([]byte, 8000*8001))
	w.Close()
	data := pngOf(ihdr(8000, 8000, 8, 0, 0), chunk("IDAT", z.Bytes()))
	b.SetBytes(8000 * 8001)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := media.Check(data); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzCheck: Check never panics, and passes nothing the standard decoders
// refuse (image/png, image/jpeg, image/gif, golang.org/x/image/webp).
// Seeded from testdata/ and the pictures above.
func FuzzCheck(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*"))
	for _, name := range names {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	lossless, _ := base64.StdEncoding.DecodeString(webp1x1)
	f.Add(lossless)
	f.Add(jpegOf(f))
	f.Add(gifOf(f))
	f.Add(pngBytes(f))
	f.Add(pngOf(ihdr(5, 3, 8, 0, 1), idat(bytes.Join([][]byte{rows(1, 1), rows(1, 1), rows(1, 1), rows(1, 3), rows(2, 2), rows(1, 5)}, nil))))
	f.Add(pngOf(ihdr(5, 2, 2, 3, 0), chunk("PLTE", make([]byte, 12)), idat(rows(2, 2))))
	f.Fuzz(func(t *testing.T, data []byte) {
		mime, err := media.Check(data)
		if err != nil {
			return
		}
		if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
			t.Fatalf("Check passed a %s that the standard decoder refuses: %v", mime, err)
		}
	})
}
