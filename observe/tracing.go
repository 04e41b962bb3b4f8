package observe

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TracerProviderFromEnv builds a tracer provider as the standard OTEL_*
// environment variables of the process say:
//
//   - OTEL_TRACES_EXPORTER: "otlp", "console" (spans as JSON on console)
//     or "none"; unset is "none" here, so that a server with no collector
//     does not try to reach one.
//   - OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL:
//     "http/protobuf" (the default) or "grpc"; the OTLP exporters read
//     OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT and their _TRACES_
//     forms themselves.
//   - OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the service
//     (default service name: serviceName); OTEL_TRACES_SAMPLER and
//     OTEL_TRACES_SAMPLER_ARG choose the sampler (default parentbased_always_on).
//
// It returns nil, and no error, for "none": the host then traces nothing.
// The host calls the provider's Shutdown when it stops, which sends the
// spans still queued.
func TracerProviderFromEnv(ctx context.Context, serviceName string, console io.Writer) (*sdktrace.TracerProvider, error) {
	var exp sdktrace.SpanExporter
	var err error
	switch kind := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); kind {
	case "", "none":
		return nil, nil
	case "console":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(console))
	case "otlp":
		proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
		if proto == "" {
			proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
		}
		switch proto {
		case "", "http/protobuf":
			exp, err = otlptracehttp.New(ctx)
		case "grpc":
			exp, err = otlptracegrpc.New(ctx)
		default:
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: want http/protobuf or grpc", proto)
		}
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: want otlp, console or none", kind)
	}
	if err != nil {
		return nil, fmt.Errorf("trace exporter: %w", err)
	}
	// Later detectors win: the environment's service name over serviceName.
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", serviceName)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
