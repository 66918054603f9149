// Package media lets the model see the pictures that Tairseach's picture
// capabilities produce, and no others. The bridge reads files with the
// user's own rights, outside the app's permission checks, and the model
// chooses every argument (which a backend may echo back), so a picture is
// attached only where a capability is known to make one:
//
//   - screen.capture and camera.snap (camera.capture) write a file and
//     return its path: the picture is read only from where they write (the
//     app's own /tmp/tairseach_screenshot_<ms>.<ext> and
//     /tmp/tairseach_camera_snap_<ms>.<ext>, or the path the call asked
//     for), only if the file was written since the call was sent, is this
//     user's, a regular file with one link, and no link is followed;
//   - files.read with encoding base64 carries the bytes in its reply: the
//     app read them, behind its own checks.
//
// Whatever its source, a picture is attached only if a client's decoder
// will take it (Check): its header valid for its format, within bounded
// dimensions, its data decoded within bounded memory to the format's end;
// and it must fit the message. Otherwise the model reads a sentence saying
// why there is none, and the text result is kept. mcpserver calls it
// through Config.Media.
package media

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/internal/quote"
)

// DefaultMaxBytes is the largest image sent when Images is given no limit.
const DefaultMaxBytes = 5 << 20

// Bounds on a picture's dimensions: a 6K display is 6016 × 3384 (20 MP).
// The Anthropic API refuses an image over 8000 px a side, and with it the
// whole request: the text result would be lost with it.
const (
	MaxSide   = 8000
	MaxPixels = 64 << 20
)

// freshness is how much older than the call a written picture may look:
// file systems keep times to a second or coarser, and clocks step.
const freshness = 2 * time.Second

// A Call is what the bridge knows of a successful tool call when it looks
// for a picture.
type Call struct {
	Method string          // the backend method called
	Args   json.RawMessage // the arguments sent, as checked
	Result []byte          // the backend's result, compact JSON
	Sent   time.Time       // when the call was sent
	// Room is the bytes of picture data the message still has room for;
	// it is asked only of a call that may have a picture.
	Room func() int64
}

// Producer says how a capability returns a picture.
type Producer struct {
	// Prefix is the path the capability writes to when the call names
	// none, up to its timestamp; "" for a picture carried in the reply.
	Prefix string
}

// Producers are the capabilities that return pictures, by backend method,
// as the real server writes them (proxy/handlers/screen.rs, camera.rs,
// files.rs): nothing else is looked at.
var Producers = map[string]Producer{
	"screen.capture": {Prefix: "/tmp/tairseach_screenshot_"},
	"camera.snap":    {Prefix: "/tmp/tairseach_camera_snap_"},
	"camera.capture": {Prefix: "/tmp/tairseach_camera_snap_"}, // the app's alias of camera.snap
	"files.read":     {},                                      // encoding base64: the bytes in the reply
}

// Images returns the function for mcpserver.Config.Media: it adds an image
// block of at most maxBytes (0: DefaultMaxBytes) for the results of
// Producers.
func Images(maxBytes int64) func(Call) (mcp.Content, string) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return func(c Call) (mcp.Content, string) {
		return Block(c, maxBytes)
	}
}

// result is the part of a tool result looked at.
type result struct {
	Path     *string
	Encoding string
	Content  *string
}

// members reads the top-level "path", "encoding" and "content" of a result
// without decoding the rest: results can be megabytes.
func members(text []byte) (r result, ok bool) {
	if len(text) == 0 || text[0] != '{' {
		return r, false
	}
	var content []byte
	err := jsonscan.Members(text, func(key, value []byte) bool {
		switch {
		case jsonscan.KeyIs(key, "path"):
			var p string
			if json.Unmarshal(value, &p) == nil {
				r.Path = &p
			}
		case jsonscan.KeyIs(key, "encoding"):
			_ = json.Unmarshal(value, &r.Encoding)
		case jsonscan.KeyIs(key, "content"):
			content = value
		}
		return true
	})
	if err != nil {
		return r, false
	}
	if content != nil && strings.EqualFold(r.Encoding, "base64") {
		var c string
		if json.Unmarshal(content, &c) == nil {
			r.Content = &c
		}
	}
	return r, true
}

// Block returns the image block for a call of a picture capability, or nil
// and a sentence for the model (or "" when there is nothing to say).
// maxBytes is --max-image-bytes; the message's room may lower it.
func Block(c Call, maxBytes int64) (mcp.Content, string) {
	prod, ok := Producers[c.Method]
	if !ok {
		return nil, ""
	}
	r, ok := members(c.Result)
	if !ok {
		return nil, ""
	}
	if prod.Prefix == "" && (r.Content == nil || Sniff(head(*r.Content)) == "") {
		return nil, "" // a file that is no picture: its text is the answer
	}
	limit, flag := maxBytes, "--max-image-bytes"
	if room := c.Room(); room < limit {
		limit, flag = max(room, 0), "--max-result-bytes"
	}
	if prod.Prefix == "" {
		if int64(base64.StdEncoding.DecodedLen(len(*r.Content))) > limit+3 {
			return nil, tooLarge("the content", limit, flag)
		}
		data, err := base64.StdEncoding.DecodeString(*r.Content)
		if err != nil {
			return nil, ""
		}
		if int64(len(data)) > limit {
			return nil, tooLarge("the content", limit, flag)
		}
		mime, err := Check(data)
		if err != nil {
			if errors.Is(err, ErrUnknownFormat) {
				return nil, "" // a file that is no picture: its text is the answer
			}
			return nil, fmt.Sprintf("(No picture attached: the content %v.)", err)
		}
		return &mcp.ImageContent{Data: data, MIMEType: mime}, ""
	}
	if r.Path == nil {
		return nil, "(No picture attached: the result names no path.)"
	}
	path := *r.Path
	if !written(prod, c.Args, path) {
		return nil, fmt.Sprintf("(No picture attached: %s is not where %s writes its pictures (%s<time>.<format> or the path the call asked for).)", Quote(path), c.Method, prod.Prefix)
	}
	data, mime, err := ReadImage(path, limit, c.Sent.Add(-freshness))
	switch {
	case err == nil:
		return &mcp.ImageContent{Data: data, MIMEType: mime}, ""
	case errors.Is(err, ErrTooLarge):
		return nil, tooLarge(Quote(path), limit, flag)
	}
	return nil, fmt.Sprintf("(No picture attached: %s %v.)", Quote(path), err)
}

// head decodes the start of base64 content, enough to tell its format.
func head(content string) []byte {
	b, _ := base64.StdEncoding.DecodeString(content[:min(len(content), 16)])
	return b
}

func tooLarge(what string, limit int64, flag string) string {
	return fmt.Sprintf("(No picture attached: %s is over the %d bytes left for it by %s; the result above is complete.)", what, limit, flag)
}

// written reports whether path is where the capability writes: its own
// place, or the absolute path the call asked for.
func written(prod Producer, args json.RawMessage, path string) bool {
	if path == "" || filepath.Clean(path) != path {
		return false
	}
	if rest, ok := strings.CutPrefix(path, prod.Prefix); ok {
		stamp, ext, _ := strings.Cut(rest, ".")
		if _, err := strconv.ParseUint(stamp, 10, 64); err == nil && len(stamp) <= 20 {
			switch ext {
			case "png", "jpg", "jpeg":
				return true
			}
		}
	}
	// The member named exactly "path", the last of equal keys, as the
	// app's decoder reads it (encoding/json would also take "PATH").
	var asked *string
	if len(args) == 0 || args[0] != '{' || jsonscan.Members(args, func(key, value []byte) bool {
		if jsonscan.KeyIs(key, "path") {
			var p string
			asked = nil
			if json.Unmarshal(value, &p) == nil {
				asked = &p
			}
		}
		return true
	}) != nil || asked == nil {
		return false
	}
	return *asked == path && filepath.IsAbs(path)
}

// Quote shows a path the backend named on one line, cut to a length a
// person can read: internal/quote's, the one way outside words are shown.
func Quote(s string) string { return quote.Line(s, 200) }

// Reasons ReadImage and Check give.
var (
	ErrTooLarge      = errors.New("is too large")
	ErrUnknownFormat = errors.New("is not a PNG, JPEG, GIF or WebP image")
)

// ReadImage reads path if it is a regular file of this user with one link,
// modified at or after since (and not in the future), no larger than
// maxBytes, whose whole content is a picture; it returns the bytes and
// their MIME type. The file itself is no link and nothing blocks: it is
// opened with O_NOFOLLOW|O_NONBLOCK (which covers the last part of the
// path: the directories are where the app writes, or the call's own
// path) and checked once open, and no more than its size says is read.
func ReadImage(path string, maxBytes int64, since time.Time) ([]byte, string, error) {
	if !filepath.IsAbs(path) {
		return nil, "", errors.New("is not an absolute path")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case errors.Is(err, syscall.ELOOP):
			return nil, "", errors.New("is a symlink, which is not followed")
		case errors.Is(err, os.ErrNotExist):
			return nil, "", errors.New("does not exist")
		case errors.Is(err, os.ErrPermission):
			return nil, "", errors.New("cannot be read (permission denied)")
		}
		return nil, "", fmt.Errorf("cannot be opened (%v)", errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	switch m := fi.Mode(); {
	case m&os.ModeNamedPipe != 0:
		return nil, "", errors.New("is a FIFO, not a regular file")
	case m.IsDir():
		return nil, "", errors.New("is a directory, not a regular file")
	case !m.IsRegular():
		return nil, "", errors.New("is a special file, not a regular file")
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok || st.Uid != uint32(os.Getuid()):
		return nil, "", errors.New("belongs to another user")
	case st.Nlink != 1:
		return nil, "", errors.New("has other hard links, so it may be another file")
	case fi.ModTime().Before(since):
		return nil, "", errors.New("was not written by this call (it is older)")
	case fi.ModTime().After(time.Now().Add(freshness)):
		return nil, "", errors.New("was not written by this call (its time is in the future)")
	case fi.Size() > maxBytes:
		return nil, "", ErrTooLarge
	case fi.Size() == 0:
		return nil, "", errors.New("is empty")
	}
	// A file whose size is not its content (/proc, a file still growing)
	// reads as more or fewer bytes than its size.
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, "", fmt.Errorf("changed while it was read (%v)", err)
	}
	if n, _ := f.Read(make([]byte, 1)); n != 0 {
		return nil, "", errors.New("changed while it was read (it grew)")
	}
	mime, err := Check(data)
	if err != nil {
		return nil, "", err
	}
	return data, mime, nil
}

// Sniff is the MIME type of the picture format data begins as (PNG, JPEG,
// GIF or WebP), or "": a look at the first bytes, not a check.
func Sniff(data []byte) string {
	switch {
	case bytes.HasPrefix(data, pngSignature):
		return "image/png"
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")) || bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// Check reports whether data is the picture its first bytes say, as a
// client's decoder will take it, and returns its MIME type. The rule is
// the same for every format: the header's fields are valid for the format
// and the dimensions within MaxSide and MaxPixels; then the data decodes,
// within bounded memory, to the format's end. A PNG's image data is
// inflated and counted as it streams (checkPNG), and a GIF's first frame
// decompressed so (checkGIF), in a window; a JPEG's markers and tables are
// walked (checkJPEG) and a JPEG or WebP (checkWebP) decoded whole, as
// their decoders do, if that takes at most MaxDecodeBytes.
func Check(data []byte) (string, error) {
	var (
		cfg image.Config
		err error
	)
	mime := Sniff(data)
	switch mime {
	case "image/png":
		cfg, err = checkPNG(data)
	case "image/jpeg":
		cfg, err = checkJPEG(data)
	case "image/gif":
		cfg, err = checkGIF(data)
	case "image/webp":
		cfg, err = checkWebP(data)
	default:
		return "", ErrUnknownFormat
	}
	var plain asIs
	switch {
	case errors.As(err, &plain):
		return "", err
	case err != nil:
		return "", fmt.Errorf("is not a whole %s (%v)", mime, err)
	}
	// Each checker bounds the dimensions before it reads the data; this
	// is the rule itself.
	if err := within(cfg); err != nil {
		return "", err
	}
	return mime, nil
}

// asIs is a reason a picture is left out that is no fault in it, said as
// it is rather than as a picture that is not whole.
type asIs struct{ error }

// within reports whether a picture's dimensions are within bounds.
func within(cfg image.Config) error {
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > MaxSide || cfg.Height > MaxSide || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return asIs{fmt.Errorf("is %d × %d pixels, outside the bounds (%d a side, %d pixels)", cfg.Width, cfg.Height, MaxSide, MaxPixels)}
	}
	return nil
}
