import { parentPort, workerData } from 'node:worker_threads';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ExportRequest, ExportWorkerData, WorkerAnswer } from './export-messages.ts';

/**
 * The OTLP/HTTP exporter's network half, in its own thread: OpenTelemetry's own HTTP delegate (its
 * OTEL_EXPORTER_OTLP_* variables, headers, compression, timeout, retries and concurrency limit),
 * sending the bytes the main thread serialised. Why a thread: src/telemetry/worker-span-exporter.ts.
 */
interface SerialisedBatch {
  bytes: Uint8Array;
  spans: number;
}

const { protocol, url } = workerData as ExportWorkerData;
const json = protocol === 'http/json';
const responses = json ? JsonTraceSerializer : ProtobufTraceSerializer;

const exporter = new OTLPExporterBase<SerialisedBatch>(
  createOtlpHttpExportDelegate<SerialisedBatch, unknown>(
    convertLegacyHttpOptions(url ? { url } : {}, 'TRACES', 'v1/traces', {
      'Content-Type': json ? 'application/json' : 'application/x-protobuf',
    }),
    {
      serializeRequest: (batch) => batch.bytes,
      deserializeResponse: (data) => responses.deserializeResponse(data),
    },
    'otlp_http_span_exporter',
    { name: 'span', countItems: (batch) => batch.spans },
    undefined,
  ),
);

const answer = (message: WorkerAnswer) => parentPort?.postMessage(message);
const failure = (error: unknown) => (error instanceof Error ? error.message : String(error));

parentPort?.on('message', (request: ExportRequest) => {
  switch (request.type) {
    case 'export':
      exporter.export({ bytes: request.bytes, spans: request.spans }, (result) =>
        answer({
          id: request.id,
          ok: result.code === ExportResultCode.SUCCESS,
          ...(result.error ? { error: failure(result.error) } : {}),
        }),
      );
      return;
    case 'flush':
    case 'shutdown':
      (request.type === 'flush' ? exporter.forceFlush() : exporter.shutdown()).then(
        () => answer({ id: request.id, ok: true }),
        (error: unknown) => answer({ id: request.id, ok: false, error: failure(error) }),
      );
  }
});
