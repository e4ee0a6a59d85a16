import type { Scenario } from '../scenario.ts';

const SUB_CLIENTS = 1000;

/** GET /v1/sub_client?page=1&per_page=20 for a master with 1,000 sub-clients. */
export const subClientList: Scenario = {
  name: 'sub-client list (1,000 stored, per_page=20)',
  target: '≥ 5,000 req/s, p99 < 20 ms (SQLite)',
  async prepare(server) {
    const master = (await server.coffer('client', 'create', '--name', 'Bench master', '--master')) as {
      api_token: string;
    };
    const headers = { 'x-api-token': master.api_token, 'content-type': 'application/json' };
    for (let i = 0; i < SUB_CLIENTS; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          fetch(`${server.url}/v1/sub_client`, {
            method: 'POST',
            headers,
            body: JSON.stringify({
              name: `Tenant ${i + j}`,
              address_1: '1 Bench Road',
              country: 'GB',
              province: 'GB-ENG',
              city: 'London',
              timezone: 'Europe/London',
              domain: `t${i + j}.bench.example`,
              subdomain: `bench-${i + j}`,
            }),
          }).then((r) => {
            if (r.status !== 201) throw new Error(`seeding failed: ${r.status}`);
          }),
        ),
      );
    }
    return { path: '/v1/sub_client?page=1&per_page=20', headers: { 'x-api-token': master.api_token } };
  },
};
