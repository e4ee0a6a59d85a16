import { type ColumnDataType, type ColumnDefinitionBuilder, sql } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

/** An auto-numbered integer primary key, spelled as each database wants it. */
export function idColumn(
  dialect: Dialect,
): [ColumnDataType, (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder] {
  return dialect === 'postgres'
    ? ['integer', (c) => c.primaryKey().generatedByDefaultAsIdentity()]
    : ['integer', (c) => c.primaryKey().autoIncrement()];
}

/** A unique constraint violated: PostgreSQL SQLSTATE 23505, SQLite SQLITE_CONSTRAINT_UNIQUE/PRIMARYKEY. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown };
  if (e?.code === '23505') return true;
  if (e?.errcode === 2067 || e?.errcode === 1555) return true;
  return typeof e?.message === 'string' && e.message.includes('UNIQUE constraint failed');
}

/** A foreign key violated: PostgreSQL SQLSTATE 23503, SQLite SQLITE_CONSTRAINT_FOREIGNKEY. */
export function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown };
  if (e?.code === '23503' || e?.errcode === 787) return true;
  return typeof e?.message === 'string' && e.message.includes('FOREIGN KEY constraint failed');
}

export const now = () => new Date().toISOString();
export { sql };
