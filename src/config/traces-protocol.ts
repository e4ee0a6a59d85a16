import type { TracesProtocol, TracingEnvironment } from '../telemetry/tracing.ts';
import { ConfigError } from './config.ts';

/**
 * The traces' protocol: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else
 * `http/protobuf`, as the OpenTelemetry specification defaults it. `grpc` is refused at start
 * rather than quietly sent as something else: a collector's gRPC port does not speak HTTP.
 */
export function tracesProtocol(env: TracingEnvironment): TracesProtocol {
  const [variable, value] = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim()
    ? ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL.trim()]
    : ['OTEL_EXPORTER_OTLP_PROTOCOL', env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || 'http/protobuf'];
  if (value === 'http/protobuf' || value === 'http/json') return value;
  throw new ConfigError(
    variable,
    `"${value}" is not supported: Coffer sends OTLP over HTTP, as http/protobuf (the default) or http/json`,
  );
}
