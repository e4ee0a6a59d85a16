import type { TracesProtocol } from './export-messages.ts';
import { setTracingEnabled } from './tracer.ts';

/** What starts tracing: the standard OpenTelemetry variables, nothing of Coffer's own. */
export interface TracingEnvironment {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_PROTOCOL?: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?: string | undefined;
  OTEL_TRACES_EXPORTER?: string | undefined;
  OTEL_SDK_DISABLED?: string | undefined;
  OTEL_SERVICE_NAME?: string | undefined;
}

export type { TracesProtocol };

const SHUTDOWN_MS = 3000;

export interface Tracing {
  /** The OTLP encoding the spans go in. */
  protocol: TracesProtocol;
  /** Sends the spans still buffered and stops; rejects after 3 s when the collector does not answer. */
  shutdown(): Promise<void>;
}

/** Whether the environment asks for traces: an OTLP endpoint set, the SDK and exporter not turned off. */
export function tracingRequested(env: TracingEnvironment): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? 'otlp').split(',').map((value) => value.trim());
  if (!exporters.includes('otlp')) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Starts OpenTelemetry tracing with the OTLP/HTTP exporter when the environment asks for it, and
 * nothing otherwise: the SDK is loaded only then, so a service without OTEL_* set runs no exporter,
 * no batch timer and no span processor. The exporter and batch processor read their own standard
 * variables (OTEL_EXPORTER_OTLP_*, OTEL_BSP_*); W3C trace context is propagated. `chooseProtocol`
 * (config/traces-protocol.ts, which refuses what Coffer does not send) runs only when tracing is
 * asked for.
 */
export async function startTracing(
  env: TracingEnvironment,
  chooseProtocol: (env: TracingEnvironment) => TracesProtocol,
): Promise<Tracing | null> {
  if (!tracingRequested(env)) return null;
  const protocol = chooseProtocol(env);
  const [{ NodeTracerProvider }, { BatchSpanProcessor }, { WorkerSpanExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/sdk-trace-base'),
      import('./worker-span-exporter.ts'),
      import('@opentelemetry/resources'),
    ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'coffer' }),
    spanProcessors: [new BatchSpanProcessor(new WorkerSpanExporter(protocol))],
  });
  provider.register();
  setTracingEnabled(true);
  return {
    protocol,
    shutdown: async () => {
      setTracingEnabled(false);
      // The exporter retries a collector that is down for OTEL_EXPORTER_OTLP_TIMEOUT (10 s), as long
      // as a supervisor's whole grace period (Docker's is 10 s) before it kills the process.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the collector did not answer within 3 s')), SHUTDOWN_MS);
      });
      try {
        await Promise.race([provider.shutdown(), late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
