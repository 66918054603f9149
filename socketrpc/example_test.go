package socketrpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

func ExampleClient_Call() {
	dir, _ := os.MkdirTemp("", "srpc")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.sock")

	// A stand-in for the Tairseach server: it answers one request.
	ln, _ := net.Listen("unix", path)
	defer ln.Close()
	os.Chmod(path, 0o600) // the Client refuses a socket others may write to
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		var req struct{ ID json.RawMessage }
		line, _ := bufio.NewReader(conn).ReadBytes('\n')
		json.Unmarshal(line, &req)
		fmt.Fprintf(conn, `{"jsonrpc":"2.0","id":%s,"result":{"status":"ok"}}`+"\n", req.ID)
	}()

	c := socketrpc.New(path, socketrpc.Options{Logger: zerolog.Nop()})
	defer c.Close()
	res, err := c.Call(context.Background(), "server.status", nil)
	var rpcErr *socketrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		fmt.Println("server refused:", rpcErr.Code, rpcErr.Message)
	case errors.Is(err, socketrpc.ErrUnavailable):
		fmt.Println("server not running")
	case err != nil:
		fmt.Println(err)
	default:
		fmt.Println(string(res))
	}
	// Output: {"status":"ok"}
}
