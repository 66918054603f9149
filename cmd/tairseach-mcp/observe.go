package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/mcpserver/observe"
)

// defaultAuditMaxBytes rotates the audit log at 64 MiB, keeping one .1 file.
const defaultAuditMaxBytes = 64 << 20

// observeOptions are the flags of progress and the audit log.
type observeOptions struct {
	progressInterval time.Duration
	auditLog         string
	auditArgs        bool
	auditMaxBytes    int64
	auditSync        bool
}

func (ob *observeOptions) addFlags(f *pflag.FlagSet) {
	f.DurationVar(&ob.progressInterval, "progress-interval", observe.DefaultProgressInterval, "while a call whose request carries a progressToken waits for the server, send notifications/progress this often (0: never)")
	f.StringVar(&ob.auditLog, "audit-log", "", "append one JSON line per tool call to `FILE` (mode 0600): who, which tool, a SHA-256 of the arguments, the outcome; never the result")
	f.BoolVar(&ob.auditArgs, "audit-args", false, "with --audit-log: store the arguments themselves, not only their SHA-256")
	f.Int64Var(&ob.auditMaxBytes, "audit-max-bytes", defaultAuditMaxBytes, "with --audit-log: past this size, rename the log to FILE.1 (replacing the previous one) and start a new one (0: never)")
	f.BoolVar(&ob.auditSync, "audit-sync", false, "with --audit-log: answer a call only once its line is on the disk (fsync), so that neither a crash nor a power loss loses it; calls that end together share one sync. Without it a line is written within 10 ms of its call's end, with others")
}

func (ob *observeOptions) resolve() error {
	if ob.progressInterval < 0 {
		return usageError{fmt.Errorf("--progress-interval %s: must not be negative (0 turns progress off)", ob.progressInterval)}
	}
	if ob.progressInterval > 0 && ob.progressInterval < 100*time.Millisecond {
		return usageError{fmt.Errorf("--progress-interval %s: at least 100ms, or 0 to turn progress off", ob.progressInterval)}
	}
	if ob.auditMaxBytes < 0 {
		return usageError{fmt.Errorf("--audit-max-bytes %d: must not be negative (0 never rotates)", ob.auditMaxBytes)}
	}
	return nil
}

// observers are what serve's sessions have that the commands' server has
// not: calls the user confirms (serve), progress, the audit log and
// telemetry.
type observers struct {
	serve            bool
	progressInterval time.Duration
	audit            *observe.Audit
	telemetry        *observe.Telemetry
}

// start opens the audit log and starts the exporters the environment asks
// for; stop closes them, flushing what is pending, in the order they were
// started: the audit log's last lines are written and synced before the
// exporters' flush, which may wait up to 5 s on a collector.
func (ob *observeOptions) start(ctx context.Context, log zerolog.Logger) (obs observers, stop func(), err error) {
	obs.serve, obs.progressInterval = true, ob.progressInterval
	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	if ob.auditLog != "" {
		a, err := observe.OpenAudit(ob.auditLog, observe.AuditOptions{Args: ob.auditArgs, MaxBytes: ob.auditMaxBytes, Sync: ob.auditSync, Delay: observe.DefaultAuditDelay, Logger: log})
		if err != nil {
			return observers{}, nil, fmt.Errorf("--audit-log: %w", err)
		}
		obs.audit = a
		stops = append(stops, func() { _ = a.Close() })
	}
	if observe.TelemetryWanted() {
		t, err := observe.StartTelemetry(ctx, version)
		if err != nil {
			stop()
			return observers{}, nil, err
		}
		log.Info().Msg("exporting OpenTelemetry traces and metrics (OTEL_* environment)")
		obs.telemetry = t
		stops = append(stops, func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := t.Shutdown(sctx); err != nil {
				log.Warn().Err(err).Msg("flushing OpenTelemetry data")
			}
		})
	}
	return obs, stop, nil
}
