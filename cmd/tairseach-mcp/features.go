package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/mcpserver/media"
	"github.com/geilt/tairseach-mcp/mcpserver/prompts"
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

// checkFeatureDirs reports the logs and prompts directories: how many
// resources and prompts they give, and the prompt files that are broken.
func (d *doctor) checkFeatureDirs() {
	logs, dir := d.o.features.logsDir, d.o.features.promptsDir
	switch entries, err := os.ReadDir(logs); {
	case errors.Is(err, fs.ErrNotExist):
		d.report(statusOK, fmt.Sprintf("logs directory %s does not exist yet: no log resources until the Tairseach server writes its logs there", logs), "")
	case err != nil:
		d.report(statusWarn, fmt.Sprintf("logs directory %s: %v", logs, err), "make it readable, or pass --logs-dir / set TAIRSEACH_LOGS")
	default:
		n := 0
		for _, e := range entries {
			if e.Type().IsRegular() {
				n++
			}
		}
		d.report(statusOK, fmt.Sprintf("logs directory %s: %d files served as resources", logs, n), "")
	}
	ps, errs := prompts.LoadDir(dir)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		d.report(statusOK, fmt.Sprintf("prompts directory %s does not exist: no prompt files (create it and add NAME.md files)", dir), "")
		return
	}
	if len(errs) > 0 {
		d.report(statusWarn, fmt.Sprintf("prompts directory %s: %d prompts, %d files left out", dir, len(ps), len(errs)), "fix the files below")
		for _, err := range errs {
			d.detail(err.Error())
		}
		return
	}
	d.report(statusOK, fmt.Sprintf("prompts directory %s: %d prompts", dir, len(ps)), "")
}
