//go:build notelemetry

package observe

import (
	"context"
	"errors"
)

// Telemetry is absent from a build with the notelemetry tag: the OTLP
// exporters link gRPC and the protobuf runtime, which cost a few MiB of
// memory even when nothing is exported.
type Telemetry struct{}

// StartTelemetry refuses: this build has no exporters.
func StartTelemetry(context.Context, string) (*Telemetry, error) {
	return nil, errors.New("this tairseach-mcp was built with -tags notelemetry and cannot export OpenTelemetry data; unset OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_TRACES_EXPORTER, or use a release build")
}

// Shutdown does nothing.
func (*Telemetry) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing.
func (*Telemetry) ForceFlush(context.Context) error { return nil }

func (*Telemetry) startCall(*Call) {}

func (*Telemetry) endCall(*Call) {}
