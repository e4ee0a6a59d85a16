import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.ts';

/**
 * Each client row counts its sub-clients, so a page of sub-clients reads its total from one row
 * instead of counting a master's sub-clients on every request (a scan that grows with them).
 * Triggers keep the count in the same transaction as every insert, delete and re-parenting,
 * whoever writes (the API, the admin CLI, another instance), so it is never stale.
 */
export function up(dialect: Dialect) {
  return async (db: Kysely<unknown>): Promise<void> => {
    await db.schema
      .alterTable('clients')
      .addColumn('sub_client_count', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`update clients set sub_client_count =
      (select count(*) from clients as sub where sub.parent_id = clients.client_id)`.execute(db);
    if (dialect === 'postgres') await postgresTriggers(db);
    else await sqliteTriggers(db);
  };
}

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`create trigger clients_sub_client_added after insert on clients
    when new.parent_id is not null
    begin
      update clients set sub_client_count = sub_client_count + 1 where client_id = new.parent_id;
    end`.execute(db);
  await sql`create trigger clients_sub_client_removed after delete on clients
    when old.parent_id is not null
    begin
      update clients set sub_client_count = sub_client_count - 1 where client_id = old.parent_id;
    end`.execute(db);
  await sql`create trigger clients_sub_client_moved after update of parent_id on clients
    when old.parent_id is not new.parent_id
    begin
      update clients set sub_client_count = sub_client_count - 1 where client_id = old.parent_id;
      update clients set sub_client_count = sub_client_count + 1 where client_id = new.parent_id;
    end`.execute(db);
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`create function clients_count_sub_clients() returns trigger language plpgsql as $$
    begin
      if tg_op in ('UPDATE', 'DELETE') and old.parent_id is not null then
        update clients set sub_client_count = sub_client_count - 1 where client_id = old.parent_id;
      end if;
      if tg_op in ('INSERT', 'UPDATE') and new.parent_id is not null then
        update clients set sub_client_count = sub_client_count + 1 where client_id = new.parent_id;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger clients_count_sub_clients
    after insert or delete or update of parent_id on clients
    for each row execute function clients_count_sub_clients()`.execute(db);
}
