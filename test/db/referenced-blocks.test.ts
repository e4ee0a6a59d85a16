import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { BLOCK_COLUMNS, readReferencedCids } from '../../src/db/referenced-blocks.ts';
import { DATABASE_KINDS } from '../helpers/databases.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** Columns of the migrated schema, as the database itself lists them. */
async function columns(server: TestServer): Promise<Array<[string, string]>> {
  const db = server.database.db;
  if (server.testDatabase.kind === 'postgres') {
    const { rows } = await sql<{ table_name: string; column_name: string }>`
      select table_name, column_name from information_schema.columns
      where table_schema = ${server.testDatabase.schema!}`.execute(db);
    return rows.map((row) => [row.table_name, row.column_name]);
  }
  const { rows: tables } = await sql<{ name: string }>`
    select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db);
  const all: Array<[string, string]> = [];
  for (const { name } of tables) {
    const { rows } = await sql<{ name: string }>`select name from pragma_table_info(${name})`.execute(db);
    for (const row of rows) all.push([name, row.name]);
  }
  return all;
}

for (const kind of DATABASE_KINDS) {
  describe(`the referenced blocks on ${kind}`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(kind);
    });
    after(() => server.close());

    test('every column that holds a CID is one garbage collection and backups read', async () => {
      const cidColumns = (await columns(server))
        .filter(([table, column]) => /(^|_)cid$/.test(column) && table !== 'unreferenced_blocks')
        .map(([table, column]) => `${table}.${column}`)
        .sort();
      assert.deepEqual(cidColumns, BLOCK_COLUMNS.map(([table, column]) => `${table}.${column}`).sort());
    });

    test('the referenced set holds the profile of a user created over the API, once', async () => {
      const { token } = await server.createMaster();
      const created = await server.request('POST', '/v1/user/create', {
        headers: { 'x-api-token': token },
        body: { profile: { email_address: `ref-${kind}@example.org`, first_name: 'R', last_name: 'S' } },
      });
      assert.equal(created.status, 201, created.text);
      const row = await server.database.db
        .selectFrom('users')
        .select('profile_cid')
        .where('user_id', '=', created.body.data.user_id)
        .executeTakeFirstOrThrow();
      const referenced = await readReferencedCids(server.database.db);
      assert.ok(referenced.has(row.profile_cid));
      assert.ok(![...referenced].includes(null as unknown as string), 'no null from prepared_cid');
    });
  });
}
