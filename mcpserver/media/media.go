// Package media lets the model see the pictures tools return: when a tool's
// JSON result names an image file ({"path": …}, as screen.capture and
// camera.snap return) or carries one as base64 ({"encoding": "base64",
// "content": …}, as files.read returns), it makes the MCP image content
// block to send after the result's text, or the sentence saying why there
// is none. mcpserver calls it through Config.Media.
package media

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
)

// DefaultMaxBytes is the largest image sent when Images is given no limit.
const DefaultMaxBytes = 5 << 20

// imageTypes are the types sent, as http.DetectContentType names them.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// captureMethods always return a picture: a refusal is worth a sentence
// whatever the file is called.
var captureMethods = map[string]bool{"screen.capture": true, "camera.snap": true}

// Images returns the function for mcpserver.Config.Media: it adds an image
// block for results that name or carry a PNG, JPEG, GIF or WebP of at most
// maxBytes (0: DefaultMaxBytes), sniffed from the content.
func Images(maxBytes int64) func(method string, text []byte) (mcp.Content, string) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return func(method string, text []byte) (mcp.Content, string) {
		return Block(method, text, maxBytes)
	}
}

// result is the part of a tool result looked at.
type result struct {
	Path     *string
	Encoding string
	Content  *string
}

// members reads the top-level "path", "encoding" and "content" of a result
// without decoding the rest: results can be megabytes, and most have none
// of them.
func members(text []byte) (r result, ok bool) {
	if !bytes.Contains(text, []byte(`"path"`)) && !bytes.Contains(text, []byte(`"encoding"`)) {
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

// Block returns the image block for a tool's compact JSON result, or nil
// and a sentence for the text (or "" when the result names no picture).
func Block(method string, text []byte, maxBytes int64) (mcp.Content, string) {
	if len(text) == 0 || text[0] != '{' {
		return nil, ""
	}
	r, ok := members(text)
	if !ok {
		return nil, ""
	}
	if r.Content != nil && strings.EqualFold(r.Encoding, "base64") {
		if int64(base64.StdEncoding.DecodedLen(len(*r.Content))) > maxBytes+3 {
			if looksImage(method, "") {
				return nil, fmt.Sprintf("(No picture attached: the content is over the limit of %d bytes, --max-image-bytes.)", maxBytes)
			}
			return nil, ""
		}
		data, err := base64.StdEncoding.DecodeString(*r.Content)
		if err != nil || int64(len(data)) > maxBytes {
			return nil, ""
		}
		if mime := http.DetectContentType(data); imageTypes[mime] {
			return &mcp.ImageContent{Data: data, MIMEType: mime}, ""
		}
		return nil, ""
	}
	if r.Path == nil || *r.Path == "" {
		return nil, ""
	}
	data, mime, err := ReadImage(*r.Path, maxBytes)
	switch {
	case err == nil:
		return &mcp.ImageContent{Data: data, MIMEType: mime}, ""
	case errors.Is(err, ErrNotImage):
		return nil, ""
	case errors.Is(err, ErrTooLarge):
		return nil, fmt.Sprintf("(No picture attached: %s is over the limit of %d bytes, --max-image-bytes.)", *r.Path, maxBytes)
	case looksImage(method, *r.Path):
		return nil, fmt.Sprintf("(No picture attached: %s %v.)", *r.Path, err)
	}
	return nil, ""
}

// looksImage reports whether a refusal deserves a sentence: the method
// takes pictures, or the name is an image's.
func looksImage(method, path string) bool {
	if captureMethods[method] {
		return true
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return true
	}
	return false
}

// Reasons ReadImage gives.
var (
	ErrNotImage = errors.New("is not a PNG, JPEG, GIF or WebP image")
	ErrTooLarge = errors.New("is too large")
)

// ReadImage reads path if it is a regular file of this user, no larger
// than maxBytes, whose content is an image; it returns the bytes and their
// MIME type. Symlinks and special files are refused without blocking: the
// file is opened with O_NOFOLLOW|O_NONBLOCK and checked once open.
func ReadImage(path string, maxBytes int64) ([]byte, string, error) {
	if !filepath.IsAbs(path) {
		return nil, "", errors.New("is not an absolute path")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
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
		return nil, "", ErrNotImage
	case !m.IsRegular():
		return nil, "", errors.New("is a special file, not a regular file")
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uint32(os.Getuid()) {
		return nil, "", errors.New("belongs to another user")
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	mime := http.DetectContentType(head[:n])
	if !imageTypes[mime] {
		return nil, "", ErrNotImage
	}
	if fi.Size() > maxBytes {
		return nil, "", ErrTooLarge
	}
	data := make([]byte, fi.Size())
	copy(data, head[:n])
	if _, err := io.ReadFull(f, data[n:]); err != nil {
		return nil, "", fmt.Errorf("could not be read whole (%v)", err)
	}
	return data, mime, nil
}
