/**
 * jsonld.js 9.0.0 as patched at install (patches/jsonld+9.0.0.patch, jsonld.js issue #414): whole
 * context-processing calls are remembered, so a type-scoped context is no longer processed again
 * from a deep clone of the active context at every typed node. These tests check that the patch
 * is in force after `npm ci`, and that what jsonld.js answers did not change: the spec's canonical
 * N-Quads, safe mode's refusals and the events a remembered call replays.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalize } from '@digitalbazaar/di-sd-primitives';
import jsonld from 'jsonld';
import { VECTORS, vectorJsonLd } from './vectors.ts';

interface ActiveContext {
  mappings: Map<string, { '@context'?: unknown }>;
  previousContext?: ActiveContext;
  revertToPreviousContext(): ActiveContext;
}
interface ContextApi {
  getInitialContext(options: object): ActiveContext;
  process(args: {
    activeCtx: ActiveContext;
    localCtx: unknown;
    options: object;
    propagate?: boolean;
  }): Promise<ActiveContext>;
}
// The module jsonld.js itself uses (one CommonJS instance), not a copy.
const contextApi = createRequire(import.meta.url)('jsonld/lib/context.js') as ContextApi;
const ContextResolver = createRequire(import.meta.url)('jsonld/lib/ContextResolver.js') as new (args: {
  sharedCache: Map<string, unknown>;
}) => unknown;

const readVector = (file: string) =>
  JSON.parse(readFileSync(path.join(VECTORS, 'w3c-vc-di-bbs', file), 'utf8')) as unknown;

function processOptions() {
  return {
    ...vectorJsonLd(),
    contextResolver: new ContextResolver({ sharedCache: new Map() }),
    processingMode: 'json-ld-1.1',
  };
}

describe('jsonld.js context processing with the install-time patch', () => {
  it('a type-scoped context applied twice to one active context gives the same context, and reverts to it', async () => {
    const options = processOptions();
    const initial = contextApi.getInitialContext(options);
    const vc2 = await contextApi.process({
      activeCtx: initial,
      localCtx: 'https://www.w3.org/ns/credentials/v2',
      options,
    });
    const scoped = vc2.mappings.get('VerifiableCredential')?.['@context'];
    assert.ok(scoped, 'the VC 2.0 context scopes terms to VerifiableCredential');
    const first = await contextApi.process({ activeCtx: vc2, localCtx: scoped, options, propagate: false });
    const second = await contextApi.process({ activeCtx: vc2, localCtx: scoped, options, propagate: false });
    // Unpatched, each call deep-clones vc2 first and so returns a new object.
    assert.equal(second, first);
    assert.notEqual(first, vc2);
    assert.equal(first.revertToPreviousContext(), vc2);
  });

  it("canonical N-Quads of the spec's windsurf document are the spec's, on a cold and on a warm memo", async () => {
    const expected = (readVector('addBaseDocCanon.json') as string[]).join('');
    // What the bbs-2023 code canonicalises with (RDFC-1.0, safe mode), on the same jsonld.js.
    const canonize = () => canonicalize(readVector('windDoc.json'), vectorJsonLd());
    for (let i = 0; i < 3; i++) assert.equal(await canonize(), expected);
  });

  it('a context that safe mode refuses is refused again after an unsafe call has been remembered', async () => {
    // '@ignored' looks like a keyword: jsonld.js reports it as an event and safe mode refuses it.
    const document = {
      '@context': ['https://www.w3.org/ns/credentials/v2', { '@ignored': 'https://example.org/ignored' }],
      type: ['VerifiableCredential'],
      issuer: 'https://example.org/issuer',
      credentialSubject: { id: 'did:example:subject' },
    };
    const expand = (safe: boolean) =>
      jsonld.expand(structuredClone(document), {
        safe,
        ...vectorJsonLd(),
      } as Parameters<typeof jsonld.expand>[1]);
    const unsafe = await expand(false);
    assert.equal(unsafe.length, 1);
    await assert.rejects(expand(true), /reserved term|Safe mode validation error/);
    assert.deepEqual(await expand(false), unsafe);
    await assert.rejects(expand(true), /reserved term|Safe mode validation error/);
  });

  it('a remembered call replays its events to the caller that asked for them', async () => {
    const options = processOptions();
    const initial = contextApi.getInitialContext(options);
    const localCtx = { '@ignored': 'https://example.org/ignored', name: 'https://schema.org/name' };
    const seen: string[][] = [];
    for (let i = 0; i < 2; i++) {
      const codes: string[] = [];
      await contextApi.process({
        activeCtx: initial,
        localCtx,
        options: {
          ...options,
          // jsonld.js's own entry points hand context processing an array of handlers.
          eventHandler: [
            ({ event, next }: { event: { code: string }; next(): void }) => {
              codes.push(event.code);
              next();
            },
          ],
        },
      });
      seen.push(codes);
    }
    assert.deepEqual(seen[0], ['reserved term']);
    assert.deepEqual(seen[1], seen[0]);
  });
});
