import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The webhook dedupe key is (tenant, PSP event id): each tenant has its own PSP account, and two accounts may
 * number their events alike; keyed by the event id alone, one tenant's webhook would be dropped as a
 * duplicate of another's.
 */
export class PspEventKeyPerTenant1796400000000 implements MigrationInterface {
  name = 'PspEventKeyPerTenant1796400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE psp_event DROP CONSTRAINT psp_event_pkey, ADD PRIMARY KEY (tenant_id, event_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE psp_event DROP CONSTRAINT psp_event_pkey, ADD PRIMARY KEY (event_id)`);
  }
}
