package mcpserver

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// fakeBackend serves JSON-RPC on a Unix socket of its own until the test
// ends, one request a line, each connection in order as the real server
// answers: answer returns the member that follows the id in the reply,
// `"result":…` or `"error":…`. A line that is not a request closes the
// connection. It returns the socket's path.
func fakeBackend(t *testing.T, answer func(method string, params json.RawMessage) string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					var req struct {
						ID     json.RawMessage `json:"id"`
						Method string          `json:"method"`
						Params json.RawMessage `json:"params"`
					}
					if json.Unmarshal(sc.Bytes(), &req) != nil {
						return
					}
					reply := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,` + answer(req.Method, req.Params) + "}\n"
					if _, err := c.Write([]byte(reply)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return path
}
