import { Worker } from 'node:worker_threads';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { ExportRequest, ExportWorkerData, TracesProtocol, WorkerAnswer } from './export-messages.ts';

const SHUTDOWN_LIMIT_MS = 15_000;

/**
 * OpenTelemetry's OTLP/HTTP span exporter, split in two: the spans are serialised here, by the
 * SDK's own serializer, and sent from a thread of their own (export-worker.ts) by the SDK's own
 * HTTP delegate.
 *
 * Why: sent from the main thread, the exporter's HTTP client requests run through the same Node
 * HTTP and stream functions as the server's responses, and V8 then compiles those for both kinds
 * of object. A server exporting any spans at all served every request a few per cent slower,
 * sampled or not (docs/benchmarks.md, "Eleventh run").
 */
export class WorkerSpanExporter implements SpanExporter {
  readonly #worker: Worker;
  readonly #serializer: typeof ProtobufTraceSerializer | typeof JsonTraceSerializer;
  readonly #waiting = new Map<number, (answer: WorkerAnswer) => void>();
  #nextId = 0;
  #stopped = false;
  /** Why the thread is gone, once it is: what is asked of it then fails at once. */
  #gone: string | undefined;

  /** `url` is for benchmarks; a server reads the collector's address from OTEL_EXPORTER_OTLP_*. */
  constructor(protocol: TracesProtocol, url?: string) {
    this.#serializer = protocol === 'http/json' ? JsonTraceSerializer : ProtobufTraceSerializer;
    const workerData: ExportWorkerData = { protocol, url };
    this.#worker = new Worker(new URL('./export-worker.ts', import.meta.url), { workerData });
    // Exporting never keeps the process alive: shutdown() sends what is left.
    this.#worker.unref();
    this.#worker.on('message', (answer: WorkerAnswer) => {
      this.#waiting.get(answer.id)?.(answer);
      this.#waiting.delete(answer.id);
    });
    this.#worker.on('error', (error) => this.#failAll(error.message));
    this.#worker.on('exit', () => {
      this.#gone ??= 'the export thread stopped';
      this.#failAll(this.#gone);
    });
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const bytes = this.#stopped ? undefined : this.#serializer.serializeRequest(spans);
    if (bytes === undefined) {
      resultCallback(
        failed(this.#stopped ? 'the exporter is shut down' : 'the spans could not be serialised'),
      );
      return;
    }
    this.#ask({ type: 'export', id: this.#nextId++, bytes, spans: spans.length }, (answer) =>
      resultCallback(answer.ok ? { code: ExportResultCode.SUCCESS } : failed(answer.error)),
    );
  }

  forceFlush(): Promise<void> {
    return this.#settle('flush');
  }

  async shutdown(): Promise<void> {
    if (this.#stopped) return;
    let timer: NodeJS.Timeout | undefined;
    // The delegate gives up on a collector after OTEL_EXPORTER_OTLP_TIMEOUT (10 s by default); a
    // thread that has not answered by then is stopped all the same.
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, SHUTDOWN_LIMIT_MS);
    });
    try {
      await Promise.race([this.#settle('shutdown'), late]);
    } finally {
      clearTimeout(timer);
      this.#stopped = true;
      await this.#worker.terminate();
    }
  }

  #settle(type: 'flush' | 'shutdown'): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return new Promise((resolve, reject) =>
      this.#ask({ type, id: this.#nextId++ }, (answer) =>
        answer.ok ? resolve() : reject(new Error(answer.error ?? `the export thread's ${type} failed`)),
      ),
    );
  }

  // The bytes are copied, not transferred: a serialiser may hand back a view of a shared pool.
  #ask(request: ExportRequest, onAnswer: (answer: WorkerAnswer) => void): void {
    if (this.#gone !== undefined) {
      onAnswer({ id: request.id, ok: false, error: this.#gone });
      return;
    }
    this.#waiting.set(request.id, onAnswer);
    this.#worker.postMessage(request);
  }

  #failAll(error: string): void {
    for (const onAnswer of this.#waiting.values()) onAnswer({ id: -1, ok: false, error });
    this.#waiting.clear();
  }
}

const failed = (message = 'the collector refused the spans'): ExportResult => ({
  code: ExportResultCode.FAILED,
  error: new Error(message),
});
