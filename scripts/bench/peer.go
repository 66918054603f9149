package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// peerVersions names what the peer loads, as Node resolves it: mcp-host-rpc
// itself, the MCP TypeScript SDK it imports, and the zod each of them
// imports. A zod 4 beside zod 3 halves the peer's cost per call, so the
// table says which it had.
func peerVersions(bin string) (string, error) {
	path, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return "", err
	}
	host, hostVersion, err := packageOf(path)
	if err != nil {
		return "", err
	}
	sdk, sdkVersion, err := resolve(host, "@modelcontextprotocol/sdk")
	if err != nil {
		return "", err
	}
	_, zodHost, err := resolve(host, "zod")
	if err != nil {
		return "", err
	}
	_, zodSDK, err := resolve(sdk, "zod")
	if err != nil {
		return "", err
	}
	zod := "zod " + zodHost
	if zodSDK != zodHost {
		zod = fmt.Sprintf("zod %s (the SDK's: %s)", zodHost, zodSDK)
	}
	return fmt.Sprintf("mcp-host-rpc %s, @modelcontextprotocol/sdk %s, %s", hostVersion, sdkVersion, zod), nil
}

// packageOf returns the directory and version of the package a file is in.
func packageOf(file string) (dir, version string, err error) {
	for dir = filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if v, err := packageVersion(dir); err == nil {
			return dir, v, nil
		}
		if filepath.Dir(dir) == dir {
			return "", "", fmt.Errorf("no package.json above %s", file)
		}
	}
}

// resolve finds the package name as Node does from a package at dir: in
// node_modules of dir and of each directory above it.
func resolve(dir, name string) (pkgDir, version string, err error) {
	for d := dir; ; d = filepath.Dir(d) {
		if filepath.Base(d) != "node_modules" {
			candidate := filepath.Join(d, "node_modules", filepath.FromSlash(name))
			if v, err := packageVersion(candidate); err == nil {
				return candidate, v, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", "", fmt.Errorf("%s: not found from %s", name, dir)
		}
	}
}

func packageVersion(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", err
	}
	var p struct{ Name, Version string }
	if err := json.Unmarshal(b, &p); err != nil {
		return "", err
	}
	if p.Version == "" || strings.TrimSpace(p.Name) == "" {
		return "", errors.New("no name and version")
	}
	return p.Version, nil
}
