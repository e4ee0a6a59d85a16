/** The OTLP encodings Coffer sends: protobuf (the specification's default) or JSON, over HTTP. */
export type TracesProtocol = 'http/protobuf' | 'http/json';

/** What the main thread asks of the export thread (src/telemetry/export-worker.ts). */
export type ExportRequest =
  | { type: 'export'; id: number; bytes: Uint8Array; spans: number }
  | { type: 'flush' | 'shutdown'; id: number };

/** The export thread's answer to one request, by its id; `error` is a message only. */
export interface WorkerAnswer {
  id: number;
  ok: boolean;
  error?: string;
}

export interface ExportWorkerData {
  protocol: TracesProtocol;
  /** The collector's traces URL; from the OTEL_EXPORTER_OTLP_* variables when absent. */
  url?: string | undefined;
}
