package observe

import (
	"os"
	"strings"
)

// TelemetryWanted reports whether the standard OpenTelemetry environment
// asks for traces to be exported: OTEL_EXPORTER_OTLP_ENDPOINT (or its
// traces variant) is set, or OTEL_TRACES_EXPORTER is otlp; and neither
// OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none says otherwise.
func TelemetryWanted() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")) {
	case "otlp":
		return true
	case "":
	default:
		return false // none, or an exporter this binary does not have
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}
