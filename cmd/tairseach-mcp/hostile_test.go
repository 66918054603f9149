package main

// A hostile review of what the bridge sends back: a scripted backend (a
// small real server on a Unix socket) answers each call with a reply chosen
// by the test, and the real binary's stdout is read byte for byte.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scriptedBackend answers every request on its socket with
// replies[params.case], "ID" replaced by the request's id.
func scriptedBackend(t *testing.T, path string, replies map[string]string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						return
					}
					var req struct {
						ID     json.RawMessage
						Params struct{ Case string }
					}
					if json.Unmarshal(line, &req) != nil {
						return
					}
					reply, ok := replies[req.Params.Case]
					if !ok {
						reply = `{"jsonrpc":"2.0","id":ID,"error":{"code":-32601,"message":"no such case"}}`
					}
					if _, err := c.Write([]byte(strings.Replace(reply, "ID", string(req.ID), 1) + "\n")); err != nil {
						return
					}
				}
			})
		}
	})
}

// hostileManifest is one tool, hostile.reply, whose outputSchema accepts
// any object with an integer "n" if it has one.
const hostileManifest = `{"id":"hostile","tools":[{"name":"hostile.reply",
 "inputSchema":{"type":"object","properties":{"case":{"type":"string"}}},
 "outputSchema":{"type":"object","properties":{"n":{"type":"integer"}}}}],
 "implementation":{"methods":{"hostile.reply":"hostile.reply"}}}`

// hostileEnv starts the scripted backend and returns an env whose manifests
// hold hostileManifest.
func hostileEnv(t *testing.T, replies map[string]string) env {
	t.Helper()
	dir := shortDir(t)
	e := env{socket: filepath.Join(dir, "s.sock"), manifests: filepath.Join(dir, "m")}
	if err := os.Mkdir(e.manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.manifests, "hostile.json"), []byte(hostileManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	scriptedBackend(t, e.socket, replies)
	return e
}

// result wraps a raw result in a reply.
func result(raw string) string { return `{"jsonrpc":"2.0","id":ID,"result":` + raw + `}` }

func rpcErr(raw string) string { return `{"jsonrpc":"2.0","id":ID,"error":` + raw + `}` }

// hostileCase is a reply and what the client must get from it.
type hostileCase struct {
	name, reply string
	isError     bool   // under the default flags
	text        string // the text content, exactly; "" to skip
	contains    string // in the text content
	strictError string // under strict: "" for success, else in the isError text
}

var hostileCases = []hostileCase{
	{name: "string result", reply: result(`"<b>&amp;</b>\u2028\u2029"`), text: `"<b>&amp;</b>\u2028\u2029"`, strictError: "not a JSON object"},
	{name: "array result", reply: result(`[1,"two",null]`), text: `[1,"two",null]`, strictError: "not a JSON object"},
	{name: "null result", reply: result(`null`), text: `null`, strictError: "not a JSON object"},
	{name: "number with a huge exponent", reply: result(`1e999999`), text: `1e999999`, strictError: "not a JSON object"},
	{name: "huge exponent in an object", reply: result(`{"n":1e400,"m":-1e400}`), text: `{"n":1e400,"m":-1e400}`, strictError: `property "n"`},
	// Clients keep the last of duplicate keys; the check sees them all.
	{name: "duplicate keys", reply: result(`{"n":1,"n":"one"}`), text: `{"n":1,"n":"one"}`, strictError: `property "n": type: "one" is not integer`},
	{name: "duplicate keys, both valid", reply: result(`{"n":1,"n":2}`), text: `{"n":1,"n":2}`},
	// A Go client cannot decode a number out of a double's range.
	{name: "number out of range", reply: result(`{"m":1e400}`), text: `{"m":1e400}`, strictError: "out of range of a double"},
	{name: "integer out of range", reply: result(`{"m":[` + "1" + strings.Repeat("0", 320) + `]}`), contains: "10000000", strictError: "out of range of a double"},
	{name: "nesting deeper than encoding/json reads", reply: result(`{"d":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`), isError: true, contains: "nesting deeper than 10000 levels", strictError: "nesting deeper than 10000 levels"},
	{name: "every character to escape", reply: result(`{"s":"\u0000\u001f\b\f\n\r\t\"\\/<>&\u2028\u2029\u007f"}`),
		text: `{"s":"\u0000\u001f\b\f\n\r\t\"\\/<>&\u2028\u2029\u007f"}`},
	{name: "raw U+2028 and U+2029", reply: result("{\"s\":\"a\u2028b\u2029c\"}"), text: "{\"s\":\"a\u2028b\u2029c\"}"},
	{name: "white space", reply: result("{ \"a\" :\t[ 1 ,\r 2 ] }"), text: `{"a":[1,2]}`},
	{name: "invalid UTF-8 in keys and strings", reply: result("{\"k\xff\xfe\":\"v\xc3\x28\",\"n\":1}"), text: "{\"k\uFFFD\uFFFD\":\"v\uFFFD(\",\"n\":1}"},
	// The go-sdk client refuses messages nested over 1000 deep, and closes
	// its session: the message and its result are two levels.
	{name: "nesting the go-sdk client reads", reply: result(strings.Repeat(`{"d":`, 997) + "{}" + strings.Repeat("}", 997)), contains: `{"d":{"d":`},
	{name: "nesting the go-sdk client refuses", reply: result(strings.Repeat(`{"d":`, 998) + "{}" + strings.Repeat("}", 998)), contains: `{"d":{"d":`, strictError: "nested more than 998 deep"},
	{name: "deep nesting", reply: result(`{"d":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`), contains: `{"d":[[[[`, strictError: "nested more than 998 deep"},
	{name: "error object", reply: rpcErr(`{"code":-32001,"message":"permission denied <contacts>","data":{"remediation":"allow & retry"}}`),
		isError: true, text: `{"error":{"code":-32001,"message":"permission denied <contacts>","data":{"remediation":"allow & retry"}}}`, strictError: "-32001"},
	{name: "malformed reply with invalid UTF-8", reply: "not json \xff\xfe", isError: true, contains: "malformed reply", strictError: "malformed reply"},
	{name: "error without code", reply: rpcErr(`{"message":"no code"}`), isError: true, contains: "no code", strictError: "no code"},
	{name: "error with invalid UTF-8", reply: rpcErr("{\"code\":-32000,\"message\":\"bad \xff\",\"data\":\"\xfe\"}"), isError: true, contains: "bad \uFFFD", strictError: "bad \uFFFD"},
	{name: "error with a string as data", reply: rpcErr(`{"code":-32000,"message":"m","data":"` + strings.Repeat("d", 100000) + `"}`), isError: true, contains: "ddddd", strictError: "ddddd"},
}

// TestE2EHostileReplies sends every hostile reply through the real binary,
// under the default flags and under --output-schemas=strict, and checks
// each response line as a strict client would: valid UTF-8, valid JSON, one
// response per request, and the text the model is meant to see.
func TestE2EHostileReplies(t *testing.T) {
	replies := map[string]string{}
	for _, c := range hostileCases {
		replies[c.name] = c.reply
	}
	e := hostileEnv(t, replies)
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			// Every reply whole, as the backend sent it: what a large one
			// becomes in parts is TestResultInPartsOnEveryPath's.
			args := e.args("--log-level", "warn", "--result-budget", "off")
			if strict {
				args = append(args, "--output-schemas=strict")
			}
			s := startRaw(t, args...)
			s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			s.next(20 * time.Second)
			for i, c := range hostileCases {
				params, _ := json.Marshal(map[string]any{"name": "tairseach_hostile_reply", "arguments": map[string]string{"case": c.name}})
				s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+1, params))
				var line string
				select {
				case line = <-s.lines:
				case <-time.After(20 * time.Second):
					t.Fatalf("%s: no response within 20s", c.name)
				}
				if !utf8.ValidString(line) || !json.Valid([]byte(line)) {
					t.Errorf("%s: the response is not valid UTF-8 JSON: %.300q", c.name, line)
					continue
				}
				var resp struct {
					ID     int
					Result struct {
						IsError bool
						Content []struct{ Text string }
						// structuredContent is checked as raw JSON.
						StructuredContent json.RawMessage
					}
					Error *struct{ Message string }
				}
				if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.ID != i+1 || resp.Error != nil || len(resp.Result.Content) != 1 {
					t.Errorf("%s: response %.300s (%v)", c.name, line, err)
					continue
				}
				got, isError := resp.Result.Content[0].Text, resp.Result.IsError
				t.Logf("%s: isError %v: %.200q", c.name, isError, got)
				if strict {
					if (c.strictError != "") != isError || c.strictError != "" && !strings.Contains(got, c.strictError) {
						t.Errorf("%s: strict: isError %v, %.300q; want isError %v naming %q", c.name, isError, got, c.strictError != "", c.strictError)
					}
					if !isError && !json.Valid(resp.Result.StructuredContent) {
						t.Errorf("%s: strict: structuredContent %.300s", c.name, resp.Result.StructuredContent)
					}
					continue
				}
				if isError != c.isError || c.text != "" && got != c.text || !strings.Contains(got, c.contains) {
					t.Errorf("%s: isError %v, %.300q; want isError %v, text %.300q", c.name, isError, got, c.isError, c.text+c.contains)
				}
				if len(resp.Result.StructuredContent) > 0 {
					t.Errorf("%s: structuredContent under the default flags", c.name)
				}
			}
		})
	}
}

// TestE2EHostileRepliesClients sends every hostile reply to real clients:
// the go-sdk client over stdio and over HTTP (the go-sdk's own encoding of
// results) and the TypeScript SDK client (which validates structuredContent
// against advertised outputSchemas). Each call must reach the client as the
// same success or isError, never as a client-side error.
func TestE2EHostileRepliesClients(t *testing.T) {
	replies := map[string]string{}
	var calls []tsCall
	for _, c := range hostileCases {
		replies[c.name] = c.reply
		calls = append(calls, tsCall{"tairseach_hostile_reply", map[string]any{"case": c.name}})
	}
	e := hostileEnv(t, replies)
	check := func(t *testing.T, client string, strict bool, c hostileCase, isError bool, text string) {
		t.Helper()
		want, contains := c.isError, c.contains
		if strict {
			want, contains = c.strictError != "", c.strictError
		}
		if isError != want || !strings.Contains(text, contains) || !strict && c.text != "" && text != c.text {
			t.Errorf("%s, %s: isError %v, %.300q; want isError %v with %.100q", client, c.name, isError, text, want, contains+c.text)
		}
	}
	for _, strict := range []bool{false, true} {
		flag := "--output-schemas=warn"
		if strict {
			flag = "--output-schemas=strict"
		}
		t.Run(flag, func(t *testing.T) {
			stdio := connect(t, e, "2025-11-25", flag)
			b := startHTTP(t, e, flag)
			http := connectHTTP(t, b.url, "2025-11-25", nil, nil)
			for name, cs := range map[string]*mcp.ClientSession{"go-sdk stdio": stdio, "go-sdk http": http} {
				for i, c := range hostileCases {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: calls[i].Name, Arguments: calls[i].Arguments})
					if err != nil {
						t.Errorf("%s, %s: the client failed: %v", name, c.name, err)
						continue
					}
					check(t, name, strict, c, res.IsError, text(res))
				}
			}
			for i, r := range tsCalls(t, e, calls, flag) {
				if r.Thrown != "" {
					t.Errorf("typescript, %s: the client raised %s", hostileCases[i].name, r.Thrown)
					continue
				}
				check(t, "typescript", strict, hostileCases[i], r.IsError, r.Text)
			}
		})
	}
}
