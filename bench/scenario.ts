import type { Request } from 'autocannon';
import type { BenchServer } from './server.ts';

/** One measured HTTP workload: prepare seeds the server and names the request to repeat. */
export interface Scenario {
  name: string;
  target: string;
  prepare(server: BenchServer): Promise<{
    path: string;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (request: Request) => Request;
    /** How many requests so far re-sent a prepared body because the pool ran out. */
    repeats?: () => number;
  }>;
}
