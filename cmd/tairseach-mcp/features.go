package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/mcpserver"
	"github.com/geilt/tairseach-mcp/mcpserver/media"
	"github.com/geilt/tairseach-mcp/mcpserver/resources"
)

// featureOptions are the flags of resources, prompts and images.
type featureOptions struct {
	logsDir          string
	promptsDir       string
	resourceMaxBytes int64
	maxImageBytes    int64
	media            string // on or off
}

func (f *featureOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.logsDir, "logs-dir", "", "`DIR` whose log files are served as resources (default ~/.tairseach/logs; env TAIRSEACH_LOGS)")
	fs.StringVar(&f.promptsDir, "prompts-dir", "", "`DIR` of prompt files, NAME.md (default ~/.tairseach/prompts; env TAIRSEACH_PROMPTS)")
	fs.Int64Var(&f.resourceMaxBytes, "resource-max-bytes", resources.DefaultMaxBytes, "most of a log file one resource read returns, from its end")
	fs.Int64Var(&f.maxImageBytes, "max-image-bytes", media.DefaultMaxBytes, "largest image attached to a tool result")
	fs.StringVar(&f.media, "media", "on", "attach the images tool results point to: on or off")
}

// images is what the server attaches to results that name a picture: every
// server the options build, serve's and call's alike, attaches the same.
func (f *featureOptions) images() mcpserver.Media {
	if f.media != "on" {
		return nil
	}
	return media.Images(f.maxImageBytes)
}

func (f *featureOptions) resolve(home string) error {
	if f.logsDir == "" {
		f.logsDir = filepath.Join(home, ".tairseach", "logs")
	}
	if f.promptsDir == "" {
		f.promptsDir = filepath.Join(home, ".tairseach", "prompts")
	}
	f.logsDir, f.promptsDir = expandHome(f.logsDir, home), expandHome(f.promptsDir, home)
	media, err := onOff("media", f.media)
	if err != nil {
		return err
	}
	f.media = media
	if f.resourceMaxBytes <= 0 || f.maxImageBytes <= 0 {
		return usageError{fmt.Errorf("--resource-max-bytes and --max-image-bytes must be positive")}
	}
	return nil
}
