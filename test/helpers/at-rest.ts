import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { TestServer } from './server.ts';

/**
 * Where a value was found in plaintext at rest: the database (the SQLite files, or every row of
 * every table of the PostgreSQL schema as text) and the block store. The e-mail outbox is the
 * development stand-in for an SMTP relay and holds mail by design; it is not scanned.
 */
export async function findAtRest(server: TestServer, needles: string[]): Promise<string[]> {
  const found: string[] = [];
  const dir = server.testDatabase.dataDir;
  const files = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && !entry.parentPath.includes(`${path.sep}outbox`))
    .map((entry) => path.join(entry.parentPath, entry.name));
  for (const file of files) {
    const bytes = await readFile(file);
    for (const needle of needles)
      if (bytes.includes(needle)) found.push(`${needle} in ${path.relative(dir, file)}`);
  }
  if (server.testDatabase.kind === 'postgres') {
    const tables = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = ${server.testDatabase.schema!}`.execute(
      server.database.db,
    );
    for (const { table_name } of tables.rows) {
      const rows = await sql<{
        text: string;
      }>`select t::text as text from ${sql.table(table_name)} t`.execute(server.database.db);
      for (const { text } of rows.rows) {
        for (const needle of needles)
          if (text.includes(needle)) found.push(`${needle} in table ${table_name}`);
      }
    }
  }
  return found;
}
